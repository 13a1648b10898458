-- api_prelude.lua - what every call sequence of the Lua API fuzzer runs
-- with: the results table v, the hostile values that are not literals, and
-- CALL, which makes one call under pcall and judges its error.  A batch of
-- the fuzzer, a replay while shrinking and a written reproducer all start
-- with this text, so a statement means the same thing in each.
v = {}
MT = debug.getregistry() -- uopdb's metatables by name: MT["uopdb.Program"].__index.kernel
H = {findings = {}}

-- ---- hostile values that need code to build ----
function H.deep(n) -- a table nested n levels
  local t = {}
  for _ = 1, n do t = {t} end
  return t
end
function H.wide(n) -- an array of n small numbers
  local t = {}
  for i = 1, n do t[i] = i % 7 end
  return t
end
function H.cycle() -- a table that holds itself
  local t = {1, 2}
  t[3] = t
  t.self = t
  return t
end
function H.recursive_index() -- every field read recurses through __index
  local t = {}
  setmetatable(t, {__index = function(s, k) return s[k] end})
  return t
end
function H.raising_table() -- every field read, length and tostring raises
  local raise = function() error("fuzz: hostile metamethod") end
  return setmetatable({}, {__index = raise, __len = raise, __tostring = raise, __call = raise})
end
function H.lying_length() -- an array whose # lies
  return setmetatable({1, 2}, {__len = function() return 1000000000 end})
end
function H.sparse() -- holes and a far index
  return {1, nil, 3, [1000000] = 4}
end
function H.raiser() -- a callback that raises
  return function() error("fuzz: raised by a callback") end
end
function H.returner(x) -- a callback that returns x
  return function() return x end
end
function H.identity() -- a callback that returns its arguments
  return function(...) return ... end
end

-- the fuzzer's self-check plants this function (fuzz_api.lua --plant): a
-- number as its argument makes it index nil, a finding to find
PLANTED_SOURCE = "PLANTED = function(x) if type(x) == 'number' then local t; return t.field end return x end"

-- ---- judging an error ----
-- nil: a clean one-line message; "budget": the call ran past the fuzzer's
-- own instruction budget (too slow to judge, not a finding); otherwise why
-- the error is a finding.
function H.judge(err)
  if type(err) ~= "string" then return "error value is a " .. type(err) end
  if err:find("fuzz: call budget", 1, true) then return "budget" end
  if err == "" then return "empty error message" end
  if err:find("\n", 1, true) then return "message of several lines" end
  if err:find("not enough memory", 1, true) then return "out of memory" end
  if err:find("^uopdb/[%w_]+%.lua:%d+:") then return "raised inside uopdb's Lua code" end
  if err:find("attempt to ", 1, true) and not err:find("fuzz: ", 1, true) then return "Lua runtime error" end
  return nil
end

-- a message without the call's chunk position, its numbers and addresses:
-- two messages of one finding compare equal
function H.normalize(msg)
  msg = tostring(msg)
  local chunk, rest = msg:match("^([^:\n]+):%d+: (.*)$")
  -- a position in the fuzzer's own text differs between a batch and a replay
  if chunk and not chunk:find("^uopdb/") then msg = rest end
  return (msg:gsub("0x%x+", "ADDR"):gsub("%d+", "N"):sub(1, 160))
end

-- the instruction budget of one call: a call that runs this many Lua
-- instructions (a huge legitimate computation in Lua) is stopped
H.budget = 20000000
local function over_budget() error("fuzz: call budget exceeded", 2) end

-- CALL(n, f, ...): statement n calls f; its first result is kept in v[n]
function CALL(n, f, ...)
  debug.sethook(over_budget, "", H.budget)
  local r = table.pack(pcall(f, ...))
  debug.sethook()
  H.last_n, H.last_ok, H.last_err = n, r[1], (not r[1]) and r[2] or nil
  if r[1] then return r[2] end
  local why = H.judge(r[2])
  if why and why ~= "budget" then
    H.findings[#H.findings + 1] = {n = n, why = why, err = tostring(r[2])}
  end
  H.last_why = why
  return nil
end
