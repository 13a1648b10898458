-- test_pipeline_fuzz.lua - the random end-to-end checker of the tensor
-- pipeline (tests/fuzz/pipeline_gen.lua) on a fixed set of programs, and the
-- bugs it found, each as a small program with its exact result.
-- UOPDB_FUZZ_PROGRAMS=n changes how many random programs run (default 200;
-- 0 skips them, e.g. for a slow sanitizer build).
local T = ...

local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "tests/lua"
local gen = dofile(here .. "/../fuzz/pipeline_gen.lua")

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
