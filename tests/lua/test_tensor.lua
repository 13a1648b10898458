-- test_tensor.lua - the Tensor front end: the graphs it builds (tinygrad's
-- node forms), shapes, dtypes and errors, and every op's values through
-- uop.reference checked against values computed here with plain loops.
local T = ...
local d = uop.dtypes
local ref = uop.reference

-- ---- helpers: nested tables built and compared with plain loops ----

local N = T.load("nested.lua")
local build, show = N.build, N.show
local function same(got, want, tol) return N.same(got, want, tol) end

local function check(got, want, tol)
  local ok, msg = same(got, want, tol)
  if not ok then error(msg, 2) end
end

local function shape_is(t, want)
  local s = t:shape()
  if #s ~= #want then error("shape: expected " .. show(want) .. ", got " .. show(s), 2) end
  for i = 1, #want do
    if s[i] ~= want[i] then error("shape: expected " .. show(want) .. ", got " .. show(s), 2) end
  end
  -- the graph's own shape agrees with the tracked one
  local g = uop.shape(t.uop)
  if #g ~= #want then error("graph shape: " .. show(g), 2) end
  for i = 1, #want do
    if g[i] ~= want[i] then error("graph shape: " .. show(g), 2) end
  end
end

local function count_ops(t, name) return #uop.find(t.uop, name) end

-- float32 rounding of a double, for exact float expectations
local function f32(x) return string.unpack("f", string.pack("f", x)) end

local A = {{1, 2, 3}, {4, 5, 6}}
local function a23() return Tensor{{1, 2, 3}, {4, 5, 6}} end
local function af23() return Tensor({{1, 2, 3}, {4, 5, 6}}, "float32") end

-- ---- creation and the graph forms ----

T.test("Tensor.new: a BUFFER(UNIQUE, DEVICE) with host data, reshaped", function()
  local t = a23()
  T.eq(t:dtype(), d.int32)
  shape_is(t, {2, 3})
  T.eq(t:numel(), 6); T.eq(t:ndim(), 2)
  local u = t.uop
  T.eq(u:op(), "RESHAPE")
  local b = u:src()[1]
  T.eq(b:op(), "BUFFER"); T.eq(b:arg(), 6); T.eq(b:dtype(), d.int32)
  T.eq(b:src()[1]:op(), "UNIQUE"); T.eq(b:src()[2]:op(), "DEVICE"); T.eq(b:src()[2]:arg(), "CPU")
  local v = u:src()[2]
  T.eq(v:op(), "VCONST"); T.eq(v:dtype(), d.index:vec(2))
  check(uop.buffer_values(b), {1, 2, 3, 4, 5, 6})
  -- a 1-D tensor is the buffer itself (reshape to the same shape is no node)
  T.eq(Tensor{1, 2}.uop:op(), "BUFFER")
  -- two tensors never share a buffer
  T.ok(Tensor{1, 2}.uop ~= Tensor{1, 2}.uop, "distinct buffers")
end)

T.test("Tensor.new infers int32, float32 and bool; an explicit dtype wins", function()
  T.eq(Tensor{1, 2}:dtype(), d.int32)
  T.eq(Tensor{1, 2.5}:dtype(), d.float32)
  T.eq(Tensor{true, false}:dtype(), d.bool)
  T.eq(Tensor({1, 2}, "float16"):dtype(), d.float16)
  T.eq(Tensor({1, 2}, d.int64):dtype(), d.int64)
  check(Tensor({1.5, -2.5}, "int32"):tolist(), {1, -2})
  check(Tensor({0, 3}, "bool"):tolist(), {false, true})
  check(Tensor{{true}, {false}}:tolist(), {{true}, {false}})
  check(Tensor({1, 2}, "float16"):tolist(), {1.0, 2.0})
  local s = Tensor(5)
  T.eq(s.uop:op(), "CONST"); T.eq(s:ndim(), 0); T.eq(s:dtype(), d.int32)
  T.eq(s.uop:src()[1]:op(), "DEVICE")
  check(ref(s), 5)
  check(ref(Tensor(2.5)), 2.5)
  T.eq(Tensor{}:numel(), 0)
  -- bfloat16 is built as float32 and cast, as tinygrad does
  local bf = Tensor({1, 2}, "bfloat16")
  T.eq(bf:dtype(), d.bfloat16); T.eq(bf.uop:op(), "CAST")
end)

T.test("full, zeros, ones: a unique CONST on the device, reshaped to 1s and expanded", function()
  local t = Tensor.ones(2, 3)
  shape_is(t, {2, 3})
  T.eq(t:dtype(), d.float32)
  T.eq(t.uop:op(), "EXPAND")
  local r = t.uop:src()[1]
  T.eq(r:op(), "RESHAPE")
  local c = r:src()[1]
  T.eq(c:op(), "CONST"); T.eq(c:arg(), 1.0)
  T.eq(c:src()[1]:op(), "DEVICE"); T.eq(c:src()[2]:op(), "UNIQUE")
  check(ref(t), {{1.0, 1.0, 1.0}, {1.0, 1.0, 1.0}})
  check(ref(Tensor.zeros{2, 2}), {{0.0, 0.0}, {0.0, 0.0}})
  check(ref(Tensor.zeros(3, {dtype = "int32"})), {0, 0, 0})
  T.eq(Tensor.ones(2, {dtype = d.int32}):dtype(), d.int32)
  check(ref(Tensor.full({2}, 7)), {7, 7})
  T.eq(Tensor.full({2}, 7):dtype(), d.int32)
  T.eq(Tensor.full({2}, true):dtype(), d.bool)
  check(ref(Tensor.full({2, 1}, 2.5)), {{2.5}, {2.5}})
  -- two fulls are distinct constants (unique), like tinygrad's
  T.ok(Tensor.ones(2).uop ~= Tensor.ones(2).uop, "unique")
  shape_is(Tensor.ones{}, {})
end)

T.test("arange and eye", function()
  check(ref(Tensor.arange(5)), {0, 1, 2, 3, 4})
  T.eq(Tensor.arange(5):dtype(), d.int32)
  check(ref(Tensor.arange(2, 11, 3)), {2, 5, 8})
  check(ref(Tensor.arange(5, 0, -2)), {5, 3, 1})
  check(ref(Tensor.arange(0.5, 2.5)), {0.5, 1.5})
  T.eq(Tensor.arange(0.5, 2.5):dtype(), d.float32)
  check(ref(Tensor.arange(3, {dtype = "float32"})), {0.0, 1.0, 2.0})
  T.eq(Tensor.arange(3, 3):numel(), 0)
  check(ref(Tensor.eye(3)), build({3, 3}, function(i, j) return i == j and 1.0 or 0.0 end))
  check(ref(Tensor.eye(2, 3, {dtype = "int32"})), {{1, 0, 0}, {0, 1, 0}})
  -- a long arange goes through the cumulative sum
  local n = 700
  check(ref(Tensor.arange(n)), build({n}, function(i) return i end))
end)

