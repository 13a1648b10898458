-- test_tensor_api.lua - the Tensor functions built from other ops
-- (activations, isnan/isinf, lerp, copysign, logaddexp, var/std,
-- argmax/argmin, any/all, logsumexp, logcumsumexp, linspace, bitcast),
-- integer pow and -0.0: the dtypes tinygrad v0.12.0 gives, values computed
-- here with plain Lua (or, where noted, captured from tinygrad v0.12.0),
-- each through uop.reference and through the JIT with validation.
local T = ...
local d = uop.dtypes
local ref = uop.reference
local inf, nan = math.huge, 0 / 0

-- ---- helpers ----

local N = T.load("nested.lua")
local build, map, show = N.build, N.map, N.show

local function shape_of(v)
  local s = {}
  while type(v) == "table" do
    s[#s + 1] = #v
    v = v[1]
  end
  return s
end

-- t's dtype and values, through the reference and through the JIT (the
-- program's report validated against the reference); exact comparisons
-- are strict here: ints stay ints, -0.0 is not 0.0
local function both(t, dtype, want, tol, what)
  T.eq(tostring(t:dtype()), dtype, (what or "") .. " dtype")
  N.both(t, want, tol, what, true, 2)
end

local function f32(x) return string.unpack("f", string.pack("f", x)) end
local function sigmoid(x) return 1 / (1 + math.exp(-x)) end
local function relu(x) return x > 0 and x or 0 end

-- erf by its Taylor series (|x| <= 3 here), independent of the
-- approximation the front end builds
local function erf(x)
  local sum, term, n = 0, x, 0
  while math.abs(term) > 1e-17 * math.max(1, math.abs(sum)) and n < 200 do
    sum = sum + term / (2 * n + 1)
    n = n + 1
    term = -term * x * x / n
  end
  return 2 / math.sqrt(math.pi) * sum
end

local XS = {{-3.0, -1.5, -0.25, 0.0}, {0.5, 1.0, 2.5, 7.0}}
local function xf() return Tensor(XS) end
local XI = {{-3, -1, 0, 2}, {5, -6, 1, 7}}
local function xi() return Tensor(XI, "int32") end

-- ---- activations ----

T.test("gelu, quick_gelu, swish, silu: float values and int/bool become float32", function()
  local function gelu(x) return 0.5 * x * (1 + math.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ^ 3))) end
  local function quick(x) return x * sigmoid(1.702 * x) end
  local function swish(x) return x * sigmoid(x) end
  for _, case in ipairs{{"gelu", gelu}, {"quick_gelu", quick}, {"swish", swish}, {"silu", swish}} do
    local name, f = case[1], case[2]
    both(xf()[name](xf()), "float32", map(XS, f), 1e-5, name)
    both(xi()[name](xi()), "float32", map(XI, f), 1e-5, name .. " int")
    local b = Tensor{true, false}
    both(b[name](b), "float32", {f(1), f(0)}, 1e-5, name .. " bool")
    T.eq(tostring(Tensor({1.0}, "half")[name](Tensor({1.0}, "half")):dtype()), "float16", name .. " half")
  end
  -- silu and swish build one graph
  local x = xf()
  T.eq(x:silu().uop, x:swish().uop)
end)

T.test("relu6 and hardtanh keep ints; bools become int32", function()
  local function relu6(x) return math.min(math.max(x, 0), 6) end
  both(Tensor{-9.0, -6.0, 0.0, 3.0, 6.0, 9.0}:relu6(), "float32", {0.0, 0.0, 0.0, 3.0, 6.0, 6.0}, nil, "relu6")
  both(xi():relu6(), "int32", map(XI, relu6), nil, "relu6 int")
  both(Tensor{true, false}:relu6(), "int32", {1, 0}, nil, "relu6 bool")
  local function ht(lo, hi) return function(x) return math.min(math.max(x, lo), hi) end end
  both(xf():hardtanh(), "float32", map(XS, ht(-1.0, 1.0)), nil, "hardtanh")
  both(xi():hardtanh(), "int32", map(XI, ht(-1, 1)), nil, "hardtanh int")
  both(xi():hardtanh(-2, 5), "int32", map(XI, ht(-2, 5)), nil, "hardtanh int bounds")
  both(xf():hardtanh{min_val = -0.5, max_val = 0.75}, "float32", map(XS, ht(-0.5, 0.75)), nil, "hardtanh named")
  both(xf():hardtanh{max_val = 2.0}, "float32", map(XS, ht(-1.0, 2.0)), nil, "hardtanh max_val only")
  -- an int tensor with float bounds becomes float32 (tinygrad)
  both(Tensor{1, -2, 0}:hardtanh(-0.5, 0.75), "float32", {0.75, -0.5, 0.0}, nil, "hardtanh int float bounds")
  both(Tensor{true, false}:hardtanh(), "int32", {1, 0}, nil, "hardtanh bool")
end)

T.test("elu and softplus with alpha and beta", function()
  local function elu(a) return function(x) return x > 0 and x or a * (math.exp(x) - 1) end end
  both(xf():elu(), "float32", map(XS, elu(1.0)), 1e-5, "elu")
  both(xf():elu(0.5), "float32", map(XS, elu(0.5)), 1e-5, "elu alpha")
  both(xf():elu{alpha = 2}, "float32", map(XS, elu(2)), 1e-5, "elu named alpha")
  both(xi():elu(), "float32", map(XI, elu(1.0)), 1e-5, "elu int")
  local function softplus(b) return function(x) return math.log(1 + math.exp(b * x)) / b end end
  both(xf():softplus(), "float32", map(XS, softplus(1.0)), 1e-5, "softplus")
  both(xf():softplus(2.0), "float32", map(XS, softplus(2.0)), 1e-5, "softplus beta")
  both(xf():softplus{beta = 0.5}, "float32", map(XS, softplus(0.5)), 1e-5, "softplus named beta")
  both(xi():softplus(), "float32", map(XI, softplus(1.0)), 1e-5, "softplus int")
  T.eq(tostring(Tensor({1.0}, "half"):elu():dtype()), "float16")
  T.eq(tostring(Tensor({1.0}, "half"):softplus():dtype()), "float16")
end)

T.test("erf: the series' values within the approximation's error; odd; int becomes float32", function()
  local xs = {-3.0, -1.5, -1.0, -0.5, -0.1, 0.0, 0.1, 0.5, 1.0, 1.5, 2.0, 3.0}
  local want = {}
  for i, x in ipairs(xs) do want[i] = erf(x) end
  both(Tensor(xs):erf(), "float32", want, 1e-6, "erf")
  both(Tensor{-2, 0, 1}:erf(), "float32", {erf(-2), 0.0, erf(1)}, 1e-6, "erf int")
  -- erf of bool: sign(false) * ... is -0.0 in tinygrad; captured from tinygrad v0.12.0
  both(Tensor{true, false}:erf(), "float32", {0.5724161267280579, -0.0}, 1e-6, "erf bool")
end)

-- ---- isnan, isinf, lerp, copysign, logaddexp ----

T.test("isnan and isinf are bool; ints and bools are never nan or inf", function()
  local x = Tensor{1.0, nan, inf, -inf, -0.0}
  both(x:isnan(), "bool", {false, true, false, false, false}, nil, "isnan")
  both(x:isinf(), "bool", {false, false, true, true, false}, nil, "isinf")
  both(x:isinf(true, false), "bool", {false, false, true, false, false}, nil, "isinf positive")
  both(x:isinf{detect_positive = false}, "bool", {false, false, false, true, false}, nil, "isinf negative")
  both(x:isinf(false, false), "bool", {false, false, false, false, false}, nil, "isinf none")
  both(xi():isnan(), "bool", map(XI, function() return false end), nil, "isnan int")
  both(xi():isinf(), "bool", map(XI, function() return false end), nil, "isinf int")
  both(Tensor{true, false}:isnan(), "bool", {false, false}, nil, "isnan bool")
  both(Tensor({1.0, nan}, "half"):isnan(), "bool", {false, true}, nil, "isnan half")
  -- isnan is x != x
  local u = x:isnan().uop
  T.eq(u:op(), "CMPNE"); T.eq(u:src()[1], u:src()[2])
end)

