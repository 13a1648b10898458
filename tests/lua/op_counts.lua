-- op_counts.lua - a tensor graph's op counts without its data and constant
-- nodes, as "ADD=1 PAD=2": the Tensor tests compare them with the counts
-- tinygrad v0.12.0 gives for the same expression (less the COPY its
-- Python lists make).
--   local op_counts = T.load("op_counts.lua")
local SKIP = {BUFFER = true, DEVICE = true, UNIQUE = true, CONST = true, VCONST = true}

return function(t)
  local c = {}
  for _, u in ipairs(t.uop:toposort()) do
    if not SKIP[u:op()] then c[u:op()] = (c[u:op()] or 0) + 1 end
  end
  local keys = {}
  for k in pairs(c) do keys[#keys + 1] = k end
  table.sort(keys)
  for i, k in ipairs(keys) do keys[i] = k .. "=" .. c[k] end
  return table.concat(keys, " ")
end
