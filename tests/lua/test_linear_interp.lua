-- test_linear_interp.lua - kernels checked at every point of their pipeline,
-- which run in the linear interpreter (linearized when they are not a LINEAR
-- yet): a matmul with opts at every point, an out-of-range access reported
-- with its INDEX and loop variables, and random tensor programs
-- (tests/fuzz/pipeline_gen.lua) whose every kernel is checked at every point
-- from 11 to 22.  UOPDB_FUZZ_PROGRAMS=n scales the random part (default 200
-- gives 30 programs; 0 skips them).
local T = ...

local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "tests/lua"

T.test("a matmul with opts is checked right at every point", function()
  local A = Tensor.new({{1, 2, 3}, {4, 5, 6}, {7, 8, 9}}, "float32")
  local B = Tensor.new({{1, 0, 2}, {-1, 3, 1}, {2, 2, -2}}, "float32")
  for _, opts in ipairs{{}, {{"UPCAST", 1, 3}}, {{"UNROLL", 0, 3}}, {{"THREAD", 0, 3}, {"UNROLL", 0, 3}}} do
    local k = uop.compile(A:matmul(B), {kernel_opts = {[1] = opts}}):kernel(1)
    for n = 0, 22 do
      local ok, r = pcall(k.check, k, n, {quiet = true})
      -- stages 9 and 10 with vector opts have a vector REDUCE, which neither interpreter runs
      if not ok then T.ok(#opts > 0 and (n == 9 or n == 10) and r:find("interp:", 1, true), "stage " .. n .. ": " .. tostring(r))
      else T.ok(r.ok, "stage " .. n .. ": " .. r.text) end
    end
  end
end)

T.test("a rule that makes an index go out of range is caught at its stage, naming the INDEX", function()
  local A = Tensor.new({1, 2, 3, 4, 5, 6}, "float32")
  local p = uop.compile(A + 1)
  local k = p:kernel(1)
  -- stage 16: every load index of the input gets + 1
  local rules = uop.rules{{name = "shift", pattern = "(INDEX b@(DEFINE_GLOBAL arg=1) i@(RANGE))",
                           rewrite = "(INDEX b (ADD i 1))"}}
  T.ok(k:check(16, {quiet = true}).ok)
  k:insert(16, rules)
  -- in the words a compiled kernel with bounds checks uses
  local ok, msg = pcall(k.check, k, 16, {quiet = true})
  T.ok(not ok and msg:find("at stage 16: INDEX %%%d+ reads buffer 1 %(input0%) at 6, past its 6 elements %(r0=5%)\n"), msg)
  T.raises("reads buffer 1 (input0) at 6, past its 6 elements (r0=5)", function() k:check(22, {quiet = true}) end)
end)

-- the pipeline fuzzer's programs come with random opts (UPCAST, UNROLL, THREAD)
T.test("200 random programs: every kernel at every point 0..22 matches the reference", function()
  local n = math.tointeger(tonumber(os.getenv("UOPDB_FUZZ_PROGRAMS") or "200")) or 200
  local gen = dofile(here .. "/../fuzz/pipeline_gen.lua")
  gen.check_points = true
  local reports = {}
  local checked, failures = gen.run{count = n, seed = 7, no_shrink = true,
    report = function(text) reports[#reports + 1] = text end}
  T.eq(checked, n, "programs checked")
  T.ok(#failures == 0, #failures .. " of " .. n .. " programs failed:\n" .. table.concat(reports, "\n"))
end)
