-- test_semantics.lua - numeric semantics that the JIT, the tensor reference
-- and the interpreters share, equal to tinygrad v0.12.0's CPU LLVM backend
-- (CPU=1 CPU_LLVM=1): MAX and "<" with NaN, float16 rounding after every op,
-- uint64 to float.  Each case runs through the JIT with validation (the JIT
-- against the reference), is compared with the values tinygrad gives, and is
-- checked at every point 0..22 of its kernels (the kernel-AST interpreter at
-- the scheduler's point, the linear-program interpreter after it).
local T = ...
local d = uop.dtypes
local nan = 0 / 0

local function show(v)
  if type(v) ~= "table" then return tostring(v) end
  local s = {}
  for i, x in ipairs(v) do s[i] = show(x) end
  return "{" .. table.concat(s, ", ") .. "}"
end

local N = T.load("nested.lua")
local flat = N.flat

-- equal element by element, NaN equal to NaN, -0.0 apart from 0.0
local function same_value(a, b)
  if type(a) == "number" and type(b) == "number" then
    if a ~= a or b ~= b then return a ~= a and b ~= b end
    if a == 0 and b == 0 then return 1 / a == 1 / b end
  end
  return a == b
end
local function same(got, want, what)
  want, got = flat(want), flat(got)
  local ok = type(got) == "table" and #got == #want
  for i = 1, ok and #want or 0 do ok = ok and same_value(got[i], want[i]) end
  T.ok(ok, string.format("%s: expected %s, got %s", what, show(want), show(got)))
end

-- t computed by the JIT (validated against the reference), by the reference,
-- and by the interpreters at every point of every kernel; all equal to want
local function check_everywhere(t, want, what)
  local p = uop.compile(t, {select = false})
  local outs, rep = p:run{validate = true, quiet = true}
  T.ok(rep.ok, what .. ": validation: " .. rep.text)
  same(N.output_values(t, p, outs), want, what .. " (JIT)")
  same(uop.reference(t), want, what .. " (reference)")
  for i = 1, #p:kernels() do
    local k = p:kernel(i)
    for n = 0, 22 do
      local r = k:check(n, {quiet = true})
      T.ok(r.ok, string.format("%s: kernel %d point %d: %s", what, i, n, r.text or ""))
    end
  end
end

-- ---------------------------------------------------------------- MAX, NaN
-- tinygrad's LLVM renderer has no MAX: MAX(a, b) is (a < b).where(b, a) with
-- the unordered "<", so a NaN on the right wins and a NaN on the left alone
-- loses.  Expected values from tinygrad v0.12.0, CPU=1 CPU_LLVM=1:
--   a = Tensor([1.0, nan, nan, 2.0]); b = Tensor([nan, 1.0, nan, 3.0])
--   a.maximum(b) -> [nan, 1.0, nan, 3.0]; b.maximum(a) -> [1.0, nan, nan, 3.0]
--   a.minimum(b) -> [nan, 1.0, nan, 2.0]; Tensor([nan, -1.0, 2.0]).relu() -> [nan, 0.0, 2.0]
--   Tensor([1.0, nan, 2.0]).max() -> 2.0; Tensor([nan, 1.0, 2.0]).max() -> 2.0;
--   Tensor([1.0, 2.0, nan]).max() -> nan
--   a < b -> [True, True, True, False]; a > b -> [True, True, True, False]
local function ab() return Tensor({1.0, nan, nan, 2.0}), Tensor({nan, 1.0, nan, 3.0}) end

T.test("MAX with NaN: the right-hand NaN wins, in both orders, everywhere", function()
  local a, b = ab()
  check_everywhere(a:maximum(b), {nan, 1.0, nan, 3.0}, "a:maximum(b)")
  a, b = ab()
  check_everywhere(b:maximum(a), {1.0, nan, nan, 3.0}, "b:maximum(a)")
  a, b = ab()
  check_everywhere(a:minimum(b), {nan, 1.0, nan, 2.0}, "a:minimum(b)")
end)

T.test("relu and the max reduction with NaN are tinygrad's", function()
  check_everywhere(Tensor({nan, -1.0, 2.0}):relu(), {nan, 0.0, 2.0}, "relu")
  check_everywhere(Tensor({1.0, nan, 2.0}):max(), 2.0, "max of {1, nan, 2}")
  check_everywhere(Tensor({nan, 1.0, 2.0}):max(), 2.0, "max of {nan, 1, 2}")
  check_everywhere(Tensor({1.0, 2.0, nan}):max(), nan, "max of {1, 2, nan}")
end)

T.test("float < is true when either side is NaN (LLVM's ult)", function()
  local a, b = ab()
  check_everywhere(a:lt(b), {true, true, true, true}, "a < b")
  a, b = ab()
  check_everywhere(a:gt(b), {true, true, true, false}, "a > b")
end)

T.test("MAX of -0.0 and 0.0 keeps the left operand", function()
  -- (a < b).where(b, a): -0.0 < 0.0 is false, so the result is a
  local z = Tensor({0.0, 0.0})
  local nz = z:neg()
  check_everywhere(nz:maximum(z), {-0.0, -0.0}, "maximum(-0.0, 0.0)")
  z = Tensor({0.0, 0.0})
  check_everywhere(z:maximum(z:neg()), {0.0, 0.0}, "maximum(0.0, -0.0)")
end)

T.test("constant folding of MAX and < with NaN follows the same rule", function()
  local f = function(x) return uop.const(d.float32, x) end
  local max = function(x, y) return x:max(y) end
  local lt = function(x, y) return x:lt(y) end
  local v = uop.simplify(max(f(1.0), f(nan))):arg()
  T.ok(v ~= v, "MAX(1, nan) folds to nan, got " .. tostring(v))
  T.eq(uop.simplify(max(f(nan), f(1.0))):arg(), 1.0, "MAX(nan, 1) folds to 1")
  T.eq(uop.simplify(lt(f(nan), f(1.0))):arg(), true, "nan < 1 folds to true")
  T.eq(uop.simplify(lt(f(1.0), f(2.0))):arg(), true)
  T.eq(uop.simplify(lt(f(2.0), f(1.0))):arg(), false)
end)

-- ---------------------------------------------------------------- x * 0
-- tinygrad's symbolic_simple folds a float x * 0 to +0.0 before any kernel
-- runs, whatever x holds; a product of two constants is folded as IEEE
-- arithmetic, and a zero read from a buffer is not folded.  Expected values
-- from tinygrad v0.12.0, CPU=1 CPU_LLVM=1:
--   x = Tensor([-1.5, 2.0, 0.0]); (x / 0 * 0).tolist() -> [0.0, 0.0, 0.0]
--   (x / 0 * 0).isnan() -> [False, False, False]; 1 / (x * 0 - 0.0) -> [inf, inf, inf]
--   (x * Tensor.zeros(3).contiguous()).tolist() -> [-0.0, 0.0, 0.0]
--   (Tensor.full((2,), float("inf")) * 0).tolist() -> [nan, nan]
local function xs() return Tensor({-1.5, 2.0, 0.0}) end

T.test("x * 0 is +0.0 whatever x holds, as tinygrad folds it, at every point", function()
  check_everywhere(xs() / 0 * 0, {0.0, 0.0, 0.0}, "x / 0 * 0")
  check_everywhere((xs() / 0 * 0):isnan(), {false, false, false}, "(x / 0 * 0):isnan()")
  check_everywhere(1 / (xs() * 0 - 0.0), {1 / 0, 1 / 0, 1 / 0}, "1 / (x * 0 - 0.0)")
  local k = uop.compile(xs() / 0 * 0):kernel(1)
  T.eq(k:bisect{quiet = true}, nil, "no stage differs from the reference")
end)

T.test("x * 0 is not folded for a zero in a buffer, nor between constants", function()
  check_everywhere(xs() * Tensor.zeros(3):contiguous(), {-0.0, 0.0, 0.0}, "x * zeros:contiguous()")
  check_everywhere(Tensor.full({2}, 1 / 0) * 0, {nan, nan}, "inf constant * 0")
end)

-- ---------------------------------------------------------------- float16
-- tinygrad's LLVM backend renders half ALU ops as LLVM half instructions, and
-- each is rounded to half (the clang backend, CPU's default, does __fp16 math
-- in float and rounds once at the store: different bits).  Tensor.sum and
-- Tensor.exp of halves compute in float32 and cast back.  The expected bits
-- come from scripts/capture_half_bits.py (same inputs, CPU=1 CPU_LLVM=1), run
-- where LLVM did not fuse a*b+c: on a CPU with FMA, tinygrad's `contract`
-- flag fuses it and the script prints other MULADD bits; uopdb sets no such
-- flag, so these are its bits on every CPU (docs/ARCHITECTURE.md).
local function half_of_bits(b)
  local sign = b >= 0x8000 and -1 or 1
  local e, m = (b >> 10) & 0x1f, b & 0x3ff
  if e == 0 then return sign * m * 2.0 ^ -24 end
  return sign * (1 + m / 1024) * 2.0 ^ (e - 15)
end
local function halves(bits)
  local r = {}
  for i, b in ipairs(bits) do r[i] = half_of_bits(b) end
  return r
end
local function list(n, f)
  local r = {}
  for i = 0, n - 1 do r[i + 1] = f(i) end
  return r
end
local function H(n, f) return Tensor(list(n, f), "float16") end

local MULADD = {0x3806, 0x38e0, 0x39c2, 0x3aae, 0x3b9e, 0x3c4d, 0x3ccc, 0x3d51, 0x3dda, 0x3e65, 0x3ef8,
                0x3f89, 0x4010, 0x405e, 0x40af, 0x4100}
local ADDS = {0x63d0, 0x63d6, 0x63de, 0x63e5, 0x63eb, 0x63f1, 0x63f9, 0x63ff, 0x6403, 0x6406, 0x6409,
              0x640c, 0x6411, 0x6414, 0x6417, 0x641a}
local SUM = 0x6e5c
local EXP = {0x24b0, 0x2550, 0x2605, 0x26d2, 0x27bb, 0x2861, 0x28f7, 0x29a0, 0x2a5f, 0x2b39, 0x2c17,
             0x2ca3, 0x2d41, 0x2df4, 0x2ebf, 0x2fa5, 0x3055, 0x30e8, 0x3190, 0x324d, 0x3324, 0x340c,
             0x3496, 0x3532, 0x35e3, 0x36ab, 0x378f, 0x3848, 0x38da, 0x3980, 0x3a3b, 0x3b0f, 0x3c00,
             0x3c88, 0x3d23, 0x3dd2, 0x3e98, 0x3f79, 0x403c, 0x40cc, 0x4170, 0x4229, 0x42fb, 0x43e9,
             0x447b, 0x4514, 0x45c1, 0x4685, 0x4764, 0x4830, 0x48be, 0x4960, 0x4a17, 0x4ae7, 0x4bd2,
             0x4c6e, 0x4d05, 0x4db1, 0x4e73, 0x4f4e, 0x5024, 0x50b1, 0x5151, 0x5206}

T.test("half a*b+c rounds the product, then the sum: tinygrad's bits", function()
  local a = H(16, function(i) return (1025 + 37 * i) / 1024 end)
  local b = H(16, function(i) return (1537 + 53 * i) / 1024 end)
  local c = H(16, function(i) return -(1 + i / 1024) end)
  check_everywhere(a * b + c, halves(MULADD), "a*b+c")
end)

T.test("a chain of half adds rounds after each add: tinygrad's bits", function()
  local function e() return H(16, function(i) return (2 * i + 1) / 16 end) end
  local dd = H(16, function(i) return 1000 + 3 * i end)
  local f = H(16, function(i) return (3 * i + 1) / 32 end)
  check_everywhere(dd + e() + f + e(), halves(ADDS), "d+e+f+e")
end)

T.test("the sum of halves accumulates in float32 and the exp of halves: tinygrad's bits", function()
  local s = H(64, function(i) return (17 * i % 29) / 8 + 100 end)
  check_everywhere(s:sum(), half_of_bits(SUM), "sum")
  T.eq(s:sum():dtype(), d.float16)
  check_everywhere(H(64, function(i) return (i - 32) / 8 end):exp(), halves(EXP), "exp")
end)

-- ---------------------------------------------------------------- uint64
-- LLVM's uitofp rounds the unsigned value once: 2^64-1 is 2^64 in float32 and
-- float64, 2^63+2^40+1 is 2^63+2^40 (float32: 2^63+2^40 too, the nearest)
T.test("uint64 values from 2^63 convert to positive floats, rounded once", function()
  local big = {-1, math.mininteger, math.mininteger + (1 << 40) + 1, 12345}
  local want64 = {2.0 ^ 64, 2.0 ^ 63, 2.0 ^ 63 + 2.0 ^ 40, 12345.0}
  check_everywhere(Tensor(big, "uint64"):cast("float64"), want64, "uint64 -> float64")
  check_everywhere(Tensor(big, "uint64"):cast("float32"), want64, "uint64 -> float32")
  -- 2^63 + 2^39 + 1 lies just above the middle of two float32 values: one
  -- rounding gives the upper one; rounding to double first would give the
  -- middle, which then rounds to even, the lower one
  local mid = {math.mininteger + (1 << 39) + 1}
  check_everywhere(Tensor(mid, "uint64"):cast("float32"), {2.0 ^ 63 + 2.0 ^ 40}, "uint64 -> float32, one rounding")
  check_everywhere(Tensor({(1 << 62) + (1 << 38) + 1}, "int64"):cast("float32"), {2.0 ^ 62 + 2.0 ^ 39},
    "int64 -> float32, one rounding")
  -- and back: fptoui keeps a float from 2^63 (Lua integers print uint64 as signed)
  check_everywhere(Tensor({2.0 ^ 63 + 2.0 ^ 40, 12345.0}, "float64"):cast("uint64"),
    {math.mininteger + (1 << 40), 12345}, "float64 -> uint64")
end)

T.test("a uint64 constant from 2^63 folds to a positive float; int64 to float32 rounds once", function()
  local u = uop.const(d.uint64, -1)   -- 2^64 - 1
  T.eq(uop.simplify(u:cast(d.float32)):arg(), 2.0 ^ 64)
  T.eq(uop.simplify(u:cast(d.float64)):arg(), 2.0 ^ 64)
  local i = uop.const(d.int64, (1 << 62) + (1 << 38) + 1)
  T.eq(uop.simplify(i:cast(d.float32)):arg(), 2.0 ^ 62 + 2.0 ^ 39)
  -- a constant tensor: folded in the kernel, computed by the reference
  check_everywhere(Tensor.full({2}, -1, {dtype = "uint64"}):cast("float32"), {2.0 ^ 64, 2.0 ^ 64},
    "full(2^64-1):cast(float32)")
end)

-- ---------------------------------------------------------------- division
-- tinygrad's Tensor divides as a * b.reciprocal(); its late rewrites (stage
-- 18) turn a * (1/b) into a / b, so the kernel rounds the quotient once
-- (tinygrad's LLVM code gives exactly that, captured for 4000 random halves
-- with distinct divisors).  The reference computes a MUL by a RECIPROCAL as
-- the division too, so half results validate.  (tinygrad's LLVM code with its
-- arcp flag and an UPCAST opt may instead share one rounded reciprocal among
-- divisions by the same divisor; uopdb sets no fast-math flags.)

