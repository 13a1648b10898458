-- fuzz_api.lua - the Lua API fuzzer: every function and method of uop,
-- Tensor, UOps, programs, kernels and the other uopdb objects called with
-- random and hostile arguments (api_batch.lua, api_values.lua), in batches,
-- each batch a process of its own:
--   uopdb tests/fuzz/fuzz_api.lua [--calls N] [--seconds S] [--seed S]
--       [--batch B] [--uopdb PATH] [--out DIR] [--timeout T] [--plant]
-- runs N calls (default 20000), or for S seconds when given, from seed S
-- (default 1), B calls per batch (default 2000), with the uopdb binary PATH
-- (default build/uopdb; build-san/uopdb runs it under the sanitizers).
-- A finding is a crash or sanitizer report, a batch that runs past T seconds
-- (default 120), or a Lua error that is not a clean one-line message
-- (api_prelude.lua's H.judge).  Findings listed in api_known.lua are counted
-- and skipped; any other is shrunk to a short call sequence and written as
-- a runnable Lua snippet, DIR/finding-<k>.lua (DIR: build/fuzz-api).
-- Prints the calls run and the findings; the last line is
-- "fuzz: B passed, F failed" (batches, new findings).  Exits 1 on a new finding.
-- --plant adds a function with a bug (api_batch.lua), which the run must find.
local dir = (arg and arg[0] or ""):match("^(.*)/[^/]*$") or "."

local opts = {calls = 20000, seconds = nil, seed = 1, batch = 2000, uopdb = "build/uopdb", out = "build/fuzz-api",
  timeout = 120, plant = nil}
do
  local i = 1
  while arg and arg[i] do
    local name, value = arg[i]:match("^%-%-([%w_]+)$"), arg[i + 1]
    if name == "plant" then -- the self-check: a planted bug the run must find (api_batch.lua)
      opts.plant, i = true, i + 1
      goto continue
    end
    if not name or opts[name] == nil and name ~= "seconds" or value == nil then
      io.stderr:write("fuzz_api.lua: unknown option " .. tostring(arg[i]) .. "\n")
      os.exit(2)
    end
    opts[name] = tonumber(value) or value
    i = i + 2
    ::continue::
  end
end

local function sh_quote(s) return "'" .. tostring(s):gsub("'", "'\\''") .. "'" end
local function abs_path(p)
  local h = io.popen("cd " .. sh_quote(p) .. " 2>/dev/null && pwd")
  local r = h:read("l")
  h:close()
  return r
end
local function read(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("a")
  f:close()
  return s
end
local function write(path, text)
  local f = assert(io.open(path, "wb"))
  f:write(text)
  f:close()
end

local fuzz_dir = abs_path(dir)
local root = abs_path(fuzz_dir .. "/../..")
os.execute("mkdir -p " .. sh_quote(opts.out))
local out = abs_path(opts.out)
local uopdb_bin = opts.uopdb:find("^/") and opts.uopdb or (abs_path(".") .. "/" .. opts.uopdb)
local scratch = out .. "/scratch"
local prelude = read(fuzz_dir .. "/api_prelude.lua")
local known = dofile(fuzz_dir .. "/api_known.lua")

-- ---- findings: signatures and the known list ----
dofile(fuzz_dir .. "/api_prelude.lua") -- for H.normalize, the same as in the batches
local normalize = H.normalize

-- what a crashed or hung process left: a one-line signature
local function crash_signature(rc_kind, rc, stderr)
  stderr = stderr or ""
  local asan = stderr:match("ERROR: AddressSanitizer: ([%w%-_]+)")
  if asan then
    local frame = stderr:match("\n%s+#%d+ 0x%x+ in ([%w_]+) [^\n]*/uopdb[^\n]*") or "?"
    return "AddressSanitizer " .. asan .. " in " .. frame
  end
  local ub = stderr:match("([%w_/%.%-]+%.c:%d+:%d+: runtime error: [^\n]*)")
  if ub then return "UndefinedBehaviorSanitizer " .. normalize(ub:match("([^/]+)$")) end
  if stderr:find("LeakSanitizer", 1, true) then return "LeakSanitizer: memory leaked" end
  if rc == 124 or rc == 137 then return "timeout" end
  if rc_kind == "exit" and rc > 128 then return "killed by signal " .. (rc - 128) end
  return rc_kind .. " " .. tostring(rc)
end

local function is_known(f)
  for _, k in ipairs(known) do
    if (not k.fn or f.fn:find(k.fn)) and (not k.why or f.why:find(k.why, 1, true)) and
       (not k.message or f.message:find(k.message)) then
      return k
    end
  end
  return nil
end

-- ---- running call sequences ----
-- a statement: {n, fexpr, args}; its text as the batch runs it (through CALL)
local function stmt_text(s)
  return string.format("v[%d] = CALL(%d, %s%s)", s.n, s.n, s.fexpr, #s.args > 0 and ", " .. table.concat(s.args, ", ") or "")
end

local function parse_log(text)
  local list = {}
  for line in (text or ""):gmatch("[^\n]+") do
    local fields = {}
    for field in (line .. "\t"):gmatch("([^\t]*)\t") do fields[#fields + 1] = field end
    local n = tonumber(fields[1])
    if n and fields[2] then
      local args = {}
      for i = 3, #fields do if fields[i] ~= "" then args[#args + 1] = fields[i] end end
      list[#list + 1] = {n = n, fexpr = fields[2], args = args}
    end
  end
  return list
end

-- runs a script in the scratch folder under the time limit; returns the
-- exit kind and code and its stderr
-- (memory is bounded: 4 GiB of address space for a plain binary; under
-- ASan, which reserves far more, allocations above 2 GiB fail and a process
-- above 4 GiB resident is stopped, so a huge request ends as an error or a
-- finding, not as a machine out of memory)
local sanitized = os.execute("ldd " .. sh_quote(uopdb_bin) .. " 2>/dev/null | grep -q libasan")
local function run_script(script_path, limit, extra_args)
  os.execute("rm -rf " .. sh_quote(scratch) .. " && mkdir -p " .. sh_quote(scratch))
  local err_path = out .. "/stderr.txt"
  local cmd = string.format("cd %s && %s ASAN_OPTIONS=allocator_may_return_null=1:max_allocation_size_mb=2048:hard_rss_limit_mb=4096:${ASAN_OPTIONS:-} " ..
    "timeout -s KILL %d %s %s %s >/dev/null 2>%s", sh_quote(scratch), sanitized and "" or "ulimit -v 4194304 &&", limit,
    sh_quote(uopdb_bin), sh_quote(script_path), extra_args or "", sh_quote(err_path))
  local _, kind, code = os.execute(cmd)
  return kind, code, read(err_path) or ""
end

-- replays statements; true when the finding (a Lua message signature for
-- statement target, or a crash signature) shows again
local replays = 0
local function reproduces(stmts, finding)
  replays = replays + 1
  local lines = {prelude, opts.plant and "load(PLANTED_SOURCE)()" or "", "local function judge_exit()",
    "  for _, f in ipairs(H.findings) do",
    string.format("    if f.n == %d and f.why == %q and H.normalize(f.err) == %q then os.exit(3, true) end", finding.n,
      finding.why, finding.norm or ""),
    "  end", "  os.exit(0, true)", "end"}
  for _, s in ipairs(stmts) do lines[#lines + 1] = "pcall(load(" .. string.format("%q", stmt_text(s)) .. ", \"=fuzz\"))" end
  lines[#lines + 1] = "judge_exit()"
  local path = out .. "/replay.lua"
  write(path, table.concat(lines, "\n") .. "\n")
  local kind, code, stderr = run_script(path, finding.signature == "timeout" and 30 or 120)
  if finding.crash then
    if kind == "exit" and (code == 0 or code == 3) then return false end
    return crash_signature(kind, code, stderr) == finding.signature
  end
  return kind == "exit" and code == 3
end

-- the statements statement n needs: those whose results its arguments use, transitively
local function closure(stmts, target)
  local by_n, need, keep = {}, {[target] = true}, {}
  for _, s in ipairs(stmts) do by_n[s.n] = s end
  for i = #stmts, 1, -1 do
    local s = stmts[i]
    if need[s.n] then
      keep[#keep + 1] = s
      for _, a in ipairs(s.args) do for m in a:gmatch("v%[(%d+)%]") do need[tonumber(m)] = true end end
    end
  end
  local r = {}
  for i = #keep, 1, -1 do r[#r + 1] = keep[i] end
  return r
end

-- shrinks the sequence up to the finding's statement: its dependencies
-- alone if they are enough, then the finding's call with fewer arguments and
-- nil for the others, an earlier call's result replaced by a plain value (0,
-- 1, true, "x", {}), then drop statements one at a time while the finding
-- still shows (at most 80 replays)
local function shrink(stmts, finding)
  local upto = {}
  for _, s in ipairs(stmts) do if s.n <= finding.n then upto[#upto + 1] = s end end
  local cur = closure(upto, finding.n)
  if not reproduces(cur, finding) then
    cur = upto
    if not reproduces(cur, finding) then return nil end
    -- halve from the front while it still shows
    while #cur > 8 and replays < 60 do
      local half = {}
      for i = #cur // 2, #cur do half[#half + 1] = cur[i] end
      if reproduces(half, finding) then cur = half else break end
    end
  end
  -- nothing left to shrink (the finding's call was never logged, as when the
  -- binary under test changed during the run): not reproducible
  if #cur == 0 then return nil end
  -- the finding's own call: fewer arguments, then each argument nil
  local last = cur[#cur]
  local function with_args(args)
    local try = {}
    for j = 1, #cur - 1 do try[j] = cur[j] end
    try[#cur] = {n = last.n, fexpr = last.fexpr, args = args}
    return try
  end
  while #last.args > 0 do
    local args = {table.unpack(last.args, 1, #last.args - 1)}
    local try = with_args(args)
    if not reproduces(try, finding) then break end
    cur, last = try, try[#try]
  end
  for a = 1, #last.args do
    if last.args[a] ~= "nil" then
      local args = {table.unpack(last.args)}
      args[a] = "nil"
      local try = with_args(args)
      if reproduces(try, finding) then cur, last = try, try[#try] end
    end
  end
  -- each argument an earlier call made: a plain value instead, if it still shows
  for a = 1, #last.args do
    if last.args[a]:find("^v%[%d+%]$") then
      for _, plain in ipairs({"0", "1", "true", '"x"', "{}"}) do
        local args = {table.unpack(last.args)}
        args[a] = plain
        local try = with_args(args)
        if reproduces(try, finding) then
          cur, last = try, try[#try]
          break
        end
      end
    end
  end
  local budget = 80
  local i = #cur - 1
  while i >= 1 and budget > 0 do
    local try = {}
    for j, s in ipairs(cur) do if j ~= i then try[#try + 1] = s end end
    budget = budget - 1
    if reproduces(try, finding) then cur = try end
    i = i - 1
  end
  return cur
end

-- a runnable reproducer: the prelude, the sequence through CALL, and the
-- last call made directly, so running it shows the error or the crash
local function snippet(stmts, finding)
  local lines = {"-- fuzz_api finding: " .. finding.fn .. ": " .. finding.why,
    -- (a message of several lines stays a comment: each line is one)
    "--   " .. (finding.crash and finding.signature or finding.message:sub(1, 300)):gsub("\n", "\n--   "),
    string.format("-- found by: uopdb tests/fuzz/fuzz_api.lua --seed %d (batch seed %d, call %d)", opts.seed,
      finding.batch_seed, finding.n),
    "-- run it: build/uopdb <this file>", prelude, opts.plant and "load(PLANTED_SOURCE)()" or ""}
  for i, s in ipairs(stmts) do
    if i < #stmts then lines[#lines + 1] = stmt_text(s)
    else
      lines[#lines + 1] = string.format("v[%d] = %s(%s)", s.n, s.fexpr, table.concat(s.args, ", "))
    end
  end
  return table.concat(lines, "\n") .. "\n"
end

-- ---- the batches ----
local t_start = os.time()
local total_calls, budget_calls, batches, known_count, new_findings = 0, 0, 0, 0, 0
local ok_calls, targets = 0, 0
local seen, known_seen = {}, {}
local function elapsed() return os.time() - t_start end

local function report_finding(f, stmts)
  local key = f.fn .. "|" .. f.why .. "|" .. (f.crash and f.signature or f.norm)
  local k = is_known(f)
  if k then
    known_count = known_count + 1
    known_seen[k] = (known_seen[k] or 0) + 1
    return
  end
  if seen[key] then return end
  seen[key] = true
  new_findings = new_findings + 1
  local path = string.format("%s/finding-%d.lua", out, new_findings)
  local shrunk = shrink(stmts, f)
  local upto = {}
  for _, s in ipairs(stmts) do if s.n <= f.n then upto[#upto + 1] = s end end
  write(path, snippet(shrunk or upto, f))
  print(string.format("FINDING %d: %s: %s\n  %s\n  %s (%s)", new_findings, f.fn, f.why,
    f.crash and f.signature or f.message:sub(1, 300), path,
    shrunk and string.format("%d calls after shrinking", #shrunk) or "not shrunk: it did not show again"))
  io.stdout:flush()
end

local batch_index = 0
while true do
  if opts.seconds then
    if elapsed() >= opts.seconds then break end
  elseif total_calls >= opts.calls then break end
  batch_index = batch_index + 1
  local count = opts.seconds and opts.batch or math.min(opts.batch, opts.calls - total_calls)
  local batch_seed = opts.seed * 1000003 + batch_index
  local log, fnd = out .. "/batch.log", out .. "/batch.findings"
  os.remove(log) os.remove(fnd) os.remove(log .. ".stats")
  local kind, code, stderr = run_script(fuzz_dir .. "/api_batch.lua", opts.timeout,
    table.concat({sh_quote(root), batch_seed, count, sh_quote(log), sh_quote(fnd), opts.plant and "plant" or ""}, " "))
  batches = batches + 1
  local stmts = parse_log(read(log))
  local stats = read(log .. ".stats") or ""
  total_calls = total_calls + (tonumber(stats:match("calls (%d+)")) or #stmts)
  budget_calls = budget_calls + (tonumber(stats:match("budget (%d+)")) or 0)
  ok_calls = ok_calls + (tonumber(stats:match("ok (%d+)")) or 0)
  targets = tonumber(stats:match("targets (%d+)")) or targets
  local fn_of = {}
  for _, s in ipairs(stmts) do fn_of[s.n] = s.fexpr end
  for line in (read(fnd) or ""):gmatch("[^\n]+") do
    local n, fn, why, msg = line:match("^(%d+)\t([^\t]*)\t([^\t]*)\t(.*)$")
    if n then
      msg = msg:gsub("\\(.)", {n = "\n", t = "\t", r = "\r", ["\\"] = "\\"})
      report_finding({n = tonumber(n), fn = fn, why = why, message = msg, norm = normalize(msg),
        batch_seed = batch_seed}, stmts)
    end
  end
  if batches % 50 == 0 then
    print(string.format("  %d calls, %d s, %d new findings, %d known", total_calls, elapsed(), new_findings, known_count))
    io.stdout:flush()
  end
  if not (kind == "exit" and code == 0) then
    local last = stmts[#stmts]
    local signature = crash_signature(kind, code, stderr)
    write(string.format("%s/batch-%d.stderr", out, batch_seed), stderr)
    report_finding({n = last and last.n or 0, fn = last and last.fexpr or "?", why = "crash", crash = true,
      signature = signature, message = signature, batch_seed = batch_seed}, stmts)
  end
end

print(string.format("fuzz-api: %d calls of %d functions in %d s (%d batches, seed %d, %s): %d returned, %d stopped " ..
  "by the instruction budget, the rest refused with a clean error; %d new findings, %d known (%d replays)",
  total_calls, targets, elapsed(), batches, opts.seed, opts.uopdb, ok_calls, budget_calls, new_findings, known_count,
  replays))
for _, k in ipairs(known) do
  if known_seen[k] then print(string.format("  known %4d x %s", known_seen[k], k.finding)) end
end
print(string.format("fuzz: %d passed, %d failed", batches, new_findings))
os.exit(new_findings == 0 and 0 or 1)
