-- tensor_errors.lua - one clear line for every error of a Tensor function.
-- Runs last: each function of the Tensor class is wrapped so that an error
-- raised inside the front end (a nil where an argument was needed, a UOp
-- refused by the C side) is reported at the caller's line, naming the
-- Tensor function the user called and the arguments it got:
--   x.lua:3: Tensor.conv2d: an argument is missing or of the wrong type:
--   a nil value ('weight') cannot be indexed (called with Tensor(1, 1, 4, 4) float32, nil)
-- Errors the front end raises itself (shared.fail) already point at the
-- caller's line; each starts "Tensor.NAME: " with the function called, put
-- first when they name another (Tensor.arange failing in its reshape):
--   x.lua:3: Tensor.arange: reshape: (...) has too many elements ...
-- Only the outermost
-- Tensor call is wrapped in a pcall: the calls a Tensor function makes to
-- others run unwrapped.
local uop, shared = ...
local Tensor = uop.Tensor
local fail, show = shared.fail, shared.show

-- "uopdb/tensor_x.lua:12: " starts an error raised inside the front end
local INTERNAL_WHERE = "^uopdb/[%w_]+%.lua:%d+: "

local verbs = {
  ["index"] = "indexed",
  ["call"] = "called",
  ["perform arithmetic on"] = "used in arithmetic",
  ["perform bitwise operation on"] = "used in a bitwise operation",
  ["get length of"] = "measured with #",
  ["concatenate"] = "concatenated",
}

-- what went wrong, in words, from the message Lua or a C function gave
local function explain(msg)
  local verb, kind = msg:match("^attempt to (.-) an? ([%w%.]+) value")
  if verb then
    local name = msg:match("%(%w+ '([^']+)'%)")
    return string.format("an argument is missing or of the wrong type: a %s value%s cannot be %s", kind,
                         name and (" ('" .. name .. "')") or "", verbs[verb] or verb)
  end
  local op, ta, tb = msg:match("^attempt to (%w+) an? '(%w+)' with an? '(%w+)'")
  if op then
    return string.format("an argument is missing or of the wrong type: cannot %s a %s and a %s", op, ta, tb)
  end
  local a, b = msg:match("^attempt to compare (.-) with (.+)$")
  if a then return string.format("an argument is missing or of the wrong type: %s cannot be compared with %s", a, b) end
  if msg:match("^attempt to compare") then
    return "an argument is missing or of the wrong type: " .. msg:gsub("^attempt to compare", "cannot compare")
  end
  local inner = msg:match("^bad argument #%d+ to '[^']*' %((.*)%)$")
  if inner then return "an argument is missing or of the wrong type (" .. inner .. ")" end
  -- any other Lua runtime error, in words
  local rest = msg:match("^attempt to (.*)$")
  if rest then return "an argument is missing or of the wrong type: cannot " .. rest end
  return msg
end

local function describe_args(n, ...)
  if n == 0 then return "no arguments" end
  local parts = {}
  for i = 1, n do
    local v = select(i, ...)
    if type(v) == "table" and not shared.is_tensor(v) then parts[i] = "a table"
    elseif type(v) == "string" then parts[i] = (string.format("%q", #v > 20 and v:sub(1, 20) .. "..." or v):gsub("\\\n", "\\n"))
    elseif type(v) == "function" or type(v) == "userdata" and tostring(v):find("^userdata") then parts[i] = "a " .. type(v)
    else parts[i] = show(v) end
  end
  return table.concat(parts, ", ")
end

local depth = 0

local function guarded(name, fn)
  return function(...)
    if depth > 0 then return fn(...) end
    depth = 1
    local res = table.pack(pcall(fn, ...))
    depth = 0
    if res[1] then return table.unpack(res, 2, res.n) end
    local msg = res[2]
    if type(msg) ~= "string" then error(msg, 0) end
    if not msg:find(INTERNAL_WHERE) then
      -- raised by the front end at the caller's line: it names the function
      -- that failed, which may be one this one called (arange's reshape);
      -- then the one the user called goes first
      local where, text = msg:match("^(.-:%d+: )(.*)$")
      if not where then where, text = "", msg end
      local first = text:match("^[%w_]+")
      if first == "Tensor" then error(msg, 0) end
      -- "permute: ..." from permute itself reads "Tensor.permute: ..." as the others do
      if first == name and text:sub(#name + 1, #name + 2) == ": " then text = text:sub(#name + 3) end
      error(where .. "Tensor." .. name .. ": " .. text, 0)
    end
    -- the innermost location is the front end's; the text after it is the cause
    local cause = msg
    while cause:find(INTERNAL_WHERE) do cause = cause:gsub(INTERNAL_WHERE, "", 1) end
    cause = cause:gsub("\n.*", "")
    if cause:find("'self'") and not shared.is_tensor((...)) then
      fail("Tensor.%s: needs a Tensor to work on, got %s (call it as t:%s(...))", name, show((...)), name)
    end
    fail("Tensor.%s: %s (called with %s)", name, explain(cause), describe_args(select("#", ...), ...))
  end
end

local names = {}
for k, v in pairs(Tensor) do
  if type(k) == "string" and type(v) == "function" and not k:find("^__") then names[#names + 1] = k end
end
for _, k in ipairs(names) do Tensor[k] = guarded(k, Tensor[k]) end
