-- prelude.lua - the parts of the uop module written in Lua.  Runs once when
-- the module opens; receives the module table and the table the Lua parts
-- share (its uop_mt is the UOp metatable).  Each function checks its
-- arguments and reports a wrong one at the caller's line, naming itself.
local uop, shared = ...
local UOP_MT = shared.uop_mt

-- a value as a message names it: its type, and a number's value
local function describe(v)
  if getmetatable(v) == rawget(uop, "Tensor") then return "a Tensor" end
  if type(v) == "number" then return "number " .. tostring(v) end
  return type(v)
end

local function arg_error(fn, what, v)
  error(string.format("uop.%s: %s must be a UOp, got %s", fn, what, describe(v)), 4)
end

-- v as a UOp: a UOp itself, or a Tensor's graph
local function as_uop(fn, what, v)
  if getmetatable(v) == UOP_MT then return v end
  local Tensor = rawget(uop, "Tensor")
  if Tensor and getmetatable(v) == Tensor and getmetatable(rawget(v, "uop")) == UOP_MT then return v.uop end
  arg_error(fn, what, v)
end

-- uop.sink(a, b, ...): a SINK of the given nodes
function uop.sink(...)
  local srcs = table.pack(...)
  for i = 1, srcs.n do srcs[i] = as_uop("sink", "argument " .. i, srcs[i]) end
  srcs.n = nil
  return uop.new("SINK", uop.dtypes.void, srcs)
end

-- uop.find(root, pred): the nodes under root (sources first) for which
-- pred(node) is true; pred may also be an op name such as "ADD"
function uop.find(root, pred)
  root = as_uop("find", "root", root)
  if type(pred) == "string" then
    local name = pred
    pred = function(u) return u:op() == name end
  elseif type(pred) ~= "function" then
    error(string.format("uop.find: pred must be a function or an op name, got %s", describe(pred)), 2)
  end
  local out = {}
  for _, u in ipairs(root:toposort()) do
    if pred(u) then out[#out + 1] = u end
  end
  return out
end

-- trace summary, one line per rewrite: "add0 (stdin:3): %4 -> %2"
function uop.trace_lines(trace)
  local rewrites = type(trace) == "table" and rawget(trace, "rewrites")
  if type(rewrites) ~= "table" then
    error(string.format("uop.trace_lines: trace must be a trace (the second result of uop.rewrite with trace = true), got %s",
                        type(trace) == "table" and "a table without rewrites" or describe(trace)), 2)
  end
  local lines = {}
  for i, r in ipairs(rewrites) do
    if type(r) ~= "table" or getmetatable(r.before) ~= UOP_MT or getmetatable(r.after) ~= UOP_MT then
      error(string.format("uop.trace_lines: rewrite %d of the trace is not a rewrite (rule, where, before, after)", i), 2)
    end
    lines[#lines + 1] = string.format("%s (%s): %%%d -> %%%d", tostring(r.rule), tostring(r.where), r.before:id(), r.after:id())
  end
  return table.concat(lines, "\n")
end

-- uop.simplify(u [, set]): u rewritten by a built-in symbolic rule set
-- (default "sym"; see uop.rulesets), e.g. uop.simplify((x*4 + x*2) // 2);
-- no trace is kept (uop.rewrite(u, "sym") returns one), so a graph of
-- millions of nodes costs what the rewrite costs
function uop.simplify(u, set)
  u = as_uop("simplify", "u", u)
  if set ~= nil and type(set) ~= "string" and type(set) ~= "userdata" then
    error(string.format("uop.simplify: set must be a rule set or its name, got %s", describe(set)), 2)
  end
  local ok, res = pcall(uop.rewrite, u, set or "sym", {trace = false})
  if not ok then
    -- the message of the rewrite it made, at the caller's line
    local msg = tostring(res):gsub("^uopdb/prelude%.lua:%d+: ", "")
    error("uop.simplify: " .. msg:gsub("^bad argument #2 to '[^']*'", "bad set"), 2)
  end
  return res
end
