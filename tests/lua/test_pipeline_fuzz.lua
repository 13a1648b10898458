-- test_pipeline_fuzz.lua - the random end-to-end checker of the tensor
-- pipeline (tests/fuzz/pipeline_gen.lua) on a fixed set of programs, and the
-- bugs it found, each as a small program with its exact result.  Some of the
-- random programs compile with a beam search on a small budget.
-- UOPDB_FUZZ_PROGRAMS=n changes how many random programs run (default 200;
-- 0 skips them, e.g. for a slow sanitizer build).
local T = ...

local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "tests/lua"
local gen = dofile(here .. "/../fuzz/pipeline_gen.lua")
local N = T.load("nested.lua")

local function run_exact(p)
  local outs, rep = p:run{validate = true, quiet = true}
  T.ok(rep.ok, rep.text)
  return uop.buffer_values(outs[1])
end

T.test("random tensor programs compile, run and match the reference", function()
  local n = math.tointeger(tonumber(os.getenv("UOPDB_FUZZ_PROGRAMS") or "200")) or 200
  local reports = {}
  local checked, failures = gen.run{count = n, seed = 2, report = function(text) reports[#reports + 1] = text end}
  T.eq(checked, n, "programs checked")
  T.ok(#failures == 0, #failures .. " of " .. n .. " programs failed:\n" .. table.concat(reports, "\n"))
end)

T.test("the checker catches a wrong result and shrinks it to a reproducer", function()
  -- a program whose validation cannot pass: the tolerance is negative
  local spec = {
    stmts = {{name = "v1", expr = 'Tensor.new({{1, 2}, {3, 4}}, "float32")', shape = {2, 2}, dt = "float32", leaf = true},
             {name = "v2", expr = "v1:sum(0)", shape = {2}, dt = "float32"},
             {name = "v3", expr = "v2 * 2", shape = {2}, dt = "float32"}},
    outputs = {"v3"}, opts = {}, atol = -1, rtol = 0,
  }
  local msg = gen.run_code(gen.render(spec))
  T.ok(msg and msg:find("differ from the reference", 1, true), tostring(msg))
  local small = gen.shrink(spec, gen.failure_kind(msg))
  T.ok(#small.stmts < #spec.stmts, "shrunk to " .. #small.stmts .. " statements:\n" .. gen.render(small))
  T.ok(gen.run_code(gen.render(small)), "the shrunk program still fails")
end)

T.test("kernel ranges are read from the stage-6 listing in axis order", function()
  local a = Tensor.new({{1, 2, 3}, {4, 5, 6}}, "float32")
  local r = gen.kernel_ranges(uop.compile(a:sum(1) + 1):kernel(1):listing(6))
  T.eq(#r.output, 1)
  T.eq(r.output[1], 2)
  T.eq(#r.reduce, 1)
  T.eq(r.reduce[1], 3)
end)

-- stage 5 merged a range that an earlier merge had already replaced, which
-- multiplied the loop count: an expanded axis summed ten times over
T.test("regression: merging reduce ranges keeps the loop count (expand, then sum)", function()
  local x = Tensor.new({{{-2, 2, 0, -4, 3}, {3, -4, -2, -3, -1}}, {{4, -1, -2, 0, 1}, {1, 1, 3, -2, -1}}}, "int32")
  local p = uop.compile(x:unsqueeze(0):expand{3, 2, 2, 5}:sum({keepdim = true}))
  T.eq(run_exact(p)[1], -12)
end)

-- stage 11 stored the accumulator update through the bare register: when a
-- lane's update folded to a constant (a padded row of a product is 0), the
-- store could be placed before the init, and the row's product came out 1
T.test("regression: an unrolled sum of products over padded rows", function()
  local f = Tensor.new({{2, 3}, {1, 1}}, "int32")
  local x = f:pad{{1, 0}, {0, 0}}:prod(1):sum(0)
  local p = uop.compile(x, {kernel_opts = {[1] = {{"UNROLL", 0, 3}}}})
  T.eq(run_exact(p)[1], 7)
end)

-- stage 19 moved c.where(cast(gated bool load), 3) into the load's alt value
-- through the cast: 3 went through bool and came back 1
T.test("regression: padding a cast bool tensor with 3 keeps the 3", function()
  local b = Tensor.new({{{false, true}, {true, false}}, {{true, true}, {false, true}}}, "bool")
  local p = uop.compile(b:cast("int32"):pad({{0, 0}, {1, 1}, {0, 0}}, {value = 3}))
  local got = run_exact(p)
  local want = {3, 3, 0, 1, 1, 0, 3, 3, 3, 3, 1, 1, 0, 1, 3, 3}
  T.eq(#got, #want)
  for i = 1, #want do T.eq(got[i], want[i], "element " .. i) end
end)

-- stage 6 cut the output loop at the pad edges, and the segments shared the
-- reduce range: two loops over one RANGE, which stage 20 could not order
T.test("regression: a sum along a padded axis (segments reduce over their own ranges)", function()
  local v = Tensor.new({{-4, 2, 1.25, -2}, {3.25, -2, 4, 4}, {0.25, 0, 1, 0.75}}, "float32")
  local got = run_exact(uop.compile(v:pad{{2, 1}, {2, 2}}:sum(1, {keepdim = true})))
  local want = {0, 0, -2.75, 9.25, 2, 0}
  T.eq(#got, #want)
  for i = 1, #want do T.eq(got[i], want[i], "element " .. i) end
  -- both segments sum real data (a padded rows plus b)
  local a = Tensor.new({{1, 2, 3, 4}, {5, 6, 7, 8}, {9, 10, 11, 12}}, "int32")
  local b = Tensor.new({{1, 1, 1, 1}, {2, 2, 2, 2}, {3, 3, 3, 3}, {4, 4, 4, 4}, {5, 5, 5, 5}}, "int32")
  got = run_exact(uop.compile((a:pad{{0, 2}, {0, 0}} + b):sum(1)))
  want = {14, 34, 54, 16, 20}
  T.eq(#got, #want)
  for i = 1, #want do T.eq(got[i], want[i], "element " .. i) end
end)

-- a sum of a constant became an accumulator whose update (acc + 0) folded to
-- a store of its own load, which dropped the init: the result was whatever
-- the register held.  Sums over ranges the value does not use are now done
-- in closed form (pm_reduce_unparented)
T.test("regression: sums of a value that does not change over the loop", function()
  local v1 = Tensor.new({{4, 1, 1, 2}, {0, 3, 4, 4}}, "int32")
  T.eq(run_exact(uop.compile(v1:gt(v1):sum({keepdim = true}):ne(1)))[1], true)
  local x = Tensor.new({{{{3.5}}}}, "float32")
  local w = Tensor.new({{{{-4, 2.75}}}}, "float32")
  local y = x:conv2d(w, {padding = 1, stride = 2})
  -- the value does not use the conv's output row axis: its buffer stores
  -- one row (cleanup_dead_axes), which the tensor reads twice
  local t = y / (y:abs() + 1)
  local p = uop.compile(t)
  T.eq(#run_exact(p), 1)
  local got = N.flat(N.output_values(t, p, p:run()))
  T.eq(#got, 2)
  T.eq(got[1], 0)
  T.eq(got[2], 0)
  T.eq(run_exact(uop.compile(Tensor.zeros(7):sum()))[1], 0)
  -- a broadcast summed, multiplied and maximised over the broadcast axis
  local r = Tensor.new({-2, 3, 1}, "int32"):unsqueeze(0):expand{4, 3}
  got = run_exact(uop.compile({r:sum(0), r:prod(0), r:max(0)}))
  T.eq(got[1], -8)
  T.eq(got[2], 12)
  T.eq(got[3], 4)
end)

-- stage 3's range bookkeeping copied an empty range list from a NULL
-- pointer (undefined behaviour, caught by UBSan) for a kernel whose store
-- is inside no range: a where over a full product of a bool tensor
T.test("regression: a kernel with a store outside every range", function()
  local v1 = Tensor.new({{{{-2.75, 1.25}, {1.75, -0.75}}}}, "float32")
  local v2 = Tensor.new({{{{true, false}, {true, true}}, {{false, true}, {true, true}}}}, "bool")
  local v6 = v2:prod({keepdim = true}):flatten(1):where(0, v1)
  local _, rep = uop.compile(v6):run{validate = true, quiet = true}
  T.ok(rep.ok, rep.text)
end)
