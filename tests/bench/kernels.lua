-- kernels.lua - the pipeline and kernel rows of `make bench`: scheduler +
-- 22 stages per kernel, LLVM compile time, and kernel throughput through the
-- JIT with no opts, hand opts, the heuristic's (default) opts and the opts a
-- beam search finds, as rows of the table bench.c prints.
-- UOPDB_BENCH_BEAM_BUDGET=SECONDS sets the beam rows' budget (default 30 s per
-- program, 120 s for matmul 1024, whose full width-2 search takes about 100 s).
--   build/uopdb tests/bench/kernels.lua

local function row(what, value, unit, note)
  print(string.format("| %-44s | %14.2f | %-12s | %-34s |", what, value, unit, note or ""))
end

-- best of n wall-clock timings of fn, in ms
local function best(n, fn)
  local b = math.huge
  for _ = 1, n do
    local t0 = uop.clock()
    fn()
    local dt = uop.clock() - t0
    if dt < b then b = dt end
  end
  return b
end

-- schedule + all 22 stages of every kernel, fresh each time, with the
-- default (heuristic) opts, which uop.compile chooses after stage 6
local function pipeline_ms(build, n)
  local kernels = 0
  local ms = best(n, function()
    local p = uop.compile(build())
    kernels = #p:kernels()
    for _, k in ipairs(p:kernels()) do k:seek(22) end
  end)
  return ms, kernels
end

Tensor.manual_seed(1)
local a3, b3 = Tensor.rand(3, 3), Tensor.rand(3, 3)
local a512, b512 = Tensor.rand(512, 512), Tensor.rand(512, 512)
local x_conv, w_conv = Tensor.rand(1, 32, 56, 56), Tensor.rand(64, 32, 3, 3)

-- each twice: as the pipeline runs by default, then with every stage's
-- output checked against the spec of its point (UOPDB_VERIFY=1, as the tests run)
local verifying = uop.verify_stages()
for _, verify in ipairs{false, true} do
  uop.verify_stages(verify)
  local what = verify and "  + spec verify" or "schedule + 22 stages"
  local note = "kernel, heuristic opts" .. (verify and ", verified" or "")
  local ms, nk = pipeline_ms(function() return a3:matmul(b3) end, 50)
  row(what .. ": matmul 3x3", ms, "ms", nk .. " " .. note)
  ms, nk = pipeline_ms(function() return a512:matmul(b512) end, 20)
  row(what .. ": matmul 512x512", ms, "ms", nk .. " " .. note)
  ms, nk = pipeline_ms(function() return x_conv:conv2d(w_conv, {padding = 1}) end, 20)
  row(what .. ": conv2d 32x56x56, 64x3x3", ms, "ms", nk .. " " .. note)
end
uop.verify_stages(verifying)

