-- test_depth.lua - graphs 100000 nodes deep through every walk Lua reaches
-- (reference, shapes, printers, parsers, DOT, diff, bounds, evaluation, the
-- scheduler, the compiled program and its validation, the interpreter):
-- each works, or fails with an error that pcall catches and that names the
-- depth; none may overflow the C stack.
local T = ...
local d = uop.dtypes
local N = 100000

-- ones(4) + 1 + 1 ... (tinygrad's Tensor graph: ADD of the chain and an expanded CONST)
local t = Tensor.ones(4)
for _ = 1, N do t = t + 1 end
local deep = t.uop
-- the same built from uop.* directly: a BUFFER added to the chain and the
-- chain multiplied by a buffer of ones, in turn (x + x alone would fold into
-- one multiply, as tinygrad's symbolic folds it)
local b = uop.buffer(d.float32, {1, 2, 3, 4})
local ones = uop.buffer(d.float32, {1, 1, 1, 1})
local raw = b
for i = 1, N do raw = i % 2 == 1 and raw + b or raw * ones end
-- an index expression: x + 1 + 1 ...
local x = uop.var("x", 0, 10)
local ix = x
for _ = 1, N do ix = ix + 1 end

-- fn() must raise an error naming the depth: "graph too deep for <what>: <n> nested nodes (limit ...)"
local function too_deep(what, fn)
  local msg = T.err(fn)
  T.ok(msg:find("graph too deep for " .. what .. ": %d+ nested nodes %(limit ~?%d+%)"), "names the depth: " .. msg)
  return msg
end

T.test("deep: uop.reference of a 100000-op tensor chain", function()
  local v = uop.reference(t)
  T.eq(#v, 4)
  for i = 1, 4 do T.eq(v[i], N + 1.0) end
  local r = uop.reference(raw)
  for i = 1, 4 do T.eq(r[i], i * (N // 2 + 1.0)) end
end)

T.test("deep: uop.shape", function()
  local s = uop.shape(deep)
  T.eq(#s, 1)
  T.eq(s[1], 4)
  T.eq(uop.shape(raw)[1], 4)
end)

T.test("deep: printing (tostring, render, listing)", function()
  T.contains(tostring(deep), "ADD float32")
  T.contains(deep:render(), "+")
  T.contains(ix:render(), "+")
  local text = raw:listing()
  T.eq(select(2, text:gsub("\n", "\n")), raw:graph_size())
end)

T.test("deep: listing then uop.parse is the same node", function()
  T.ok(rawequal(uop.parse(deep:listing()), deep), "tensor chain")
  T.ok(rawequal(uop.parse(raw:listing()), raw), "raw chain")
  T.ok(rawequal(uop.parse(ix:listing()), ix), "index chain")
end)

T.test("deep: tinygrad repr export is linear in the depth, import reads any depth", function()
  -- one indent per level, capped at 200 spaces: a few hundred bytes per level (an ADD
  -- and its constant's nodes), not N^2
  local text = deep:to_tinygrad()
  T.ok(#text < (N + 10) * 600, "linear size: " .. #text)
  T.ok(rawequal(uop.from_tinygrad(text), deep), "round trip of the deep export")
  T.ok(rawequal(uop.from_tinygrad(uop.to_tinygrad(ix)), ix), "round trip of the index chain")
  -- the importer has no limit: the chain written without indentation
  local parts = {}
  for i = 1, N do parts[i] = "UOp(Ops.ADD, dtypes.index, src=(" end
  parts[#parts + 1] = "UOp(Ops.DEFINE_VAR, dtypes.index, arg=('x', 0, 10), src=())"
  local one = ", UOp(Ops.CONST, dtypes.index, arg=1, src=())))"
  parts[#parts + 1] = one:rep(N)
  T.ok(rawequal(uop.from_tinygrad(table.concat(parts)), ix), "import of the deep text")
end)

T.test("deep: uop.dot and uop.diff", function()
  T.contains(uop.dot(deep), "digraph")
  T.contains(uop.dot(raw, {keep_consts = true}), "digraph")
  local text, stats = uop.diff(raw, raw + b, {stats = true})
  T.eq(stats.added, 1)
  T.contains(text, "ADD")
  T.contains(uop.diff_dot(ix, ix + 1), "digraph")
end)

T.test("deep: bounds, evaluation and simplification of an index chain", function()
  T.eq(ix:vmin(), N)
  T.eq(ix:vmax(), N + 10)
  T.eq(ix:eval{x = 3}, N + 3)
  -- the rewrite engine and the symbolic rules' structural helpers under
  -- div and mod (a sum too long to split, a divisor too deep to divide)
  local y = uop.var("y", 0, 10)
  local sum = x
  for i = 1, N do sum = sum + ((i % 2 == 0) and x or y) * 4 end
  local s = uop.simplify(uop.sink(ix, sum // 4, (x * 4) // sum)):src()
  T.eq(s[1]:eval{x = 3}, N + 3)
  T.ok(s[1]:graph_size() < 10, "the constants fold")
  T.eq(s[2]:eval{x = 1, y = 2}, (1 + 4 * (N // 2) * 1 + 4 * (N // 2) * 2) // 4)
  T.eq(s[3]:eval{x = 10, y = 0}, 40 // (10 + 4 * (N // 2) * 10))
end)

T.test("deep: uop.compile and a validated run of the tensor chain", function()
  local p = uop.compile(t)
  local outs = p:run{validate = true, quiet = true}
  T.ok(outs, "outputs")
  local k = p:kernel(1)
  -- the scheduler folds the constants, as v0.12.0's symbolic pass after
  -- rangeify does: the kernel as scheduled adds one constant
  T.ok(k:root(0):graph_size() < 20, "the chain of constants is folded")
  T.ok(k:check(0, {quiet = true}).ok, "point 0 checks")
  T.ok(k:check(10, {quiet = true}).ok, "stage 10 checks")
end)

local raw_program -- compiled once for the two tests below
T.test("deep: uop.compile of the raw chain; the interpreter names the depth", function()
  raw_program = uop.compile(raw)
  local k = raw_program:kernel(1)
  too_deep("the interpreter", function() return k:check(0, {quiet = true}) end)
end)

-- a node has at most 65535 sources, so stage 21 cannot put a kernel of
-- 100000 instructions in one LINEAR node: the run stops there with an error
-- naming the limit, and the session goes on
T.test("deep: a run of the raw chain names the LINEAR size limit", function()
  local p = raw_program or uop.compile(raw)
  local ok, res = pcall(p.run, p, {validate = true, quiet = true})
  T.ok(not ok, "a kernel of 100000 instructions does not fit one LINEAR node")
  T.contains(tostring(res), "do not fit one LINEAR node")
  T.ok(uop.compile(Tensor({1, 2}) + 1):run(), "the session goes on")
end)

T.test("deep: movement ops recurse in the scheduler and stop naming the depth", function()
  -- 3 * 25000 nested nodes, far past what the stack allows the scheduler
  local m = Tensor({1, 2, 3, 4})
  for _ = 1, N // 4 do m = (m:reshape(2, 2) + 1):reshape(4) end
  local v = uop.reference(m)
  for i = 1, 4 do T.eq(v[i], i + N // 4) end
  local msg = too_deep("the scheduler", function() return uop.compile(m) end)
  T.contains(msg, "uop.compile: schedule: graph too deep for the scheduler: ")
end)
