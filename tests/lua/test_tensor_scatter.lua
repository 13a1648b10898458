-- test_tensor_scatter.lua - scatter, scatter_reduce, masked_select,
-- max_unpool2d, unfold, interpolate, pad_to/shrink_to, the initialisers,
-- randperm, multinomial and the size queries.  Every value is computed here
-- with plain loops and checked through uop.reference and through the JIT
-- (validated against the reference); op counts are tinygrad v0.12.0's for
-- the same expressions (less the COPY its Python lists make).
local T = ...
local ref = uop.reference

local N = T.load("nested.lua")
local build, show = N.build, N.show

-- t's values through the reference and through the JIT (validated)
local function both(t, want, tol) return N.both(t, want, tol) end

local op_counts = T.load("op_counts.lua")

local function copy(v)
  if type(v) ~= "table" then return v end
  local r = {}
  for i = 1, #v do r[i] = copy(v[i]) end
  return r
end

-- the element of nested table v at 0-based indices idx
local function at(v, idx)
  for _, i in ipairs(idx) do v = v[i + 1] end
  return v
end

local function set(v, idx, x)
  for k = 1, #idx - 1 do v = v[idx[k] + 1] end
  v[idx[#idx] + 1] = x
end

-- every 0-based index of a shape, row-major
local function indices(shape)
  local out, idx = {}, {}
  local function walk(d)
    if d > #shape then out[#out + 1] = {table.unpack(idx)} return end
    for i = 0, shape[d] - 1 do idx[d] = i walk(d + 1) end
    idx[d] = nil
  end
  walk(1)
  return out
end

-- base (3, 4, 5), index (2, 3, 4) with repeated targets along every axis,
-- src (3, 3, 5): index values stay inside base's axis `dim`
local BASE = build({3, 4, 5}, function(i, j, k) return (i * 20 + j * 5 + k) * 0.5 - 7 end)
local SRC = build({3, 3, 5}, function(i, j, k) return (i * 15 + j * 5 + k) % 11 - 3.0 end)
local function index_for(dim)
  local size = ({3, 4, 5})[dim + 1]
  return build({2, 3, 4}, function(i, j, k) return (i * 7 + j * 3 + k * 5) % size end)
end

-- ---- scatter ----

T.test("scatter writes src where the index points; the last entry along dim wins", function()
  for dim = 0, 2 do
    local idx = index_for(dim)
    local want = copy(BASE)
    for _, p in ipairs(indices({2, 3, 4})) do
      local q = {table.unpack(p)}
      q[dim + 1] = at(idx, p)
      set(want, q, at(SRC, p))
    end
    both(Tensor(BASE):scatter(dim, Tensor(idx, "int32"), Tensor(SRC)), want)
  end
  -- tinygrad's docs example, and a negative dim
  local src = Tensor.arange(1, 11):reshape(2, 5)
  both(Tensor.zeros(3, 5, {dtype = "int32"}):scatter(-2, Tensor{{0, 1, 2, 0}}, src),
       {{1, 0, 0, 4, 0}, {0, 2, 0, 0, 0}, {0, 0, 3, 0, 0}})
  both(Tensor.zeros(4, {dtype = "int32"}):scatter(0, Tensor{1, 1, 3, 1}, Tensor({5, 6, 7, 8}, "int32")), {0, 8, 0, 7})
  T.eq(op_counts(Tensor.zeros(3, 5, {dtype = "int32"}):scatter(0, Tensor{{0, 1, 2, 0}}, src)),
       "ADD=2 CAST=8 CMPNE=2 EXPAND=11 PAD=4 PERMUTE=4 REDUCE_AXIS=2 RESHAPE=25 SHRINK=5 WHERE=1")
  T.eq(op_counts(Tensor.zeros(4, {dtype = "int32"}):scatter(0, Tensor.arange(3), Tensor.arange(3))),
       "ADD=3 CAST=20 CMPNE=2 EXPAND=13 OR=2 PAD=3 PERMUTE=5 REDUCE_AXIS=3 RESHAPE=29 SHRINK=12 WHERE=3")
end)

T.test("scatter of a number, and with reduce add or multiply", function()
  local base = {{2.0, 2.0, 2.0, 2.0}, {2.0, 2.0, 2.0, 2.0}}
  local idx = Tensor{{2}, {3}}
  both(Tensor(base):scatter(1, idx, 1.5), {{2.0, 2.0, 1.5, 2.0}, {2.0, 2.0, 2.0, 1.5}})
  both(Tensor(base):scatter(1, idx, 1.5, "add"), {{2.0, 2.0, 3.5, 2.0}, {2.0, 2.0, 2.0, 3.5}})
  both(Tensor(base):scatter{1, idx, 1.5, reduce = "multiply"}, {{2.0, 2.0, 3.0, 2.0}, {2.0, 2.0, 2.0, 3.0}})
  both(Tensor{true, false, false}:scatter(0, Tensor{1}, true), {true, true, false})
  -- an index with no entry along dim writes nothing
  both(Tensor{1, 2}:scatter(0, Tensor.zeros(0, {dtype = "int32"}), Tensor{7}), {1, 2})
end)

T.test("scatter_reduce: sum, prod, mean, amax and amin, with and without self", function()
  local function fold(reduce, dim, include_self)
    local idx = index_for(dim)
    local acc, count = {}, {}
    for _, p in ipairs(indices({2, 3, 4})) do
      local q = {table.unpack(p)}
      q[dim + 1] = at(idx, p)
      local key, v = table.concat(q, ","), at(SRC, p)
      local old = acc[key]
      count[key] = (count[key] or 0) + 1
      if old == nil then acc[key] = v
      elseif reduce == "sum" or reduce == "mean" then acc[key] = old + v
      elseif reduce == "prod" then acc[key] = old * v
      elseif reduce == "amax" then acc[key] = math.max(old, v)
      else acc[key] = math.min(old, v) end
    end
    return build({3, 4, 5}, function(i, j, k)
      local key, self = table.concat({i, j, k}, ","), at(BASE, {i, j, k})
      local v = acc[key]
      if v == nil then return self end
      if not include_self then return reduce == "mean" and v / count[key] or v end
      if reduce == "sum" then return v + self end
      if reduce == "mean" then return (v + self) / (count[key] + 1) end
      if reduce == "prod" then return v * self end
      if reduce == "amax" then return math.max(v, self) end
      return math.min(v, self)
    end)
  end
  for _, reduce in ipairs{"sum", "prod", "mean", "amax", "amin"} do
    for dim = 0, 2 do
      for _, include_self in ipairs{true, false} do
        local got = Tensor(BASE):scatter_reduce(dim, Tensor(index_for(dim), "int32"), Tensor(SRC), reduce,
                                                {include_self = include_self})
        both(got, fold(reduce, dim, include_self), 1e-6)
      end
    end
  end
  -- integer sums promote as tinygrad's sum does
  local r = Tensor({1, 2, 3}, "int8"):scatter_reduce(0, Tensor{0, 0}, Tensor({100, 100}, "int8"), "sum")
  T.eq(tostring(r:dtype()), "int32")
  both(r, {201, 2, 3})
  T.eq(op_counts(Tensor.ones(1, 5):scatter_reduce(0, Tensor{{0, 0, 0, 0, 0}, {0, 0, 0, 0, 0}},
                                                   Tensor.arange(1, 11):float():reshape(2, 5), "sum")),
       "ADD=3 CAST=9 CMPNE=2 EXPAND=8 PAD=1 PERMUTE=4 REDUCE_AXIS=2 RESHAPE=25 SHRINK=3 WHERE=1")
end)

T.test("scatter errors are one line naming the function", function()
  local x = Tensor{1, 2}
  T.raises("scatter: src is float32 and the tensor int32; they must have the same dtype",
           function() return x:scatter(0, Tensor{0}, Tensor{1.5}) end)
  T.raises("scatter: reduce must be 'add' or 'multiply', got max", function() return x:scatter(0, Tensor{0}, 1, "max") end)
  T.raises("scatter: reduce takes a number src; with a Tensor src use scatter_reduce",
           function() return x:scatter(0, Tensor{0}, Tensor{1}, "add") end)
  T.raises("scatter_reduce: reduce must be one of 'sum', 'prod', 'mean', 'amax' and 'amin', got max",
           function() return x:scatter_reduce(0, Tensor{0}, Tensor{1}, "max") end)
  T.raises("scatter: the index (3,) must be no larger than src (2,) on every axis and than the tensor (2,) on every axis but 0",
           function() return x:scatter(0, Tensor{0, 1, 1}, Tensor{1, 2}) end)
  T.raises("scatter: the tensor (2,), the index (1, 1) and src (1,) need the same number of dimensions",
           function() return x:scatter(0, Tensor{{0}}, Tensor{1}) end)
  T.raises("scatter: the index must have an integer dtype, got float32", function() return x:scatter(0, Tensor{0.5}, Tensor{1}) end)
  T.raises("scatter: axis 1 out of range for a 1-D tensor", function() return x:scatter(1, Tensor{0}, Tensor{1}) end)
end)

-- ---- masked_select ----

T.test("masked_select: the elements where the broadcast mask is true, in order", function()
  local data = build({3, 4}, function(i, j) return i * 4 + j - 5 end)
  local mask = build({3, 4}, function(i, j) return (i * 5 + j * 3) % 4 < 2 end)
  local want = {}
  for i = 1, 3 do for j = 1, 4 do if mask[i][j] then want[#want + 1] = data[i][j] end end end
  both(Tensor(data, "int32"):masked_select(Tensor(mask)), want)
  both(Tensor(data, "int32"):masked_select(Tensor{true, false, false, true}), {-5, -2, -1, 2, 3, 6})
  both(Tensor(data, "int32"):masked_select{mask = Tensor{false, true, false, false}}, {-4, 0, 4})
  T.eq(Tensor(data):masked_select(Tensor{false, false, false, false}):numel(), 0)
  T.raises("masked_select: the mask must be a bool tensor, got int32", function() return Tensor{1, 2}:masked_select(Tensor{1, 0}) end)
end)

-- ---- windows and resampling ----

T.test("max_unpool2d puts max_pool2d's values back at its indices", function()
  local data = build({2, 2, 5, 6}, function(b, c, i, j) return ((b * 31 + c * 17 + i * 7 + j * 13) % 23) * 1.0 end)
  for _, case in ipairs{{k = 2, s = 2}, {k = 3, s = 2}, {k = 2, s = 1}} do
    local x = Tensor(data)
    local pooled, idx = x:max_pool2d(case.k, {stride = case.s, return_indices = true})
    local ps, is = ref(pooled), ref(idx)
    local oh, ow = pooled:shape()[3], pooled:shape()[4]
    -- the indices are flat in the pooled plane (5 x 6), which output_size
    -- restores; a maximum shared by overlapping windows adds up, as in tinygrad
    local want = build({2, 2, 5, 6}, function() return 0.0 end)
    for b = 1, 2 do for c = 1, 2 do for i = 1, oh do for j = 1, ow do
      local flat = is[b][c][i][j]
      local row = want[b][c][flat // 6 + 1]
      row[flat % 6 + 1] = row[flat % 6 + 1] + ps[b][c][i][j]
    end end end end
    both(pooled:max_unpool2d(idx, {kernel_size = case.k, stride = case.s, output_size = {5, 6}}), want)
  end
  local t = Tensor.arange(1, 17):reshape(1, 1, 4, 4)
  local o, i = t:max_pool2d{return_indices = true}
  -- the size the pool came from: (2 - 1) * 2 + 2 on each axis
  both(o:max_unpool2d(i), {{{{0, 0, 0, 0}, {0, 6, 0, 8}, {0, 0, 0, 0}, {0, 14, 0, 16}}}})
  both(o:max_unpool2d{i, output_size = {1, 1, 5, 5}},
       {{{{0, 0, 0, 0, 0}, {6, 0, 8, 0, 0}, {0, 0, 0, 14, 0}, {16, 0, 0, 0, 0}, {0, 0, 0, 0, 0}}}})
  T.eq(op_counts(o:max_unpool2d(i)),
       "ADD=6 CAST=14 CMPNE=4 EXPAND=27 MUL=2 PAD=3 PERMUTE=5 REDUCE_AXIS=6 RESHAPE=55 SHRINK=12 WHERE=3")
  T.raises("max_unpool2d: stride must be positive integers, got 0", function() return o:max_unpool2d(i, {stride = 0}) end)
  T.raises("max_unpool2d: expected (bs, c, *spatial), got (4,)", function() return Tensor{1, 2, 3, 4}:max_unpool2d(Tensor{0}) end)
end)

T.test("unfold: windows of size elements every step along dim", function()
  local data = build({3, 4, 7}, function(i, j, k) return i * 100 + j * 10 + k end)
  for _, case in ipairs{{dim = 2, size = 3, step = 2}, {dim = -1, size = 2, step = 3}, {dim = 1, size = 4, step = 1},
                        {dim = 0, size = 1, step = 1}, {dim = 1, size = 0, step = 2}} do
    local dim = case.dim % 3
    local shape = {3, 4, 7}
    local n = (shape[dim + 1] - case.size) // case.step + 1
    local out_shape = {}
    for d = 1, 3 do out_shape[d] = d == dim + 1 and n or shape[d] end
    out_shape[4] = case.size
    local want = build(out_shape, function(a, b, c, w)
      local p = {a, b, c}
      p[dim + 1] = p[dim + 1] * case.step + w
      return at(data, p)
    end)
    local got = Tensor(data, "int32"):unfold(case.dim, case.size, case.step)
    T.eq(show(got:shape()), show(out_shape), "unfold shape")
    both(got, want)
  end
  T.eq(op_counts(Tensor.arange(8):unfold(0, 2, 2)), "ADD=1 EXPAND=4 PAD=1 PERMUTE=2 REDUCE_AXIS=1 RESHAPE=13 SHRINK=5")
  T.raises("unfold: size 9 is more than axis 0's 8 elements", function() return Tensor.arange(8):unfold(0, 9, 1) end)
  T.raises("unfold: step must be an integer > 0, got 0", function() return Tensor.arange(8):unfold(0, 2, 0) end)
end)

T.test("interpolate: linear (with and without align_corners), nearest, nearest-exact", function()
  local data = build({2, 3, 4}, function(c, i, j) return (c * 12 + i * 4 + j) % 7 * 1.5 - 2 end)
  local function f32(x) return string.unpack("f", string.pack("f", x)) end
  -- the sample positions along one axis, as the definitions give them
  local function linear_pos(have, want, corners)
    local scale = corners and (have - 1) / (want - 1) or have / want
    return function(o)
      local p = corners and o * scale or (o + 0.5) * scale - 0.5
      return math.min(math.max(p, 0), have - 1)
    end
  end
  local function lerp_axis(v, shape, axis, want, corners)
    local pos = linear_pos(shape[axis], want, corners)
    local out_shape = {table.unpack(shape)}
    out_shape[axis] = want
    return build(out_shape, function(...)
      local p = {...}
      local x = pos(p[axis])
      local lo, hi = math.floor(x), math.ceil(x)
      local a, b = {table.unpack(p)}, {table.unpack(p)}
      a[axis], b[axis] = lo, hi
      local va, vb = at(v, a), at(v, b)
      return va + (vb - va) * (x - lo)
    end), out_shape
  end
  for _, case in ipairs{{{5, 7}, false}, {{2, 3}, false}, {{6, 2}, true}, {{3, 4}, true}} do
    local v, shape = data, {2, 3, 4}
    v, shape = lerp_axis(v, shape, 3, case[1][2], case[2])
    v = lerp_axis(v, shape, 2, case[1][1], case[2])
    both(Tensor(data):interpolate(case[1], {align_corners = case[2]}), v, 1e-5)
  end
  for _, mode in ipairs{"nearest", "nearest-exact"} do
    local size = {5, 7}
    local want = build({2, 5, 7}, function(c, i, j)
      local function src(o, have, n)
        local scale = have / n
        return math.floor(f32(mode == "nearest" and o * scale or (o + 0.5) * scale))
      end
      return at(data, {c, src(i, 3, size[1]), src(j, 4, size[2])})
    end)
    both(Tensor(data):interpolate(size, {mode = mode}), want)
  end
  local x = Tensor.arange(12):reshape(3, 4):float()
  T.eq(op_counts(x:interpolate{2, 3}),
       "ADD=21 CAST=64 CMPLT=8 CMPNE=8 EXPAND=53 MUL=12 PAD=7 PERMUTE=9 REDUCE_AXIS=11 RESHAPE=82 SHRINK=14 TRUNC=2 WHERE=12")
  T.eq(op_counts(x:interpolate({5, 2}, {mode = "nearest-exact"})),
       "ADD=7 CAST=18 CMPNE=4 EXPAND=33 MUL=2 PAD=5 PERMUTE=7 REDUCE_AXIS=7 RESHAPE=53 SHRINK=10 WHERE=2")
  -- integer input: computed in float, cast back to the input's dtype
  local r = Tensor({{1, 2}, {3, 4}}, "uint8"):interpolate{3, 5}
  T.eq(tostring(r:dtype()), "uint8")
  both(r, {{1, 1, 2, 2, 2}, {2, 2, 3, 3, 3}, {3, 3, 4, 4, 4}})
  T.raises("interpolate: mode must be 'linear', 'nearest' or 'nearest-exact', got cubic",
           function() return Tensor(data):interpolate({2, 2}, {mode = "cubic"}) end)
  T.raises("interpolate: align_corners needs mode 'linear'",
           function() return Tensor(data):interpolate({2, 2}, {mode = "nearest", align_corners = true}) end)
  T.raises("interpolate: size must be a list of 1 to 3 sizes, got 4", function() return Tensor(data):interpolate(4) end)
end)

-- ---- shapes, sizes, comparisons ----

T.test("pad_to and shrink_to; element_size, nbytes, short, bfloat16, allclose, empty_like", function()
  local x = Tensor({{1, 2, 3}, {4, 5, 6}}, "int32")
  both(x:pad_to(3, 4), {{1, 2, 3, 0}, {4, 5, 6, 0}, {0, 0, 0, 0}})
  both(x:pad_to{false, 5}, {{1, 2, 3, 0, 0}, {4, 5, 6, 0, 0}})
  both(x:shrink_to(1, 2), {{1, 2}})
  both(x:shrink_to{nil, 1}, {{1}, {4}})
  T.raises("pad_to: expected 2 sizes, one per axis of (2, 3), got 1", function() return x:pad_to(3) end)
  T.raises("shrink_to: size 0 is 1.5, not an integer", function() return x:shrink_to{1.5, 2} end)
  T.eq(x:element_size(), 4)
  T.eq(x:nbytes(), 24)
  T.eq(x:half():nbytes(), 12)
  T.eq(tostring(x:short():dtype()), "int16")
  T.eq(tostring(x:bfloat16():dtype()), "bfloat16")
  local f = x:float()
  T.eq(f:allclose(f:add(1e-7)), true)
  T.eq(f:allclose(f:add(0.01)), false)
  T.eq(f:allclose{f:add(0.01), atol = 0.1}, true)
  T.eq(Tensor{0 / 0}:allclose(Tensor{0 / 0}), false)
  T.eq(Tensor{0 / 0}:allclose(Tensor{0 / 0}, {equal_nan = true}), true)
  T.eq(show(x:empty_like():shape()), "{2, 3}")
  T.eq(tostring(x:empty_like():dtype()), "int32")
  T.eq(tostring(x:empty_like{dtype = "float16"}:dtype()), "float16")
end)

-- ---- random ----

T.test("randperm, multinomial, glorot_uniform, kaiming_uniform, kaiming_normal", function()
  Tensor.manual_seed(11)
  local p = Tensor.randperm(50)
  T.eq(tostring(p:dtype()), "int32")
  local seen = {}
  for _, v in ipairs(p:tolist()) do seen[v] = (seen[v] or 0) + 1 end
  for v = 0, 49 do T.eq(seen[v], 1, "randperm holds " .. v .. " once") end
  T.eq(tostring(Tensor.randperm(3, {dtype = "int64"}):dtype()), "int64")
  T.eq(Tensor.randperm{n = 4}:numel(), 4)
  -- weights 1:2:3:4, 8000 draws: each share within 3 points of its weight
  local counts = {0, 0, 0, 0}
  local draws = Tensor{1, 2, 3, 4}:multinomial(8000, true)
  T.eq(tostring(draws:dtype()), "int32")
  for _, i in ipairs(draws:tolist()) do counts[i + 1] = counts[i + 1] + 1 end
  for k = 1, 4 do T.ok(math.abs(counts[k] / 8000 - k / 10) < 0.03, string.format("class %d drawn %d times", k - 1, counts[k])) end
  -- a row with one nonzero weight always draws it
  both(Tensor{{0, 1}, {1, 0}}:multinomial(3, true), {{1, 1, 1}, {0, 0, 0}})
  T.raises("multinomial: 2 samples need replacement = true", function() return Tensor{1, 2}:multinomial(2) end)
  -- ranges: glorot sqrt(6 / (8 + 6)), kaiming_uniform sqrt(3) * gain / sqrt(6)
  local g = Tensor.glorot_uniform(8, 2, 3):flatten():tolist()
  local bound = math.sqrt(6 / 14)
  local lo, hi = math.huge, -math.huge
  for _, v in ipairs(g) do lo, hi = math.min(lo, v), math.max(hi, v) end
  T.ok(lo >= -bound and hi < bound and hi - lo > bound, string.format("glorot_uniform in [%g, %g)", lo, hi))
  local kb = math.sqrt(3) * math.sqrt(2 / (1 + 0.2 ^ 2)) / math.sqrt(6)
  lo, hi = math.huge, -math.huge
  for _, v in ipairs(Tensor.kaiming_uniform(400, 6, {a = 0.2}):flatten():tolist()) do lo, hi = math.min(lo, v), math.max(hi, v) end
  T.ok(lo >= -kb and hi < kb and hi - lo > 1.8 * kb, string.format("kaiming_uniform in [%g, %g)", lo, hi))
  local s, s2, n = 0, 0, 0
  for _, v in ipairs(Tensor.kaiming_normal(2000, 8):flatten():tolist()) do s, s2, n = s + v, s2 + v * v, n + 1 end
  local std = math.sqrt(2 / (1 + 0.01 ^ 2)) / math.sqrt(8)
  T.ok(math.abs(math.sqrt(s2 / n - (s / n) ^ 2) / std - 1) < 0.05, "kaiming_normal's spread")
  T.raises("kaiming_uniform: the shape (3, 0) has a fan in of 0", function() return Tensor.kaiming_uniform(3, 0) end)
  T.raises("glorot_uniform: a weight shape needs at least one axis", function() return Tensor.glorot_uniform() end)
end)