-- x rounded to the nearest half (ties to even), for finite x in half's range;
-- rounding the double quotient again is exact for halves (53 >= 2*11 + 2)
local function round_half(x)
  if x == 0 then return x end
  local ax, e = math.abs(x), 0
  while ax >= 2 do ax, e = ax / 2, e + 1 end
  while ax < 1 do ax, e = ax * 2, e - 1 end
  if e < -14 then e = -14 end
  local q = 2.0 ^ (e - 10)
  local n = x / q
  local f = math.floor(n)
  local frac = n - f
  if frac > 0.5 or (frac == 0.5 and f % 2 == 1) then f = f + 1 end
  return f * q
end

T.test("half a / b is rounded once, in the JIT, the reference and the interpreters", function()
  local A = list(16, function(i) return (1025 + 97 * i) / 256 - 9 end)
  local B = list(16, function(i) return (1537 + 61 * i) / 512 end)
  local want, differs = {}, 0
  for i = 1, 16 do
    local a, b = round_half(A[i]), round_half(B[i])
    want[i] = round_half(a / b)
    -- the division differs from a multiply by the rounded reciprocal here
    if want[i] ~= round_half(a * round_half(1 / b)) then differs = differs + 1 end
  end
  T.ok(differs > 0, "the inputs tell a division from a multiply by the reciprocal")
  check_everywhere(Tensor(A, "float16") / Tensor(B, "float16"), want, "a / b")
end)