T.test("rand: seeded, reproducible, in [0, 1)", function()
  Tensor.manual_seed(42)
  local a = Tensor.rand(4, 5):tolist()
  local b = Tensor.rand(4, 5):tolist()
  Tensor.manual_seed(42)
  local a2 = Tensor.rand{4, 5}:tolist()
  check(a2, a)
  local differs, distinct = false, {}
  for i = 1, 4 do
    for j = 1, 5 do
      local v = a[i][j]
      T.ok(v >= 0 and v < 1, "in [0, 1)")
      T.eq(f32(v), v, "a float32 value")
      if v ~= b[i][j] then differs = true end
      distinct[v] = true
    end
  end
  T.ok(differs, "the next call gives other numbers")
  local n = 0
  for _ in pairs(distinct) do n = n + 1 end
  T.ok(n >= 18, "values are not repeated")
  check(Tensor.rand(3, {seed = 7}):tolist(), Tensor.rand(3, {seed = 7}):tolist())
  T.eq(Tensor.rand(2, {dtype = "float16"}):dtype(), d.float16)
  T.raises("rand only supports float dtypes", Tensor.rand, 2, {dtype = "int32"})
end)

-- ---- elementwise ----

T.test("add, sub, mul, div with numpy broadcasting", function()
  local a, b = af23(), Tensor{10.0, 20.0, 30.0}
  local col = Tensor{{1.0}, {2.0}}
  shape_is(a + b, {2, 3})
  check(ref(a + b), build({2, 3}, function(i, j) return A[i + 1][j + 1] + 10.0 * (j + 1) end))
  check(ref(b - a), build({2, 3}, function(i, j) return 10.0 * (j + 1) - A[i + 1][j + 1] end))
  check(ref(a * col), build({2, 3}, function(i, j) return A[i + 1][j + 1] * (i + 1) end))
  check(ref(a / b), build({2, 3}, function(i, j) return A[i + 1][j + 1] / (10.0 * (j + 1)) end), 1e-6)
  -- (3, 1) op (1, 4) -> (3, 4)
  local c, r = Tensor{{1}, {2}, {3}}, Tensor{{10, 20, 30, 40}}
  shape_is(c * r, {3, 4})
  check(ref(c * r), build({3, 4}, function(i, j) return (i + 1) * 10 * (j + 1) end))
  -- scalars on either side
  check(ref(2 * a - 1), build({2, 3}, function(i, j) return 2.0 * A[i + 1][j + 1] - 1 end))
  check(ref(1 / a), build({2, 3}, function(i, j) return 1 / A[i + 1][j + 1] end), 1e-6)
  check(ref(-a), build({2, 3}, function(i, j) return -A[i + 1][j + 1] + 0.0 end))
  check(ref(a ^ 2), build({2, 3}, function(i, j) return A[i + 1][j + 1] ^ 2 end), 1e-6)
  check(ref(a23() // 2), build({2, 3}, function(i, j) return A[i + 1][j + 1] // 2 end))
  check(ref(Tensor{-7, 7, -8} // 2), {-4, 3, -4})
  check(ref(Tensor{-7, 7, -8} % 3), {-7 % 3, 7 % 3, -8 % 3})
  check(ref(Tensor{-7, 7}:idiv(2)), {-3, 3})
  check(ref(Tensor{6, 5} & 3), {2, 1})
  check(ref(Tensor{6, 5} | 1), {7, 5})
  check(ref(Tensor{6, 5} ~ 3), {5, 6})
  check(ref(~Tensor{0, 5}), {-1, -6})
end)

T.test("decompositions follow tinygrad: sub, neg, div, exp, log, cos", function()
  local a, b = af23(), af23()
  local s = a - b
  T.eq(s.uop:op(), "ADD")
  local negb = s.uop:src()[2]
  T.eq(negb:op(), "MUL")
  T.ok(rawequal(negb:src()[1], b.uop), "-b is b * -1")
  T.eq(uop.find(negb, "CONST")[1]:arg(), -1.0)
  local q = a / b
  T.eq(q.uop:op(), "MUL"); T.eq(q.uop:src()[2]:op(), "RECIPROCAL")
  T.eq(count_ops(a:exp(), "EXP2"), 1)
  T.eq(count_ops(a:log(), "LOG2"), 1)
  T.eq(count_ops(a:cos(), "SIN"), 1)
  T.eq(count_ops(a:minimum(b), "MAX"), 1)
  T.eq(a:lt(b).uop:op(), "CMPLT")
  T.eq(a:ne(b).uop:op(), "CMPNE")
  -- constants broadcast as CONST -> RESHAPE -> EXPAND
  local e = (a + 1).uop:src()[2]
  T.eq(e:op(), "EXPAND"); T.eq(e:src()[1]:op(), "RESHAPE"); T.eq(e:src()[1]:src()[1]:op(), "CONST")
end)

T.test("dtype promotion: weak Lua numbers, least upper dtype", function()
  local i = a23()
  T.eq((i + 1):dtype(), d.int32)
  T.eq((i + 1.5):dtype(), d.float32)
  T.eq((i * Tensor({1, 2, 3}, "float16")):dtype(), d.float16)
  T.eq((Tensor({1, 2}, "int8") + Tensor({1, 2}, "int16")):dtype(), d.int16)
  T.eq((Tensor{true, false} + 1):dtype(), d.int32)
  T.eq((i / 2):dtype(), d.float32)
  T.eq((Tensor({1, 2}, "float16") + 1.5):dtype(), d.float16)
  T.eq((Tensor({1, 2}, "uint8") + Tensor({1, 2}, "int8")):dtype(), d.int16)
  check(ref(i + 1.5), build({2, 3}, function(r, c) return A[r + 1][c + 1] + 1.5 end))
  check(ref(i / 2), build({2, 3}, function(r, c) return A[r + 1][c + 1] / 2 end))
  T.eq(i:lt(2):dtype(), d.bool)
end)

T.test("unary math against math.*", function()
  local xs = {-2.0, -0.5, 0.0, 0.25, 1.0, 3.0}
  local x = Tensor(xs)
  local function each(f) local r = {} for k, v in ipairs(xs) do r[k] = f(v) end return r end
  check(ref(x:exp()), each(math.exp), 1e-6)
  check(ref(x:sin()), each(math.sin), 1e-6)
  check(ref(x:cos()), each(math.cos), 1e-6)
  check(ref(x:relu()), each(function(v) return v > 0 and v or 0.0 end))
  check(ref(x:sigmoid()), each(function(v) return 1 / (1 + math.exp(-v)) end), 1e-6)
  check(ref(x:tanh()), each(function(v) return (math.exp(v) - math.exp(-v)) / (math.exp(v) + math.exp(-v)) end), 1e-6)
  check(ref(x:abs()), each(math.abs))
  check(ref(x:neg()), each(function(v) return -v end))
  check(ref(x:square()), each(function(v) return v * v end))
  check(ref(x:floor()), each(function(v) return math.floor(v) + 0.0 end))
  check(ref(x:ceil()), each(function(v) return math.ceil(v) + 0.0 end))
  check(ref(x:clamp(-1, 1)), each(function(v) return math.max(-1, math.min(1, v)) end))
  local p = Tensor{0.5, 1.0, 4.0, 9.0}
  check(ref(p:sqrt()), {math.sqrt(0.5), 1.0, 2.0, 3.0}, 1e-6)
  check(ref(p:log()), {math.log(0.5), 0.0, math.log(4), math.log(9)}, 1e-6)
  check(ref(p:log2()), {-1.0, 0.0, 2.0, math.log(9, 2)}, 1e-6)
  check(ref(p:reciprocal()), {2.0, 1.0, 0.25, 1 / 9}, 1e-6)
  -- ints go to float for float functions
  T.eq(Tensor{1, 4}:sqrt():dtype(), d.float32)
  check(ref(Tensor{1, 4}:sqrt()), {1.0, 2.0})
  check(ref(Tensor{-3, 2}:abs()), {3, 2})
end)

T.test("comparisons, where, maximum, minimum, cast", function()
  local a, b = Tensor{1, 5, 3}, Tensor{4, 2, 3}
  check(ref(a:lt(b)), {true, false, false})
  check(ref(a:gt(b)), {false, true, false})
  check(ref(a:le(b)), {true, false, true})
  check(ref(a:ge(b)), {false, true, true})
  check(ref(a:eq(b)), {false, false, true})
  check(ref(a:ne(b)), {true, true, false})
  check(ref(a:lt(3)), {true, false, false})
  check(ref(a:maximum(b)), {4, 5, 3})
  check(ref(a:minimum(b)), {1, 2, 3})
  check(ref(Tensor{1.5, -2.0}:minimum(0)), {0.0, -2.0})
  check(ref(a:lt(b):where(a, b)), {1, 2, 3})
  check(ref(a:lt(b):where(a, 0)), {1, 0, 0})
  check(ref(a:lt(b):where(1.5, b)), {1.5, 2.0, 3.0})
  -- the condition broadcasts against its branches
  local cond = Tensor{{true}, {false}}
  check(ref(cond:where(Tensor{1, 2}, -1)), {{1, 2}, {-1, -1}})
  check(ref(Tensor{1.7, -1.7, 2.2}:cast("int32")), {1, -1, 2})
  check(ref(Tensor{0, 2}:cast("bool")), {false, true})
  check(ref(Tensor{true, false}:cast("float32")), {1.0, 0.0})
  check(ref(Tensor{300, -1}:cast("uint8")), {44, 255})
  check(ref(Tensor{true, false}:logical_not()), {false, true})
end)

-- ---- movement ----

T.test("reshape, permute, transpose, expand, flip", function()
  local t = Tensor.arange(24):reshape(2, 3, 4)
  shape_is(t, {2, 3, 4})
  shape_is(t:reshape(-1, 4), {6, 4})
  shape_is(t:reshape{4, -1}, {4, 6})
  local p = t:permute(2, 0, 1)
  shape_is(p, {4, 2, 3})
  T.eq(p.uop:op(), "PERMUTE")
  check(ref(p), build({4, 2, 3}, function(i, j, k) return j * 12 + k * 4 + i end))
  T.ok(rawequal(t:permute(0, 1, 2), t), "the identity permutation is no node")
  local m = Tensor.arange(6):reshape(2, 3)
  check(ref(m:transpose()), build({3, 2}, function(i, j) return j * 3 + i end))
  check(ref(t:transpose(0, -1)), build({4, 3, 2}, function(i, j, k) return k * 12 + j * 4 + i end))
  local e = Tensor{{1}, {2}}:expand(2, 3)
  shape_is(e, {2, 3})
  check(ref(e), {{1, 1, 1}, {2, 2, 2}})
  shape_is(Tensor{1, 2, 3}:expand(2, -1), {2, 3})
  check(ref(m:flip(0)), {{3, 4, 5}, {0, 1, 2}})
  check(ref(m:flip(0, 1)), {{5, 4, 3}, {2, 1, 0}})
  local f = m:flip(1).uop
  T.eq(f:op(), "FLIP")
  check(f:arg(), {false, true})
end)

T.test("pad, shrink, slice, flatten, squeeze, unsqueeze", function()
  local m = Tensor.arange(6):reshape(2, 3)
  local p = m:pad{{1, 0}, {0, 2}}
  shape_is(p, {3, 5})
  T.eq(p.uop:op(), "PAD")
  check(ref(p), build({3, 5}, function(i, j)
    if i < 1 or j >= 3 then return 0 end
    return (i - 1) * 3 + j
  end))
  check(ref(m:pad({{0, 0}, {1, 1}}, {value = -1})), {{-1, 0, 1, 2, -1}, {-1, 3, 4, 5, -1}})
  check(ref(m:pad{1, 0}), {{0, 0, 1, 2}, {0, 3, 4, 5}}) -- flat: last axis first
  check(ref(m:pad{{0, 0}, {-1, 1}}), {{1, 2, 0}, {4, 5, 0}}) -- negative cuts
  local s = m:shrink{{0, 2}, {1, 3}}
  T.eq(s.uop:op(), "SHRINK")
  check(ref(s), {{1, 2}, {4, 5}})
  check(ref(m:shrink{nil, {2, 3}}), {{2}, {5}})
  check(ref(m:slice{{0, 2}, {1, 3}}), {{1, 2}, {4, 5}})
  check(ref(m:slice{1}), {3, 4, 5})
  check(ref(m:slice{false, -1}), {2, 5})
  check(ref(m:slice{-1, {nil, nil, 2}}), {3, 5})
  check(ref(Tensor.arange(10):slice{{1, 9, 3}}), {1, 4, 7})
  check(ref(Tensor.arange(5):slice{{nil, nil, -1}}), {4, 3, 2, 1, 0})
  check(ref(Tensor.arange(6):slice{{4, 0, -2}}), {4, 2})
  shape_is(Tensor.arange(5):slice{{3, 1}}, {0})
  local t = Tensor.arange(24):reshape(2, 3, 4)
  shape_is(t:flatten(), {24})
  shape_is(t:flatten(1), {2, 12})
  shape_is(t:flatten(0, 1), {6, 4})
  shape_is(Tensor.ones(2, 1, 3, 1):squeeze(), {2, 3})
  shape_is(Tensor.ones(2, 1, 3):squeeze(1), {2, 3})
  shape_is(Tensor.ones(2, 1, 3):squeeze(0), {2, 1, 3})
  shape_is(m:unsqueeze(0), {1, 2, 3})
  shape_is(m:unsqueeze(-1), {2, 3, 1})
  check(ref(Tensor{1, 2}:repeat_(2, 2)), {{1, 2, 1, 2}, {1, 2, 1, 2}})
end)

-- tinygrad v0.12.0 pads with a value as pad + ones_like:pad:where(0, value):
-- on a bool tensor a value other than false/0 promotes the result (true and
-- ints to int32, floats to float32)
T.test("pad with a value on a bool tensor promotes like tinygrad", function()
  local b = Tensor.new({{true, false}, {false, true}}, "bool")
  local px = {{1, 0}, {0, 1}}
  local cases = {
    {true, "int32", {{1, 1, 1}, {1, 0, 1}, {0, 1, 1}}},
    {2, "int32", {{2, 2, 2}, {1, 0, 2}, {0, 1, 2}}},
    {-1, "int32", {{-1, -1, -1}, {1, 0, -1}, {0, 1, -1}}},
    {1.5, "float32", {{1.5, 1.5, 1.5}, {1, 0, 1.5}, {0, 1, 1.5}}},
    {false, "bool", {{false, false, false}, {true, false, false}, {false, true, false}}},
    {0, "bool", {{false, false, false}, {true, false, false}, {false, true, false}}},
  }
  for _, case in ipairs(cases) do
    local p = b:pad(px, {value = case[1]})
    T.eq(tostring(p:dtype()), case[2], "value " .. tostring(case[1]))
    check(ref(p), case[3])
    local outs, rep = uop.compile(p):run{validate = true, quiet = true}
    T.ok(rep.ok, rep.text)
    local flat = uop.buffer_values(outs[1])
    for i = 1, 9 do T.eq(flat[i], case[3][(i - 1) // 3 + 1][(i - 1) % 3 + 1], "value " .. tostring(case[1]) .. " element " .. i) end
  end
end)

T.test("ops on permuted, padded and flipped inputs", function()
  local m = Tensor.arange(6):reshape(2, 3)
  local t = m:transpose() -- (3, 2)
  check(ref(t + Tensor{{10, 20}}), build({3, 2}, function(i, j) return j * 3 + i + 10 * (j + 1) end))
  local p = m:pad{{1, 1}, {0, 0}} * 2 -- (4, 3), zeros outside
  check(ref(p), build({4, 3}, function(i, j) return (i >= 1 and i <= 2) and 2 * ((i - 1) * 3 + j) or 0 end))
  check(ref(p:sum(0)), build({3}, function(j) return 2 * (j + (3 + j)) end))
  check(ref(m:flip(1) - m), {{2, 0, -2}, {2, 0, -2}})
end)

-- ---- reductions ----

T.test("sum, max, min, prod, mean over inner, outer and all axes", function()
  local t = Tensor.arange(24):reshape(2, 3, 4)
  local function v(i, j, k) return i * 12 + j * 4 + k end
  local s0 = t:sum(0)
  shape_is(s0, {3, 4})
  check(ref(s0), build({3, 4}, function(j, k) return v(0, j, k) + v(1, j, k) end))
  local r = s0.uop:src()[1]
  T.eq(r:op(), "REDUCE_AXIS")
  T.ok(rawequal(r:arg()[1], uop.ops.ADD), "ADD reduce"); check(r:arg()[2], {0})
  check(ref(t:sum(2)), build({2, 3}, function(i, j) local a = 0 for k = 0, 3 do a = a + v(i, j, k) end return a end))
  check(ref(t:sum{0, 2}), build({3}, function(j) local a = 0 for i = 0, 1 do for k = 0, 3 do a = a + v(i, j, k) end end return a end))
  check(ref(t:sum()), 276)
  shape_is(t:sum(1, {keepdim = true}), {2, 1, 4})
  shape_is(t:sum{keepdim = true}, {1, 1, 1})
  check(ref(t:max(1)), build({2, 4}, function(i, k) return v(i, 2, k) end))
  check(ref(t:min(-1)), build({2, 3}, function(i, j) return v(i, j, 0) end))
  check(ref((t - 100):min()), -100)
  check(ref(Tensor{1.5, -2.5}:min()), -2.5)
  check(ref(Tensor{{1, 2}, {3, 4}}:prod(1)), {2, 12})
  check(ref(Tensor{{1, 2}, {3, 4}}:prod()), 24)
  check(ref(t:mean(2)), build({2, 3}, function(i, j) return (4 * v(i, j, 0) + 6) / 4 end), 1e-6)
  T.eq(t:mean():dtype(), d.float32)
  check(ref(t:mean()), 11.5)
  -- a reduction over axes of size 1 is no node
  local one = Tensor.ones(3, 1)
  T.eq(count_ops(one:sum(1), "REDUCE_AXIS"), 0)
  -- sums of small ints accumulate in int32
  T.eq(Tensor({1, 2}, "int8"):sum():dtype(), d.int32)
  T.eq(Tensor({1, 2}, "float16"):sum():dtype(), d.float16)
  check(ref(Tensor{true, true, false}:sum()), 2)
end)

T.test("softmax and log_softmax", function()
  local rows = {{1.0, 2.0, 3.0}, {-1.0, 0.0, 5.0}}
  local x = Tensor(rows)
  local sm = x:softmax()
  shape_is(sm, {2, 3})
  check(ref(sm), build({2, 3}, function(i, j)
    local r, mx, s = rows[i + 1], -math.huge, 0
    for k = 1, 3 do mx = math.max(mx, r[k]) end
    for k = 1, 3 do s = s + math.exp(r[k] - mx) end
    return math.exp(r[j + 1] - mx) / s
  end), 1e-6)
  -- two reductions: max, then the sum of exps
  T.eq(count_ops(sm, "REDUCE_AXIS"), 2)
  check(ref(sm:sum(1)), {1.0, 1.0}, 1e-6)
  check(ref(x:softmax(0)), build({2, 3}, function(i, j)
    local a, b = math.exp(rows[1][j + 1]), math.exp(rows[2][j + 1])
    return (i == 0 and a or b) / (a + b)
  end), 1e-6)
  check(ref(x:log_softmax()), build({2, 3}, function(i, j)
    local r, s = rows[i + 1], 0
    for k = 1, 3 do s = s + math.exp(r[k]) end
    return r[j + 1] - math.log(s)
  end), 1e-5)
end)

-- ---- matmul ----

T.test("matmul: 3x3 exact, batched, vector", function()
  local a = Tensor{{1, 2, 3}, {4, 5, 6}, {7, 8, 9}}
  local b = Tensor{{10, 11, 12}, {13, 14, 15}, {16, 17, 18}}
  local m = a:matmul(b)
  shape_is(m, {3, 3})
  T.eq(m:dtype(), d.int32)
  check(ref(m), {{84, 90, 96}, {201, 216, 231}, {318, 342, 366}})
  T.eq(count_ops(m, "REDUCE_AXIS"), 1)
  local fm = a:float():matmul(b:float())
  check(ref(fm), {{84.0, 90.0, 96.0}, {201.0, 216.0, 231.0}, {318.0, 342.0, 366.0}})
  -- batched (2, 2, 3) @ (3, 2) and (2, 2, 3) @ (2, 3, 2)
  local x = Tensor.arange(12):reshape(2, 2, 3)
  local w = Tensor.arange(6):reshape(3, 2)
  local function mm(bt, i, j, wb)
    local s = 0
    for k = 0, 2 do s = s + (bt * 6 + i * 3 + k) * ((wb or 0) * 6 + k * 2 + j) end
    return s
  end
  shape_is(x:matmul(w), {2, 2, 2})
  check(ref(x:matmul(w)), build({2, 2, 2}, function(bt, i, j) return mm(bt, i, j) end))
  local w2 = Tensor.arange(12):reshape(2, 3, 2)
  check(ref(x:matmul(w2)), build({2, 2, 2}, function(bt, i, j) return mm(bt, i, j, bt) end))
  -- vectors
  check(ref(Tensor{1, 2, 3}:dot(Tensor{4, 5, 6})), 32)
  check(ref(Tensor{1, 2, 3}:matmul(w)), {0 + 2 * 2 + 3 * 4, 1 + 2 * 3 + 3 * 5})
  check(ref(w:transpose():matmul(Tensor{1, 1, 1})), {6, 9})
  T.eq(a:matmul(Tensor({{1}, {1}, {1}}, "float32")):dtype(), d.float32)
end)

-- ---- cumulative ----

T.test("cumsum, cumprod and cummax along an axis", function()
  local m = Tensor{{1, 2, 3}, {4, 5, 6}}
  check(ref(m:cumsum(1)), {{1, 3, 6}, {4, 9, 15}})
  check(ref(m:cumsum(0)), {{1, 2, 3}, {5, 7, 9}})
  check(ref(m:cumsum(-1)), {{1, 3, 6}, {4, 9, 15}})
  check(ref(m:cumprod(1)), {{1, 2, 6}, {4, 20, 120}})
  check(ref(Tensor{3, 1, 4, 1, 5}:cummax(0)), {3, 3, 4, 4, 5})
  check(ref(Tensor{0.5, 0.25, 2.0}:cumsum()), {0.5, 0.75, 2.75})
  -- the two-stage form for long axes
  local n = 600
  local want, acc = {}, 0
  for i = 1, n do acc = acc + (i % 7); want[i] = acc end
  local vals = {}
  for i = 1, n do vals[i] = i % 7 end
  check(ref(Tensor(vals):cumsum()), want)
end)

-- ---- conv2d ----

-- naive NCHW / OIHW convolution with stride and zero padding
local function naive_conv(x, xs, w, ws, stride, pad)
  local n, cin, h, wd = table.unpack(xs)
  local cout, _, kh, kw = table.unpack(ws)
  local oh = (h + 2 * pad - kh) // stride + 1
  local ow = (wd + 2 * pad - kw) // stride + 1
  return build({n, cout, oh, ow}, function(b, o, i, j)
    local s = 0
    for c = 0, cin - 1 do
      for p = 0, kh - 1 do
        for q = 0, kw - 1 do
          local y, z = i * stride + p - pad, j * stride + q - pad
          if y >= 0 and y < h and z >= 0 and z < wd then
            s = s + x[b + 1][c + 1][y + 1][z + 1] * w[o + 1][c + 1][p + 1][q + 1]
          end
        end
      end
    end
    return s
  end), {n, cout, oh, ow}
end

T.test("conv2d with stride and padding is one reduction", function()
  local xs, ws = {1, 2, 5, 5}, {3, 2, 3, 3}
  local x = build(xs, function(b, c, i, j) return (c * 25 + i * 5 + j) % 11 - 5 end)
  local w = build(ws, function(o, c, i, j) return (o * 18 + c * 9 + i * 3 + j) % 5 - 2 end)
  local X, W = Tensor(x), Tensor(w)
  for _, cfg in ipairs({{1, 0}, {1, 1}, {2, 1}, {2, 0}}) do
    local stride, pad = cfg[1], cfg[2]
    local y = X:conv2d(W, {stride = stride, padding = pad})
    local want, shape = naive_conv(x, xs, w, ws, stride, pad)
    shape_is(y, shape)
    check(ref(y), want)
    T.eq(count_ops(y, "REDUCE_AXIS"), 1)
  end
  -- bias, and the example from tinygrad's docs
  local b = Tensor{1, 2, 3}
  local y = X:conv2d(W, {padding = 1, bias = b})
  local want = naive_conv(x, xs, w, ws, 1, 1)
  check(ref(y), build({1, 3, 5, 5}, function(n, o, i, j) return want[n + 1][o + 1][i + 1][j + 1] + o + 1 end))
  local t = Tensor.arange(9):reshape(1, 1, 3, 3):float()
  check(ref(t:conv2d(Tensor.ones(1, 1, 2, 2))), {{{{8.0, 12.0}, {20.0, 24.0}}}})
end)

-- ---- errors ----

T.test("errors say which and why", function()
  local a = Tensor.ones(2, 3)
  T.raises("cannot broadcast (2, 3) with (4,)", function() return a + Tensor.ones(4) end)
  T.raises("axis 2 out of range for a 2-D tensor", function() return a:sum(2) end)
  T.raises("axis -3 out of range for a 2-D tensor", function() return a:softmax(-3) end)
  T.raises("bad dtype 'floaty': no such dtype", function() return Tensor({1}, "floaty") end)
  T.raises("a tensor needs a scalar number or bool dtype", function() return a:cast("float32.vec(4)") end)
  T.raises("cannot reshape (2, 3) to (4, 2)", function() return a:reshape(4, 2) end)
  T.raises("reshape: cannot infer -1 of (-1, 4) for (2, 3): 6 elements are not a multiple of 4",
    function() return a:reshape(-1, 4) end)
  T.raises("reshape: only one dimension can be -1", function() return a:reshape(-1, -1) end)
  T.raises("cannot dot (2, 3) and (2, 3)", function() return a:matmul(a) end)
  T.raises("inhomogeneous shape", function() return Tensor{{1, 2}, {3}} end)
  T.raises("permute: (0, 0) is not a permutation", function() return a:permute(0, 0) end)
  T.raises("shrink: (0, 4) is not a range of axis 1 of size 3", function() return a:shrink{nil, {0, 4}} end)
  T.raises("slice: index 3 out of range for axis 0 of size 2", function() return a:slice{3} end)
  T.raises("item: the tensor has 6 elements, not 1", function() return a:item() end)
  T.raises("conv2d: input (1, 3, 4, 4) does not match weight (2, 2, 3, 3)",
    function() return Tensor.ones(1, 3, 4, 4):conv2d(Tensor.ones(2, 2, 3, 3)) end)
  T.raises("bitwise_and: float32 is not supported", function() return a & 1 end)
  -- errors blame the caller's line, not the front end's, whichever of its
  -- files raises them (no tail calls, so the caller's frame is there)
  local line = debug.getinfo(1, "l").currentline
  for i, fn in ipairs{
    function() local r = a + Tensor.ones(4); return r end,                 -- elementwise
    function() local r = a:reshape(4, 2); return r end,                    -- movement
    function() local r = a:sum(5); return r end,                           -- axes (tensor.lua)
    function() local r = a:matmul(a); return r end,                        -- reduce
    function() local r = a:cast("float32.vec(4)"); return r end,           -- dtype
    function() local r = Tensor.ones(1, 3, 4, 4):conv2d(a); return r end,  -- window
    function() local r = Tensor{{1, 2}, {3}}; return r end,                -- create
    function() local r = a:item(); return r end,                           -- realize
  } do
    local msg = T.err(fn)
    T.ok(not msg:find("uopdb/", 1, true), "no internal position: " .. msg)
    T.contains(msg, "test_tensor.lua:" .. (line + 1 + i) .. ":")
  end
end)

-- ---- data out: tolist, item, tostring, realize ----

T.test("tolist, item and tostring of data tensors", function()
  check(a23():tolist(), A)
  check(Tensor{2.5}:item(), 2.5)
  T.eq(tostring(a23()), "[[1 2 3]\n [4 5 6]]")
  T.eq(tostring(Tensor{1.5, 2.0, -3.25}), "[ 1.5   2.   -3.25]")
  T.eq(tostring(Tensor{true, false}), "[ True False]")
  T.eq(tostring(Tensor{{{1}, {2}}, {{3}, {4}}}), "[[[1]\n  [2]]\n\n [[3]\n  [4]]]")
  T.eq(tostring(Tensor({0.1}, "float32")), "[0.1]")
  T.eq(Tensor.format_values(5, {}, d.int32), "5")
  local long = tostring(Tensor.empty(2000))
  T.contains(long, "...")
  T.eq(#Tensor.ones(4, 2), 4)
end)

-- Expected strings worked out by hand from numpy's rules (str() of an array
-- with the default print options): 75 columns, each nested row one column
-- narrower and indented one more; a line breaks before the element that
-- would reach the last column (kept for the closing bracket).
T.test("Lua's comparison operators on tensors name the methods that compare elementwise", function()
  local t = Tensor{1.0, 2.0, 3.0}
  T.raises("give a boolean, not a Tensor: write a:lt(b), a:le(b), a:gt(b) or a:ge(b)", function() return t > 1.5 end)
  T.raises("give a boolean, not a Tensor", function() return t <= t end)
  check(t:gt(1.5):tolist(), {false, true, true})
end)

T.test("tostring wraps rows at 75 columns, as numpy", function()
  -- "[" then 4 columns per float ("17." and a space): 18 fit in 74 columns
  T.eq(tostring(Tensor.arange(30):float()),
       "[ 0.  1.  2.  3.  4.  5.  6.  7.  8.  9. 10. 11. 12. 13. 14. 15. 16. 17.\n" ..
       " 18. 19. 20. 21. 22. 23. 24. 25. 26. 27. 28. 29.]")
  -- 3 columns per int: 24 fit
  T.eq(tostring(Tensor.arange(30)),
       "[ 0  1  2  3  4  5  6  7  8  9 10 11 12 13 14 15 16 17 18 19 20 21 22 23\n 24 25 26 27 28 29]")
  -- a row of a matrix: indented by 2, one column narrower, 18 still fit
  T.eq(tostring(Tensor.arange(60):float():reshape(2, 30)),
       "[[ 0.  1.  2.  3.  4.  5.  6.  7.  8.  9. 10. 11. 12. 13. 14. 15. 16. 17.\n" ..
       "  18. 19. 20. 21. 22. 23. 24. 25. 26. 27. 28. 29.]\n" ..
       " [30. 31. 32. 33. 34. 35. 36. 37. 38. 39. 40. 41. 42. 43. 44. 45. 46. 47.\n" ..
       "  48. 49. 50. 51. 52. 53. 54. 55. 56. 57. 58. 59.]]")
  -- summarised (over 1000 elements): 3 at each end, the "..." a word of its own
  T.eq(tostring(Tensor.arange(1200):reshape(2, 600)), "[[   0    1    2 ...  597  598  599]\n [ 600  601  602 ... 1197 1198 1199]]")
end)

T.test("tostring formats floats as numpy: 8 digits at most, scientific when magnitudes spread", function()
  -- shortest digits that read back as the float32, cut to 8 after the point, aligned at the point
  T.eq(tostring(Tensor({0.026433766, 0.5, 12.25}, "float32")), "[ 0.02643377  0.5        12.25      ]")
  -- the largest magnitude over 1000 times the smallest: every value in e-notation, one mantissa width
  T.eq(tostring(Tensor.arange(2000):float()), "[0.000e+00 1.000e+00 2.000e+00 ... 1.997e+03 1.998e+03 1.999e+03]")
  T.eq(tostring(Tensor({0.1, 1e-5, 3}, "float32")), "[1.e-01 1.e-05 3.e+00]")
  T.eq(tostring(Tensor({1e10, 1}, "float64")), "[1.e+10 1.e+00]")
  -- nan and inf right-aligned in the field of the others; -0 keeps its sign
  T.eq(tostring(Tensor({1.5, 0 / 0, 2.25, -1 / 0}, "float32")), "[1.5   nan 2.25 -inf]")
  T.eq(tostring(Tensor({-0.0, 1.0}, "float32")), "[-0.  1.]")
  T.eq(tostring(Tensor({1.0, 2.0}, "float32")), "[1. 2.]")
  T.eq(tostring(Tensor({1.0, 0 / 0}, "float32")), "[ 1. nan]")
  -- the shortest digits in the tensor's own dtype: half's 1/3 is 0.33325195..., read back from 0.3333
  T.eq(tostring(Tensor({0.1, 1 / 3}, "half")), "[0.1    0.3333]")
  T.eq(tostring(Tensor({1 / 3}, "bfloat16")), "[0.334]")
  T.eq(tostring(Tensor({6e-8, 1}, "half")), "[6.e-08 1.e+00]")
  -- positional: all the integer digits, the fraction rounded to 8 digits
  T.eq(tostring(Tensor({123.123456789, 1.5}, "float64")), "[123.12345679   1.5       ]")
  -- a 0-d tensor prints as numpy's scalar: every digit, "3.0", e-notation below 1e-4 and from 1e16
  T.eq(tostring(Tensor(3.0)), "3.0")
  T.eq(tostring(Tensor(1 / 3, "float64")), "0.3333333333333333")
  T.eq(tostring(Tensor.ones(100000, 100000):sum()), "10000000000.0")
  T.eq(tostring(Tensor(1.5e-7)), "1.5e-07")
  T.eq(tostring(Tensor(1e16, "float64")), "1e+16")
  T.eq(tostring(Tensor(-0.0)), "-0.0")
  T.eq(tostring(Tensor(0 / 0)), "nan")
end)

T.test("realize: through uop.compile when present", function()
  local t = a23() * 2 + 1
  if type(uop.compile) ~= "function" then
    T.raises("uop.compile is not available", function() return t:realize() end)
    T.raises("uop.compile is not available", function() return t:tolist() end)
    -- a data tensor needs no compiling
    T.ok(rawequal(a23():realize():dtype(), d.int32), "realize of data is a no-op")
    return
  end
  local want = ref(t)
  T.ok(rawequal(t:realize(), t), "realize returns self")
  T.eq(t.uop:op(), "RESHAPE"); T.eq(t.uop:src()[1]:op(), "BUFFER")
  check(t:tolist(), want)
  local s = Tensor{{1.0, 2.0}, {3.0, 4.0}}:sum()
  check(s:item(), 10.0)
  -- the compiled program agrees with the reference on the front end's ops
  local F = Tensor{{1.0, -2.0, 3.0}, {4.0, 5.5, -6.0}}
  local X = Tensor.arange(50):reshape(1, 2, 5, 5):float()
  local W = Tensor.arange(54):reshape(3, 2, 3, 3):float()
  local cases = {
    F + Tensor{10.0, 20.0, 30.0}, F:exp(), F:cos(), F:minimum(0.5), F:lt(2):where(F, -F),
    Tensor.arange(24):reshape(2, 3, 4):permute(2, 0, 1), F:pad({{1, 0}, {0, 2}}, {value = -1}),
    F:flip(0, 1), Tensor.arange(10):slice{{1, 9, 3}}, F:sum(0), F:max(1), F:min(), F:mean(),
    Tensor.arange(12):reshape(2, 2, 3):matmul(Tensor.arange(6):reshape(3, 2)), F:softmax(), F:softmax(0),
    F:cumsum(1), Tensor.arange(700), Tensor.eye(3), X:conv2d(W, {stride = 2, padding = 1}),
  }
  for i, c in ipairs(cases) do
    local want = ref(c)
    local ok, msg = same(c:tolist(), want, 1e-5)
    if not ok then error("case " .. i .. ": " .. msg) end
  end
  -- several tensors in one program
  local a, b = F:sum(1), F:max(1)
  a:realize(b)
  T.eq(a.uop:op(), "BUFFER"); T.eq(b.uop:op(), "BUFFER")
  T.ok(a.uop ~= b.uop, "two outputs")
  check(a:tolist(), {2.0, 3.5}, 1e-6)
  check(b:tolist(), {3.0, 5.5})
end)

T.test("realize: a view of computed work stores the work in its own order, as tinygrad", function()
  if type(uop.compile) ~= "function" then return end
  local A = Tensor{{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}, {7.0, 8.0, 9.0}}
  local B = Tensor{{10.0, 11.0, 12.0}, {13.0, 14.0, 15.0}, {16.0, 17.0, 18.0}}
  local AB = {{84.0, 90.0, 96.0}, {201.0, 216.0, 231.0}, {318.0, 342.0, 366.0}}
  local ABt = {{84.0, 201.0, 318.0}, {90.0, 216.0, 342.0}, {96.0, 231.0, 366.0}}
  -- the program: one kernel, its output the product in row order
  local t = A:matmul(B):transpose()
  local p = uop.compile(t, {select = false})
  T.eq(#p:kernels(), 1)
  local held = p:outputs()[1]
  -- (its base, as tinygrad's x.base: the REDUCE_AXIS under the RESHAPE that
  -- drops the reduced axis and the PERMUTE)
  T.eq(held, t.uop:src()[1]:src()[1], "the output holds the matmul's reduction")
  T.eq(held:op(), "REDUCE_AXIS")
  local outs, rep = p:run{validate = true}
  T.ok(rep.ok, rep.text)
  check(uop.buffer_values(outs[1], {3, 3}), AB)
  -- the tensor becomes a view of that buffer, and reads transposed
  T.ok(rawequal(t:realize(), t), "realize returns self")
  T.eq(t.uop:op(), "PERMUTE")
  check(t:tolist(), ABt)
  T.eq(t.uop:op(), "PERMUTE", "reading the values leaves the view as it is")
  local before = uop.node_count()
  T.ok(rawequal(t:realize(), t), "a realized view is realized")
  T.eq(uop.node_count(), before, "realizing it again compiles nothing")
  check((t + 1):tolist(), N.map(ABt, function(v) return v + 1 end))
  -- the work and a view of it in one program share one buffer
  local w = A:matmul(B)
  local v = w:flip(1)
  p = uop.compile({w, v}, {select = false})
  T.eq(#p:kernels(), 1)
  T.eq(p:outputs()[1], p:outputs()[2], "the work and its view hold one node")
  T.ok(not tostring(p:text()):find("output1"), "one output buffer: " .. tostring(p:text()))
  w:realize(v)
  check(v:tolist(), {{96.0, 90.0, 84.0}, {231.0, 216.0, 201.0}, {366.0, 342.0, 318.0}})
  -- both tensors read the one buffer, as tinygrad's views of one base do
  local function buffer_under(u)
    while u:op() ~= "BUFFER" do u = u:src()[1] end
    return u
  end
  T.eq(buffer_under(v.uop), buffer_under(w.uop))
  local reads = 0
  for _, u in ipairs(uop.compile(w + v, {select = false}):kernel(1):root(0):toposort()) do
    if u:op() == "DEFINE_GLOBAL" then reads = reads + 1 end
  end
  T.eq(reads, 2, "w + v: one buffer written, one read")
  -- under a reshape too the output holds the work; the realized tensor is
  -- its buffer, read with no copy
  local r = A:matmul(B):reshape(9)
  p = uop.compile(r, {select = false})
  T.eq(p:outputs()[1]:op(), "REDUCE_AXIS")
  r:realize()
  T.eq(r.uop:op(), "BUFFER")
  check(r:tolist(), {84.0, 90.0, 96.0, 201.0, 216.0, 231.0, 318.0, 342.0, 366.0})
  -- a kernel AST's program: its outputs are its DEFINE_GLOBALs
  T.eq(uop.compile(p:kernel(1):root(0), {select = false}):outputs()[1]:op(), "DEFINE_GLOBAL")
  -- a view of an input is copied by a kernel of its own
  local at = A:transpose()
  p = uop.compile(at, {select = false})
  T.eq(p:outputs()[1], at.uop)
  check(at:tolist(), {{1.0, 4.0, 7.0}, {2.0, 5.0, 8.0}, {3.0, 6.0, 9.0}})
end)

T.test("realize: work that does not use an axis is stored once along it, as tinygrad's cleanup_dead_axes", function()
  if type(uop.compile) ~= "function" then return end
  -- the gradient of sum(x @ y) by x: every row is y's row sums, so the
  -- kernel stores one row and the tensor reads it through an EXPAND
  local x = Tensor{{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}}
  local y = Tensor{{1.0, 2.0, 3.0, 4.0}, {5.0, 6.0, 7.0, 8.0}, {9.0, 10.0, 11.0, 12.0}}
  local g = x:matmul(y):sum():gradient(x)[1]
  local p = uop.compile(g, {select = false})
  local held = p:outputs()[1]
  -- (the work is the (2, 1, 3) reduction under the gradient's reshape)
  T.eq(held:op(), "SHRINK")
  check(uop.shape(held), {1, 1, 3})
  T.ok(tostring(p:text()):find("output0 float32[3]", 1, true), "a buffer of 3: " .. tostring(p:text()))
  local noted
  for _, step in ipairs(p:steps()) do
    for _, w in ipairs(step.trace) do
      if w.rule == "cleanup_dead_axes" then noted = {step.name, w.after} end
    end
  end
  T.ok(noted, "the scheduler's trace names cleanup_dead_axes")
  T.eq(noted[1], "rangeify")
  T.eq(noted[2], held)
  local outs, rep = p:run{validate = true}
  T.ok(rep.ok, rep.text)
  check(uop.buffer_values(outs[1]), {10.0, 26.0, 42.0})
  g:realize()
  T.eq(g.uop:op(), "RESHAPE")
  T.eq(g.uop:src()[1]:op(), "EXPAND", "the gradient's reshape of the EXPAND of the buffer")
  check(g:tolist(), {{10.0, 26.0, 42.0}, {10.0, 26.0, 42.0}})
  check((g * x):tolist(), {{10.0, 52.0, 126.0}, {40.0, 130.0, 252.0}}) -- read again by a kernel
  -- the same work under a transpose: the view goes over the EXPAND
  local gt = x:matmul(y):sum():gradient(x)[1]:transpose()
  gt:realize()
  check(gt:tolist(), {{10.0, 10.0}, {26.0, 26.0}, {42.0, 42.0}})
  -- a reduction large enough to be split is rebuilt in the graph the
  -- scheduler works on; the output still names the tensor's own work
  local rows = {}
  for r = 1, 4 do
    rows[r] = {}
    for k = 1, 40000 do rows[r][k] = r end
  end
  local wide = Tensor.new(rows, "float32"):sum(1, {keepdim = true}):expand(4, 3) + 1
  local wp = uop.compile(wide, {select = false})
  T.eq(#wp:kernels(), 3, "split in two, then the elementwise kernel")
  T.eq(wp:outputs()[1]:src()[1], wide.uop)
  check(wide:tolist(), {{40001.0, 40001.0, 40001.0}, {80001.0, 80001.0, 80001.0},
                        {120001.0, 120001.0, 120001.0}, {160001.0, 160001.0, 160001.0}})
end)

T.test("realize: random movement chains over computed work read as the reference has them", function()
  if type(uop.compile) ~= "function" then return end
  -- a fixed stream of chains of 1 to 3 movement ops (transpose, flip, pad,
  -- shrink, reshape, expand) over a matmul, a sum, an elementwise op, a
  -- softmax, a cumsum, a max and a broadcast sum (stored once along its
  -- broadcast axis); each realized, read, and read again by a kernel that
  -- computes from the view
  math.randomseed(1124)
  local function move(t)
    local s, k = t:shape(), math.random(6)
    if k == 1 and #s >= 2 then return t:transpose() end
    if k == 2 then return t:flip(math.random(#s) - 1) end
    if k == 3 then
      local pads = {}
      for i = 1, #s do pads[i] = {math.random(0, 1), math.random(0, 1)} end
      return t:pad(pads)
    end
    if k == 4 then
      local sl = {}
      for i = 1, #s do sl[i] = s[i] > 1 and {1, s[i]} or {0, s[i]} end
      return t:slice(sl)
    end
    if k == 5 then return t:reshape(t:numel()) end
    return t:unsqueeze(0):expand(2, table.unpack(s))
  end
  for trial = 1, 60 do
    local a = Tensor.arange(12):reshape(3, 4):float()
    local b = Tensor.arange(20):reshape(4, 5):float() - 7
    local bases = {a:matmul(b), a:sum(1), (a * 2):exp2(), a:softmax(1), a:cumsum(1), a:max(0),
                   a:sum(1, {keepdim = true}):expand(3, 4) * 2}
    local t = bases[math.random(#bases)]
    for _ = 1, math.random(3) do t = move(t) end
    local want = uop.reference(t)
    t:realize()
    local ok, msg = same(t:tolist(), want, 1e-5)
    if not ok then error("chain " .. trial .. ": " .. msg) end
    ok, msg = same((t + 1):tolist(), N.map(want, function(v) return v + 1 end), 1e-5)
    if not ok then error("chain " .. trial .. ", read by a kernel: " .. msg) end
  end
end)

T.test("from_uop, contiguous, detach", function()
  local t = Tensor.from_uop((a23() + 1).uop)
  shape_is(t, {2, 3})
  check(ref(t), build({2, 3}, function(i, j) return A[i + 1][j + 1] + 1 end))
  T.raises("has no tensor shape", Tensor.from_uop, uop.const(d.int32, 1))
  local c = (a23() * 2):contiguous()
  T.eq(c.uop:op(), "CONTIGUOUS")
  T.ok(rawequal(a23():contiguous().uop:op(), "RESHAPE"), "a buffer is already contiguous")
  check(ref(c), build({2, 3}, function(i, j) return 2 * A[i + 1][j + 1] end))
  T.eq(a23():detach().uop:op(), "DETACH")
end)

T.test("uop.buffer, buffer_values and uop.shape", function()
  local b = uop.buffer("int16", {1, -2, 70000})
  check(uop.buffer_values(b), {1, -2, 70000 - 65536})
  check(uop.buffer_values(uop.buffer("float32", 3)), {0.0, 0.0, 0.0})
  check(uop.buffer_values(uop.buffer("uint8", {1, 2, 3, 4}), {2, 2}), {{1, 2}, {3, 4}})
  T.raises("buffer_values: shape of 3 elements for a buffer of 4", uop.buffer_values, uop.buffer("uint8", 4), {3})
  T.raises("is not a BUFFER with host data", uop.buffer_values, uop.const(d.int32, 1))
  T.raises("cannot hold host data", uop.buffer, "index", 3)
  check(uop.shape(Tensor.ones(2, 3).uop), {2, 3})
  T.eq(uop.shape(uop.const(d.int32, 1)), nil)
end)

T.test("a reduction over an empty axis is the identity, in the program and the reference", function()
  local function run(t)
    local outs, rep = uop.compile(t):run{validate = true, quiet = true}
    T.ok(rep.ok, rep.text)
    return t:tolist()
  end
  local s = run(Tensor.ones(3, 0):sum(1))
  local m = run(Tensor.ones(3, 0):max(1))
  local p = run(Tensor.ones(3, 0):prod(1))
  for i = 1, 3 do
    T.eq(s[i], 0.0, "sum")
    T.eq(m[i], -math.huge, "max")
    T.eq(p[i], 1.0, "prod")
  end
  -- an empty slice of data: int max is the lowest int32
  local e = Tensor.new({{1, 2}}):shrink({{0, 1}, {1, 1}})
  T.eq(run(e:max(1))[1], -2147483648)
  T.eq(run(e:sum(1))[1], 0)
end)

T.test("new tensors with a negative dimension are errors", function()
  T.raises("zeros: dimension 0 of the shape is -1, negative", Tensor.zeros, -1)
  T.raises("full: dimension 1 of the shape is -3, negative", Tensor.full, {2, -3}, 1)
  T.raises("empty: dimension 0 of the shape is -2, negative", Tensor.empty, -2)
  T.raises("ones: dimension 0", Tensor.ones, -4, 2)
end)

T.test("a shape too large to count is an error naming the node, not a crash", function()
  T.raises("has too many elements", function() return uop.compile(Tensor.zeros(2^40, 2^40, 2^40)) end)
  T.raises("has too many elements", function() return uop.compile(Tensor.ones(3037000500, 3037000500):sum()) end)
  -- 2^56 elements still compile (they are not run)
  T.ok(uop.compile(Tensor.ones(2^28, 2^28) + 1))
end)

T.test("tensors with no elements realize to empty lists, as in tinygrad", function()
  local a = Tensor.new({{1, 2, 3}, {4, 5, 6}}, "float32")
  local function same_nested(got, want)
    if type(want) ~= "table" then return got == want end
    if type(got) ~= "table" or #got ~= #want then return false end
    for i = 1, #want do if not same_nested(got[i], want[i]) then return false end end
    return true
  end
  local cases = {
    {"a[:, 5:]", a:slice{false, {5}}, {{}, {}}},
    {"a[:, 2:1]", a:slice{false, {2, 1}}, {{}, {}}},
    {"zeros(0, 3)", Tensor.zeros(0, 3), {}},
    {"zeros(2, 0, 3)", Tensor.zeros(2, 0, 3), {{}, {}}},
    {"zeros(0, 3) + 1", Tensor.zeros(0, 3) + 1, {}},
    {"zeros(0, 3):sum(1)", Tensor.zeros(0, 3):sum(1), {}},
    {"linspace(0, 1, 0)", Tensor.linspace(0, 1, 0), {}},
    {"eye(0)", Tensor.eye(0), {}},
    -- a reduction over the empty axis has elements: the sum of nothing
    {"zeros(0, 3):sum(0)", Tensor.zeros(0, 3):sum(0), {0.0, 0.0, 0.0}},
  }
  for _, c in ipairs(cases) do
    T.ok(same_nested(c[2]:tolist(), c[3]), c[1])
  end
  local e = Tensor.zeros(0, 3, {dtype = "int32"}) * 2
  T.eq(tostring(e:realize():dtype()), "int32")
  T.eq(#e:tolist(), 0)
  T.eq(tostring(a:slice{false, {5}}), "[]")
end)

T.test("a reduction's axis named twice is reduced once; uint64 values of 2^63 and more print unsigned", function()
  local a = Tensor.new({{1.5, -2, 3.25}, {-4.5, 5, -0.5}}, "float32")
  check(ref(a:max{0, 0}), {1.5, 5, 3.25})
  check(a:max{0, 0}:tolist(), {1.5, 5, 3.25})
  local s = a:sum({1, -1}, {keepdim = true})
  shape_is(s, {2, 1})
  check(s:tolist(), {{2.75}, {0.0}})
  -- 0 - 1 wraps to 2^64 - 1, which a Lua integer holds as -1
  local u = Tensor.new({0, 1, 3, 100}, "uint64") - 1
  -- four 20-wide numbers pass numpy's 75 columns: the fourth goes on a second line
  T.eq(tostring(u), "[18446744073709551615                    0                    2\n                   99]")
  T.eq(u:tolist()[1], -1, "tolist: the same 64 bits, as Lua's signed integer")
end)
