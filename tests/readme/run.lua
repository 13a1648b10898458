-- run.lua - the README's REPL walkthroughs, run as written: every ``` block
-- with "uopdb> " lines is fed to the uopdb program, through a pipe and
-- through a pseudo-terminal (util-linux's `script`), in a scratch folder,
-- and every output line the README shows must appear, in order ("..."
-- stands for the rest of a line).  Prints "readme: N passed, M failed".
--   build/uopdb tests/readme/run.lua build/uopdb [README.md]
local uopdb = assert(arg[1], "usage: run.lua UOPDB [README]")
local readme = arg[2] or "README.md"
local function abs(p) return p:sub(1, 1) == "/" and p or (os.getenv("PWD") .. "/" .. p) end
uopdb = abs(uopdb)

local pass, fail = 0, 0
local function result(name, ok, detail)
  if ok then pass = pass + 1 else fail = fail + 1; io.stderr:write("FAIL ", name, "\n", detail or "", "\n") end
end

-- the blocks: inputs and the output lines shown after them
local blocks, cur = {}, nil
for line in io.lines(readme) do
  if line:match("^```") then
    if cur then
      if #cur.inputs > 0 then blocks[#blocks + 1] = cur end
      cur = nil
    else
      cur = {inputs = {}, expect = {}, first = #blocks + 1}
    end
  elseif cur then
    local input = line:match("^uopdb[^>]*> (.*)$")
    if input then cur.inputs[#cur.inputs + 1] = input
    elseif not line:match("^%$ ") and line ~= "" then cur.expect[#cur.expect + 1] = line end
  end
end

local function read(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

-- every expected line in order; "..." matches the rest of a line
local function check(name, out, expect)
  out = out:gsub("\27%[[%d;]*m", ""):gsub("\r", "")
  local at = 1
  for _, want in ipairs(expect) do
    local prefix = want:match("^(.-)%s*%.%.%.") or want
    local s, e = out:find(prefix, at, true)
    if not s then
      result(name, false, "  missing (in order): " .. want .. "\n  output:\n" .. out)
      return
    end
    at = e + 1
  end
  result(name, true)
end

local tmp = os.tmpname()
os.remove(tmp)
assert(os.execute("mkdir -p " .. tmp))
for i, b in ipairs(blocks) do
  local input = tmp .. "/in" .. i .. ".lua"
  local f = assert(io.open(input, "w"))
  f:write(table.concat(b.inputs, "\n"), "\n")
  f:close()
  local out = tmp .. "/out" .. i
  local name = string.format("README block %d (%s)", i, b.inputs[1])
  os.execute(string.format("cd %s && NO_COLOR=1 %s < %s > %s 2>&1", tmp, uopdb, input, out))
  check(name .. " through a pipe", read(out), b.expect)
  if os.execute("command -v script >/dev/null 2>&1") then
    -- the session ends with :quit, not with the end of the input: script(1)
    -- passes that on as a ^D, which the line editor can miss while a long
    -- output is still being written; a hang fails instead of blocking
    local tinput = input .. "t"
    local tf = assert(io.open(tinput, "w"))
    tf:write(table.concat(b.inputs, "\n"), "\n:quit\n")
    tf:close()
    os.execute(string.format("cd %s && TERM=dumb timeout 300 script -qec %s /dev/null < %s > %s 2>&1", tmp, uopdb,
                             tinput, out .. "t"))
    check(name .. " on a terminal", read(out .. "t"), b.expect)
  else
    result(name .. " on a terminal", false, "  util-linux's script is not installed")
  end
end
os.execute("rm -rf " .. tmp)
result("the README has REPL walkthroughs", #blocks >= 3, #blocks .. " blocks")
print(string.format("readme: %d passed, %d failed", pass, fail))
os.exit(fail == 0 and 0 or 1)
