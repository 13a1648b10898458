-- prelude.lua - the parts of the uop module written in Lua.  Runs once when
-- the module opens; receives the module table.
local uop = ...

-- uop.sink(a, b, ...): a SINK of the given nodes
function uop.sink(...)
  return uop.new("SINK", uop.dtypes.void, {...})
end

-- uop.find(root, pred): the nodes under root (sources first) for which
-- pred(node) is true; pred may also be an op name such as "ADD"
function uop.find(root, pred)
  if type(pred) == "string" then
    local name = pred
    pred = function(u) return u:op() == name end
  end
  local out = {}
  for _, u in ipairs(root:toposort()) do
    if pred(u) then out[#out + 1] = u end
  end
  return out
end

-- trace summary, one line per rewrite: "add0 (stdin:3): %4 -> %2"
function uop.trace_lines(trace)
  local lines = {}
  for _, r in ipairs(trace.rewrites) do
    lines[#lines + 1] = string.format("%s (%s): %%%d -> %%%d", r.rule, r.where, r.before:id(), r.after:id())
  end
  return table.concat(lines, "\n")
end

-- uop.simplify(u [, set]): u rewritten by a built-in symbolic rule set
-- (default "sym"; see uop.rulesets), e.g. uop.simplify((x*4 + x*2) // 2)
function uop.simplify(u, set)
  return (uop.rewrite(u, set or "sym"))
end
