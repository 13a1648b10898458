-- test_gpu.lua - the gpu target (uop.compile(t, {target = "gpu"})): its opts
-- (LOCAL, GROUP, GROUPTOP, PADTO, SWAP, NOLOCALS), local buffers and barriers
-- (stage 10), GPU dims (stage 12) and the emulator that runs its kernels.
-- Results are compared with sums done here in plain Lua loops (integer data,
-- so float results are exact) and validated against the reference; the
-- SPECIALs, local buffers and barriers of each program are compared with
-- tinygrad v0.12.0's, captured by scripts/capture_tinygrad_gpu.py into
-- tests/golden/tinygrad_gpu.txt.
local T = ...
local Tensor = uop.Tensor

-- (i % 7) over a shape in row-major order, as a nested table and flat
local function data(rows, cols)
  local t, flat = {}, {}
  for i = 1, rows do
    t[i] = {}
    for j = 1, cols do
      local v = ((i - 1) * cols + (j - 1)) % 7
      t[i][j] = v
      flat[#flat + 1] = v
    end
  end
  return t, flat
end

local function mat(rows, cols) return Tensor.new((data(rows, cols)), "float32") end

local function matmul_lua(n, m, k)
  local a, b = data(n, k), data(k, m)
  local c = {}
  for i = 1, n do
    c[i] = {}
    for j = 1, m do
      local s = 0
      for x = 1, k do s = s + a[i][x] * b[x][j] end
      c[i][j] = s
    end
  end
  return c
end

local function same(got, want, what)
  T.eq(#got, #want, what .. ": rows")
  for i = 1, #want do
    if type(want[i]) == "table" then same(got[i], want[i], what .. "[" .. i .. "]")
    else T.eq(got[i], want[i], what .. "[" .. i .. "]") end
  end
end

-- runs a program validated; the report must say every element matches exactly
local function run_exact(p)
  local _, rep = p:run{validate = true, quiet = true}
  T.ok(rep.ok, rep.text)
  T.ok(rep.text:find("max abs diff 0;", 1, true), rep.text)
end

local function compile(t, opts)
  local p = uop.compile(t, {target = "gpu", select = false})
  for i, o in ipairs(opts) do p:kernel(i):opts(o) end
  return p
end

T.test("target: gpu or cpu, anything else is one line naming uop.compile", function()
  local A = mat(2, 2)
  T.raises('uop.compile: target must be "cpu" or "gpu", got tpu', function() uop.compile(A + 1, {target = "tpu"}) end)
  uop.compile(A + 1, {target = "cpu", select = false})
end)

-- a kernel's opts as one line of text, to compare
local function opts_line(k) return (tostring(select(2, k:opts())):match("^[^\n]*")) end

T.test("the cpu target refuses the opts that need local memory when they are given, naming the opt and the target", function()
  local A = mat(8, 8)
  for _, o in ipairs{{"LOCAL", 0, 4}, {"GROUP", 0, 4}, {"GROUPTOP", 0, 4}} do
    local k = uop.compile(A:matmul(A), {select = false}):kernel(1)
    local before = opts_line(k)
    T.raises("opts refused, the kernel keeps its opts: stage 7 (apply opts): " .. o[1] ..
             ": not an opt of the cpu target (it needs a GPU's local memory", function() k:opts{o} end)
    T.eq(opts_line(k), before, "the opts it had")
    k:seek(7)
  end
  -- SWAP is tinygrad's check: the cpu target's ranges are LOOP, not GLOBAL
  local k = uop.compile(A:matmul(A), {select = false}):kernel(1)
  T.raises("SWAP axis 0 with 1: swap is only for GLOBAL ranges", function() k:opts{{"SWAP", 0, 1}} end)
  -- an axis or an amount that does not fit: refused at once, the hand opts before kept
  k:opts{{"UPCAST", 0, 4}}
  T.raises("UPCAST axis 5: the kernel has 2 output ranges", function() k:opts{{"UPCAST", 5, 2}} end)
  T.raises("UPCAST axis 0: amount 3 does not divide the size 8", function() k:opts{{"UPCAST", 0, 3}} end)
  T.eq(opts_line(k), 'opts {{"UPCAST", 0, 4}}', "the hand opts before")
  T.contains(tostring(select(2, k:opts())), "given by hand")
  -- a refusal leaves the kernel where it stood, at a stage or inside one
  k:seek(12)
  T.raises("opts refused", function() k:opts{{"UPCAST", 5, 2}} end)
  T.eq(k:pos(), 12)
  k:seek(15, 3)
  T.raises("opts refused", function() k:opts{{"UPCAST", 5, 2}} end)
  local stage, rewrite = k:pos()
  T.eq(stage, 15)
  T.eq(rewrite, 3)
  -- a stage 7 that fails whatever the opts (a rule inserted there) does not refuse them
  k:insert(7, uop.rules{ {name = "boom7", pattern = "(RANGE x)", rewrite = function() error("kaboom7") end} })
  k:opts{{"UPCAST", 1, 2}}
  T.eq(opts_line(k), 'opts {{"UPCAST", 1, 2}}', "kept: the failure is the inserted rule's")
end)

T.test("the cpu target takes PADTO and NOLOCALS as tinygrad does: the padded kernel computes the same", function()
  local A = Tensor.new({{1, 2, 3}, {4, 5, 6}, {7, 8, 9}}, "float32")
  local B = Tensor.new({{10, 11, 12}, {13, 14, 15}, {16, 17, 18}}, "float32")
  for _, opts in ipairs{{{"PADTO", 0, 4}}, {{"PADTO", 1, 4}}, {{"PADTO", 2, 4}}, {{"PADTO", 0, 4}, {"UPCAST", 0, 4}},
                        {{"PADTO", 2, 4}, {"UNROLL", 0, 4}}, {{"NOLOCALS"}}} do
    local C = A:matmul(B)
    local p = uop.compile(C, {kernel_opts = {[1] = opts}})
    local _, rep = p:run{validate = true, quiet = true}
    T.ok(rep.ok, tostring(rep))
    T.eq(tostring(C), "[[ 84.  90.  96.]\n [201. 216. 231.]\n [318. 342. 366.]]")
  end
  -- the padded range is 4 long; the loads and the store past 3 are gated off
  local k = uop.compile(A:matmul(B), {kernel_opts = {[1] = {{"PADTO", 0, 4}}}}):kernel(1)
  k:seek(7)
  local text = tostring(k:listing())
  T.ok(text:find("CONST +index +arg=4\n"), text)
  T.ok(text:find("CMPLT"), text)
  -- tinygrad's checks: a reduce padded only when zeros are safe, at most four times the work
  local e = uop.compile(Tensor.rand(10):exp():sum(), {kernel_opts = {[1] = {{"PADTO", 0, 12}}}})
  T.raises("PADTO axis 0: cannot pad the reduce", function() e:run() end)
  local w = uop.compile(Tensor.rand(3, 3):sum(1), {kernel_opts = {[1] = {{"PADTO", 0, 16}}}})
  T.raises("PADTO axis 0: padding adds more than four times the work", function() w:run() end)
end)

T.test("the gpu target refuses THREAD and opts that do not apply", function()
  local A = mat(8, 8)
  local function fails(opts, want)
    local k = uop.compile(A:matmul(A), {target = "gpu", select = false}):kernel(1)
    T.raises(want, function() k:opts(opts) end)
  end
  fails({{"THREAD", 0, 2}}, "THREAD: the gpu target has no threads")
  fails({{"LOCAL", 2, 2}}, "LOCAL axis 2: local is for GLOBAL/LOOP ranges, not REDUCE")
  fails({{"GROUP", 1, 2}}, "GROUP axis 1: the kernel has 1 REDUCE range")
  fails({{"NOLOCALS"}, {"LOCAL", 0, 2}}, "LOCAL axis 0: NOLOCALS was applied")
  fails({{"LOCAL", 0, 2}, {"NOLOCALS"}}, "NOLOCALS: the kernel already has a LOCAL range")
  fails({{"GROUP", 0, 8}, {"UPCAST", 0, 16384}}, "needs")
  fails({{"SWAP", 0, 2}}, "SWAP axis 0 with 2: swap is only for GLOBAL ranges")
  fails({{"PADTO", 0, 32}}, "PADTO axis 0: padding adds more than four times the work")
end)

T.test("matmul with LOCAL and GROUP: exact, and right at every point", function()
  local p = compile(mat(16, 16):matmul(mat(16, 16)), {{{"LOCAL", 0, 4}, {"GROUP", 0, 8}}})
  run_exact(p)
  local k = p:kernel(1)
  for n = 0, 22 do
    local r = k:check(n, {quiet = true})
    T.ok(r.ok, "stage " .. n .. ": " .. tostring(r.text))
  end
  local C = mat(16, 16):matmul(mat(16, 16))
  uop.compile(C, {target = "gpu", select = false, kernel_opts = {[1] = {{"LOCAL", 0, 4}, {"GROUP", 0, 8}}}}):run()
  same(C:tolist(), matmul_lua(16, 16, 16), "C")
end)

T.test("stage 10 makes a DEFINE_LOCAL, its STORE and a BARRIER; stage 12 SPECIAL gidx/lidx", function()
  local p = compile(mat(8, 8):matmul(mat(8, 8)), {{{"LOCAL", 0, 4}, {"GROUP", 0, 4}}})
  local k = p:kernel(1)
  local function ops(n)
    local seen = {}
    for _, u in ipairs(k:root(n):toposort()) do
      seen[u:op()] = (seen[u:op()] or 0) + 1
    end
    return seen
  end
  local at9, at10 = ops(9), ops(10)
  T.eq(at9.BUFFERIZE, 1)
  T.eq(at9.DEFINE_LOCAL, nil)
  T.eq(at10.BUFFERIZE, nil)
  T.eq(at10.DEFINE_LOCAL, 1)
  T.eq(at10.BARRIER, 1)
  for _, u in ipairs(k:root(10):toposort()) do
    -- numbered from 0, as tinygrad's temp0
    if u:op() == "DEFINE_LOCAL" then T.eq(u:arg(), 0) end
  end
  local at12 = ops(12)
  T.eq(at12.SPECIAL, 4)
  local names = {}
  for _, u in ipairs(k:root(12):toposort()) do
    if u:op() == "SPECIAL" then names[#names + 1] = u:arg() .. "=" .. u:src()[1]:arg() end
    T.ok(not (u:op() == "RANGE" and (tostring(u:arg()):find("LOCAL") or tostring(u:arg()):find("GLOBAL"))),
         "no GLOBAL/LOCAL range left: " .. tostring(u:arg()))
  end
  table.sort(names)
  T.eq(table.concat(names, ","), "gidx0=8,gidx1=2,lidx0=4,lidx1=4")
end)

T.test("sums with GROUPTOP and GROUP: exact", function()
  local _, flat = data(8, 64)
  local want = {}
  for i = 1, 8 do
    local s = 0
    for j = 1, 64 do s = s + flat[(i - 1) * 64 + j] end
    want[i] = s
  end
  local S = mat(8, 64):sum(1)
  local p = compile(S, {{{"GROUPTOP", 0, 16}}})
  run_exact(p)
  p:run()
  same(S:tolist(), want, "row sums")
  local _, all = data(1, 256)
  local total = 0
  for _, v in ipairs(all) do total = total + v end
  local V = Tensor.new(all, "float32")
  local p2 = compile(V:sum(), {{{"GROUP", 0, 16}}})
  run_exact(p2)
  p2:run()
  T.eq(V:sum():item(), total)
end)

T.test("softmax with GROUPTOP, GROUP and LOCAL validates", function()
  local p = compile(mat(4, 32):softmax(), {{{"GROUPTOP", 0, 8}}, {{"GROUP", 0, 8}}, {{"LOCAL", 0, 2}}})
  local _, rep = p:run{validate = true, quiet = true}
  T.ok(rep.ok, rep.text)
  for i = 1, 3 do
    for _, n in ipairs{9, 12, 22} do
      local r = p:kernel(i):check(n, {quiet = true})
      T.ok(r.ok, "kernel " .. i .. " stage " .. n .. ": " .. tostring(r.text))
    end
  end
end)

T.test("NOLOCALS, SWAP and PADTO run exactly", function()
  run_exact(compile(mat(8, 8):matmul(mat(8, 8)), {{{"NOLOCALS"}}}))
  local P = mat(4, 8):permute(1, 0):contiguous()
  run_exact(compile(P, {{{"SWAP", 0, 1}}}))
  local p = compile(mat(6, 6):matmul(mat(6, 6)), {{{"PADTO", 0, 8}, {"LOCAL", 0, 4}}})
  run_exact(p)
  -- the padded range: size 8, and the reads past row 6 gated off
  local sizes = {}
  for _, u in ipairs(p:kernel(1):root(7):toposort()) do
    if u:op() == "RANGE" then sizes[#sizes + 1] = u:src()[1]:arg() end
  end
  table.sort(sizes)
  T.eq(table.concat(sizes, ","), "2,4,6,6")
  for n = 0, 22 do
    local r = p:kernel(1):check(n, {quiet = true})
    T.ok(r.ok, "padto stage " .. n .. ": " .. tostring(r.text))
  end
end)

T.test("limits: local memory and work-item dims the GPU cannot have are one-line errors", function()
  T.raises("GROUP axis 0: the grouped reduce needs 65536 bytes of local memory, more than 49152",
           function() compile(Tensor.new((select(2, data(1, 1 << 16))), "float32"):sum(), {{{"GROUP", 0, 16384}}}) end)
  -- 1031 is prime: no split fits it under 1024 work items per dim
  local p2 = compile(Tensor.new((select(2, data(1, 1031))), "float32") + 1, {{{"LOCAL", 0, 1031}}})
  T.raises("stage 12 (add GPU dims)", function() p2:run() end)
  T.raises("cannot fit the lidx dims into the GPU's limits", function() p2:run() end)
  -- a second GROUP of the same reduce, and a grouped max, still exact
  run_exact(compile(mat(16, 16):sum(1), {{{"GROUP", 0, 4}, {"GROUP", 0, 2}}}))
  run_exact(compile(mat(16, 64):max(1), {{{"GROUP", 0, 8}}}))
end)

-- the cases of scripts/capture_tinygrad_gpu.py, built with the same data
local CASES = {
  matmul16 = function() return mat(16, 16):matmul(mat(16, 16)) end,
  matmul8 = function() return mat(8, 8):matmul(mat(8, 8)) end,
  matmul_locals = function() return mat(16, 16):matmul(mat(16, 16)) end,
  sum_grouptop = function() return mat(8, 64):sum(1) end,
  sum_all = function() return Tensor.new(select(2, data(1, 256)), "float32"):sum() end,
  softmax = function() return mat(4, 32):softmax() end,
  nolocals = function() return mat(8, 8):matmul(mat(8, 8)) end,
  swap = function() return mat(4, 8):permute(1, 0):contiguous() end,
  padto = function() return mat(6, 6):matmul(mat(6, 6)) end,
  split_local = function() return Tensor.new(select(2, data(1, 4096)), "float32") + 1 end,
  five_locals = function()
    return Tensor.new(select(2, data(1, 1024)), "float32"):reshape(4, 4, 4, 4, 4):permute(4, 3, 2, 1, 0):contiguous()
  end,
  big_grid = function() return mat(4, 70000) + 1 end,
}

local function read_golden()
  local rows = {}
  for line in io.lines("tests/golden/tinygrad_gpu.txt") do
    if not line:match("^#") then
      local name, ki, opts, specials, locals, bars, kname = line:match("^(%S+) (%d+) (%S+) (%S+) (%S+) (%d+) (%S+)$")
      assert(name or line:match("^heuristic "), "bad golden line: " .. line)
      if name then
        local o = {}
        for op, axis, amount in opts:gmatch("(%u+):(%d+):(%d+)") do o[#o + 1] = {op, tonumber(axis), tonumber(amount)} end
        -- the name without the n1, n2, ... tinygrad appends to a name its process gave before
        rows[#rows + 1] = {name = name, kernel = tonumber(ki) + 1, opts = o, specials = specials, locals = locals,
                           barriers = tonumber(bars), kname = kname:gsub("n%d+$", "")}
      end
    end
  end
  return rows
end

T.test("SPECIALs, local buffers, barriers and kernel names are tinygrad's, and every golden case validates", function()
  local rows = read_golden()
  T.ok(#rows >= 14, "golden rows")
  local by_case = {}
  for _, r in ipairs(rows) do
    by_case[r.name] = by_case[r.name] or {}
    by_case[r.name][r.kernel] = r
  end
  for name, ks in pairs(by_case) do
    local opts = {}
    for i, r in pairs(ks) do opts[i] = r.opts end
    local p = uop.compile(CASES[name](), {target = "gpu", select = false, kernel_opts = opts})
    T.eq(#p:kernels(), #ks, name .. ": kernels")
    local _, rep = p:run{validate = true, quiet = true}
    T.ok(rep.ok, name .. ": " .. rep.text)
    for i, r in pairs(ks) do
      local specials, locals, bars = {}, {}, 0
      for _, u in ipairs(p:kernel(i):root(22):src()) do
        if u:op() == "SPECIAL" then specials[#specials + 1] = u:arg() .. "=" .. u:src()[1]:arg() end
        if u:op() == "DEFINE_LOCAL" then locals[#locals + 1] = tostring(u:dtype()):match("ptr%((%d+)") end
        if u:op() == "BARRIER" then bars = bars + 1 end
      end
      table.sort(specials)
      local what = name .. " kernel " .. i
      T.eq(#specials > 0 and table.concat(specials, ",") or "-", r.specials, what .. ": SPECIALs")
      T.eq(#locals > 0 and table.concat(locals, ",") or "-", r.locals, what .. ": local buffers")
      T.eq(bars, r.barriers, what .. ": barriers")
      T.eq(select(2, p:kernel(i):name()), r.kname, what .. ": name with its opts")
    end
  end
end)

T.test("the GPU kernel has no host code: k:llvm() says it runs in the emulator", function()
  local k = compile(mat(4, 4) + 1, {{{"LOCAL", 0, 4}}}):kernel(1)
  T.raises("runs in the GPU emulator", function() return k:llvm() end)
end)

-- the heuristic (uop.compile's default opts) for the gpu target, against
-- tinygrad's hand_coded_optimizations with a renderer that has locals, on
-- the programs the cpu heuristic test uses (and a matvec)
local HEURISTIC = T.load("heuristic_cases.lua")
-- known differences: name = {kernels = uopdb's kernel count} (none now: the
-- 1M-element sum is split in two kernels as tinygrad splits it)
local KNOWN = {}

T.test("the gpu heuristic chooses tinygrad's opts (GROUPTOP, matvec, LOCAL)", function()
  local checked = 0
  for line in io.lines("tests/golden/tinygrad_gpu.txt") do
    local name, ki, want = line:match("^heuristic (%S+) (%d+) (%S+)$")
    if name then
      ki = tonumber(ki) + 1
      local p = uop.compile(HEURISTIC[name](), {target = "gpu", select = false})
      if KNOWN[name] and ki > KNOWN[name].kernels then
        T.eq(#p:kernels(), KNOWN[name].kernels, name .. ": kernels (a known difference)")
      else
        local got = {}
        for _, o in ipairs(p:kernel(ki):opts()) do got[#got + 1] = o[1] .. ":" .. o[2] .. ":" .. o[3] end
        T.eq(#got > 0 and table.concat(got, ",") or "-", want, name .. " kernel " .. ki)
        checked = checked + 1
      end
    end
  end
  T.ok(checked >= 18, "kernels compared: " .. checked)
end)

T.test("the gpu heuristic's kernels run validated (matvec: GROUP and UPCAST through local memory)", function()
  for _, name in ipairs{"matvec", "small", "mean", "pad_flip", "conv_small", "matmul16", "sum_axis", "permute",
                        "expand_add"} do
    local p = uop.compile(HEURISTIC[name](), {target = "gpu", select = false})
    local _, rep = p:run{validate = true, quiet = true}
    T.ok(rep.ok, name .. ": " .. rep.text)
  end
  local p = uop.compile(HEURISTIC.matvec(), {target = "gpu", select = false})
  local k = p:kernel(1)
  local _, why = k:opts()
  T.contains(tostring(why), "matvec: the first reduce axis is a term of the first buffer's index")
  for _, n in ipairs{9, 10, 12, 14, 22} do
    local r = k:check(n, {quiet = true})
    T.ok(r.ok, "matvec stage " .. n .. ": " .. tostring(r.text))
  end
end)

T.test("k:asm{target = \"ptx\"}: the GPU kernel as PTX, through LLVM's NVPTX backend", function()
  local k = compile(mat(8, 8):matmul(mat(8, 8)), {{{"LOCAL", 0, 4}, {"GROUP", 0, 4}}}):kernel(1)
  local ptx = k:asm{target = "ptx"}
  T.eq(ptx.kind, "asm")
  local text = tostring(ptx)
  for _, want in ipairs{".visible .entry r_8_8_8(", ".shared", "bar.sync", "%ctaid.x", "%ctaid.y", "%tid.x", "%tid.y",
                        "st.shared.f32", "ld.shared.f32", "st.global.f32"} do
    T.contains(text, want)
  end
  -- without locals there is no shared memory and no barrier
  local k2 = compile(mat(8, 8) + 1, {{{"LOCAL", 0, 4}}}):kernel(1)
  local t2 = tostring(k2:asm{target = "ptx"})
  T.contains(t2, "%tid.x")
  T.ok(not t2:find("bar.sync", 1, true) and not t2:find(".shared", 1, true), t2)
  T.raises('asm: target must be "ptx" or "host", got spirv', function() return k:asm{target = "spirv"} end)
  -- LLVM intrinsics NVPTX cannot lower (they need a libm) are one-line errors, not the end of the process
  local x = Tensor.new({1, 2, 3, 4}, "float32")
  local native = uop.compile(x:exp(), {target = "gpu", transcendentals = "native", select = false}):kernel(1)
  T.raises("NVPTX has no instruction for it (LLVM would need a libm call); compile with transcendentals",
           function() return native:asm{target = "ptx"} end)
  local decomposed = uop.compile(x:exp(), {target = "gpu", select = false}):kernel(1)
  T.contains(tostring(decomposed:asm{target = "ptx"}), ".visible .entry")
end)

-- tinygrad v0.12.0 pads a sum when no op in it is one of its UnsafePad ops
-- (RECIPROCAL, LOG2, EXP2, IDIV, POW); cos, sin(pi/2 - x), is not among
-- them but is 1 at 0, so each padded element adds 1. tinygrad computes this
-- mean as 0.5522699356079102 (captured with its CPU renderer and the same
-- opt); the true mean is 0.21893656. uopdb applies the opt as tinygrad does,
-- gets tinygrad's number, and validation shows the difference.
T.test("PADTO of a sum of cos: tinygrad's wrong mean, caught by validation", function()
  local v = Tensor.new({{4}, {-1}, {0}, {-1}, {-1}, {-4}}, "int32")
  local m = v:cos():mean({0}, {keepdim = true})
  local p = uop.compile(m, {target = "gpu", select = false, kernel_opts = {[1] = {{"PADTO", 0, 4}}}})
  local outs, rep = p:run{validate = true, quiet = true}
  T.ok(not rep.ok, rep.text)
  T.contains(rep.text, "differ from the reference")
  local got = uop.buffer_values(outs[1])[1]
  T.ok(math.abs(got - 0.5522699356079102) < 1e-6, "tinygrad's padded mean, got " .. tostring(got))
end)

-- the random programs of tests/fuzz/pipeline_gen.lua on the gpu target, each
-- kernel with up to three random GPU opts that stage 7 takes (PADTO left
-- out: see above), every program validated against the reference
T.test("random tensor programs with random GPU opts run validated", function()
  local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "tests/lua"
  local gen = dofile(here .. "/../fuzz/pipeline_gen.lua")
  local cpu_render = gen.render
  local pick = [[
local C = {{"GROUP", 0, 2}, {"GROUPTOP", 0, 2}, {"LOCAL", 0, 2}, {"LOCAL", 1, 2}, {"UPCAST", 0, 2}, {"UNROLL", 0, 2},
           {"SWAP", 0, 1}, {"NOLOCALS"}, {"GROUP", 0, 4}, {"LOCAL", 0, 4}, {"GROUP", 1, 2}, {"LOCAL", 2, 2}, {"UPCAST", 1, 2}}
for i = 1, #p:kernels() do
  local k = p:kernel(i)
  for _ = 1, 6 do
    local o = {}
    for _ = 1, math.random(1, 3) do o[#o + 1] = C[math.random(#C)] end
    if pcall(k.opts, k, o) then GPU_OPTS_APPLIED = (GPU_OPTS_APPLIED or 0) + 1; break end
    k:opts{}
  end
end
]]
  gen.render = function(spec)
    local s = {}
    for k, v in pairs(spec) do s[k] = v end
    s.opts = {}
    return (cpu_render(s):gsub("local p = uop.compile%((.-)%)\n",
                               function(x) return "local p = uop.compile(" .. x .. ', {target = "gpu"})\n' .. pick end))
  end
  math.randomseed(12)
  GPU_OPTS_APPLIED = 0
  local reports = {}
  local n = 80
  local checked, failures = gen.run{count = n, seed = 12, no_shrink = true,
                                    report = function(text) reports[#reports + 1] = text end}
  T.eq(checked, n, "programs checked")
  T.ok(#failures == 0, #failures .. " of " .. n .. " programs failed:\n" .. table.concat(reports, "\n"))
  T.ok(GPU_OPTS_APPLIED > n // 2, "kernels with GPU opts: " .. GPU_OPTS_APPLIED)
  GPU_OPTS_APPLIED = nil
end)
