-- sym_lua.lua - the sym rows of `make bench` seen from Lua: a forest of index
-- expressions (bench.c's, 300k of them) built with uop.* and rewritten by
-- the "sym" rules, either by uop.simplify (no trace) or by uop.rewrite (with
-- the trace it returns), one mode per run so each starts from a fresh
-- context; rows of the table bench.c prints.
--   build/uopdb tests/bench/sym_lua.lua simplify|trace [exprs]

local mode = arg and arg[1] or "simplify"
local count = tonumber(arg and arg[2]) or 300000
assert(mode == "simplify" or mode == "trace", "usage: sym_lua.lua simplify|trace [exprs]")

local function row(what, value, unit, note)
  print(string.format("| %-44s | %14.2f | %-12s | %-34s |", what, value, unit, note or ""))
end

-- bench.c's index_forest: sums of ranges times strides plus an offset,
-- divided and taken modulo by constants, under SINKs of 50000 roots
local sizes, strides = {3, 4, 8, 16, 32, 64}, {1, 3, 4, 16, 64, 256}
local ranges = {}
for r = 1, 6 do ranges[r] = uop.range(sizes[r], r - 1) end
local function idx(v) return uop.const("index", v) end
local rng, roots, sinks = 12345, {}, {}
local t0 = uop.clock()
for i = 1, count do
  rng = rng * 6364136223846793005 + 1442695040888963407
  local bits = rng >> 11
  local e = idx(bits % 61)
  for r = 0, 5 do
    if (bits >> (r + 3)) & 1 == 1 then e = e + ranges[r + 1] * idx(strides[(bits >> (r + 9)) % 6 + 1]) end
  end
  if (bits >> 28) & 1 == 1 then e = e // idx(sizes[(bits >> 20) % 6 + 1]) end
  if (bits >> 29) & 1 == 1 then e = e % idx(sizes[(bits >> 24) % 6 + 1]) end
  roots[#roots + 1] = e
  if #roots == 50000 or i == count then sinks[#sinks + 1] = uop.new("SINK", "void", roots); roots = {} end
end
local forest = #sinks == 1 and sinks[1] or uop.new("SINK", "void", sinks)
local built = uop.clock() - t0

local out, trace
t0 = uop.clock()
if mode == "simplify" then out = uop.simplify(forest) else out, trace = uop.rewrite(forest, "sym") end
local ms = uop.clock() - t0
local size = string.format("%dk exprs, %d -> %d nodes", count // 1000, forest:graph_size(), out:graph_size())
if mode == "simplify" then
  row("sym from Lua: forest built with uop.*", built, "ms", string.format("%dk exprs, %d nodes", count // 1000, forest:graph_size()))
  row("sym from Lua: uop.simplify (no trace)", ms, "ms", size)
else
  row("sym from Lua: uop.rewrite, the trace kept", ms, "ms", string.format("%d rewrites in the trace", #trace.rewrites))
end