-- k:origin of the conv2d kernel's output INDEX at stage 22 (default opts):
-- its whole history, back to the stage that made it, each walk fresh
do
  local kc = uop.compile(x_conv:conv2d(w_conv, {padding = 1})):kernel(1)
  kc:seek(22)
  local index
  for _, u in ipairs(kc:root():toposort()) do if u:op() == "INDEX" then index = u end end
  local o
  local ms = best(5, function() o = kc:origin(index, {steps = 1000}) end)
  row("k:origin: conv2d output INDEX at stage 22", ms, "ms",
      string.format("%d steps, back to point %s (%s)", #o.steps, o.steps[#o.steps].point, o.steps[#o.steps].how))
end

-- k:why of every rule on a conv2d INDEX halfway through stage 14 (devectorize):
-- the stage run again to that rewrite, each rule that can match tried there
do
  local kc = uop.compile(x_conv:conv2d(w_conv, {padding = 1})):kernel(1)
  local half = #kc:rewrites(14, {quiet = true}) // 2
  kc:seek(14, half)
  local index
  for _, u in ipairs(kc:root():toposort()) do if u:op() == "INDEX" then index = u end end
  local w
  local ms = best(5, function() w = kc:why(index) end)
  row("k:why: every rule on a conv2d INDEX at 14." .. half, ms, "ms",
      string.format("%d of %d rules tried, %d rewrites rerun", #w.rules, w.of, half))
end

local k = uop.compile(a512:matmul(b512), {opts = "none"}):kernel(1)
local total, render, opt, jit = k:compile_ms()
row("LLVM compile: matmul 512 kernel, no opts", total, "ms",
    string.format("render %.1f, O2 %.1f, JIT %.1f", render, opt, jit))

-- kernel throughput: p:time compiles once, then times whole-program runs
-- on outputs allocated once (tmp buffers are allocated and freed per run, as
-- the program's plan says)
local function timed(t, n, opts, compile_opts)
  local p = uop.compile(t, compile_opts)
  if opts then p:kernel(1):opts(opts) end
  return p:time(n), p
end

-- rows without "opts" in their name compile with opts = "none" (k:opts{...}
-- replaces them with hand opts); opts = "heuristic" (uop.compile's default):
-- the opts tinygrad v0.12.0's hand-coded heuristic chooses (THREAD on this machine's cores)
local heuristic = {opts = "heuristic"}
local none = {opts = "none"}
local function heuristic_text(t)
  local parts = {}
  for _, o in ipairs(uop.compile(t, {opts = "heuristic", select = false}):kernel(1):opts()) do
    parts[#parts + 1] = o[1] .. " " .. o[2] .. " " .. o[3]
  end
  return table.concat(parts, ", ")
end

-- beam rows: uop.compile(t, {beam = 2}) on a budget of BEAM_BUDGET seconds per
-- program (matmul 1024: 120), without the disk cache, so each row is a fresh search (the note says
-- how long it took); the workload's default-opts row is the one above it
local BEAM_WIDTH = 2
local BEAM_BUDGET_SET = tonumber(os.getenv("UOPDB_BENCH_BEAM_BUDGET") or "")
local BEAM_BUDGET = BEAM_BUDGET_SET or 30
local function beam_timed(t, n, budget)
  local t0 = uop.clock()
  local p = uop.compile(t, {beam = BEAM_WIDTH, beam_budget = BEAM_BUDGET_SET or budget or BEAM_BUDGET, beam_cache = false,
                            beam_progress = false})
  local search_s = (uop.clock() - t0) / 1000
  return p:time(n), search_s, p
end
local function beam_what(what) return string.format("%s, beam %d", what, BEAM_WIDTH) end

local a512m = a512:matmul(b512)
local t = timed(a512m, 3, nil, none)
row("matmul 512x512 float32, no opts", 2 * 512 ^ 3 / (t * 1e6), "GFLOP/s", string.format("%.1f ms", t))
t = timed(a512m, 3, {{"UPCAST", 1, 8}, {"UPCAST", 0, 4}}, none)
row("matmul 512x512 float32, UPCAST 8x4", 2 * 512 ^ 3 / (t * 1e6), "GFLOP/s", string.format("%.1f ms", t))
t = timed(a512m, 3, nil, heuristic)
row("matmul 512x512 float32, heuristic opts", 2 * 512 ^ 3 / (t * 1e6), "GFLOP/s",
    string.format("%.1f ms, %s", t, heuristic_text(a512m)))
local search_s
t, search_s = beam_timed(a512m, 3)
row(beam_what("matmul 512x512 float32"), 2 * 512 ^ 3 / (t * 1e6), "GFLOP/s",
    string.format("%.1f ms, found in %.1f s", t, search_s))
-- the same search again, answered by the disk cache (a directory of its own)
local cache_dir = os.tmpname()
os.remove(cache_dir)
local kc = uop.compile(a512m, {select = false}):kernel(1)
kc:beam(BEAM_WIDTH, {budget = BEAM_BUDGET, cache = cache_dir, progress = false})
local again = uop.compile(a512m, {select = false}):kernel(1):beam(BEAM_WIDTH, {cache = cache_dir, progress = false})
row(beam_what("matmul 512x512 again, from the disk cache"), again.seconds * 1000, "ms",
    again.cache_hit and "0 candidates timed" or "not from the cache (stopped early?)")
os.execute('rm -rf "' .. cache_dir .. '"')

t = timed(a512m, 3, {{"UPCAST", 1, 8}, {"UPCAST", 0, 4}, {"THREAD", 1, 2}}, none)
row("matmul 512x512 float32, UPCAST 8x4, THREAD 2", 2 * 512 ^ 3 / (t * 1e6), "GFLOP/s", string.format("%.1f ms", t))

local a1k, b1k = Tensor.rand(1024, 1024), Tensor.rand(1024, 1024)
local m1k = a1k:matmul(b1k)
t = timed(m1k, 1, nil, none)
row("matmul 1024x1024 float32, no opts", 2 * 1024 ^ 3 / (t * 1e6), "GFLOP/s", string.format("%.0f ms", t))
t = timed(m1k, 2, {{"UPCAST", 1, 16}, {"UPCAST", 0, 2}}, none)
row("matmul 1024x1024 float32, UPCAST 16x2", 2 * 1024 ^ 3 / (t * 1e6), "GFLOP/s", string.format("%.0f ms", t))
t = timed(m1k, 2, {{"UPCAST", 1, 16}, {"UPCAST", 0, 2}, {"THREAD", 1, 2}}, none)
row("matmul 1024 float32, UPCAST 16x2, THREAD 2", 2 * 1024 ^ 3 / (t * 1e6), "GFLOP/s", string.format("%.0f ms", t))
t = timed(m1k, 2, nil, heuristic)
row("matmul 1024x1024 float32, heuristic opts", 2 * 1024 ^ 3 / (t * 1e6), "GFLOP/s",
    string.format("%.0f ms, %s", t, heuristic_text(m1k)))
t, search_s = beam_timed(m1k, 2, 120)
row(beam_what("matmul 1024x1024 float32"), 2 * 1024 ^ 3 / (t * 1e6), "GFLOP/s",
    string.format("%.0f ms, found in %.1f s", t, search_s))

local n = 1024 * 1024
local x1m, y1m = Tensor.rand(n), Tensor.rand(n)
t = timed(x1m + y1m, 10, nil, none)
row("add 1M float32", 3 * 4 * n / (t * 1e6), "GB/s", string.format("%.3f ms", t))
t = timed(x1m + y1m, 10, {{"THREAD", 0, 2}}, none)
row("add 1M float32, THREAD 2", 3 * 4 * n / (t * 1e6), "GB/s", string.format("%.3f ms", t))
t = timed(x1m:sum(), 10, nil, none)
row("sum 1M float32", 4 * n / (t * 1e6), "GB/s", string.format("%.3f ms, 2 kernels (split)", t))
t = timed(x1m + y1m, 10, nil, heuristic)
row("add 1M float32, heuristic opts", 3 * 4 * n / (t * 1e6), "GB/s", string.format("%.3f ms", t))
t = timed(x1m:sum(), 10, nil, heuristic)
row("sum 1M float32, heuristic opts", 4 * n / (t * 1e6), "GB/s", string.format("%.3f ms, %s", t, heuristic_text(x1m:sum())))
t, search_s = beam_timed(x1m:sum(), 10)
row(beam_what("sum 1M float32"), 4 * n / (t * 1e6), "GB/s", string.format("%.3f ms, found in %.1f s", t, search_s))
local p
t, p = timed(Tensor.rand(64, 4096):softmax(1), 10, nil, none)
row("softmax 64x4096 float32", t, "ms", #p:kernels() .. " kernels, exp decomposed")
local sm = Tensor.rand(64, 4096):softmax(1)
t = timed(sm, 10, nil, heuristic)
row("softmax 64x4096 float32, heuristic opts", t, "ms", "each kernel: tinygrad's hand-coded opts")
t, search_s, p = beam_timed(sm, 10)
row(beam_what("softmax 64x4096 float32"), t, "ms", string.format("%d kernels, found in %.1f s", #p:kernels(), search_s))
local native = {transcendentals = "native", opts = "none"}
t = timed(Tensor.rand(64, 4096):softmax(1), 10, nil, native)
row("softmax 64x4096 float32, native exp2", t, "ms", "LLVM intrinsics (stage 18 native)")
t = timed(x1m:exp(), 10, nil, none)
row("exp 1M float32", 2 * 4 * n / (t * 1e6), "GB/s", string.format("%.3f ms, exp2 decomposed", t))
t = timed(x1m:exp(), 10, nil, native)
row("exp 1M float32, native exp2", 2 * 4 * n / (t * 1e6), "GB/s", string.format("%.3f ms, LLVM intrinsic", t))
t = timed(x1m:sin(), 5, nil, none)
row("sin 1M float32", 2 * 4 * n / (t * 1e6), "GB/s", string.format("%.3f ms, sin decomposed", t))
t = timed(x_conv:conv2d(w_conv, {padding = 1}), 2, nil, none)
row("conv2d 1x32x56x56, 64 3x3, pad 1", 2 * 64 * 32 * 9 * 56 * 56 / (t * 1e6), "GFLOP/s", string.format("%.1f ms, no opts", t))
t = timed(x_conv:conv2d(w_conv, {padding = 1}), 2, nil, heuristic)
row("conv2d 1x32x56x56, 64 3x3, pad 1, heuristic opts", 2 * 64 * 32 * 9 * 56 * 56 / (t * 1e6), "GFLOP/s",
    string.format("%.1f ms, %s", t, heuristic_text(x_conv:conv2d(w_conv, {padding = 1}))))
t, search_s = beam_timed(x_conv:conv2d(w_conv, {padding = 1}), 2)
row(beam_what("conv2d 1x32x56x56, 64 3x3, pad 1"), 2 * 64 * 32 * 9 * 56 * 56 / (t * 1e6), "GFLOP/s",
    string.format("%.1f ms, found in %.1f s", t, search_s))

-- the debugger: seeking to a rewrite point, validating, bisecting (bisect rows: best of 3
-- runs; a bisect keeps nothing from one run to the next)
local kd = uop.compile(a512:matmul(b512)):kernel(1)
kd:seek(22)
local nrw = kd:stages{quiet = true}[15].rewrites
t = best(20, function() kd:seek(15, nrw // 2) end)
row("seek to a rewrite point (stage 15, matmul 512)", t * 1000, "us", string.format("rewrite %d of %d", nrw // 2, nrw))
local pv = uop.compile(a512:matmul(b512))
pv:run()
t = best(3, function() pv:run{validate = true, quiet = true} end)
row("run + validate: matmul 512x512", t, "ms", "reference: tensor semantics")
local pv1k = uop.compile(a1k:matmul(b1k))
pv1k:run()
t = best(3, function() pv1k:run{validate = true, quiet = true} end)
row("run + validate: matmul 1024x1024", t, "ms", "the largest benchmark workload")
local pvc = uop.compile(x_conv:conv2d(w_conv, {padding = 1}))
pvc:run()
t = best(3, function() pvc:run{validate = true, quiet = true} end)
row("run + validate: conv2d 1x32x56x56, 64 3x3", t, "ms", "reference: tensor semantics")
local pvs = uop.compile(Tensor.rand(64, 4096):softmax(1))
pvs:run()
t = best(3, function() pvs:run{validate = true, quiet = true} end)
row("run + validate: softmax 64x4096", t, "ms", "3 kernels, each validated")
local mm_ref = a512:matmul(b512)
t = best(3, function() uop.reference(mm_ref) end)
row("reference: matmul 512x512", t, "ms", "uop.reference, strided views")
local conv_ref = x_conv:conv2d(w_conv, {padding = 1})
t = best(3, function() uop.reference(conv_ref) end)
row("reference: conv2d 1x32x56x56, 64 3x3, pad 1", t, "ms", "uop.reference")
local a128, b128 = Tensor.rand(128, 128), Tensor.rand(128, 128)
local kb = uop.compile(a128:matmul(b128)):kernel(1)
local first
t = best(3, function() first = kb:bisect{quiet = true} end)
row("k:bisect(): matmul 128x128", t, "ms", first and ("wrong at " .. first) or "no stage wrong")
kb:insert(15, uop.rules{ {name = "mul_to_add32", pattern = "(MUL:int32 a b)", rewrite = function(m) return m.a + m.b end} })
local culprit
t = best(3, function() first, culprit = kb:bisect{quiet = true} end)
row("k:bisect(): matmul 128x128, a wrong rule planted", t, "ms",
    culprit and string.format("stage %d, rewrite %d: %s", first, culprit.index, culprit.rule) or "CULPRIT NOT FOUND")
kb:remove(15)
local a256, b256 = Tensor.rand(256, 256), Tensor.rand(256, 256)
local k256 = uop.compile(a256:matmul(b256)):kernel(1)
t = best(3, function() first = k256:bisect{quiet = true} end)
row("k:bisect(): matmul 256x256", t, "ms", first and ("wrong at " .. first) or "no stage wrong")
t = best(1, function() k256:check(0, {quiet = true, executor = "interpreter"}) end)
row("k:check(0): matmul 256, kernel-AST interpreter", 256 ^ 3 / (t * 1e3), "M MAC/s", string.format("%.0f ms", t))
t = best(1, function() k256:check(0, {quiet = true}) end)
row("k:check(0): matmul 256, compiled with checks", 256 ^ 3 / (t * 1e3), "M MAC/s", string.format("%.0f ms", t))
-- a point past the scheduler's forms, run both ways: the baseline is the linear interpreter
local t_interp = best(1, function() k256:check(13, {quiet = true, executor = "interpreter"}) end)
row("k:check(13): matmul 256, linear interpreter", t_interp, "ms", "baseline")
t = best(1, function() k256:check(13, {quiet = true, executor = "compiled"}) end)
row("k:check(13): matmul 256, compiled with checks", t, "ms", string.format("%.1fx the interpreter's speed", t_interp / t))
local kp512 = uop.compile(a512:matmul(b512)):kernel(1)
kp512:insert(15, uop.rules{ {name = "mul_to_add32", pattern = "(MUL:int32 a b)", rewrite = function(m) return m.a + m.b end} })
t = best(3, function() first, culprit = kp512:bisect{quiet = true} end)
row("k:bisect(): matmul 512x512, a wrong rule planted", t, "ms",
    culprit and string.format("stage %d, rewrite %d: %s", first, culprit.index, culprit.rule) or "CULPRIT NOT FOUND")
local kc = uop.compile(x_conv:conv2d(w_conv, {padding = 1})):kernel(1)
kc:insert(4, uop.rules{ {name = "mul_to_add", pattern = "(MUL:index a b)", rewrite = function(m) return m.a + m.b end} })
t = best(3, function() first, culprit = kc:bisect{quiet = true} end)
row("k:bisect(): conv2d, a wrong rule planted in stage 4", t, "ms",
    culprit and string.format("stage %d, rewrite %d: %s", first, culprit.index, culprit.rule) or "CULPRIT NOT FOUND")
-- each kernel of the softmax benchmark, a wrong rule planted: points of a few million node
-- evaluations, where the interpreters and compiling are close
for ki = 1, 3 do
  local ks = uop.compile(Tensor.rand(64, 4096):softmax()):kernel(ki)
  ks:insert(15, uop.rules{ {name = "mul_to_add32", pattern = "(MUL:int32 a b)", rewrite = function(m) return m.a + m.b end} })
  t = best(3, function() first, culprit = ks:bisect{quiet = true} end)
  row(string.format("k:bisect(): softmax 64x4096 kernel %d, planted", ki), t, "ms",
      culprit and string.format("stage %d, rewrite %d: %s", first, culprit.index, culprit.rule) or "CULPRIT NOT FOUND")
end

-- the gpu target, run in the GPU emulator (the linear interpreter with
-- workgroups, work items and barriers; every access checked): moderate
-- sizes, since each work item's instructions are interpreted one by one
local function gpu_timed(t, n, kernel_opts)
  local p = uop.compile(t, {target = "gpu", select = false, kernel_opts = kernel_opts})
  return p:time(n), p
end
local g64a, g64b = Tensor.rand(64, 64), Tensor.rand(64, 64)
t = gpu_timed(g64a:matmul(g64b), 2, {[1] = {{"LOCAL", 0, 4}, {"LOCAL", 1, 4}, {"GROUP", 0, 4}}})
row("gpu emulated: matmul 64x64", 2 * 64 ^ 3 / (t * 1e3), "MFLOP/s", string.format("%.1f ms, LOCAL 4x4, GROUP 4", t))
local g64k = 64 * 1024
local gx, gy = Tensor.rand(g64k), Tensor.rand(g64k)
t = gpu_timed(gx + gy, 3, {[1] = {{"LOCAL", 0, 64}}})
row("gpu emulated: add 64K float32, LOCAL 64", 3 * 4 * g64k / (t * 1e3), "MB/s", string.format("%.2f ms", t))
t = gpu_timed(gx:sum(), 3, {[1] = {{"GROUP", 0, 64}}})
row("gpu emulated: sum 64K float32, GROUP 64", 4 * g64k / (t * 1e3), "MB/s", string.format("%.2f ms", t))
local gs = Tensor.rand(16, 256)
t, p = gpu_timed(gs:softmax(1), 3, {[1] = {{"GROUPTOP", 0, 16}}, [2] = {{"GROUPTOP", 0, 16}}, [3] = {{"LOCAL", 0, 16}}})
row("gpu emulated: softmax 16x256, GROUPTOP 16", t, "ms", #p:kernels() .. " kernels, exp decomposed")
t = gpu_timed(gx:exp(), 3, {[1] = {{"LOCAL", 0, 64}}})
row("gpu emulated: exp 64K float32, LOCAL 64", 2 * 4 * g64k / (t * 1e3), "MB/s", string.format("%.2f ms, exp2 decomposed", t))
t = gpu_timed(gx:sin(), 2, {[1] = {{"LOCAL", 0, 64}}})
row("gpu emulated: sin 64K float32, LOCAL 64", 2 * 4 * g64k / (t * 1e3), "MB/s", string.format("%.2f ms, sin decomposed", t))
local gxc, gwc = Tensor.rand(1, 8, 16, 16), Tensor.rand(16, 8, 3, 3)
t = gpu_timed(gxc:conv2d(gwc, {padding = 1}), 2, {[1] = {{"LOCAL", 0, 4}, {"LOCAL", 1, 16}}})
row("gpu emulated: conv2d 1x8x16x16, 16 3x3", 2 * 16 * 8 * 9 * 16 * 16 / (t * 1e3), "MFLOP/s",
    string.format("%.1f ms, pad 1, LOCAL 4x16", t))