T.test("lerp: float, promoted int, Tensor weights and uint8 fixed point", function()
  local a, b = {1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}
  both(Tensor(a):lerp(Tensor(b), 0.5), "float32", {2.5, 3.5, 4.5}, nil, "lerp")
  both(Tensor{1, 2, 3}:lerp(Tensor{4, 5, 6}, 0.5), "float32", {2.5, 3.5, 4.5}, nil, "lerp int, float weight")
  both(Tensor{1, 2, 3}:lerp(Tensor{4, 5, 6}, 2), "int32", {7, 8, 9}, nil, "lerp int, int weight")
  local w = {0.5, 0.25, 1.0}
  local want = {}
  for i = 1, 3 do want[i] = i + ((b[i]) - i) * w[i] end
  both(Tensor{1, 2, 3}:lerp(Tensor(b), Tensor(w)), "float32", want, nil, "lerp Tensor weight")
  -- uint8 with a Tensor weight: a + ((int8(b - a) * int16(w * 128 + 0.5) + 64) >> 7), by hand
  local ua, ub, uw = {10, 200, 30, 0}, {100, 0, 30, 255}, {0.5, 0.25, 0.3, 1.0}
  local uwant = {}
  for i = 1, 4 do
    local diff = (ub[i] - ua[i]) % 256
    if diff >= 128 then diff = diff - 256 end
    local wi = math.floor(uw[i] * 128 + 0.5)
    local step = ((diff * wi + 64) % 65536) // 128
    uwant[i] = (ua[i] + step) % 256
  end
  both(Tensor(ua, "uint8"):lerp(Tensor(ub, "uint8"), Tensor(uw)), "uint8", uwant, nil, "lerp uint8")
  T.ok(#uop.find(Tensor(ua, "uint8"):lerp(Tensor(ub, "uint8"), Tensor(uw)).uop, "IDIV") == 1, "the >> 7 is one IDIV")
end)

T.test("copysign: magnitude of self, sign of other (-0.0 counts as positive), promoted dtype", function()
  both(Tensor{1.0, -2.0, 3.0, 0.0}:copysign(Tensor{-1.0, -1.0, 1.0, -0.0}), "float32", {-1.0, -2.0, 3.0, 0.0}, nil, "copysign")
  both(Tensor{1.0, -2.0, 3.0}:copysign(-1), "float32", {-1.0, -2.0, -3.0}, nil, "copysign scalar")
  both(Tensor{1, -2, 3}:copysign(-1), "int32", {-1, -2, -3}, nil, "copysign int")
  both(Tensor{1, -2, 3}:copysign(-1.0), "float32", {-1.0, -2.0, -3.0}, nil, "copysign int, float")
  both(Tensor{1, -2, 3}:copysign(Tensor{-1.0, 2.0, -0.0}), "float32", {-1.0, 2.0, 3.0}, nil, "copysign int, Tensor")
  both(Tensor{true, false}:copysign(-1), "int32", {-1, 0}, nil, "copysign bool")
  -- broadcast: other of shape (2, 1)
  both(Tensor{1.0, -2.0}:copysign(Tensor{{1.0}, {-1.0}}), "float32", {{1.0, 2.0}, {-1.0, -2.0}}, nil, "copysign broadcast")
end)

T.test("logaddexp: log(exp(a) + exp(b)), stable for large values", function()
  local function lae(a, b) local m = math.max(a, b) return math.log(math.exp(a - m) + math.exp(b - m)) + m end
  both(Tensor{1.0, 2.0, 100.0}:logaddexp(Tensor{0.5, -3.0, 100.0}), "float32",
    {lae(1, 0.5), lae(2, -3), lae(100, 100)}, 1e-6, "logaddexp")
  both(Tensor{1.0, 2.0}:logaddexp(0.0), "float32", {lae(1, 0), lae(2, 0)}, 1e-6, "logaddexp scalar")
  both(Tensor{1, 2}:logaddexp(0), "float32", {lae(1, 0), lae(2, 0)}, 1e-6, "logaddexp int")
  both(Tensor{1, 2}:logaddexp(Tensor{1, 1}), "float32", {lae(1, 1), lae(2, 1)}, 1e-6, "logaddexp int Tensor")
  both(Tensor{1.0, 2.0}:logaddexp(Tensor{{0.0}, {3.0}}), "float32",
    {{lae(1, 0), lae(2, 0)}, {lae(1, 3), lae(2, 3)}}, 1e-6, "logaddexp broadcast")
end)

-- ---- reductions ----

local M = {{1.0, -2.0, 3.0}, {0.0, 5.0, -6.0}}

local function var_of(vals, correction)
  local n, s = #vals, 0
  for _, v in ipairs(vals) do s = s + v end
  local mean, ss = s / n, 0
  for _, v in ipairs(vals) do ss = ss + (v - mean) ^ 2 end
  local den = math.max(0, n - correction)
  return ss / den
end

T.test("var and std over axes, with keepdim and correction", function()
  local all = {1.0, -2.0, 3.0, 0.0, 5.0, -6.0}
  both(Tensor(M):var(), "float32", var_of(all, 1), 1e-6, "var")
  both(Tensor(M):var{correction = 0}, "float32", var_of(all, 0), 1e-6, "var correction 0")
  both(Tensor(M):var{0, 1}, "float32", var_of(all, 1), 1e-6, "var both axes")
  both(Tensor(M):var(0), "float32", build({3}, function(j) return var_of({M[1][j + 1], M[2][j + 1]}, 1) end), 1e-6, "var 0")
  both(Tensor(M):var(1, {keepdim = true}), "float32", build({2, 1}, function(i) return var_of(M[i + 1], 1) end), 1e-6, "var 1 keepdim")
  both(Tensor(M):var{axis = 1, correction = 0.5}, "float32", build({2}, function(i) return var_of(M[i + 1], 0.5) end), 1e-6, "var axis option")
  -- n - correction <= 0 divides by 0 (tinygrad's max(0, n - correction))
  both(Tensor(M):var(0, {correction = 2}), "float32", {inf, inf, inf}, nil, "var correction = n")
  both(Tensor{3.0}:var(), "float32", nan, nil, "var of one element")
  -- ints and bools give float32, half stays half
  both(Tensor({{1, -2, 3}, {0, 5, -6}}, "int32"):var(), "float32", var_of(all, 1), 1e-6, "var int")
  both(Tensor{true, false, true, false, false, true}:var(), "float32", 0.3, 1e-6, "var bool")
  T.eq(tostring(Tensor({1.0, 2.0, 4.0}, "half"):var():dtype()), "float16")
  both(Tensor(M):std(), "float32", math.sqrt(var_of(all, 1)), 1e-6, "std")
  both(Tensor(M):std(1, {correction = 0}), "float32", build({2}, function(i) return math.sqrt(var_of(M[i + 1], 0)) end), 1e-6, "std 1")
  both(Tensor({{1, -2, 3}, {0, 5, -6}}, "int32"):std(0, {keepdim = true}), "float32",
    build({1, 3}, function(_, j) return math.sqrt(var_of({M[1][j + 1], M[2][j + 1]}, 1)) end), 1e-6, "std int keepdim")
end)

-- index of the first maximum of a list (plain loop)
local function first_max(l, less)
  local best = 1
  for i = 2, #l do if less(l[best], l[i]) then best = i end end
  return best - 1
end
local function gt(a, b) return a < b end
local function lt(a, b) return a > b end

T.test("argmax and argmin: the first index on ties, int32, flattened without an axis", function()
  local m = {{1, 0, 2}, {5, 4, 3}}
  both(Tensor(m):argmax(), "int32", 3, nil, "argmax flat")
  both(Tensor(m):argmax(0), "int32", {1, 1, 1}, nil, "argmax 0")
  both(Tensor(m):argmax(1), "int32", {2, 0}, nil, "argmax 1")
  both(Tensor(m):argmax(-1, {keepdim = true}), "int32", {{2}, {0}}, nil, "argmax keepdim")
  both(Tensor(m):argmin(0), "int32", {0, 0, 0}, nil, "argmin 0")
  both(Tensor(m):argmin{axis = 1, keepdim = true}, "int32", {{1}, {2}}, nil, "argmin axis option")
  -- ties: the first one
  local ties = {3, 7, 7, 1, 7, 1}
  both(Tensor(ties):argmax(), "int32", first_max(ties, gt), nil, "argmax ties")
  both(Tensor(ties):argmin(), "int32", first_max(ties, lt), nil, "argmin ties")
  both(Tensor{3.0, -7.0, 7.5, -7.0, 7.5}:argmax(), "int32", 2, nil, "argmax float ties")
  both(Tensor{3.0, -7.0, 7.5, -7.0, 7.5}:argmin(), "int32", 1, nil, "argmin float ties")
  both(Tensor{false, true, true}:argmax(), "int32", 1, nil, "argmax bool")
  both(Tensor{true, false, false}:argmin(), "int32", 1, nil, "argmin bool")
  both(Tensor({0, 255, 3}, "uint8"):argmin(), "int32", 0, nil, "argmin uint8")
  both(Tensor({0, 255, 3}, "uint8"):argmax(), "int32", 1, nil, "argmax uint8")
  -- a 0-d tensor: index 0; keepdim does nothing without an axis (tinygrad)
  both(Tensor(3.0):argmax(), "int32", 0, nil, "argmax 0-d")
  both(Tensor(m):argmax{keepdim = true}, "int32", 3, nil, "argmax keepdim without axis")
  -- a larger one against a plain loop
  local rows = build({4, 9}, function(i, j) return ((i * 7 + j * 5) % 6) - 2 end)
  both(Tensor(rows):argmax(1), "int32", build({4}, function(i) return first_max(rows[i + 1], gt) end), nil, "argmax rows")
  both(Tensor(rows):argmin(1), "int32", build({4}, function(i) return first_max(rows[i + 1], lt) end), nil, "argmin rows")
end)

T.test("any and all: bool results, empty axes and empty tensors", function()
  local b = {{true, false, true}, {false, false, true}}
  both(Tensor(b):any(), "bool", true, nil, "any")
  both(Tensor(b):all(), "bool", false, nil, "all")
  both(Tensor(b):any(0), "bool", {true, false, true}, nil, "any 0")
  both(Tensor(b):all(0), "bool", {false, false, true}, nil, "all 0")
  both(Tensor(b):all(1, {keepdim = true}), "bool", {{false}, {false}}, nil, "all keepdim")
  both(Tensor({{1, -2, 3}, {0, 5, -6}}, "int32"):any(1), "bool", {true, true}, nil, "any int")
  both(Tensor({{1, -2, 3}, {0, 5, -6}}, "int32"):all(1), "bool", {true, false}, nil, "all int")
  both(Tensor(M):all(0), "bool", {false, true, true}, nil, "all float")
  both(Tensor{nan, 1.0}:all(), "bool", true, nil, "nan is true")
  -- no axes: nothing reduced
  both(Tensor(b):all({}), "bool", b, nil, "all over no axes")
  both(Tensor(b):any({}), "bool", b, nil, "any over no axes")
  -- empty reductions: any is false, all is true
  both(Tensor.ones(2, 0):any(1), "bool", {false, false}, nil, "any empty axis")
  both(Tensor.ones(2, 0):all(1), "bool", {true, true}, nil, "all empty axis")
  T.eq(ref(Tensor.new({}, "float32"):any()), false)
  T.eq(ref(Tensor.new({}, "float32"):all()), true)
end)

T.test("logsumexp: stable, int becomes float32, keepdim broadcasts as in tinygrad", function()
  local function lse(l)
    local m = -inf
    for _, v in ipairs(l) do m = math.max(m, v) end
    local s = 0
    for _, v in ipairs(l) do s = s + math.exp(v - m) end
    return math.log(s) + m
  end
  both(Tensor(M):logsumexp(), "float32", lse{1.0, -2.0, 3.0, 0.0, 5.0, -6.0}, 1e-6, "logsumexp")
  both(Tensor(M):logsumexp(0), "float32", build({3}, function(j) return lse{M[1][j + 1], M[2][j + 1]} end), 1e-6, "logsumexp 0")
  both(Tensor(M):logsumexp(1), "float32", {lse(M[1]), lse(M[2])}, 1e-6, "logsumexp 1")
  both(Tensor{1000.0, 1000.0}:logsumexp(), "float32", 1000 + math.log(2), 1e-6, "logsumexp large")
  both(Tensor({{1, -2, 3}, {0, 5, -6}}, "int32"):logsumexp(1), "float32", {lse(M[1]), lse(M[2])}, 1e-6, "logsumexp int")
  -- keepdim: the sum keeps (2, 1) but the max is squeezed to (2,), so they
  -- broadcast to (2, 2) (tinygrad v0.12.0 does the same)
  local k = Tensor(M):logsumexp(1, {keepdim = true})
  both(k, "float32", build({2, 2}, function(i, j) return lse(M[i + 1]) - math.max(table.unpack(M[i + 1])) + math.max(table.unpack(M[j + 1])) end), 1e-6, "logsumexp keepdim")
end)

T.test("logcumsumexp along an axis, ints become float32", function()
  local function lcse(l)
    local r, s = {}, 0
    for i, v in ipairs(l) do s = s + math.exp(v) r[i] = math.log(s) end
    return r
  end
  both(Tensor(M):logcumsumexp(1), "float32", {lcse(M[1]), lcse(M[2])}, 1e-6, "logcumsumexp 1")
  both(Tensor(M):logcumsumexp{axis = -1}, "float32", {lcse(M[1]), lcse(M[2])}, 1e-6, "logcumsumexp axis option")
  local cols = {lcse{M[1][1], M[2][1]}, lcse{M[1][2], M[2][2]}, lcse{M[1][3], M[2][3]}}
  both(Tensor(M):logcumsumexp(), "float32", build({2, 3}, function(i, j) return cols[j + 1][i + 1] end), 1e-6, "logcumsumexp 0")
  both(Tensor({{1, -2, 3}, {0, 5, -6}}, "int32"):logcumsumexp(1), "float32", {lcse(M[1]), lcse(M[2])}, 1e-6, "logcumsumexp int")
  both(Tensor{100.0, 100.0, -100.0}:logcumsumexp(), "float32", {100.0, 100 + math.log(2), 100 + math.log(2)}, 1e-6, "logcumsumexp large")
  -- a 0-d tensor is itself
  local s = Tensor(2.0)
  T.eq(s:logcumsumexp(), s)
  -- bools: the differences are bool arithmetic; captured from tinygrad v0.12.0
  both(Tensor{{true, false, true}, {false, false, true}}:logcumsumexp(1), "float32",
    {{2.5514445304870605, 2.5514445304870605, 2.861994743347168}, {1.55144464969635, 1.8619948625564575, 2.5514445304870605}},
    1e-6, "logcumsumexp bool")
end)

-- ---- linspace, bitcast ----

T.test("linspace: float32 by default, computed in float32 and cast", function()
  both(Tensor.linspace(0, 10, 5), "float32", {0.0, 2.5, 5.0, 7.5, 10.0}, nil, "linspace")
  both(Tensor.linspace(-1, 1, 5), "float32", {-1.0, -0.5, 0.0, 0.5, 1.0}, nil, "linspace -1..1")
  both(Tensor.linspace(3, -3, 7), "float32", {3.0, 2.0, 1.0, 0.0, -1.0, -2.0, -3.0}, nil, "linspace down")
  local want = {}
  for i = 0, 7 do want[i + 1] = f32(0.5 + f32(i * f32(1.75 / 7))) end
  both(Tensor.linspace(0.5, 2.25, 8), "float32", want, nil, "linspace floats")
  -- int dtypes truncate the float32 values
  both(Tensor.linspace(0, 10, 4, {dtype = "int32"}), "int32", {0, 3, 6, 10}, nil, "linspace int")
  both(Tensor.linspace(-3, 10, 4, {dtype = "int32"}), "int32", {-3, 1, 5, 10}, nil, "linspace int negative")
  both(Tensor.linspace(0, 255, 4, {dtype = "uint8"}), "uint8", {0, 85, 170, 255}, nil, "linspace uint8")
  -- float64 is float32 values cast
  local w64 = {}
  for i = 0, 6 do w64[i + 1] = f32(i * f32(1 / 6)) end
  both(Tensor.linspace(0, 1, 7, {dtype = "float64"}), "float64", w64, nil, "linspace float64")
  both(Tensor.linspace(5, 10, 1), "float32", {5.0}, nil, "linspace one step")
  both(Tensor.linspace(5, 10, 1, {dtype = "int32"}), "int32", {5}, nil, "linspace one int step")
  local z = Tensor.linspace(5, 10, 0)
  T.eq(#z, 0); T.eq(z:dtype(), d.float32)
end)

-- the bytes of a little-endian value, for expectations by string.pack
local function bits(fmt_from, fmt_to, v)
  local r = string.unpack(fmt_to, string.pack(fmt_from, v))
  return r
end
-- the value of IEEE half bits (normal numbers and zeros)
local function half_from_bits(h)
  local sign = (h >> 15) == 1 and -1 or 1
  local e, m = (h >> 10) & 0x1F, h & 0x3FF
  if e == 0 and m == 0 then return sign * 0.0 end
  return sign * (1 + m / 1024) * 2.0 ^ (e - 15)
end
local function unpack1(fmt, s)
  local r = string.unpack(fmt, s)
  return r
end

T.test("bitcast: same size is one BITCAST, other sizes split or join the last axis", function()
  local fl = {1.0, -2.0, 0.5, -0.0, inf}
  local want = {}
  for i, v in ipairs(fl) do want[i] = bits("f", "i4", v) end
  local t = Tensor(fl):bitcast(d.int32)
  T.eq(t.uop:op(), "BITCAST")
  both(t, "int32", want, nil, "float32 -> int32")
  both(Tensor({1065353216, -1073741824}, "int32"):bitcast("float32"), "float32", {1.0, -2.0}, nil, "int32 -> float32")
  both(Tensor({-1, 2, 3}, "int32"):bitcast("uint32"), "uint32", {4294967295, 2, 3}, nil, "int32 -> uint32")
  -- 1.0 is exponent 15 (0x3C00), -2.0 the sign bit and exponent 16 (0xC000)
  both(Tensor({1.0, -2.0}, "half"):bitcast("uint16"), "uint16", {0x3C00, 0xC000}, nil, "half -> uint16")
  both(Tensor({4607182418800017408}, "uint64"):bitcast("float64"), "float64", {1.0}, nil, "uint64 -> float64")
  both(Tensor(1.0):bitcast("int32"), "int32", bits("f", "i4", 1.0), nil, "0-d")
  local same = Tensor{1, 2}
  T.eq(same:bitcast("int32"), same)
  -- narrower: each element becomes its little-endian pieces
  local w8 = {}
  for _, v in ipairs({0x01020304, -1}) do
    local s = string.pack("<i4", v)
    for k = 1, 4 do w8[#w8 + 1] = s:byte(k) end
  end
  both(Tensor({0x01020304, -1}, "int32"):bitcast("uint8"), "uint8", w8, nil, "int32 -> uint8")
  local one = string.pack("<f", 1.0)
  both(Tensor{1.0}:bitcast("half"), "float16", {half_from_bits(unpack1("<I2", one:sub(1, 2))),
    half_from_bits(unpack1("<I2", one:sub(3, 4)))}, nil, "float32 -> half")
  -- wider: pieces joined, the last axis shrinks
  both(Tensor({1, 2, 3, 4, 255, 255, 255, 255}, "uint8"):bitcast("int32"), "int32",
    {unpack1("<i4", "\1\2\3\4"), -1}, nil, "uint8 -> int32")
  both(Tensor{1.0, 2.0}:bitcast("int64"), "int64", {unpack1("<i8", string.pack("<f", 1.0) .. string.pack("<f", 2.0))}, nil, "float32 -> int64")
  both(Tensor{true, false}:bitcast("uint8"), "uint8", {1, 0}, nil, "bool -> uint8")
  both(Tensor({{1, 0}, {0, 7}}, "int8"):bitcast("bool"), "bool", {{true, false}, {false, true}}, nil, "int8 -> bool")
end)

-- ---- integer pow, -0.0 ----

T.test("integer pow with an integer exponent is exact (multiplications, wrapping)", function()
  local t = Tensor({3, -2}, "int32") ^ 7
  both(t, "int32", {2187, -128}, nil, "int ^ 7")
  both(Tensor({3, -2, 0, 46341}, "int32") ^ 2, "int32", {9, 4, 0, (46341 * 46341 + (1 << 31)) % (1 << 32) - (1 << 31)}, nil, "int ^ 2 wraps")
  both(Tensor({5, -5}, "int32") ^ 0, "int32", {1, 1}, nil, "int ^ 0")
  both(Tensor({5, -5}, "int32") ^ 1, "int32", {5, -5}, nil, "int ^ 1")
  both(Tensor({3, 200}, "uint8") ^ 3, "uint8", {27, (200 * 200 * 200) % 256}, nil, "uint8 ^ 3 wraps")
  both(Tensor({-3, 7}, "int64") ^ 13, "int64", {-1594323, 96889010407}, nil, "int64 ^ 13")
  both(Tensor{true, false} ^ 3, "int32", {1, 0}, nil, "bool ^ 3 is int32")
  -- the kernel has no POW left: x^7 is (x*x*x) * (x*x*x) * x
  local xv = uop.var("x", -5, 5):cast(d.int32)
  local sym = uop.simplify(uop.new("POW", d.int32, {xv, uop.const(d.int32, 7)}), "symbolic_simple")
  T.eq(#uop.find(sym, "POW"), 0)
  T.eq(#uop.find(sym, "MUL"), 4)
  for x = -5, 5 do T.eq(sym:eval{x = x}, x * x * x * x * x * x * x, "x = " .. x) end
  -- floats keep tinygrad's folding too: x^2 is x*x, x^0.5 is sqrt
  local xf32 = uop.var("x", 0, 4):cast(d.float32)
  local x2 = uop.simplify(uop.new("POW", d.float32, {xf32, uop.const(d.float32, 2.0)}), "symbolic_simple")
  T.eq(#uop.find(x2, "POW"), 0)
  both(Tensor{1.5, -2.0} ^ 2, "float32", {2.25, 4.0}, nil, "float ^ 2")
  both(Tensor{4.0, 2.25} ^ 0.5, "float32", {2.0, 1.5}, nil, "float ^ 0.5")
  both(Tensor{4.0, 0.5} ^ -2, "float32", {0.0625, 4.0}, nil, "float ^ -2")
  both(Tensor{4.0, 0.25} ^ 2.5, "float32", {32.0, 0.03125}, nil, "float ^ 2.5")
  both(2.0 ^ Tensor{3.0, -1.0, 0.5}, "float32", {8.0, 0.5, math.sqrt(2)}, 1e-6, "2 ^ float")
  -- negative or non-integer exponents of ints stay errors (tinygrad)
  T.raises("pow: the base needs to be float", function() return Tensor({2}, "int32") ^ -1 end)
end)

T.test("-0.0 keeps its sign in data, constants and results", function()
  local z = Tensor{-0.0}
  local b = uop.buffer_values(z.uop)
  T.ok(1 / b[1] == -inf, "the buffer holds -0.0")
  both(1 / z, "float32", {-inf}, nil, "1 / -0.0")
  both(z:reciprocal(), "float32", {-inf}, nil, "reciprocal")
  both(1 / Tensor(-0.0), "float32", -inf, nil, "a -0.0 constant")
  both(1 / Tensor.full({2}, -0.0), "float32", {-inf, -inf}, nil, "full of -0.0")
  both(Tensor({-0.0, 0.0}, "float64"), "float64", {-0.0, 0.0}, nil, "float64 data")
  -- 0 stays an integer zero for ints
  both(Tensor({-0.0}, "int32"), "int32", {0}, nil, "int32 of -0.0")
end)

-- ---- errors ----

T.test("wrong arguments: one line naming the function, at the caller's line", function()
  local x = Tensor{1.0, -2.0}
  local cases = {
    {"gelu: takes at most 0 arguments, got 1", function() return x:gelu(1) end},
    {"quick_gelu: takes at most 0 arguments", function() return x:quick_gelu("x") end},
    {"swish: takes at most 0 arguments", function() return x:swish(2) end},
    {"silu: takes at most 0 arguments", function() return x:silu(2) end},
    {"relu6: takes at most 0 arguments", function() return x:relu6(1) end},
    {"erf: takes at most 0 arguments", function() return x:erf(1) end},
    {"elu: alpha must be a number, got string", function() return x:elu("a") end},
    {"elu: unknown option 'alph'", function() return x:elu{alph = 1} end},
    {"elu: takes at most 1 arguments, got 2", function() return x:elu(1, 2) end},
    {"softplus: beta must be a number, got boolean", function() return x:softplus{beta = true} end},
    {"softplus: beta must not be zero", function() return x:softplus(0) end},
    {"hardtanh: min_val must be a number, got string", function() return x:hardtanh("lo") end},
    {"hardtanh: unknown option 'min'", function() return x:hardtanh{min = 1} end},
    {"hardtanh: max_val given twice", function() return x:hardtanh(-1, 1, {max_val = 2}) end},
    {"isinf: detect_positive must be a boolean, got number", function() return x:isinf(1) end},
    {"lerp: the end must be a Tensor, got number", function() return x:lerp(3, 0.5) end},
    {"lerp: the weight must be a Tensor or a number, got string", function() return x:lerp(x, "w") end},
    {"copysign: expected a Tensor, number or boolean, got string", function() return x:copysign("s") end},
    {"logaddexp: expected a Tensor, number or boolean, got table", function() return x:logaddexp({}) end},
    {"var: correction must be a number, got string", function() return x:var{correction = "1"} end},
    {"var: keepdim must be a boolean, got number", function() return x:var(0, {keepdim = 1}) end},
    {"var: axis must be an integer, a list of integers or nil, got string", function() return x:var("0") end},
    {"std: unknown option 'ddof'", function() return x:std{ddof = 1} end},
    {"argmax: axis must be an integer or nil, not a list", function() return x:argmax{0} end},
    {"argmax: a 0-d tensor has no axis 0", function() return Tensor(1.0):argmax(0) end},
    {"argmin: axis must be an integer, a list of integers or nil, got boolean", function() return x:argmin(true) end},
    {"any: unknown option 'keepdims'", function() return x:any{keepdims = true} end},
    {"all: axis must be an integer, a list of integers or nil, got string", function() return x:all("x") end},
    {"logsumexp: axis must be an integer or nil, not a list", function() return x:logsumexp{0} end},
    {"logcumsumexp: axis must be an integer, got string", function() return x:logcumsumexp("0") end},
    {"linspace: start and stop must be numbers", function() return Tensor.linspace("0", 1, 3) end},
    {"linspace: steps must be an integer, got 2.5", function() return Tensor.linspace(0, 1, 2.5) end},
    {"linspace: number of steps must be non-negative", function() return Tensor.linspace(0, 1, -1) end},
    {"linspace with bool dtype is not supported", function() return Tensor.linspace(0, 1, 3, {dtype = "bool"}) end},
    {"linspace: unknown option 'device'", function() return Tensor.linspace(0, 1, 3, {device = "CPU"}) end},
    {"bitcast: a dtype is needed", function() return x:bitcast() end},
    {"bitcast: bad dtype 'nope': no such dtype", function() return x:bitcast("nope") end},
    {"bitcast: unsupported size in bitcast (uint8 to int32, last axis 3)", function() return Tensor({1, 2, 3}, "uint8"):bitcast("int32") end},
    {"bitcast: a 0-d tensor cannot change its item size (float32 to int16)", function() return Tensor(1.0):bitcast("int16") end},
  }
  for _, case in ipairs(cases) do
    local msg = T.err(case[2])
    T.contains(msg, case[1])
    T.ok(not msg:find("\n"), "one line: " .. msg)
    T.ok(not msg:find("uopdb/", 1, true), "no internal position: " .. msg)
  end
  -- the caller's own line, for a function of each new part
  local line = debug.getinfo(1, "l").currentline
  for i, fn in ipairs{
    function() local r = x:elu("a"); return r end,           -- activation
    function() local r = x:var("0"); return r end,           -- reduce
    function() local r = x:logcumsumexp("0"); return r end,  -- window
    function() local r = Tensor.linspace(0, 1, -1); return r end, -- create
    function() local r = x:bitcast(); return r end,          -- dtype
    function() local r = x:lerp(1, 1); return r end,         -- elementwise
  } do
    T.contains(T.err(fn), "test_tensor_api.lua:" .. (line + 1 + i) .. ":")
  end
end)

-- ---- the graphs are tinygrad's ----

-- op counts of each graph, captured from tinygrad v0.12.0 (t.uop.toposort()
-- on Tensor.empty inputs, without BUFFER, UNIQUE, DEVICE, COPY and
-- CONTIGUOUS; VCONST counted as CONST, since tinygrad writes a movement
-- op's all-equal size vector as a vector CONST)
local TINYGRAD_OPS = {
  {"gelu", "ADD=4 CONST=10 EXP2=1 EXPAND=8 MUL=8 POW=1 RECIPROCAL=1 RESHAPE=9"},
  {"gelu_int", "ADD=4 CAST=2 CONST=10 EXP2=1 EXPAND=8 MUL=8 POW=1 RECIPROCAL=1 RESHAPE=9"},
  {"quick_gelu", "ADD=1 CONST=5 EXP2=1 EXPAND=3 MUL=3 RECIPROCAL=1 RESHAPE=4"},
  {"swish", "ADD=1 CONST=4 EXP2=1 EXPAND=2 MUL=2 RECIPROCAL=1 RESHAPE=3"},
  {"silu", "ADD=1 CONST=4 EXP2=1 EXPAND=2 MUL=2 RECIPROCAL=1 RESHAPE=3"},
  {"relu6", "ADD=2 CAST=8 CMPLT=2 CONST=5 EXPAND=3 MUL=2 RESHAPE=4 WHERE=2"},
  {"relu6_bool", "ADD=2 CAST=9 CMPLT=2 CONST=5 EXPAND=3 MUL=2 RESHAPE=4 WHERE=2"},
  {"hardtanh", "CAST=8 CMPLT=2 CONST=4 EXPAND=2 RESHAPE=3 WHERE=2"},
  {"hardtanh_args", "CAST=9 CMPLT=2 CONST=4 EXPAND=2 RESHAPE=3 WHERE=2"},
  {"elu", "ADD=2 CAST=8 CMPLT=2 CONST=6 EXP2=1 EXPAND=4 MUL=4 RESHAPE=5 WHERE=2"},
  {"elu_alpha", "ADD=2 CAST=8 CMPLT=2 CONST=7 EXP2=1 EXPAND=5 MUL=4 RESHAPE=6 WHERE=2"},
  {"softplus", "ADD=4 CONST=8 EXP2=2 EXPAND=6 LOG2=1 MAX=1 MUL=6 RESHAPE=7"},
  {"erf", "ADD=9 CAST=8 CMPLT=1 CMPNE=1 CONST=18 EXP2=1 EXPAND=16 MUL=16 RECIPROCAL=1 RESHAPE=17 WHERE=4"},
  {"erf_int", "ADD=9 CAST=11 CMPLT=1 CMPNE=1 CONST=20 EXP2=1 EXPAND=18 MUL=16 RECIPROCAL=1 RESHAPE=19 WHERE=4"},
  {"isnan", "CMPNE=1 CONST=1 RESHAPE=1"},
  {"isinf", "ADD=1 CAST=14 CMPNE=4 CONST=5 EXPAND=3 MUL=2 RESHAPE=4"},
  {"isinf_pos", "ADD=1 CAST=16 CMPNE=4 CONST=6 EXPAND=4 MUL=2 RESHAPE=5"},
  {"isinf_int", "ADD=1 CAST=15 CMPNE=4 CONST=5 EXPAND=3 MUL=2 RESHAPE=4"},
  {"lerp", "ADD=2 CONST=4 EXPAND=2 MUL=2 RESHAPE=4"},
  {"lerp_t", "ADD=2 CAST=1 CONST=3 EXPAND=1 MUL=2 RESHAPE=4"},
  {"lerp_u8", "ADD=4 CAST=34 CONST=7 EXPAND=5 IDIV=1 MUL=3 RESHAPE=5"},
  {"copysign", "ADD=3 CAST=12 CMPLT=2 CMPNE=1 CONST=10 EXPAND=8 MUL=5 RESHAPE=9 WHERE=5"},
  {"copysign_t", "ADD=3 CAST=13 CMPLT=2 CMPNE=1 CONST=11 EXPAND=9 MUL=5 RESHAPE=11 WHERE=5"},
  {"logaddexp", "ADD=4 CONST=5 EXP2=2 EXPAND=3 LOG2=1 MAX=1 MUL=4 RESHAPE=5"},
  {"logaddexp_s", "ADD=4 CAST=1 CONST=6 EXP2=2 EXPAND=4 LOG2=1 MAX=1 MUL=4 RESHAPE=5"},
  {"var", "ADD=1 CONST=8 EXPAND=4 MUL=4 RECIPROCAL=2 REDUCE_AXIS=2 RESHAPE=5"},
  {"var_all", "ADD=1 CONST=5 EXPAND=2 MUL=4 RECIPROCAL=2 REDUCE_AXIS=2 RESHAPE=4 VECTORIZE=1"},
  {"var_kd", "ADD=1 CAST=3 CONST=6 EXPAND=4 MUL=4 RECIPROCAL=2 REDUCE_AXIS=2 RESHAPE=4"},
  {"std", "ADD=1 CONST=5 EXPAND=2 MUL=4 RECIPROCAL=2 REDUCE_AXIS=2 RESHAPE=4 SQRT=1 VECTORIZE=1"},
  {"std_kd", "ADD=1 CONST=6 EXPAND=4 MUL=4 RECIPROCAL=2 REDUCE_AXIS=2 RESHAPE=4 SQRT=1"},
  {"argmax", "ADD=2 CAST=5 CMPNE=2 CONST=20 EXPAND=8 MUL=2 PAD=1 PERMUTE=1 REDUCE_AXIS=3 RESHAPE=14 SHRINK=2"},
  {"argmax_all", "ADD=2 CAST=5 CMPNE=2 CONST=18 EXPAND=5 MUL=2 PAD=1 PERMUTE=1 REDUCE_AXIS=3 RESHAPE=12 SHRINK=2 VECTORIZE=1"},
  {"argmax_kd", "ADD=2 CAST=5 CMPNE=2 CONST=19 EXPAND=8 MUL=2 PAD=1 PERMUTE=1 REDUCE_AXIS=3 RESHAPE=13 SHRINK=2"},
  {"argmin", "ADD=2 CAST=5 CMPNE=2 CONST=19 EXPAND=6 MUL=2 PAD=1 PERMUTE=1 REDUCE_AXIS=3 RESHAPE=13 SHRINK=2 VECTORIZE=1 XOR=1"},
  {"argmin_b", "ADD=2 CAST=11 CMPNE=3 CONST=20 EXPAND=8 MUL=2 PAD=1 PERMUTE=1 REDUCE_AXIS=3 RESHAPE=14 SHRINK=2"},
  {"any", "CAST=1 CONST=2 REDUCE_AXIS=1 RESHAPE=2"},
  {"any_all", "CAST=1 CONST=1 REDUCE_AXIS=1 RESHAPE=2 VECTORIZE=1"},
  {"all", "CAST=8 CMPNE=2 CONST=3 EXPAND=1 REDUCE_AXIS=1 RESHAPE=3 VECTORIZE=1"},
  {"all_kd", "CAST=7 CMPNE=2 CONST=4 EXPAND=2 REDUCE_AXIS=1 RESHAPE=2"},
  {"logsumexp", "ADD=2 CONST=7 EXP2=1 EXPAND=4 LOG2=1 MUL=3 REDUCE_AXIS=2 RESHAPE=6"},
  {"logsumexp_all", "ADD=2 CONST=5 EXP2=1 EXPAND=3 LOG2=1 MUL=3 REDUCE_AXIS=2 RESHAPE=5 VECTORIZE=1"},
  {"logsumexp_kd", "ADD=2 CAST=2 CONST=7 EXP2=1 EXPAND=4 LOG2=1 MUL=3 REDUCE_AXIS=2 RESHAPE=6"},
  {"logcumsumexp", "ADD=6 CAST=10 CMPLT=1 CMPNE=1 CONST=43 EXP2=1 EXPAND=22 LOG2=1 MUL=3 PAD=4 PERMUTE=3 REDUCE_AXIS=4 RESHAPE=39 SHRINK=6 WHERE=3"},
  {"logcumsumexp0", "ADD=6 CAST=12 CMPLT=1 CMPNE=1 CONST=41 EXP2=1 EXPAND=22 LOG2=1 MUL=3 PAD=4 PERMUTE=5 REDUCE_AXIS=4 RESHAPE=39 SHRINK=6 WHERE=3"},
  {"linspace", "ADD=2 CAST=1 CONST=16 EXPAND=5 MUL=1 PAD=1 PERMUTE=1 REDUCE_AXIS=1 RESHAPE=10 SHRINK=2"},
  {"linspace_int", "ADD=2 CAST=2 CONST=16 EXPAND=5 MUL=1 PAD=1 PERMUTE=1 REDUCE_AXIS=1 RESHAPE=10 SHRINK=2"},
  {"linspace_1", ""},
  {"bitcast", "BITCAST=1 CONST=1 RESHAPE=1"},
  {"bitcast_narrow", "ADD=1 BITCAST=1 CAST=1 CONST=8 EXPAND=2 IDIV=2 PAD=2 RESHAPE=6"},
  {"bitcast_u8", "ADD=3 BITCAST=1 CAST=1 CONST=12 EXPAND=4 IDIV=4 PAD=4 RESHAPE=10"},
  {"bitcast_wide", "ADD=3 BITCAST=1 CAST=4 CONST=15 EXPAND=4 MUL=4 RESHAPE=7 SHRINK=4"},
  {"bitcast_f64", "ADD=1 BITCAST=2 CAST=2 CONST=9 EXPAND=2 MUL=2 RESHAPE=5 SHRINK=2"},
  {"ipow", "CONST=3 EXPAND=1 POW=1 RESHAPE=2"},
  {"ipow2", "CONST=3 EXPAND=1 POW=1 RESHAPE=2"},
}

T.test("each function builds the ops tinygrad's Tensor builds", function()
  local SKIP = {BUFFER = true, UNIQUE = true, DEVICE = true, COPY = true, CONTIGUOUS = true}
  local names = {}
  for k in pairs(uop.ops) do if type(k) == "string" and not SKIP[k] then names[#names + 1] = k end end
  table.sort(names)
  local function histogram(t)
    local counts = {}
    for _, n in ipairs(names) do
      local c = #uop.find(t.uop, n)
      if c > 0 then
        local key = n == "VCONST" and "CONST" or n
        counts[key] = (counts[key] or 0) + c
      end
    end
    local keys = {}
    for k in pairs(counts) do keys[#keys + 1] = k end
    table.sort(keys)
    local parts = {}
    for _, k in ipairs(keys) do parts[#parts + 1] = k .. "=" .. counts[k] end
    return table.concat(parts, " ")
  end
  local x = function() return Tensor.empty(2, 3) end
  local i = function() return Tensor.empty(2, 3, {dtype = "int32"}) end
  local b = function() return Tensor.empty(2, 3, {dtype = "bool"}) end
  local u8 = function() return Tensor.empty(3, {dtype = "uint8"}) end
  local build_case = {
    gelu = function() return x():gelu() end, gelu_int = function() return i():gelu() end,
    quick_gelu = function() return x():quick_gelu() end, swish = function() return x():swish() end,
    silu = function() return x():silu() end, relu6 = function() return x():relu6() end,
    relu6_bool = function() return b():relu6() end, hardtanh = function() return x():hardtanh() end,
    hardtanh_args = function() return i():hardtanh(-0.5, 2) end, elu = function() return x():elu() end,
    elu_alpha = function() return x():elu(0.5) end, softplus = function() return x():softplus(2.0) end,
    erf = function() return x():erf() end, erf_int = function() return i():erf() end,
    isnan = function() return x():isnan() end, isinf = function() return x():isinf() end,
    isinf_pos = function() return x():isinf(true, false) end, isinf_int = function() return i():isinf() end,
    lerp = function() return x():lerp(x(), 0.5) end, lerp_t = function() return i():lerp(x(), x()) end,
    lerp_u8 = function() return u8():lerp(u8(), Tensor.empty(3)) end,
    copysign = function() return x():copysign(-1.0) end, copysign_t = function() return i():copysign(x()) end,
    logaddexp = function() return x():logaddexp(x()) end, logaddexp_s = function() return i():logaddexp(0.5) end,
    var = function() return x():var(1) end, var_all = function() return x():var() end,
    var_kd = function() return i():var(0, {keepdim = true, correction = 0}) end,
    std = function() return x():std() end, std_kd = function() return x():std(1, {keepdim = true, correction = 2}) end,
    argmax = function() return x():argmax(1) end, argmax_all = function() return x():argmax() end,
    argmax_kd = function() return i():argmax(0, {keepdim = true}) end, argmin = function() return i():argmin() end,
    argmin_b = function() return b():argmin(1) end, any = function() return x():any(0) end,
    any_all = function() return i():any() end, all = function() return x():all() end,
    all_kd = function() return b():all(1, {keepdim = true}) end, logsumexp = function() return x():logsumexp(1) end,
    logsumexp_all = function() return x():logsumexp() end,
    logsumexp_kd = function() return i():logsumexp(0, {keepdim = true}) end,
    logcumsumexp = function() return x():logcumsumexp(1) end, logcumsumexp0 = function() return i():logcumsumexp() end,
    linspace = function() return Tensor.linspace(0, 1, 5) end,
    linspace_int = function() return Tensor.linspace(-3, 10, 4, {dtype = "int32"}) end,
    linspace_1 = function() return Tensor.linspace(2, 3, 1) end,
    bitcast = function() return x():bitcast(d.int32) end, bitcast_narrow = function() return x():bitcast(d.uint16) end,
    bitcast_u8 = function() return i():bitcast(d.uint8) end,
    bitcast_wide = function() return Tensor.empty(2, 4, {dtype = "uint8"}):bitcast(d.int32) end,
    bitcast_f64 = function() return Tensor.empty(2, 2):bitcast(d.float64) end,
    ipow = function() return i() ^ 7 end, ipow2 = function() return i() ^ 2 end,
  }
  for _, case in ipairs(TINYGRAD_OPS) do
    local f = build_case[case[1]]
    T.ok(f, "a case for " .. case[1])
    T.eq(histogram(f()), case[2], case[1])
  end
end)

T.test("softmax and log_softmax with a dtype compute in it and return it", function()
  local rows = {{1.5, -2, 3.2}, {-7, 2.5, -3}}
  local x = Tensor(rows, "float32")
  -- x - max(x) is taken in float32, then cast: the rest is float64 (plain Lua)
  local function soft(r, log)
    local m = math.max(table.unpack(r))
    local d, s = {}, 0
    for i, v in ipairs(r) do d[i] = f32(f32(v) - f32(m)); s = s + math.exp(d[i]) end
    local out = {}
    for i = 1, #r do out[i] = log and d[i] - math.log(s) or math.exp(d[i]) / s end
    return out
  end
  both(x:softmax(-1, {dtype = "float64"}), "float64", {soft(rows[1]), soft(rows[2])}, 1e-12, "softmax(-1, float64)")
  local cols = {}
  for j = 1, 3 do cols[j] = soft({rows[1][j], rows[2][j]}, true) end
  both(x:log_softmax{axis = 0, dtype = "float64"}, "float64",
       {{cols[1][1], cols[2][1], cols[3][1]}, {cols[1][2], cols[2][2], cols[3][2]}}, 1e-12, "log_softmax(0, float64)")
  T.eq(tostring(x:softmax():dtype()), "float32", "no dtype: the input's")
  T.raises("softmax: unknown option 'dtyp'", function() return x:softmax(-1, {dtyp = "float64"}) end)
  T.raises("log_softmax: takes at most 2 arguments, got 3", function() return x:log_softmax(0, "float64", 1) end)
end)

T.test("options tables: an axis, a rounding mode or eye's m given by name is used; a misspelt option is an error", function()
  local rows = {{1.5, -2, 3.25}, {-4.5, 5, -0.5}}
  local x = Tensor(rows, "float32")
  local y = Tensor({{0.5, -4, 5.25}, {0.5, -1, 0.125}}, "float32")
  both(x:sum{axis = 1}, "float32", {2.75, 0.0}, 0, "sum{axis = 1}")
  both(x:sum{axis = 1, keepdim = true}, "float32", {{2.75}, {0.0}}, 0, "sum{axis = 1, keepdim = true}")
  both(x:max{axis = 0}, "float32", {1.5, 5.0, 3.25}, 0, "max{axis = 0}")
  both(x:min{axis = 1}, "float32", {-2.0, -4.5}, 0, "min{axis = 1}")
  both(x:prod{axis = 0}, "float32", {-6.75, -10.0, -1.625}, 0, "prod{axis = 0}")
  both(x:mean{axis = 1}, "float32", {f32(2.75 / 3), 0.0}, 1e-7, "mean{axis = 1}")
  -- x / y = {{3, 0.5, 0.619...}, {-9, -5, -4}}: floor and trunc agree on these
  both(x:div(y, {rounding_mode = "floor"}), "float32", {{3.0, 0.0, 0.0}, {-9.0, -5.0, -4.0}}, 0, "div floor")
  both(x:div(y, {rounding_mode = "trunc"}), "float32", {{3.0, 0.0, 0.0}, {-9.0, -5.0, -4.0}}, 0, "div trunc")
  both(x:div(2, {reverse = true}), "float32", map(rows, function(v) return f32(2 / v) end), 1e-7, "div reverse")
  both(Tensor.eye(2, {m = 3}), "float32", {{1.0, 0.0, 0.0}, {0.0, 1.0, 0.0}}, 0, "eye(2, {m = 3})")
  both(Tensor.eye(2, 3, {dtype = "int32"}), "int32", {{1, 0, 0}, {0, 1, 0}}, 0, "eye(2, 3, int32)")
  for _, c in ipairs{
    {"sum: unknown option 'keepdims'", function() return x:sum(1, {keepdims = true}) end},
    {"sum: unknown option 'dtyp'", function() return x:sum(1, {dtyp = "int32"}) end},
    {"max: axis given twice", function() return x:max(1, {axis = 0}) end},
    {"mean: unknown option 'dtype'", function() return x:mean(1, {dtype = "float64"}) end},
    {"zeros: unknown option 'dtyp'", function() return Tensor.zeros(2, {dtyp = "int32"}) end},
    {"ones: unknown option 'device'", function() return Tensor.ones(2, 2, {device = "CPU"}) end},
    {"full: unknown option 'dtyp'", function() return Tensor.full({2}, 1, {dtyp = "int32"}) end},
    {"arange: unknown option 'dtyp'", function() return Tensor.arange(3, {dtyp = "int32"}) end},
    {"eye: unknown option 'dtyp'", function() return Tensor.eye(2, {dtyp = "int32"}) end},
    {"full_like: unknown option 'dtyp'", function() return x:full_like(2, {dtyp = "int32"}) end},
    {"Tensor: unknown option 'dtyp'", function() return Tensor.new({1, 2}, {dtyp = "int8"}) end},
    {"rand: unknown option 'sed'", function() return Tensor.rand(2, {sed = 1}) end},
    {"div: unknown option 'rounding'", function() return x:div(y, {rounding = "floor"}) end},
  } do T.raises(c[1], c[2]) end
end)

T.test("tinygrad's parameter names: leading arguments by name or in a lone options table's list part", function()
  local rows = {{1.5, -2, 3.25}, {-4.5, 5, -0.5}}
  local x = Tensor(rows, "float32")
  both(x:cumsum{axis = 1}, "float32", {{1.5, -0.5, 2.75}, {-4.5, 0.5, 0.0}}, 0, "cumsum{axis = 1}")
  both(x:cummax{axis = 1}, "float32", {{1.5, 1.5, 3.25}, {-4.5, 5.0, 5.0}}, 0, "cummax{axis = 1}")
  both(x:cumprod{axis = 1}, "float32", {{1.5, -3.0, -9.75}, {-4.5, -22.5, 11.25}}, 0, "cumprod{axis = 1}")
  both(x:clamp{min_ = 0}, "float32", {{1.5, 0.0, 3.25}, {0.0, 5.0, 0.0}}, 0, "clamp{min_ = 0}")
  both(x:clamp{max_ = 1}, "float32", {{1.0, -2.0, 1.0}, {-4.5, 1.0, -0.5}}, 0, "clamp{max_ = 1}")
  both(x:clip{min_ = 0, max_ = 1}, "float32", {{1.0, 0.0, 1.0}, {0.0, 1.0, 0.0}}, 0, "clip{min_, max_}")
  both(x:leaky_relu{neg_slope = 0.25}, "float32", {{1.5, -0.5, 3.25}, {-1.125, 5.0, -0.125}}, 0, "leaky_relu{neg_slope}")
  both(x:transpose{dim0 = 0, dim1 = 1}, "float32", {{1.5, -4.5}, {-2.0, 5.0}, {3.25, -0.5}}, 0, "transpose{dim0, dim1}")
  both(x:reshape(1, 2, 3):flatten{start_dim = 1}, "float32", {{1.5, -2.0, 3.25, -4.5, 5.0, -0.5}}, 0, "flatten{start_dim}")
  T.eq(table.concat(x:reshape(1, 2, 1, 3):squeeze{dim = 2}:shape(), ","), "1,2,3", "squeeze{dim = 2}")
  T.eq(table.concat(x:unsqueeze{dim = 1}:shape(), ","), "2,1,3", "unsqueeze{dim = 1}")
  both(x:gather{dim = 1, index = Tensor{{0, 0}, {1, 0}}}, "float32", {{1.5, 1.5}, {5.0, -4.5}}, 0, "gather{dim, index}")
  both(x:masked_fill{mask = x:gt(0), value = 0.5}, "float32", {{0.5, -2.0, 0.5}, {-4.5, 0.5, -0.5}}, 0, "masked_fill{mask, value}")
  both(x:pad{{{1, 1}, nil}, value = 3}, "float32",
       {{3.0, 3.0, 3.0}, {1.5, -2.0, 3.25}, {-4.5, 5.0, -0.5}, {3.0, 3.0, 3.0}}, 0, "pad{{...}, value = 3}")
  both(x:pad{padding = {1, 1}, mode = "reflect"}, "float32",
       {{-2.0, 1.5, -2.0, 3.25, -2.0}, {5.0, -4.5, 5.0, -0.5, 5.0}}, 0, "pad{padding, mode}")
  local img = Tensor({{{{1, 2}, {3, 4}}}}, "float32")
  both(img:conv2d{weight = Tensor({{{{2}}}}, "float32"), padding = 1}, "float32",
       {{{{0.0, 0.0, 0.0, 0.0}, {0.0, 2.0, 4.0, 0.0}, {0.0, 6.0, 8.0, 0.0}, {0.0, 0.0, 0.0, 0.0}}}}, 0, "conv2d{weight, padding}")
  both(img:conv2d(Tensor({{{{2}}}}, "float32"), Tensor({1}, "float32")), "float32",
       {{{{3.0, 5.0}, {7.0, 9.0}}}}, 0, "conv2d(w, bias) by position")
  both(x:cast{dtype = "int32"}, "int32", {{1, -2, 3}, {-4, 5, 0}}, 0, "cast{dtype}")
  both(x:matmul{x = x:transpose(), dtype = "float64"}, "float64", {{16.8125, -18.375}, {-18.375, 45.5}}, 0, "matmul{x, dtype}")
  both(x:transpose():matmul(x, {reverse = true}), "float32", {{16.8125, -18.375}, {-18.375, 45.5}}, 0, "matmul(x, {reverse})")
  both(x:dot{w = x:transpose(), dtype = "float64"}, "float64", {{16.8125, -18.375}, {-18.375, 45.5}}, 0, "dot{w, dtype}")
  both(x:gt(0):where{x = 1, y = -1}, "int32", {{1, -1, 1}, {-1, 1, -1}}, 0, "where{x, y}")
  both(x:lerp{end_ = x * 3, weight = 0.5}, "float32", map(rows, function(v) return 2 * v end), 0, "lerp{end_, weight}")
  both(Tensor.arange{start = 1, stop = 4}, "int32", {1, 2, 3}, 0, "arange{start, stop}")
  both(Tensor.linspace{start = 0, stop = 1, steps = 3}, "float32", {0.0, 0.5, 1.0}, 0, "linspace{start, stop, steps}")
  both(Tensor.full{shape = {2}, fill_value = 4}, "int32", {4, 4}, 0, "full{shape, fill_value}")
  both(x:cat{x, dim = 1}, "float32", {{1.5, -2.0, 3.25, 1.5, -2.0, 3.25}, {-4.5, 5.0, -0.5, -4.5, 5.0, -0.5}}, 0, "cat{x, dim = 1}")
  both(Tensor.stack{x:sum(1), x:max(1), dim = 1}, "float32", {{2.75, 3.25}, {0.0, 5.0}}, 0, "stack{a, b, dim = 1}")
  for _, c in ipairs{
    {"matmul: unknown option 'foo'", function() return x:matmul(x:transpose(), {foo = 1}) end},
    {"conv2d: unknown option 'strides'", function() return img:conv2d(Tensor({{{{2}}}}, "float32"), {strides = 2}) end},
    {"cumprod: an axis is needed", function() return x:cumprod() end},
    {"cumsum: unknown option 'dim'", function() return x:cumsum{axis = 1, dim = 0} end},
    {"cumsum: axis given twice", function() return x:cumsum(1, {axis = 0}) end},
    {"transpose: takes at most 2 arguments, got 3", function() return x:transpose(0, 1, 2) end},
    {"lerp: unknown option 'end'", function() return x:lerp{["end"] = x, weight = 0.5} end},
    {"cat: unknown option 'axis'", function() return x:cat{x, axis = 1} end},
  } do T.raises(c[1], c[2]) end
end)

-- ---- tensor_math.lua and tensor_nn.lua: values from the math in plain Lua ----

local function sigmoid(v) return 1 / (1 + math.exp(-v)) end
local function softplus(v) return math.log(1 + math.exp(v)) end

T.test("inverse trigonometric and hyperbolic functions, and the activations built like tinygrad's", function()
  local xs = {-0.9, -0.5, 0.0, 0.3, 0.99}
  local x = Tensor(xs, "float32")
  local fs = {}
  for i, v in ipairs(xs) do fs[i] = f32(v) end
  local function each(f) local r = {} for i, v in ipairs(fs) do r[i] = f(v) end return r end
  -- asin's polynomial is within 2e-8 of the function (Abramowitz and Stegun 4.4.46)
  both(x:asin(), "float32", each(math.asin), 1e-6, "asin")
  both(x:acos(), "float32", each(math.acos), 1e-6, "acos")
  both(x:atan(), "float32", each(math.atan), 1e-6, "atan")
  both(x:sinh(), "float32", each(function(v) return (math.exp(v) - math.exp(-v)) / 2 end), 1e-6, "sinh")
  both(x:cosh(), "float32", each(function(v) return (math.exp(v) + math.exp(-v)) / 2 end), 1e-6, "cosh")
  both(x:asinh(), "float32", each(function(v) return math.log(v + math.sqrt(v * v + 1)) end), 1e-6, "asinh")
  both(x:atanh(), "float32", each(function(v) return math.log((1 + v) / (1 - v)) / 2 end), 1e-6, "atanh")
  both(Tensor({1.5, 2, 3}, "float32"):acosh(), "float32", {0.9624236501192069, 1.3169578969248166, 1.7627471740390859}, 1e-6, "acosh")
  both(x:celu{alpha = 2}, "float32", each(function(v) return math.max(v, 0) + math.min(2 * (math.exp(v / 2) - 1), 0) end), 1e-6, "celu")
  both(x:selu(), "float32", each(function(v) return 1.0507 * (v >= 0 and v or 1.67326 * (math.exp(v) - 1)) end), 1e-6, "selu")
  both(x:mish(), "float32", each(function(v) local e = math.exp(2 * softplus(v)) return v * (e - 1) / (e + 1) end), 1e-6, "mish")
  both(x:logsigmoid(), "float32", each(function(v) return math.log(sigmoid(v)) end), 1e-6, "logsigmoid")
  both(x:softsign(), "float32", each(function(v) return v / (1 + math.abs(v)) end), 1e-6, "softsign")
  both(x:hardsigmoid(), "float32", each(function(v) return math.max(0, math.min(1, v / 6 + 0.5)) end), 1e-6, "hardsigmoid")
  both(x:hardswish(), "float32", each(function(v) return v * math.max(0, math.min(6, v + 3)) / 6 end), 1e-6, "hardswish")
  T.raises("celu: unknown option 'beta'", function() return x:celu{beta = 1} end)
end)

T.test("isfinite and isclose: infinities, NaN and tolerances as tinygrad's", function()
  local a = Tensor({1, nan, inf, -inf, 2, 1e-9}, "float32")
  local b = Tensor({1.000001, nan, inf, inf, 3, 0}, "float32")
  both(a:isfinite(), "bool", {true, false, false, false, true, true}, nil, "isfinite")
  -- |a - b| <= 1e-8 + 1e-5 |b| for finite pairs; equal infinities; NaN only with equal_nan
  both(a:isclose(b), "bool", {true, false, true, false, false, true}, nil, "isclose")
  both(a:isclose(b, {equal_nan = true}), "bool", {true, true, true, false, false, true}, nil, "isclose equal_nan")
  both(a:isclose(b, {atol = 1}), "bool", {true, false, true, false, true, true}, nil, "isclose atol = 1")
  T.raises("isclose: other must be a Tensor, got number", function() return a:isclose(1) end)
end)

T.test("layernorm, batchnorm, linear, var_mean: as the formulas give them", function()
  local rows = {{1, 2, 3}, {4, 6, 8}}
  local a = Tensor(rows, "float32")
  local function layer(r)
    local m = (r[1] + r[2] + r[3]) / 3
    local v = ((r[1] - m) ^ 2 + (r[2] - m) ^ 2 + (r[3] - m) ^ 2) / 3
    local out = {}
    for i = 1, 3 do out[i] = (r[i] - m) / math.sqrt(v + 1e-5) end
    return out
  end
  both(a:layernorm(), "float32", {layer(rows[1]), layer(rows[2])}, 1e-6, "layernorm")
  both(a:linear(Tensor({{1, 0}, {0, 1}, {1, 1}}, "float32"), Tensor({10, 20}, "float32")), "float32", {{14, 25}, {22, 34}}, 0, "linear")
  both(a:linear(Tensor({2, 0, 1}, "float32")), "float32", {{2, 0, 3}, {8, 0, 8}}, 0, "linear, 1-D weight")
  both(a:batchnorm(nil, nil, Tensor({1, 2}, "float32"), Tensor({1, 0.5}, "float32"), {axis = 0}), "float32",
       {{0, 1, 2}, {1, 2, 3}}, 0, "batchnorm over axis 0")
  both(a:batchnorm(Tensor({1, 2, 3}, "float32"), Tensor({1, 1, 1}, "float32"), Tensor({1, 1, 1}, "float32"),
       Tensor({2, 2, 2}, "float32"), {axis = 1}), "float32", {{1, 5, 13}, {7, 21, 43}}, 0, "batchnorm with weight and bias")
  local v, m = a:var_mean(1)
  both(v, "float32", {1, 4}, 0, "var_mean: var")
  both(m, "float32", {2, 6}, 0, "var_mean: mean")
  local s, m0 = a:std_mean{axis = 0, correction = 0}
  both(s, "float32", {1.5, 2, 2.5}, 1e-6, "std_mean{axis = 0, correction = 0}: std")
  both(m0, "float32", {2.5, 4, 5.5}, 0, "std_mean: mean")
end)

T.test("losses: cross_entropy, nll_loss, binary_crossentropy (and from logits), sparse_categorical_crossentropy", function()
  local rows = {{1, 2, 3}, {4, 6, 8}}
  local a = Tensor(rows, "float32")
  local function lse(r) local m = math.max(r[1], r[2], r[3]) return m + math.log(math.exp(r[1] - m) + math.exp(r[2] - m) + math.exp(r[3] - m)) end
  local targets = {2, 0}
  local per = {}
  for i = 1, 2 do per[i] = lse(rows[i]) - rows[i][targets[i] + 1] end
  both(a:cross_entropy(Tensor(targets)), "float32", (per[1] + per[2]) / 2, 1e-6, "cross_entropy")
  -- label smoothing 0.1: 0.9 of the target's loss plus 0.1 of the mean over the classes
  local smooth = {}
  for i = 1, 2 do
    local l = lse(rows[i])
    smooth[i] = 0.9 * per[i] + 0.1 * ((l - rows[i][1]) + (l - rows[i][2]) + (l - rows[i][3])) / 3
  end
  both(a:cross_entropy(Tensor(targets), {label_smoothing = 0.1, reduction = "none"}), "float32", smooth, 1e-6, "cross_entropy smoothed")
  both(a:cross_entropy(Tensor(targets), {reduction = "sum"}), "float32", per[1] + per[2], 1e-6, "cross_entropy sum")
  both(a:sparse_categorical_crossentropy(Tensor(targets)), "float32", (per[1] + per[2]) / 2, 1e-6, "sparse_categorical_crossentropy")
  both(a:sparse_categorical_crossentropy(Tensor(targets), {ignore_index = 0}), "float32", per[1], 1e-6,
       "sparse_categorical_crossentropy, class 0 ignored")
  both(a:log_softmax():nll_loss(Tensor(targets)), "float32", (per[1] + per[2]) / 2, 1e-6, "nll_loss")
  both(a:log_softmax():nll_loss(Tensor(targets), {weight = Tensor({1, 1, 3}, "float32")}), "float32",
       (3 * per[1] + per[2]) / 4, 1e-6, "nll_loss weighted")
  local ys = {{1, 0, 1}, {0, 1, 0}}
  local bce, bcel = 0, 0
  for i = 1, 2 do for j = 1, 3 do
    local p, y = sigmoid(rows[i][j]), ys[i][j]
    bce = bce - (y * math.log(p) + (1 - y) * math.log(1 - p))
    bcel = bcel - (y * math.log(sigmoid(rows[i][j])) + (1 - y) * math.log(sigmoid(-rows[i][j])))
  end end
  both(a:sigmoid():binary_crossentropy(Tensor(ys, "float32")), "float32", bce / 6, 1e-5, "binary_crossentropy")
  both(a:binary_crossentropy_logits(Tensor(ys, "float32")), "float32", bcel / 6, 1e-6, "binary_crossentropy_logits")
  T.raises("cross_entropy: reduction must be one of mean, sum or none, got avg",
    function() return a:cross_entropy(Tensor(targets), {reduction = "avg"}) end)
  T.raises("cross_entropy: shape mismatch: input (2, 3), target (3,)", function() return a:cross_entropy(Tensor{1, 2, 0}) end)
  T.raises("cross_entropy: label_smoothing must be in [0, 1], got 1.5",
           function() return a:cross_entropy(Tensor{1, 2}, {label_smoothing = 1.5}) end)
  T.raises("sparse_categorical_crossentropy: label_smoothing must be a number, got string",
           function() return a:sparse_categorical_crossentropy(Tensor{1, 2}, {label_smoothing = "x"}) end)
end)

T.test("sequential applies its functions in turn", function()
  both(xf():sequential{function(x) return x:mul(2) end, function(x) return x:add(1) end}, "float32",
       map(XS, function(v) return v * 2 + 1 end))
  both(xi():sequential{ll = {Tensor.neg}}, "int32", map(XI, function(v) return -v end))
  local x = xf()
  T.ok(x:sequential{} == x, "no functions: the tensor itself")
  T.raises("sequential: entry 2 is a number, not a function", function() return xf():sequential{Tensor.neg, 3} end)
  T.raises("sequential: function 1 returned a number, not a Tensor", function() return xf():sequential{function() return 1 end} end)
end)

T.test("scaled_dot_product_attention (plain, causal, bool mask) and dropout", function()
  local qs = {{1, 0}, {0, 1}, {1, 1}}
  local q = Tensor({qs}, "float32")
  local function attend(mask)
    local out = {}
    for i = 1, 3 do
      local w, total = {}, 0
      for j = 1, 3 do
        w[j] = mask(i, j) and math.exp((qs[i][1] * qs[j][1] + qs[i][2] * qs[j][2]) / math.sqrt(2)) or 0
        total = total + w[j]
      end
      out[i] = {0, 0}
      for j = 1, 3 do for k = 1, 2 do out[i][k] = out[i][k] + w[j] / total * qs[j][k] end end
    end
    return {out}
  end
  both(q:scaled_dot_product_attention(q, q), "float32", attend(function() return true end), 1e-6, "attention")
  both(q:scaled_dot_product_attention(q, q, {is_causal = true}), "float32", attend(function(i, j) return j <= i end), 1e-6, "causal")
  local keep = Tensor({{true, false, true}, {true, true, false}, {false, true, true}})
  both(q:scaled_dot_product_attention(q, q, keep), "float32",
       attend(function(i, j) return ({{true, false, true}, {true, true, false}, {false, true, true}})[i][j] end), 1e-6, "bool mask")
  T.raises("scaled_dot_product_attention: cannot set attn_mask when is_causal is true",
    function() return q:scaled_dot_product_attention(q, q, keep, {is_causal = true}) end)
  -- dropout does nothing unless Tensor.training
  T.ok(q:dropout() == q, "dropout outside training is the tensor itself")
  Tensor.training = true
  local ok, dropped = pcall(function() return Tensor.ones(1000):dropout(0.25):tolist() end)
  Tensor.training = false
  T.ok(ok, tostring(dropped))
  local zeros, kept = 0, 0
  for _, v in ipairs(dropped) do if v == 0 then zeros = zeros + 1 elseif math.abs(v - 4 / 3) < 1e-6 then kept = kept + 1 end end
  T.eq(zeros + kept, 1000, "each element dropped or scaled by 1 / (1 - p)")
  T.ok(zeros > 180 and zeros < 320, "about a quarter dropped: " .. zeros)
end)

T.test("randn, normal, uniform, randint, scaled_uniform, rand_like, randn_like: ranges, dtypes and moments", function()
  Tensor.manual_seed(7)
  local function moments(t)
    local v, s, s2, lo, hi = t:tolist(), 0, 0, math.huge, -math.huge
    for _, x in ipairs(v) do s, s2, lo, hi = s + x, s2 + x * x, math.min(lo, x), math.max(hi, x) end
    local m = s / #v
    return m, s2 / #v - m * m, lo, hi
  end
  local m, var = moments(Tensor.randn(20000))
  T.ok(math.abs(m) < 0.03 and math.abs(var - 1) < 0.05, string.format("randn: mean %g, variance %g", m, var))
  m, var = moments(Tensor.normal(20000, {mean = 10, std = 0.5}))
  T.ok(math.abs(m - 10) < 0.02 and math.abs(var - 0.25) < 0.02, string.format("normal: mean %g, variance %g", m, var))
  local lo, hi
  m, var, lo, hi = moments(Tensor.uniform(20000, {low = 2, high = 5}))
  T.ok(lo >= 2 and hi < 5 and math.abs(m - 3.5) < 0.05 and math.abs(var - 0.75) < 0.05,
       string.format("uniform [2, 5): min %g, max %g, mean %g, variance %g", lo, hi, m, var))
  local r = Tensor.randint(5000, {low = -3, high = 4})
  T.eq(tostring(r:dtype()), "int32")
  local seen = {}
  for _, v in ipairs(r:tolist()) do
    T.ok(math.type(v) == "integer" and v >= -3 and v < 4, "randint value " .. tostring(v))
    seen[v] = true
  end
  for v = -3, 3 do T.ok(seen[v], "randint drew " .. v) end
  m, var, lo, hi = moments(Tensor.scaled_uniform(100, 100):flatten())
  T.ok(lo >= -0.01 and hi < 0.01 and math.abs(m) < 0.001, string.format("scaled_uniform: [%g, %g]", lo, hi))
  T.eq(tostring(Tensor.ones(2, 3, {dtype = "float16"}):rand_like():dtype()), "float16")
  T.eq(table.concat(Tensor.ones(2, 3):randn_like{dtype = "float64"}:shape(), ","), "2,3")
  T.eq(tostring(Tensor.ones(2, 3):randn_like{dtype = "float64"}:dtype()), "float64")
  T.raises("randint: low = 0.5 and high = 10 must be integers", function() return Tensor.randint(3, {low = 0.5}) end)
  T.raises("randint: dtype must be an integer dtype, got float32", function() return Tensor.randint(3, {dtype = "float32"}) end)
  T.raises("normal: unknown option 'sigma'", function() return Tensor.normal(3, {sigma = 1}) end)
end)

T.test("sort, argsort, topk: values and stable indices along any axis, against a plain-Lua stable sort", function()
  -- 3 x 6 x 5 with ties, NaN-free; each line along an axis sorted here by
  -- (value, position), descending by (-value, position): tinygrad's order
  local shape = {3, 6, 5}
  local data = build(shape, function(i, j, k) return ((i * 7 + j * 5 + k * 3) % 9) - 4 end)
  local x = Tensor(data, "int32")
  local function get(t, idx) return t[idx[1] + 1][idx[2] + 1][idx[3] + 1] end
  for dim = 0, 2 do
    for _, desc in ipairs{false, true} do
      local values = build(shape, function() return 0 end)
      local indices = build(shape, function() return 0 end)
      local other = {}
      for a = 0, 2 do if a ~= dim then other[#other + 1] = a end end
      for p = 0, shape[other[1] + 1] - 1 do for q = 0, shape[other[2] + 1] - 1 do
        local line = {}
        for r = 0, shape[dim + 1] - 1 do
          local idx = {}
          idx[other[1] + 1], idx[other[2] + 1], idx[dim + 1] = p, q, r
          line[#line + 1] = {v = get(data, idx), pos = r}
        end
        table.sort(line, function(u, w)
          if u.v ~= w.v then return (desc and u.v > w.v) or (not desc and u.v < w.v) end
          return u.pos < w.pos
        end)
        for r, e in ipairs(line) do
          local idx = {}
          idx[other[1] + 1], idx[other[2] + 1], idx[dim + 1] = p, q, r - 1
          values[idx[1] + 1][idx[2] + 1][idx[3] + 1] = e.v
          indices[idx[1] + 1][idx[2] + 1][idx[3] + 1] = e.pos
        end
      end end
      local what = string.format("sort(%d, descending = %s)", dim, tostring(desc))
      local v, i = x:sort(dim, desc)
      both(v, "int32", values, 0, what .. " values")
      both(i, "int32", indices, 0, what .. " indices")
      both(x:argsort{dim = dim, descending = desc}, "int32", indices, 0, "argsort, " .. what)
    end
  end
  local v, i = Tensor({0.5, -1, 3, 3, 2}, "float32"):topk(3)
  both(v, "float32", {3.0, 3.0, 2.0}, 0, "topk values")
  both(i, "int32", {2, 3, 4}, 0, "topk indices")
  v, i = Tensor({0.5, -1, 3, 3, 2}, "float32"):topk{k = 2, largest = false}
  both(v, "float32", {-1.0, 0.5}, 0, "topk smallest")
  both(i, "int32", {1, 0}, 0, "topk smallest indices")
  T.raises("topk: k = 6 is more than axis 0's 5 elements", function() return Tensor{1, 2, 3, 4, 5}:topk(6) end)
  T.raises("sort: a 0-d tensor has no axis to sort", function() return Tensor(1):sort() end)
end)

T.test("round: half to even through trunc, beyond int32's range too", function()
  local x = Tensor.new({-3.5, -2.5, -0.5, 0.5, 1.5, 2.5, 2500000000.5, -2500000001.5, 5e15 + 0.5}, "float64")
  -- (-0.5 rounds to +0.0, as in tinygrad: floor(-0.5 + 0.5))
  both(x:round(), "float64", {-4.0, -2.0, 0.0, 0.0, 2.0, 2.0, 2500000000.0, -2500000002.0, 5e15}, nil, "round")
end)
