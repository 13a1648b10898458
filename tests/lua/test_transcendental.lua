-- test_transcendental.lua - stage 18's decompositions for tinygrad's CPU LLVM
-- renderer: the exp+sigmoid kernel is tinygrad v0.12.0's program instruction
-- for instruction (tests/golden/tinygrad_exp_sigmoid_linear.txt, captured by
-- scripts/capture_tinygrad_stage18.py); exp2, log2, sin and the ops built on
-- them agree through the JIT with libm (plain Lua) to tinygrad's accuracy,
-- special values included, and with the reference; THREEFRY agrees with a
-- plain-Lua threefry2x32; {transcendentals = "native"} keeps the intrinsics.
local T = ...

-- ---- float32 helpers in plain Lua ----
local function f32(x) return (string.unpack("<f", string.pack("<f", x))) end
-- the float32 bit pattern as an ordered integer: adjacent floats differ by 1
local function ordered(x)
  local b = string.unpack("<i4", string.pack("<f", x))
  return b < 0 and -(b & 0x7fffffff) or b
end
-- the distance in float32 ulps between got and want (both special: 0 when the same)
local function ulps(got, want)
  if want ~= want then return got ~= got and 0 or math.huge end
  if got ~= got then return math.huge end
  if want == math.huge or want == -math.huge or got == math.huge or got == -math.huge then
    return got == want and 0 or math.huge
  end
  return math.abs(ordered(got) - ordered(want))
end
local LOG2E = f32(1 / math.log(2))
local LN2 = f32(math.log(2))

-- ---- the golden program ----

local function arg_text(a)
  if a == nil then return "-" end
  if type(a) == "table" then return tostring(a[1]) .. " " .. tostring(a[2]):gsub("^AxisType%.", "") end
  if type(a) == "number" then
    if a ~= a then return "nan" end
    if a == math.huge then return "inf" end
    if a == -math.huge then return "-inf" end
    return string.format("%.17g", a)
  end
  return tostring(a)
end

local function golden_arg(s)
  if s == "-" or s == "true" or s == "false" or s == "inf" or s == "-inf" or s == "nan" or s:find(" ") then return s end
  return arg_text(tonumber(s))
end