T.test("half divisions by a broadcast divisor, a sum and a constant validate", function()
  local X = list(64, function(i) return (i * 37 % 61 - 30) / 7 end)
  local D = {1.3, 2.7, 3.1, 7.0}
  local x = Tensor(X, "float16"):reshape(4, 16)
  local want = {}
  for r = 0, 3 do
    local dr = round_half(D[r + 1])
    for c = 1, 16 do want[r * 16 + c] = round_half(round_half(X[r * 16 + c]) / dr) end
  end
  check_everywhere(x / Tensor(D, "float16"):reshape(4, 1), want, "x / d")
  local w3 = {}
  for i = 1, 64 do w3[i] = round_half(round_half(X[i]) / 3) end
  check_everywhere(Tensor(X, "float16") / 3, w3, "x / 3")
  for _, t in ipairs{x / x:sum(1, {keepdim = true}), x:softmax(1)} do
    local _, rep = uop.compile(t, {select = false}):run{validate = true, quiet = true}
    T.ok(rep.ok, rep.text)
  end
end)

T.test("a reciprocal read through a repeat and a matmul: the reference divides, with no endless re-materialising", function()
  -- between the MUL and its RECIPROCAL lie the repeat's reshapes, which a
  -- strided view cannot follow; the reference reads the divisor through a
  -- chain of views there (materialising the repeat would hold 1/y, not y)
  local P = {1.0, 2.0, 4.0, 0.5, 0.25, 8.0, 0.125, 16.0}
  local Y = list(16, function(i) return P[(i * 5) % 8 + 1] end)
  local y = Tensor(Y, "float32"):reshape(2, 4, 2)
  local t = y:reciprocal():repeat_{2, 2, 2}:dot(Tensor.ones(4, 4, 5))
  local want = {}
  for b = 0, 3 do
    for i = 0, 7 do
      local sum = 0.0
      for k = 0, 3 do sum = sum + 1 / Y[(b % 2) * 8 + (i % 4) * 2 + (k % 2) + 1] end
      for l = 1, 5 do want[#want + 1] = sum end
    end
  end
  check_everywhere(t, want, "repeat(1/y) @ ones")
end)

-- float16 transcendentals are decomposed as tinygrad does and land a unit
-- or two in the last place from the correctly rounded reference; the
-- validator holds a float16 output to four of its ulps, no tighter
T.test("half transcendentals validate; a half off by more than four ulps does not", function()
  local X = list(32, function(i) return 0.05 + i * 0.37 end)
  local h = Tensor(X, "float16")
  for _, f in ipairs{"exp", "exp2", "log", "log2", "sin", "cos", "sqrt", "sigmoid"} do
    local _, rep = uop.compile(h[f](h)):run{validate = true, quiet = true}
    T.ok(rep.ok, f .. ": " .. rep.text)
    T.ok(rep.text:find("0.00391*|ref|", 1, true), f .. " reports the float16 tolerance: " .. rep.text)
  end
  -- 1 + 2^-7 is eight float16 ulps above 1: caught, where float32's would pass
  local off = uop.rules{ {name = "exp_high", pattern = "(STORE i (EXP2:float16 x))",
    rewrite = function(m)
      local e = uop.new("EXP2", m.x:dtype(), {m.x})
      return uop.new("STORE", uop.dtypes.void, {m.i, e * uop.const(m.x:dtype(), 1 + 2^-7)})
    end} }
  local p = uop.compile(Tensor({0.5, 1.5}, "float16"):exp2(), {transcendentals = "native"})
  p:kernel(1):insert(18, off, {before = true})
  local _, rep = p:run{validate = true, quiet = true}
  T.ok(not rep.ok, "a result eight ulps off is a mismatch")
end)

-- ---------------------------------------------------------------- bfloat16
-- bfloat16 is the top half of a float32, rounded to nearest even; its math
-- is float32 rounded back after every op (tinygrad's CPU backends), so a
-- multiply-add rounds the product before the add in both modes
local function round_bf16(x)
  local b = string.unpack("<I4", string.pack("<f", x))
  b = ((b + 0x7FFF + ((b >> 16) & 1)) >> 16) << 16
  return (string.unpack("<f", string.pack("<I4", b & 0xFFFFFFFF)))
end

T.test("bfloat16 tensors hold host data rounded to nearest even, and a*b+c rounds after each op", function()
  same(Tensor({1.0, 1 + 2^-8, 1 + 3 * 2^-8, 3.14159, -2.5e38}, "bfloat16"):tolist(),
       {1.0, 1.0, 1 + 2^-6, 3.140625, round_bf16(-2.5e38)}, "bfloat16 storage")
  local A = list(64, function(i) return (i * 37 % 61) / 7 - 3 end)
  local B = list(64, function(i) return (i * 17 % 53) / 9 - 2 end)
  local C = list(64, function(i) return (i * 11 % 41) / 5 - 4 end)
  local want, fused_differs = {}, 0
  for i = 1, 64 do
    local a, b, c = round_bf16(A[i]), round_bf16(B[i]), round_bf16(C[i])
    want[i] = round_bf16(round_bf16(a * b) + c)
    if want[i] ~= round_bf16(a * b + c) then fused_differs = fused_differs + 1 end
  end
  T.ok(fused_differs > 0, "the inputs tell one rounding from two")
  for _, mode in ipairs{"decomposed", "native"} do
    local y = Tensor(A, "bfloat16") * Tensor(B, "bfloat16") + Tensor(C, "bfloat16")
    local outs, rep = uop.compile(y, {transcendentals = mode}):run{validate = true, quiet = true}
    T.ok(rep.ok, mode .. ": " .. rep.text)
    same(uop.buffer_values(outs[1]), want, "bfloat16 a*b+c, " .. mode)
  end
end)

-- ---------------------------------------------------------------- float to int, shifts
-- defined where LLVM's plain fptosi and over-wide shifts are poison: a float
-- to an integer converts as x86-64 does (dt_float_to_int); a shift amount is
-- taken modulo the bit width
T.test("float to int converts as tinygrad's x86-64 kernels do: JIT, reference, interpreters and folding agree", function()
  local f = Tensor({nan, 1 / 0, -1 / 0, 3e9, -3e9, 2.7, -2.7, 1e20, 150.0, -150.0, -1.5, 255.9, -0.5}, "float32")
  -- tinygrad v0.12.0, CPU=1 CPU_LLVM=1 on x86-64: scripts/capture_float_to_int.py
  -- (uint64's largest value is -1 in a Lua integer)
  local imin, lmin = -2147483648, math.mininteger
  local want = {
    int8 = {0, 0, 0, 0, 0, 2, -2, 0, -106, 106, -1, -1, 0},
    uint8 = {0, 0, 0, 0, 0, 2, 254, 0, 150, 106, 255, 255, 0},
    int16 = {0, 0, 0, 0, 0, 2, -2, 0, 150, -150, -1, 255, 0},
    uint16 = {0, 0, 0, 0, 0, 2, 65534, 0, 150, 65386, 65535, 255, 0},
    int32 = {imin, imin, imin, imin, imin, 2, -2, imin, 150, -150, -1, 255, 0},
    uint32 = {4294967295, 4294967295, 4294967295, 3000000000, 4294967295, 2, 4294967295, 4294967295, 150, 4294967295,
              4294967295, 255, 0},
    int64 = {lmin, lmin, lmin, 3000000000, -3000000000, 2, -2, lmin, 150, -150, -1, 255, 0},
    uint64 = {-1, -1, -1, 3000000000, -1, 2, -1, -1, 150, -1, -1, 255, 0},
  }
  for _, name in ipairs{"int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"} do
    check_everywhere(f:cast(name), want[name], "float32 -> " .. name)
  end
  -- a UOp cast straight to uint8 converts through int32 too (Tensor.cast
  -- goes through int32 itself)
  check_everywhere(Tensor(f.uop:cast(d.uint8)), want.uint8, "float32 -> uint8, one CAST")
  -- a constant folds the same way
  T.eq(uop.simplify(uop.const(d.float32, nan):cast(d.int32)):arg(), imin)
  T.eq(uop.simplify(uop.const(d.float32, 1e20):cast(d.int32)):arg(), imin)
  T.eq(uop.simplify(uop.const(d.float64, -1e300):cast(d.int16)):arg(), 0)
  T.eq(uop.simplify(uop.const(d.float32, 150.0):cast(d.int8)):arg(), -106)
  T.eq(uop.simplify(uop.const(d.float32, -1.0):cast(d.uint32)):arg(), 4294967295)
end)

T.test("float to int in 4 lanes at once: one vector conversion, the same values", function()
  -- the values above and three more, so that UPCAST 4 covers them
  local vals = {nan, 1 / 0, -1 / 0, 3e9, -3e9, 2.7, -2.7, 1e20, 150.0, -150.0, -1.5, 255.9, -0.5, -2147483648.0, 2147483520.0,
                -2147483904.0}
  local imin = -2147483648
  local want = {
    int32 = {imin, imin, imin, imin, imin, 2, -2, imin, 150, -150, -1, 255, 0, imin, 2147483520, imin},
    uint32 = {4294967295, 4294967295, 4294967295, 3000000000, 4294967295, 2, 4294967295, 4294967295, 150, 4294967295,
              4294967295, 255, 0, 4294967295, 2147483520, 4294967295},
    int64 = {math.mininteger, math.mininteger, math.mininteger, 3000000000, -3000000000, 2, -2, math.mininteger, 150, -150,
             -1, 255, 0, imin, 2147483520, -2147483904},
  }
  for _, name in ipairs{"int32", "uint32", "int64"} do
    local t = Tensor(vals, "float32"):cast(name)
    local p = uop.compile(t, {select = false, kernel_opts = {[1] = {{"UPCAST", 0, 4}}}})
    local ir = tostring(p:kernel(1):llvm("after"))
    T.contains(ir, name == "uint32" and "fptoui <4 x float>" or "fptosi <4 x float>")
    T.ok(not ir:find(".sat.", 1, true), name .. ": no saturating intrinsic, which x86 splits into scalar code")
    local outs, rep = p:run{validate = true, quiet = true}
    T.ok(rep.ok, name .. ": " .. rep.text)
    same(N.output_values(t, p, outs), want[name], "float32 -> " .. name .. " (JIT, 4 lanes)")
    same(uop.reference(t), want[name], "float32 -> " .. name .. " (reference)")
  end
end)

T.test("shift amounts are taken modulo the bit width: JIT, reference and interpreters agree", function()
  local a = Tensor({1, 1, 1, -8, 5, 1}, "int32")
  local s = Tensor({0, 31, 32, 33, 40, -1}, "int32")
  -- amounts mod 32: 0, 31, 0, 1, 8, 31
  check_everywhere(Tensor(a.uop << s.uop), {1, -2147483648, 1, -16, 1280, -2147483648}, "int32 <<")
  check_everywhere(Tensor(a.uop >> s.uop), {1, 0, 1, -4, 0, 0}, "int32 >>")
  local ua = Tensor({1, 1, 1, 8, 5, 1}, "uint32")
  local us = Tensor({0, 31, 32, 33, 40, 100}, "uint32")
  -- amounts mod 32: 0, 31, 0, 1, 8, 4
  check_everywhere(Tensor(ua.uop << us.uop), {1, 2147483648, 1, 16, 1280, 16}, "uint32 <<")
  check_everywhere(Tensor(ua.uop >> us.uop), {1, 0, 1, 4, 0, 0}, "uint32 >>")
  -- uint8: amounts mod 8
  check_everywhere(Tensor(Tensor({1, 1, 3}, "uint8").uop << Tensor({7, 8, 9}, "uint8").uop), {128, 1, 6}, "uint8 <<")
  -- folding a constant shift
  T.eq(uop.simplify(uop.const(d.int32, 1) << uop.const(d.int32, 33)):arg(), 2)
end)