-- instructions {op, dtype, arg, srcs = {positions from 0}}
local function read_golden(path)
  local prog = {}
  for line in io.lines(path) do
    local op, dt, a, s = line:match("^([^\t]*)\t([^\t]*)\t([^\t]*)\t?(.*)$")
    local srcs = {}
    for n in s:gmatch("%d+") do srcs[#srcs + 1] = tonumber(n) end
    prog[#prog + 1] = {op = op, dtype = dt, arg = golden_arg(a), srcs = srcs}
  end
  return prog
end

local function linear_program(k)
  k:seek(22)
  local lin = k:root()
  local pos, prog = {}, {}
  for i, u in ipairs(lin:src()) do pos[u:id()] = i - 1 end
  for _, u in ipairs(lin:src()) do
    local srcs = {}
    for _, s in ipairs(u:src()) do srcs[#srcs + 1] = pos[s:id()] end
    prog[#prog + 1] = {op = u:op(), dtype = tostring(u:dtype()), arg = u:op() == "SINK" and "-" or arg_text(u:arg()), srcs = srcs}
  end
  return prog
end

-- The program as lines that do not depend on numbering: constants by dtype
-- and value, other instructions in order, a source named by its constant
-- or by its place among the non-constants.  (tinygrad orders the constants
-- at the top by Python's sort of (value, dtype) tuples, which nan makes
-- depend on the input order; the rest of the order is compared exactly.)
local function canonical(prog)
  local name, consts, lines = {}, {}, {}
  for i, ins in ipairs(prog) do
    if ins.op == "CONST" then
      name[i - 1] = "CONST " .. ins.dtype .. " " .. ins.arg
      consts[#consts + 1] = name[i - 1]
    else
      name[i - 1] = "#" .. #lines
      local s = {}
      for _, p in ipairs(ins.srcs) do s[#s + 1] = name[p] or ("?" .. p) end
      lines[#lines + 1] = string.format("%s %s %s (%s)", ins.op, ins.dtype, ins.arg, table.concat(s, ", "))
    end
  end
  table.sort(consts)
  return consts, lines
end

local function x16()
  local v = {}
  for i = 1, 16 do v[i] = (i - 8) * 0.75 end
  return Tensor.new(v, "float32")
end

T.test("the exp+sigmoid kernel after stage 22 is tinygrad v0.12.0's CPU LLVM program, up to numbering", function()
  local want = read_golden("tests/golden/tinygrad_exp_sigmoid_linear.txt")
  local x = x16()
  local k = uop.compile(x:exp() + x:sigmoid(), {opts = "none", select = false}):kernel(1)
  local got = linear_program(k)
  T.eq(#got, #want, "instructions")
  local wc, wl = canonical(want)
  local gc, gl = canonical(got)
  T.eq(table.concat(gc, "\n"), table.concat(wc, "\n"), "constants")
  for i = 1, math.max(#wl, #gl) do T.eq(gl[i], wl[i], "instruction " .. i .. " (not counting constants)") end
end)

T.test("stage 18 decomposes EXP2 (xexp2) and the trace names the rule; native keeps the intrinsic", function()
  local x = x16()
  local k = uop.compile(x:exp2(), {opts = "none", select = false}):kernel(1)
  k:seek(18)
  T.ok(not k:listing():find("EXP2", 1, true), k:listing())
  T.contains(tostring(k:rules(18)), "xexp2")
  local n = uop.compile(x:exp2(), {opts = "none", select = false, transcendentals = "native"}):kernel(1)
  n:seek(22)
  T.contains(n:listing(), "EXP2")
  T.eq(n:stages()[18].runs, "pm_decomp_native")
  T.eq(k:stages()[18].runs, "pm_decomp")
  T.eq(#n:root():src() < 20, true, "native program is short")
  T.raises("transcendentals must be \"native\" or \"decomposed\"", function() uop.compile(x, {transcendentals = "fast"}) end)
end)

-- ---- values through the JIT against libm ----

-- inputs: a spread of ordinary values and the special ones
local function inputs(lo, hi, n, extra)
  local v = {}
  for i = 0, n - 1 do v[#v + 1] = f32(lo + (hi - lo) * i / (n - 1)) end
  for _, e in ipairs(extra) do v[#v + 1] = f32(e) end
  return v
end
local SPECIAL = {math.huge, -math.huge, 0 / 0, 0.0}

-- runs f(tensor) through the JIT (validated against the reference) and
-- checks every element within maxulp of want(x) computed in Lua; also -0
-- (made in the kernel as 0 * -1) when negzero_want is given
local function check(what, vals, f, want, maxulp, opts)
  local t = Tensor.new(vals, "float32")
  local out = f(t)
  local p = uop.compile(out, {select = false, transcendentals = opts and opts.native and "native" or nil})
  local outs, rep = p:run{validate = true, quiet = true}
  T.ok(rep.ok, what .. ": " .. rep.text)
  local got = uop.buffer_values(outs[1])
  local worst, at = 0, nil
  for i, x in ipairs(vals) do
    local w = f32(want(x))
    local d = ulps(got[i], w)
    if d > worst then worst, at = d, i end
  end
  if os.getenv("ULP_REPORT") then print(what, worst) end
  T.ok(worst <= maxulp, string.format("%s: %s ulp at x=%.9g: got %.9g, want %.9g", what, tostring(worst),
    at and vals[at] or 0, at and got[at] or 0, at and f32(want(vals[at])) or 0))
  return got
end

local function negzero(f)
  local z = Tensor.new({0.0}, "float32"):mul(-1)
  return uop.buffer_values(select(1, uop.compile(f(z), {select = false}):run())[1])[1]
end

local function exp2(x) return 2.0 ^ x end
local function log2(x) return math.log(x, 2) end

T.test("exp2 through the decomposition is within 1 ulp of libm, with inf, -inf, nan, 0 and the limits", function()
  local v = inputs(-30, 30, 241, {127.9, 128, 200, -126, -149, -149.5, -150, -200, 1e-8, -1e-8})
  for _, s in ipairs(SPECIAL) do v[#v + 1] = s end
  local got = check("exp2", v, function(t) return t:exp2() end, exp2, 1)
  T.eq(got[#v - 3], math.huge)   -- exp2(inf)
  T.eq(got[#v - 2], 0.0)         -- exp2(-inf)
  T.ok(got[#v - 1] ~= got[#v - 1], "exp2(nan) is nan")
  T.eq(got[#v], 1.0)
  T.eq(negzero(function(t) return t:exp2() end), 1.0)
end)

T.test("log2 through the decomposition is within 1 ulp of libm, with denormals, 0, -0, negatives, inf, nan", function()
  local v = inputs(0.001, 1000, 241, {1e-38, 1e-40, 1.4e-45, 3.4e38, 1, 2, 0.5, -1, -1e-30})
  for _, s in ipairs(SPECIAL) do v[#v + 1] = s end
  local got = check("log2", v, function(t) return t:log2() end, log2, 1)
  T.eq(got[#v - 3], math.huge)   -- log2(inf)
  T.ok(got[#v - 2] ~= got[#v - 2], "log2(-inf) is nan")
  T.ok(got[#v - 1] ~= got[#v - 1], "log2(nan) is nan")
  T.eq(got[#v], -math.huge)      -- log2(0)
  T.eq(negzero(function(t) return t:log2() end), -math.huge)
end)

-- below 30 the reduction is Cody-Waite's, within 2 ulp; from 30 on tinygrad
-- uses Payne-Hanek with a float32 remainder, whose results (identical to
-- tinygrad v0.12.0's CPU_LLVM=1 run: sin(1e5) = 0.0357488506) are within 16 ulp
T.test("sin through the decomposition: 2 ulp below 30, 16 ulp for large arguments (Payne-Hanek), specials", function()
  check("sin small", inputs(-29.9, 29.9, 321, {1e-3, -1e-3, 1e-30}), function(t) return t:sin() end, math.sin, 2)
  local v = inputs(-40, 40, 81, {29.9, 30, 30.1, 1000, 39800, 1e5, 1e6, 12345.678, 1e10, 1e20, 1e30, 3.4e38, -1e7})
  for _, s in ipairs(SPECIAL) do v[#v + 1] = s end
  local got = check("sin", v, function(t) return t:sin() end, math.sin, 16)
  T.ok(got[#v - 3] ~= got[#v - 3], "sin(inf) is nan")
  T.ok(got[#v - 2] ~= got[#v - 2], "sin(-inf) is nan")
  T.ok(got[#v - 1] ~= got[#v - 1], "sin(nan) is nan")
  T.eq(got[#v], 0.0)
  local nz = negzero(function(t) return t:sin() end)
  T.ok(nz == 0 and 1 / nz == -math.huge, "sin(-0) is -0")
end)

-- the Tensor ops round each float32 step, so the expected value does too
T.test("exp, log, cos and sigmoid through the decomposition agree with libm on their float32 steps", function()
  local v = inputs(-20, 20, 161, {88, 88.8, -87, -104})
  check("exp", v, function(t) return t:exp() end, function(x) return exp2(f32(x * LOG2E)) end, 1)
  check("sigmoid", v, function(t) return t:sigmoid() end,
    function(x) return 1 / f32(1 + f32(exp2(f32(x * f32(-1 / math.log(2)))))) end, 2)
  check("cos", v, function(t) return t:cos() end, function(x) return math.sin(f32(f32(math.pi / 2) - x)) end, 2)
  local pos = inputs(0.01, 100, 161, {1e-30, 1e30})
  check("log", pos, function(t) return t:log() end, function(x) return f32(log2(x)) * LN2 end, 2)
  -- and loosely against the functions themselves
  check("exp vs math.exp", inputs(-10, 10, 81, {}), function(t) return t:exp() end, math.exp, 64)
  check("log vs math.log", pos, function(t) return t:log() end, math.log, 4)
end)

T.test("sqrt is pow(x, 0.5) through exp2/log2 and max a compare and select, as tinygrad's CPU LLVM renderer has them", function()
  local v = inputs(0, 1000, 201, {1e-30, 1e30, math.huge})
  local k = uop.compile(Tensor.new(v, "float32"):sqrt(), {select = false}):kernel(1)
  k:seek(18)
  T.ok(not k:listing():find("SQRT", 1, true), "SQRT decomposed")
  -- tinygrad's sqrt on this target: exp2(0.5*log2(x)), within 16 ulp (9 measured)
  check("sqrt", v, function(t) return t:sqrt() end, math.sqrt, 16)
  check("sqrt native", v, function(t) return t:sqrt() end, math.sqrt, 0, {native = true})
  local mk = uop.compile(Tensor.new(inputs(-5, 5, 40, {}), "float32"):max(), {select = false}):kernel(1)
  mk:seek(18)
  T.ok(not mk:listing():find("MAX", 1, true), "MAX decomposed")
  T.eq(Tensor.new(inputs(-5, 5, 40, {}), "float32"):max():item(), 5.0)
end)

T.test("native transcendentals are libm's within 1 ulp too", function()
  check("exp2 native", inputs(-30, 30, 61, {}), function(t) return t:exp2() end, exp2, 1, {native = true})
  check("sin native", inputs(-40, 40, 61, {}), function(t) return t:sin() end, math.sin, 1, {native = true})
end)

-- ---- THREEFRY ----

-- threefry2x32 in plain Lua on 64-bit integers (the random bits of Tensor.rand)
local M32 = 0xffffffff
local function rotl(v, r) return ((v << r) | (v >> (32 - r))) & M32 end
local function threefry(x, key)
  local x0, x1 = x & M32, (x >> 32) & M32
  local k0, k1 = key & M32, (key >> 32) & M32
  local ks = {k1, (k0 ~ k1 ~ 0x1BD11BDA) & M32, k0}
  local rot = {{13, 15, 26, 6}, {17, 29, 16, 24}}
  local a, b = (x0 + ks[3]) & M32, (x1 + ks[1]) & M32
  for i = 0, 4 do
    for _, r in ipairs(rot[i % 2 + 1]) do
      a = (a + b) & M32
      b = a ~ rotl(b, r)
    end
    a = (a + ks[i % 3 + 1]) & M32
    b = (b + ks[(i + 1) % 3 + 1] + i + 1) & M32
  end
  return (b << 32) | a
end

local THREEFRY_AST = [[
%0 = DEFINE_GLOBAL uint64.ptr(6) arg=0
%1 = DEFINE_GLOBAL uint64.ptr(6) arg=1
%2 = DEFINE_GLOBAL uint64.ptr(6) arg=2
%3 = CONST index arg=6
%4 = RANGE index (%3) arg=(0, LOOP)
%5 = INDEX uint64.ptr(6) (%0, %4)
%6 = INDEX uint64 (%1, %4)
%7 = INDEX uint64 (%2, %4)
%8 = THREEFRY uint64 (%6, %7)
%9 = STORE void (%5, %8)
%10 = END void (%9, %4)
%11 = SINK void (%10)
]]

T.test("THREEFRY becomes threefry2x32 in 32-bit ops and agrees with a plain-Lua threefry2x32", function()
  local xs = {0, 1, 0x123456789abcdef0, -1, 42, 0x00000000ffffffff}
  local keys = {0, 0, 0x0fedcba987654321, -1, 1337, 0x7fffffff00000000}
  local want = {}
  for i = 1, #xs do want[i] = threefry(xs[i], keys[i]) end
  -- a known answer (Random123's threefry2x32_20 on zero counter and key)
  T.eq(threefry(0, 0), (0x99ba4efe << 32) | 0x6b200159)
  for _, native in ipairs({false, true}) do
    local p = uop.compile(uop.parse(THREEFRY_AST), {buffers = {[1] = xs, [2] = keys}, select = false,
      transcendentals = native and "native" or nil})
    local k = p:kernel(1)
    k:seek(18)
    T.ok(not k:listing():find("THREEFRY", 1, true), "THREEFRY decomposed")
    T.contains(tostring(k:rules(18)), "threefry2x32")
    local outs = p:run()
    local got = uop.buffer_values(outs[1])
    for i = 1, #xs do T.eq(got[i], want[i], string.format("threefry(%x, %x)", xs[i], keys[i])) end
  end
end)
