-- test_tensor_movement_api.lua - the Tensor front end's movement and
-- indexing functions (tinygrad v0.12.0's): tensor indices, gather, one_hot,
-- masked_fill, tril/triu, cat, stack, split, chunk, meshgrid, roll,
-- repeat_interleave, diag, einsum, rearrange, the pools, conv_transpose2d and the
-- padding modes.  Every value is computed here with plain loops and checked
-- through uop.reference and through the JIT (validated against the
-- reference); shapes, dtypes and op counts are tinygrad v0.12.0's.
local T = ...
local d = uop.dtypes
local ref = uop.reference

-- ---- helpers ----

local N = T.load("nested.lua")
local build, show = N.build, N.show
local function same(got, want, tol) return N.same(got, want, tol) end

local function check(got, want, tol, level)
  local ok, msg = same(got, want, tol)
  if not ok then error(msg, (level or 1) + 1) end
end

local function shape_of(t) return show(t:shape()) end

local function shape_is(t, want, level)
  local s, g = show(t:shape()), show(uop.shape(t.uop))
  if s ~= show(want) then error("shape: expected " .. show(want) .. ", got " .. s, (level or 1) + 1) end
  if g ~= s then error("graph shape " .. g .. " differs from " .. s, (level or 1) + 1) end
end

-- t's values through the reference and through the JIT (validated), its
-- shape the shape of want unless given
local function both(t, want, tol, shape)
  N.both(t, want, tol, nil, nil, 2)
  if shape then shape_is(t, shape, 2) end
end

local op_counts = T.load("op_counts.lua")

-- the 3x4 matrix 4*i + j as data
local M = build({3, 4}, function(i, j) return 4 * i + j end)
local function m34() return Tensor(M) end

-- ---- a Tensor as an index ----

T.test("slice with a tensor index gathers along its axis (it used to return x unchanged)", function()
  local x = m34()
  local idx = {2, 0, -1}
  local t = x:slice{Tensor(idx)}
  shape_is(t, {3, 4})
  T.eq(t:dtype(), d.int32)
  both(t, build({3, 4}, function(k, j) return M[(idx[k + 1] % 3) + 1][j + 1] end))
  -- a 2-D index on the second axis
  local I = {{3, 0}, {1, 1}}
  local t2 = x:slice{false, Tensor(I)}
  both(t2, build({3, 2, 2}, function(i, a, b) return M[i + 1][I[a + 1][b + 1] + 1] end), nil, {3, 2, 2})
  -- the shape changes: (5,) indexed by a (1, 2) index is (1, 2)
  shape_is(Tensor{10, 11, 12, 13, 14}:slice{Tensor{{4, 1}}}, {1, 2})
  both(Tensor{10, 11, 12, 13, 14}:slice{Tensor{{4, 1}}}, {{14, 11}})
  -- a sum of a WHERE over a one-hot mask
  local r = t.uop:op() == "RESHAPE" and t.uop:src()[1] or t.uop
  T.eq(r:op(), "REDUCE_AXIS")
  T.ok(rawequal(r:arg()[1], uop.ops.ADD), "a sum")
  T.eq(r:src()[1]:op(), "WHERE")
end)

T.test("x[t] with a Tensor key is x:slice{t}; string keys stay methods; other keys are errors", function()
  local x = Tensor{5, 6, 7}
  local t = x[Tensor{2, 0, 2, -3}]
  both(t, {7, 5, 7, 5}, nil, {4})
  T.eq(type(x.reshape), "function")
  T.eq(x.nonexistent_method, nil)
  -- floats keep their dtype
  local f = Tensor({1.5, 2.5, 3.5})[Tensor{{0, 2}, {1, 0}}]
  T.eq(f:dtype(), d.float32)
  both(f, {{1.5, 3.5}, {2.5, 1.5}}, nil, {2, 2})
  -- an index out of range selects nothing: 0, as in tinygrad
  both(Tensor{1, 2, 3}[Tensor{4, 3, 2}], {0, 0, 3})
  T.raises("Tensor index: the key must be a method name or a Tensor, got number 1", function() return x[1] end)
  T.raises("Tensor index: the key must be a method name or a Tensor, got boolean", function() return x[true] end)
  T.raises("Tensor index: the key must be a method name or a Tensor, got a table (slice with", function() return x[{1}] end)
end)

T.test("t[k] = v is an error, and leaves the tensor as it was", function()
  local x = Tensor{5, 6, 7}
  T.raises("Tensor: t[Tensor(1,) int32] = v is not supported", function() x[Tensor{0}] = 1 end)
  T.raises("Tensor: t[1] = v is not supported", function() x[1] = 1 end)
  T.raises("Tensor: t.sum = v is not supported", function() x.sum = 1 end)
  both(x, {5, 6, 7})
  T.eq(rawget(x, 1), nil)
  both(x:sum(), 18)
end)

T.test("several tensor indices broadcast together; ints and ranges on other axes", function()
  local x = m34()
  local a, b = {2, 0, 1}, {1, 2, 3}
  both(x:slice{Tensor(a), Tensor(b)}, build({3}, function(k) return M[a[k + 1] + 1][b[k + 1] + 1] end), nil, {3})
  -- broadcasting (2, 1) with (3,): (2, 3)
  local r, c = {{0}, {2}}, {3, 0, 1}
  both(x:slice{Tensor(r), Tensor(c)}, build({2, 3}, function(i, j) return M[r[i + 1][1] + 1][c[j + 1] + 1] end), nil, {2, 3})
  local function v3(i, j, k) return i * 12 + j * 4 + k end
  local y = Tensor(build({2, 3, 4}, v3))
  -- an int then a tensor
  local I = {{0, 2}, {1, 1}}
  both(y:slice{1, Tensor(I)}, build({2, 2, 4}, function(p, q, k) return v3(1, I[p + 1][q + 1], k) end), nil, {2, 2, 4})
  -- tensor, range, tensor: the index axes first
  local t1, t3 = {1, 0}, {3, 1}
  both(y:slice{Tensor(t1), {0, 2}, Tensor(t3)}, build({2, 2}, function(p, j) return v3(t1[p + 1], j, t3[p + 1]) end), nil, {2, 2})
  -- a reversed axis, a tensor and a strided range
  local t2 = {2, 0}
  both(y:slice{{nil, nil, -1}, Tensor(t2), {1, 4, 2}}, build({2, 2, 2}, function(i, p, k) return v3(1 - i, t2[p + 1], 1 + 2 * k) end), nil, {2, 2, 2})
  -- tensor indices on axes that are not next to each other, after a range:
  -- the broadcast axes move to the front (2, 2, 4), as in tinygrad and numpy
  local function v4(i, j, k, l) return ((i * 3 + j) * 4 + k) * 5 + l end
  local z = Tensor(build({2, 3, 4, 5}, v4))
  local ja, la = {2, 0}, {1, 4}
  both(z:slice{false, Tensor(ja), false, Tensor(la)},
    build({2, 2, 4}, function(p, i, k) return v4(i, ja[p + 1], k, la[p + 1]) end), nil, {2, 2, 4})
  -- next to each other after a range: they stay in place (2, 2, 5)
  both(z:slice{false, Tensor(ja), Tensor{3, 1}},
    build({2, 2, 5}, function(i, p, l) return v4(i, ja[p + 1], ({3, 1})[p + 1], l) end), nil, {2, 2, 5})
  -- tinygrad's graph for x[Tensor([2,0,1]), Tensor([1,2,3])] on a data tensor
  T.eq(op_counts(x:slice{Tensor{2, 0, 1}, Tensor{1, 2, 3}}),
    "ADD=4 CAST=22 CMPLT=2 CMPNE=4 EXPAND=17 MUL=1 PAD=2 PERMUTE=2 REDUCE_AXIS=3 RESHAPE=28 SHRINK=4 WHERE=3")
end)

T.test("an unsupported index is an error, never x unchanged", function()
  local x = m34()
  T.raises("slice: a tensor index must have an integer dtype, got bool", function() return x:slice{Tensor{true, false}} end)
  T.raises("slice: a tensor index must have an integer dtype, got float32", function() return x[Tensor{0.5}] end)
  T.raises("slice: cannot broadcast shapes (2,), (3,)", function() return x:slice{Tensor{0, 1}, Tensor{0, 1, 2}} end)
  T.raises("slice: the spec of axis 0 must be an integer", function() return x:slice{"a"} end)
  T.raises("slice: 3 indices for a 2-D tensor", function() return x:slice{Tensor{0}, 0, 0} end)
  T.raises("slice: expected a table of specs, got a Tensor", function() return x:slice(Tensor{0}) end)
  T.raises("slice: the range of axis 1 has an unexpected key", function() return x:slice{false, {0, 2, step = 2}} end)
end)

T.test("slices build one SHRINK, a FLIP for negative steps, and keep their values", function()
  local x = Tensor(build({10}, function(i) return i end))
  both(x:slice{{1, 9, 3}}, {1, 4, 7})
  both(x:slice{{8, 0, -3}}, {8, 5, 2})
  both(x:slice{{nil, nil, -1}}, {9, 8, 7, 6, 5, 4, 3, 2, 1, 0})
  shape_is(x:slice{{1, 3, -1}}, {0})
  local m = m34()
  local s = m:slice{{nil, nil, -2}, {1, nil, 2}}
  both(s, {{9, 11}, {1, 3}})
  T.eq(#uop.find(s.uop, "SHRINK"), 2) -- the window, then the stride's pick
  T.eq(#uop.find(s.uop, "FLIP"), 1)
end)

-- ---- gather, one_hot, masked_fill, tril, triu ----

T.test("gather along an axis", function()
  local x = m34()
  local I1 = {{0, 3}, {1, 1}, {2, 0}}
  local g = x:gather(1, Tensor(I1))
  both(g, build({3, 2}, function(i, j) return M[i + 1][I1[i + 1][j + 1] + 1] end), nil, {3, 2})
  T.eq(op_counts(g), "ADD=1 CAST=8 CMPNE=2 EXPAND=9 PAD=1 PERMUTE=2 REDUCE_AXIS=2 RESHAPE=16 SHRINK=2 WHERE=1")
  local I0 = {{2, 1}, {0, 0}}
  both(x:gather(0, Tensor(I0)), build({2, 2}, function(i, j) return M[I0[i + 1][j + 1] + 1][j + 1] end), nil, {2, 2})
  local In = {{2}, {3}, {0}}
  both(x:gather(-1, Tensor(In)), build({3, 1}, function(i, j) return M[i + 1][In[i + 1][j + 1] + 1] end), nil, {3, 1})
  -- the dtype is the tensor's
  local f = Tensor({{1.5, -2.5}, {3.5, 4.5}}, "float16"):gather(1, Tensor{{1, 1}, {0, 1}})
  T.eq(f:dtype(), d.float16)
  both(f, {{-2.5, -2.5}, {3.5, 4.5}})
  T.raises("gather: the index (2,) and the tensor (3, 4) need the same number of dimensions", function() return x:gather(0, Tensor{1, 2}) end)
  T.raises("gather: the index (1, 5) is larger than the tensor (3, 4) on axis 1", function() return x:gather(0, Tensor{{0, 0, 0, 0, 0}}) end)
  T.raises("gather: axis 2 out of range for a 2-D tensor", function() return x:gather(2, Tensor{{0}}) end)
  T.raises("gather: the index must have an integer dtype, got float32", function() return x:gather(0, Tensor{{0.5}}) end)
end)

T.test("one_hot: int32 rows, num_classes given or max + 1", function()
  local v = {0, 1, 3, 3, 4}
  local t = Tensor(v):one_hot(5)
  T.eq(t:dtype(), d.int32)
  both(t, build({5, 5}, function(i, c) return v[i + 1] == c and 1 or 0 end), nil, {5, 5})
  local w = {{0, 2}, {1, 0}}
  both(Tensor(w):one_hot(), build({2, 2, 3}, function(i, j, c) return w[i + 1][j + 1] == c and 1 or 0 end), nil, {2, 2, 3})
  both(Tensor{1, 0}:one_hot{num_classes = 2}, {{0, 1}, {1, 0}})
  T.eq(op_counts(Tensor{0, 2, 1}:one_hot(3)), "ADD=1 CAST=8 CMPNE=2 EXPAND=8 PAD=1 PERMUTE=1 REDUCE_AXIS=1 RESHAPE=13 SHRINK=2 WHERE=1")
  T.raises("one_hot: expected an integer dtype, got float32", function() return Tensor{1.5}:one_hot(3) end)
  T.raises("one_hot: num_classes must be an integer >= 0 or -1, got -2", function() return Tensor{1}:one_hot(-2) end)
  T.raises("one_hot: unknown option 'classes'", function() return Tensor{1}:one_hot{classes = 2} end)
end)

T.test("masked_fill: the value where the mask is true, with tinygrad's promotion", function()
  local x = m34()
  local t = x:masked_fill(x:lt(5), -1)
  T.eq(t:dtype(), d.int32)
  both(t, build({3, 4}, function(i, j) return M[i + 1][j + 1] < 5 and -1 or M[i + 1][j + 1] end))
  local f = Tensor{1, 2, 3}:masked_fill(Tensor{true, false, true}, 1.5)
  T.eq(f:dtype(), d.float32)
  both(f, {1.5, 2.0, 1.5})
  -- a tensor value, broadcast
  both(x:masked_fill(Tensor{true, false, false, true}, Tensor{{-1}, {-2}, {-3}}),
    build({3, 4}, function(i, j) return (j == 0 or j == 3) and -(i + 1) or M[i + 1][j + 1] end))
  T.raises("masked_fill: the mask must be a Tensor, got boolean", function() return x:masked_fill(true, 1) end)
end)

T.test("tril and triu keep one side of a diagonal, on the last two axes", function()
  local x = m34()
  for _, k in ipairs({-1, 0, 1, 2}) do
    both(x:tril(k), build({3, 4}, function(i, j) return j - i <= k and M[i + 1][j + 1] or 0 end))
    both(x:triu(k), build({3, 4}, function(i, j) return j - i >= k and M[i + 1][j + 1] or 0 end))
  end
  local function v3(b, i, j) return b * 100 + i * 10 + j end
  local y = Tensor(build({2, 3, 3}, v3))
  both(y:triu{diagonal = -1}, build({2, 3, 3}, function(b, i, j) return j - i >= -1 and v3(b, i, j) or 0 end), nil, {2, 3, 3})
  local bt = Tensor(build({2, 2}, function() return true end)):tril()
  T.eq(bt:dtype(), d.bool)
  both(bt, {{true, false}, {true, true}})
  T.eq(op_counts(x:tril()), "ADD=3 CAST=8 CMPLT=1 CMPNE=1 EXPAND=11 PAD=2 PERMUTE=2 REDUCE_AXIS=2 RESHAPE=21 SHRINK=4 WHERE=1")
  T.raises("tril: expected a tensor of at least 2 dimensions, got (3,)", function() return Tensor{1, 2, 3}:tril() end)
  T.raises("triu: diagonal must be an integer, got 0.5", function() return x:triu(0.5) end)
end)

-- ---- cat, stack, split, chunk, meshgrid ----

T.test("cat pads each tensor to the joined size and adds", function()
  local x = m34()
  local c = x:cat(x, x, {dim = 1})
  both(c, build({3, 12}, function(i, j) return M[i + 1][j % 4 + 1] end), nil, {3, 12})
  T.eq(op_counts(c), "ADD=2 PAD=3 RESHAPE=1")
  both(Tensor.cat(Tensor{{1, 2}}, Tensor{{3, 4}}, Tensor{{5, 6}}), {{1, 2}, {3, 4}, {5, 6}}, nil, {3, 2})
  -- a list, a negative dim, and int + float promoting to float32
  local f = Tensor.cat({Tensor{{1, 2}}, Tensor{{3.5, 4}}}, {dim = -1})
  T.eq(f:dtype(), d.float32)
  both(f, {{1.0, 2.0, 3.5, 4.0}}, nil, {1, 4})
  local b = Tensor{true, false}:cat(Tensor{false, true})
  T.eq(b:dtype(), d.bool)
  both(b, {true, false, false, true})
  -- one tensor is itself
  local one = Tensor{1, 2}
  T.ok(rawequal(one:cat(), one), "cat of one tensor")
  T.raises("cat: tensors of shapes (1, 2) and (1, 3) differ outside axis 0", function() return Tensor{{1, 2}}:cat(Tensor{{1, 2, 3}}) end)
  T.raises("cat: tensors of shapes (2,) and (1, 2) differ outside axis 0", function() return Tensor{1, 2}:cat(Tensor{{1, 2}}) end)
  T.raises("cat: axis 2 out of range for a 2-D tensor", function() return x:cat(x, {dim = 2}) end)
  T.raises("cat: operand 2 is a number, not a Tensor", function() return Tensor.cat(x, 1) end)
  T.raises("cat: unknown option 'axis'", function() return x:cat(x, {axis = 1}) end)
end)

T.test("stack joins along a new axis", function()
  local a, b, c = Tensor{1, 2}, Tensor{3, 4}, Tensor{5, 6}
  both(Tensor.stack(a, b, c), {{1, 2}, {3, 4}, {5, 6}}, nil, {3, 2})
  both(a:stack(b, c, {dim = 1}), {{1, 3, 5}, {2, 4, 6}}, nil, {2, 3})
  both(Tensor.stack({Tensor{{1, 2}}, Tensor{{3, 4}}}, {dim = -1}), {{{1, 3}, {2, 4}}}, nil, {1, 2, 2})
  T.eq(op_counts(Tensor.stack(a, b, c)), "ADD=2 PAD=3 RESHAPE=3")
  T.raises("stack: axis 3 out of range for a 1-D tensor", function() return a:stack(b, {dim = 3}) end)
end)

T.test("split by a size (the last piece smaller) or a list of sizes", function()
  local function v(i, j) return i * 2 + j end
  local x = Tensor(build({5, 2}, v))
  local parts = x:split(2)
  T.eq(#parts, 3)
  local starts = {0, 2, 4}
  for k, p in ipairs(parts) do
    local n = math.min(2, 5 - starts[k])
    both(p, build({n, 2}, function(i, j) return v(starts[k] + i, j) end), nil, {n, 2})
  end
  T.eq(op_counts(parts[2]), "RESHAPE=1 SHRINK=1")
  local l = x:split({1, 4})
  T.eq(#l, 2)
  both(l[1], {{0, 1}}, nil, {1, 2})
  both(l[2], build({4, 2}, function(i, j) return v(i + 1, j) end), nil, {4, 2})
  -- along the last axis, with an empty piece
  local y = Tensor(build({2, 5}, function(i, j) return i * 5 + j end))
  local s = y:split({2, 0, 3}, -1)
  shape_is(s[1], {2, 2}); shape_is(s[2], {2, 0}); shape_is(s[3], {2, 3})
  both(s[3], build({2, 3}, function(i, j) return i * 5 + j + 2 end))
  local s3 = y:split(3, {dim = 1})
  shape_is(s3[1], {2, 3}); shape_is(s3[2], {2, 2})
  both(s3[2], build({2, 2}, function(i, j) return i * 5 + j + 3 end))
  T.raises("split: the sizes sum to 4, not to the size 5 of axis 0", function() return x:split({2, 2}) end)
  T.raises("split: sizes must be an integer or a list of integers, got string", function() return x:split("2") end)
  T.raises("split: axis 2 out of range for a 2-D tensor", function() return x:split(1, 2) end)
end)

T.test("chunk: ceil(size / chunks) per piece, maybe fewer pieces", function()
  -- the piece sizes tinygrad v0.12.0 gives for arange(11/12/13).chunk(6)
  local cases = {{11, {2, 2, 2, 2, 2, 1}}, {12, {2, 2, 2, 2, 2, 2}}, {13, {3, 3, 3, 3, 1}}}
  for _, case in ipairs(cases) do
    local n, sizes = case[1], case[2]
    local pieces = Tensor(build({n}, function(i) return i end)):chunk(6)
    T.eq(#pieces, #sizes, "pieces of " .. n)
    local start = 0
    for k, p in ipairs(pieces) do
      both(p, build({sizes[k]}, function(i) return start + i end), nil, {sizes[k]})
      start = start + sizes[k]
    end
  end
  local m = m34():chunk(3, 1)
  T.eq(#m, 2)
  both(m[2], build({3, 2}, function(i, j) return M[i + 1][j + 3] end), nil, {3, 2})
  local e = Tensor.ones(0, 2):chunk(3)
  T.eq(#e, 3)
  shape_is(e[3], {0, 2})
  T.raises("chunk: chunks must be a positive integer, got 0", function() return m34():chunk(0) end)
end)

T.test("meshgrid: ij and xy indexing", function()
  local a, b = {1, 2, 3}, {4, 5}
  local g = Tensor.meshgrid(Tensor(a), Tensor(b))
  T.eq(#g, 2)
  both(g[1], build({3, 2}, function(i) return a[i + 1] end), nil, {3, 2})
  both(g[2], build({3, 2}, function(_, j) return b[j + 1] end), nil, {3, 2})
  local x = Tensor(a):meshgrid(Tensor(b), {indexing = "xy"})
  both(x[1], build({2, 3}, function(_, j) return a[j + 1] end), nil, {2, 3})
  both(x[2], build({2, 3}, function(i) return b[i + 1] end), nil, {2, 3})
  local c = {6, 7, 8, 9}
  local g3 = Tensor.meshgrid(Tensor{1, 2}, Tensor{3, 4, 5}, Tensor(c), {indexing = "xy"})
  both(g3[1], build({3, 2, 4}, function(_, j) return j + 1 end), nil, {3, 2, 4})
  both(g3[2], build({3, 2, 4}, function(i) return i + 3 end))
  both(g3[3], build({3, 2, 4}, function(_, _, k) return c[k + 1] end))
  local single = Tensor{1, 2}
  T.ok(rawequal(Tensor.meshgrid(single)[1], single), "one tensor")
  T.raises('meshgrid: indexing must be "ij" or "xy", got ab', function() return Tensor.meshgrid(single, single, {indexing = "ab"}) end)
end)

-- ---- roll, repeat_interleave, diag ----

T.test("roll shifts with wrap-around, along dims or the flattened tensor", function()
  local x = Tensor(build({4}, function(i) return i end))
  both(x:roll(1, 0), {3, 0, 1, 2})
  both(x:roll(-1), {1, 2, 3, 0})
  both(x:roll(9), {3, 0, 1, 2})
  local m = m34()
  -- no dims: the flattened tensor rolled by 5, reshaped back
  both(m:roll(5), build({3, 4}, function(i, j) return ((i * 4 + j - 5) % 12) end))
  both(m:roll({1, -2}, {0, 1}), build({3, 4}, function(i, j) return M[(i - 1) % 3 + 1][(j + 2) % 4 + 1] end))
  both(m:roll{shifts = 7, dims = -1}, build({3, 4}, function(i, j) return M[i + 1][(j - 7) % 4 + 1] end))
  T.eq(op_counts(m:roll({1, -2}, {0, 1})), "EXPAND=1 RESHAPE=3 SHRINK=1")
  T.raises("roll: 1 dims for 2 shifts", function() return x:roll({1, 2}, {0}) end)
  T.raises("roll: axis 1 out of range for a 1-D tensor", function() return x:roll(1, 1) end)
  T.raises("roll: cannot roll axis 0 of size 0", function() return Tensor.ones(0):roll(1, 0) end)
end)

T.test("repeat_interleave repeats each element in place", function()
  both(Tensor{1, 2, 3}:repeat_interleave(2), {1, 1, 2, 2, 3, 3}, nil, {6})
  local function v(i, j) return i * 3 + j end
  local x = Tensor(build({2, 3}, v))
  both(x:repeat_interleave(2, 1), build({2, 6}, function(i, j) return v(i, j // 2) end), nil, {2, 6})
  both(x:repeat_interleave(3, {dim = -2}), build({6, 3}, function(i, j) return v(i // 3, j) end), nil, {6, 3})
  both(x:repeat_interleave(2), build({12}, function(k) return k // 2 end), nil, {12})
  T.eq(op_counts(m34():repeat_interleave(2, 1)), "EXPAND=1 RESHAPE=3")
  T.raises("repeat_interleave: repeats must be a non-negative integer, got -1", function() return x:repeat_interleave(-1) end)
end)

T.test("diag puts a vector on a diagonal; diagonal takes it back", function()
  local v = {4, -5, 6}
  local t = Tensor(v):diag()
  both(t, build({3, 3}, function(i, j) return i == j and v[i + 1] or 0 end), nil, {3, 3})
  T.eq(op_counts(t), "PAD=1 RESHAPE=3 SHRINK=1")
  both(t:diagonal(), v, nil, {3})
  both(m34():slice{false, {0, 3}}:diagonal(), {0, 5, 10})
  T.raises("diag: expected a 1-D tensor, got (3, 4)", function() return m34():diag() end)
  T.raises("diagonal: expected a square matrix, got (3, 4)", function() return m34():diagonal() end)
end)

-- ---- einsum ----

T.test("einsum: matmul, trace, batched matmul, outer, transposes, ellipsis", function()
  local function va(i, j) return i * 3 + j + 1 end
  local function vb(j, k) return (j * 4 + k) % 5 - 2 end
  local A, B = Tensor(build({2, 3}, va)), Tensor(build({3, 4}, vb))
  local mm = build({2, 4}, function(i, k) local s = 0 for j = 0, 2 do s = s + va(i, j) * vb(j, k) end return s end)
  local e = Tensor.einsum("ij,jk->ik", A, B)
  T.eq(e:dtype(), d.int32)
  both(e, mm, nil, {2, 4})
  both(Tensor.einsum("ij,jk", A, B), mm, nil, {2, 4})
  both(Tensor.einsum("ij , jk -> ik", {A, B}), mm)
  local sq = Tensor(build({3, 3}, function(i, j) return i * 3 + j end))
  both(Tensor.einsum("ii->i", sq), {0, 4, 8}, nil, {3})
  both(Tensor.einsum("ii", sq), 12, nil, {})
  local function vx(b, i, j) return b * 6 + i * 3 + j end
  local function vy(b, j, k) return (b * 6 + j * 2 + k) % 7 end
  local X, Y = Tensor(build({2, 2, 3}, vx)), Tensor(build({2, 3, 2}, vy))
  local bmm = build({2, 2, 2}, function(b, i, k) local s = 0 for j = 0, 2 do s = s + vx(b, i, j) * vy(b, j, k) end return s end)
  both(Tensor.einsum("bij,bjk->bik", X, Y), bmm, nil, {2, 2, 2})
  both(Tensor.einsum("...ij,...jk->...ik", X, Y), bmm, nil, {2, 2, 2})
  both(Tensor.einsum("ij,ij->", Tensor{{1, 2}, {3, 4}}, Tensor{{5, 6}, {7, 8}}), 70, nil, {})
  both(Tensor.einsum("ij->ji", A), build({3, 2}, function(j, i) return va(i, j) end), nil, {3, 2})
  both(Tensor.einsum("i,j->ij", Tensor{1, 2}, Tensor{3, 4, 5}), {{3, 4, 5}, {6, 8, 10}})
  both(Tensor.einsum("ba,ca->cb", A, Tensor(build({4, 3}, vb))),
    build({4, 2}, function(c, b) local s = 0 for a = 0, 2 do s = s + va(b, a) * vb(c, a) end return s end), nil, {4, 2})
  both(Tensor.einsum("i...->...", B), build({4}, function(k) local s = 0 for j = 0, 2 do s = s + vb(j, k) end return s end))
  both(Tensor.einsum("...j,j", B, Tensor{1, 0, 2, 1}),
    build({3}, function(j) return vb(j, 0) + 2 * vb(j, 2) + vb(j, 3) end), nil, {3})
  -- tinygrad's graph for a data matmul
  T.eq(op_counts(Tensor.einsum("ij,jk->ik", m34(), m34():transpose())), "EXPAND=2 MUL=1 PERMUTE=1 REDUCE_AXIS=1 RESHAPE=5")
end)

T.test("einsum: repeated letters take diagonals; dtype and promotion", function()
  local function v3(i, j, k) return i * 9 + j * 3 + k end
  -- out[i][j] = x[j, i, i] and x[i, i, j] (the diagonal axis is followed
  -- by its letter; tinygrad v0.12.0 transposes the second)
  local x = Tensor(build({3, 3, 3}, v3))
  both(Tensor.einsum("jii->ij", x), build({3, 3}, function(i, j) return v3(j, i, i) end))
  both(Tensor.einsum("iij->ij", x), build({3, 3}, function(i, j) return v3(i, i, j) end))
  both(Tensor.einsum("iji->ij", x), build({3, 3}, function(i, j) return v3(i, j, i) end))
  local function v4(i, j, k, l) return ((i * 2 + j) * 3 + k) * 3 + l end
  both(Tensor.einsum("iijj->ij", Tensor(build({2, 2, 3, 3}, v4))), build({2, 3}, function(i, j) return v4(i, i, j, j) end), nil, {2, 3})
  -- int8 sums in int32 (tinygrad's sum accumulator); dtype= casts before the sum
  local s8 = Tensor.einsum("i,i->", Tensor({100, 100, 3}, "int8"), Tensor({2, 3, 4}, "int8"))
  T.eq(s8:dtype(), d.int32)
  both(s8, (200 - 256) + (300 - 256) + 12)
  local f = Tensor.einsum("ij,jk->ik", Tensor{{1, 2}}, Tensor{{3}, {4}}, {dtype = "float32"})
  T.eq(f:dtype(), d.float32)
  both(f, {{11.0}})
  T.raises("einsum: the formula has 2 operands, 1 given", function() return Tensor.einsum("ij,jk->ik", m34()) end)
  T.raises("einsum: the letter 'j' has sizes 4 and 3", function() return Tensor.einsum("ij,jk->ik", m34(), m34()) end)
  T.raises("einsum: the output letter 'z' is not in any input", function() return Tensor.einsum("ij->iz", m34()) end)
  T.raises("einsum: input 'ijk' names 3 axes of a 2-D operand", function() return Tensor.einsum("ijk->i", m34()) end)
  T.raises("einsum: operand 1 is a number, not a Tensor", function() return Tensor.einsum("i->i", 3) end)
end)

-- ---- rearrange ----

T.test("rearrange: einops formulas against an index map, with tinygrad's op counts", function()
  local data = build({2, 3, 4}, function(i, j, k) return 12 * i + 4 * j + k end)
  local y = Tensor(data, "int32")
  -- each case: formula, sizes, result shape, and where result element (a, b, c...) comes from
  local cases = {
    {"b c (h w) -> b h (c w)", {h = 2}, {2, 2, 6}, function(b, h, cw) return {b, cw // 2, h * 2 + cw % 2} end},
    {"... w -> w ...", nil, {4, 2, 3}, function(w, b, c) return {b, c, w} end},
    {"b ... -> (...) b", nil, {12, 2}, function(cw, b) return {b, cw // 4, cw % 4} end},
    {"b c w -> b 1 c w 1", nil, {2, 1, 3, 4, 1}, function(b, _, c, w) return {b, c, w} end},
    {"(a b) c w -> c (w a) b", {a = 1}, {3, 4, 2}, function(c, w, b) return {b, c, w} end},
    {"b c w -> w () (c b)", nil, {4, 1, 6}, function(w, _, cb) return {cb % 2, cb // 2, w} end},
  }
  for _, case in ipairs(cases) do
    local want = build(case[3], function(...)
      local v = data
      for _, i in ipairs(case[4](...)) do v = v[i + 1] end
      return v
    end)
    local r = y:rearrange(case[1], case[2])
    T.eq(show(r:shape()), show(case[3]), case[1])
    both(r, want)
  end
  T.eq(op_counts(Tensor.arange(24):reshape(2, 3, 4):rearrange("b c (h w) -> b h (c w)", {h = 2})),
       "ADD=1 EXPAND=3 PAD=1 PERMUTE=2 REDUCE_AXIS=1 RESHAPE=11 SHRINK=2")
  T.eq(op_counts(Tensor.arange(24):reshape(2, 3, 4):rearrange("... w -> w ...")),
       "ADD=1 EXPAND=3 PAD=1 PERMUTE=2 REDUCE_AXIS=1 RESHAPE=9 SHRINK=2")
  T.raises("rearrange: the names of the two sides of 'b c -> b' differ", function() return y:rearrange("b c -> b") end)
  T.raises("rearrange: the formula needs exactly one '->', got 'b c w'", function() return y:rearrange("b c w") end)
  T.raises("rearrange: axis b appears twice on the left of 'b b w -> b b w'", function() return y:rearrange("b b w -> b b w") end)
  T.raises("rearrange: invalid axis name '_b'", function() return y:rearrange("_b c w -> _b c w") end)
  T.raises("rearrange: a group inside a group", function() return y:rearrange("b (c (w)) -> b c w") end)
  T.raises("rearrange: '...' inside a group on the left of 'b (c ...) -> b c ...'", function() return y:rearrange("b (c ...) -> b c ...") end)
  T.raises("rearrange: 'b c w d -> b c w d' names 4 axes, (2, 3, 4) has 3", function() return y:rearrange("b c w d -> b c w d") end)
  T.raises("rearrange: axis z is not on the left of 'b c w -> b c w'", function() return y:rearrange("b c w -> b c w", {z = 3}) end)
  T.raises("rearrange: axis c has size 3, not 5", function() return y:rearrange("b c w -> b c w", {c = 5}) end)
end)

-- ---- pools ----

-- a naive 2-D pool over the last two axes of a (n, c, h, w) table:
-- kind "max" or "avg"; pads {{top, bottom}, {left, right}}; ceil_mode
-- makes ceil((i + pads - window) / s) + 1 outputs unless the last window
-- would start in the padding after the input
local function naive_pool(x, n, c, h, w, o)
  local k, s, dl = o.kernel, o.stride or o.kernel, o.dilation or {1, 1}
  local pads = o.pads or {{0, 0}, {0, 0}}
  local size, out_n = {h, w}, {}
  for a = 1, 2 do
    local span = size[a] + pads[a][1] + pads[a][2] - dl[a] * (k[a] - 1) - 1
    local cnt = o.ceil and -((-span) // s[a]) + 1 or span // s[a] + 1
    if o.ceil and (cnt - 1) * s[a] >= size[a] + pads[a][1] then cnt = cnt - 1 end
    out_n[a] = cnt
  end
  local out = build({n, c, out_n[1], out_n[2]}, function(b, ch, oy, ox)
    local best, sum, inside, padded = nil, 0, 0, 0
    for ky = 0, k[1] - 1 do
      for kx = 0, k[2] - 1 do
        local y = oy * s[1] - pads[1][1] + ky * dl[1]
        local xx = ox * s[2] - pads[2][1] + kx * dl[2]
        if y >= -pads[1][1] and y < h + pads[1][2] and xx >= -pads[2][1] and xx < w + pads[2][2] then padded = padded + 1 end
        if y >= 0 and y < h and xx >= 0 and xx < w then
          local v = x[b + 1][ch + 1][y + 1][xx + 1]
          inside = inside + 1
          sum = sum + v
          if best == nil or v > best then best = v end
        end
      end
    end
    if o.kind == "max" then return best end
    return sum / (o.count_include_pad == false and inside or padded)
  end)
  return out, {n, c, out_n[1], out_n[2]}
end

local function plane(n, c, h, w, f)
  return build({n, c, h, w}, f or function(b, ch, y, xx) return ((b * c + ch) * h + y) * w + xx end)
end

T.test("max_pool2d: kernel, stride, padding, dilation, ceil_mode", function()
  local P = plane(1, 1, 5, 5)
  local x = Tensor(P)
  local function case(t, opts)
    opts.kind = "max"
    local want, shape = naive_pool(opts.data or P, opts.n or 1, opts.c or 1, opts.h or 5, opts.w or 5, opts)
    both(t, want, nil, shape)
  end
  case(x:max_pool2d(), {kernel = {2, 2}})
  case(x:max_pool2d(2, {ceil_mode = true}), {kernel = {2, 2}, ceil = true})
  case(x:max_pool2d{padding = 1}, {kernel = {2, 2}, pads = {{1, 1}, {1, 1}}})
  -- negative values: the padding is the lowest int32, never the max
  local N = plane(1, 1, 5, 5, function(_, _, y, xx) return -(y * 5 + xx) end)
  case(Tensor(N):max_pool2d{kernel_size = 3, stride = 1, padding = 1},
    {data = N, kernel = {3, 3}, stride = {1, 1}, pads = {{1, 1}, {1, 1}}})
  local P6 = plane(1, 1, 6, 6)
  case(Tensor(P6):max_pool2d(2, {stride = 1, dilation = 2}), {data = P6, h = 6, w = 6, kernel = {2, 2}, stride = {1, 1}, dilation = {2, 2}})
  -- float, asymmetric everything, ceil_mode: (h, w) padding and flat padding
  local P7 = plane(2, 2, 7, 7, function(b, ch, y, xx) return (b * 31 + ch * 17 + y * 7 + xx * 3) % 23 - 11 end)
  local f = Tensor(P7, "float32"):max_pool2d({3, 2}, {stride = {2, 3}, dilation = {1, 2}, padding = {1, 0}, ceil_mode = true})
  T.eq(f:dtype(), d.float32)
  case(f, {data = P7, n = 2, c = 2, h = 7, w = 7, kernel = {3, 2}, stride = {2, 3}, dilation = {1, 2}, pads = {{1, 1}, {0, 0}}, ceil = true})
  -- flat padding is (left, right, top, bottom)
  case(x:max_pool2d(3, {padding = {1, 0, 0, 1}}), {kernel = {3, 3}, pads = {{0, 1}, {1, 0}}})
  T.eq(op_counts(Tensor(M):reshape(1, 1, 3, 4):max_pool2d(2, {ceil_mode = true})),
    "ADD=1 CAST=1 EXPAND=4 PAD=2 PERMUTE=1 REDUCE_AXIS=1 RESHAPE=11 SHRINK=3 WHERE=1")
  -- a 1-D kernel over the last axis
  both(Tensor(build({1, 10}, function(_, i) return i end)):max_pool2d({3}, {stride = 2}), {{2, 4, 6, 8}}, nil, {1, 4})
end)

T.test("max_pool2d with return_indices gives each max's flat index in its plane", function()
  local V = {{{{1, 5, 2}, {7, 3, 9}, {4, 8, 6}}}}
  local m, idx = Tensor(V):max_pool2d(2, {stride = 1, return_indices = true})
  local wantm, wanti = {}, {}
  for oy = 0, 1 do
    wantm[oy + 1], wanti[oy + 1] = {}, {}
    for ox = 0, 1 do
      local best, at = nil, nil
      for y = oy, oy + 1 do for xx = ox, ox + 1 do
        local v = V[1][1][y + 1][xx + 1]
        if best == nil or v > best then best, at = v, y * 3 + xx end
      end end
      wantm[oy + 1][ox + 1], wanti[oy + 1][ox + 1] = best, at
    end
  end
  both(m, {{wantm}})
  both(idx, {{wanti}})
  T.eq(idx:dtype(), d.int32)
end)

T.test("avg_pool2d: padding with and without count_include_pad, ceil_mode, dilation", function()
  local P = plane(1, 1, 5, 5)
  local x = Tensor(P)
  local function case(t, opts)
    opts.kind = "avg"
    local want, shape = naive_pool(opts.data or P, 1, 1, opts.h or 5, opts.w or 5, opts)
    T.eq(t:dtype(), d.float32)
    both(t, want, 1e-6, shape)
  end
  case(x:avg_pool2d(), {kernel = {2, 2}})
  case(x:avg_pool2d(2, {ceil_mode = true}), {kernel = {2, 2}, ceil = true})
  case(x:avg_pool2d{padding = 1}, {kernel = {2, 2}, pads = {{1, 1}, {1, 1}}})
  case(x:avg_pool2d{padding = 1, count_include_pad = false}, {kernel = {2, 2}, pads = {{1, 1}, {1, 1}}, count_include_pad = false})
  case(x:avg_pool2d{kernel_size = 3, stride = 2, padding = 1, ceil_mode = true},
    {kernel = {3, 3}, stride = {2, 2}, pads = {{1, 1}, {1, 1}}, ceil = true})
  case(x:avg_pool2d{kernel_size = 3, stride = 2, padding = 1, ceil_mode = true, count_include_pad = false},
    {kernel = {3, 3}, stride = {2, 2}, pads = {{1, 1}, {1, 1}}, ceil = true, count_include_pad = false})
  local P6 = plane(1, 1, 6, 6)
  case(Tensor(P6, "float32"):avg_pool2d({2, 3}, {stride = 1, dilation = 2}), {data = P6, h = 6, w = 6, kernel = {2, 3}, stride = {1, 1}, dilation = {2, 2}})
  T.eq(op_counts(Tensor(M):reshape(1, 1, 3, 4):avg_pool2d{padding = 1, count_include_pad = false}),
    "CAST=2 EXPAND=3 MUL=1 PAD=2 PERMUTE=2 RECIPROCAL=1 REDUCE_AXIS=2 RESHAPE=15 SHRINK=6")
end)

T.test("pool errors name the function", function()
  local x = Tensor(plane(1, 1, 3, 3))
  T.raises("max_pool2d: kernel size 4 (dilation 1) is greater than the input size 3", function() return x:max_pool2d(4) end)
  T.raises("avg_pool2d: padding must be an integer or a list of 2 or 4 integers", function() return x:avg_pool2d(2, {padding = {1, 1, 1}}) end)
  T.raises("avg_pool2d: stride needs 2 values, got 3", function() return x:avg_pool2d(2, {stride = {1, 1, 1}}) end)
  T.raises("max_pool2d: unknown option 'pad'", function() return x:max_pool2d(2, {pad = 1}) end)
  T.raises("max_pool2d: kernel_size must be positive integers, got 0", function() return x:max_pool2d(0) end)
  -- _pool is reachable too: its sizes are checked before they are used
  T.raises("pool: stride must be integers >= 1, got 0", function() return x:_pool({2, 2}, 0) end)
  T.raises("pool: kernel sizes must be integers >= 0, got -2", function() return x:_pool({-2, 2}) end)
end)

-- ---- conv_transpose2d ----

-- the transposed convolution by its definition: each input element times
-- the kernel added into the output at (i * stride - pad_before + k * dilation)
local function naive_conv_transpose(X, W, o)
  local n, cin, h, w = #X, #X[1], #X[1][1], #X[1][1][1]
  local coutg, kh, kw = #W[1], #W[1][1], #W[1][1][1]
  local g = o.groups or 1
  local cing = cin // g
  local s, dl, op = o.stride or {1, 1}, o.dilation or {1, 1}, o.output_padding or {0, 0}
  local p = o.pads or {{0, 0}, {0, 0}}
  local ho = (h - 1) * s[1] - p[1][1] - p[1][2] + dl[1] * (kh - 1) + op[1] + 1
  local wo = (w - 1) * s[2] - p[2][1] - p[2][2] + dl[2] * (kw - 1) + op[2] + 1
  local out = build({n, g * coutg, ho, wo}, function() return 0 end)
  for b = 1, n do
    for ic = 0, cin - 1 do
      local grp = ic // cing
      for oc = 0, coutg - 1 do
        for y = 0, h - 1 do for xx = 0, w - 1 do
          for ky = 0, kh - 1 do for kx = 0, kw - 1 do
            local oy = y * s[1] - p[1][1] + ky * dl[1]
            local ox = xx * s[2] - p[2][1] + kx * dl[2]
            if oy >= 0 and oy < ho and ox >= 0 and ox < wo then
              local row = out[b][grp * coutg + oc + 1][oy + 1]
              row[ox + 1] = row[ox + 1] + X[b][ic + 1][y + 1][xx + 1] * W[ic + 1][oc + 1][ky + 1][kx + 1]
            end
          end end
        end end
      end
    end
  end
  if o.bias then
    for b = 1, n do for c = 1, g * coutg do for y = 1, ho do for xx = 1, wo do
      out[b][c][y][xx] = out[b][c][y][xx] + o.bias[c]
    end end end end
  end
  return out, {n, g * coutg, ho, wo}
end

T.test("conv_transpose2d against the definition: stride, padding, output_padding, groups, dilation, bias", function()
  local function data(n, c, h, w, seed)
    return build({n, c, h, w}, function(a, b, y, xx) return (a * 7 + b * 5 + y * 3 + xx + seed) % 9 - 4 end)
  end
  local cases = {
    {data(1, 1, 3, 3, 0), data(1, 1, 2, 2, 1), {}},
    {data(1, 2, 3, 3, 2), data(2, 3, 2, 2, 3), {stride = {2, 2}}},
    {data(2, 2, 3, 3, 4), data(2, 2, 3, 3, 5), {stride = {2, 2}, pads = {{1, 1}, {1, 1}}, output_padding = {1, 1}}},
    {data(1, 4, 2, 4, 6), data(4, 3, 2, 2, 7), {groups = 2, stride = {2, 1}, dilation = {1, 2}, pads = {{0, 0}, {1, 1}}}},
    {data(1, 2, 4, 3, 8), data(2, 2, 3, 2, 9), {stride = {3, 2}, pads = {{2, 1}, {0, 1}}, output_padding = {1, 0}, bias = {1, -2}}},
  }
  for i, case in ipairs(cases) do
    local X, W, o = case[1], case[2], case[3]
    local opts = {groups = o.groups, stride = o.stride, dilation = o.dilation, output_padding = o.output_padding}
    -- pads given as PyTorch's flat (left, right, top, bottom)
    if o.pads then opts.padding = {o.pads[2][1], o.pads[2][2], o.pads[1][1], o.pads[1][2]} end
    if o.bias then opts.bias = Tensor(o.bias) end
    local t = Tensor(X):conv_transpose2d(Tensor(W), opts)
    T.eq(t:dtype(), d.int32, "case " .. i)
    local want, shape = naive_conv_transpose(X, W, o)
    both(t, want, nil, shape)
  end
  -- one padding per spatial axis and a float weight
  local X, W = data(1, 1, 3, 4, 1), data(1, 2, 3, 3, 2)
  local t = Tensor(X):conv_transpose2d(Tensor(W, "float32"), {stride = 2, padding = {1, 2}})
  T.eq(t:dtype(), d.float32)
  local want, shape = naive_conv_transpose(X, W, {stride = {2, 2}, pads = {{1, 1}, {2, 2}}})
  both(t, want, nil, shape)
  -- a 1-D transposed convolution is the 2-D one with a unit axis
  local X1 = build({2, 1, 9}, function(b, _, i) return b * 9 + i end)
  local W1 = build({1, 2, 3}, function(_, o, k) return o * 3 + k end)
  local t1 = Tensor(X1):conv_transpose2d(Tensor(W1), {bias = Tensor{1, -1}, stride = 3, padding = 2})
  local w2, s2 = naive_conv_transpose(build({2, 1, 1, 9}, function(b, _, _, i) return b * 9 + i end),
    build({1, 2, 1, 3}, function(_, o, _, k) return o * 3 + k end), {stride = {1, 3}, pads = {{0, 0}, {2, 2}}, bias = {1, -1}})
  local flat = {}
  for b = 1, 2 do flat[b] = {} for c = 1, 2 do flat[b][c] = w2[b][c][1] end end
  both(t1, flat, nil, {s2[1], s2[2], s2[4]})
  T.eq(op_counts(Tensor(M):reshape(1, 1, 3, 4):conv_transpose2d(Tensor{{{{1, 2}, {3, 4}}}}, {stride = 2, padding = 1, output_padding = 1})),
    "EXPAND=2 FLIP=1 MUL=1 PAD=2 PERMUTE=3 REDUCE_AXIS=1 RESHAPE=15 SHRINK=3")
  T.raises("conv_transpose2d: input (1, 2, 3, 3) has 2 channels, the weight (3, 1, 2, 2) has 3",
    function() return Tensor.ones(1, 2, 3, 3):conv_transpose2d(Tensor.ones(3, 1, 2, 2)) end)
  T.raises("conv_transpose2d: 3 input channels of the weight (3, 1, 2, 2) do not split into 2 groups",
    function() return Tensor.ones(1, 3, 3, 3):conv_transpose2d(Tensor.ones(3, 1, 2, 2), {groups = 2}) end)
  T.raises("conv_transpose2d: the weight must be a Tensor", function() return Tensor.ones(1, 1, 3, 3):conv_transpose2d() end)
end)

-- ---- padding modes ----

-- index o of a padded axis (before pads pb, size s) read from the input
local function source_index(mode, o, pb, s)
  local pos = o - pb
  if mode == "reflect" then
    if pos < 0 then return -pos end
    if pos >= s then return 2 * (s - 1) - pos end
    return pos
  elseif mode == "replicate" then
    return math.max(0, math.min(s - 1, pos))
  end
  return pos % s
end

T.test("pad modes reflect, replicate and circular, with negative pads cutting", function()
  local x = m34()
  for _, mode in ipairs({"reflect", "replicate", "circular"}) do
    -- grouped {{top, bottom}, {left, right}} and flat {left, right, top, bottom}
    for _, pads in ipairs({{{1, 2}, {2, 1}}, {{2, 0}, {0, 3}}, {{0, 0}, {3, 3}}}) do
      local want = build({3 + pads[1][1] + pads[1][2], 4 + pads[2][1] + pads[2][2]}, function(i, j)
        return M[source_index(mode, i, pads[1][1], 3) + 1][source_index(mode, j, pads[2][1], 4) + 1]
      end)
      both(x:pad(pads, {mode = mode}), want)
      both(x:pad({pads[2][1], pads[2][2], pads[1][1], pads[1][2]}, {mode = mode}), want)
    end
  end
  -- negative pads cut after padding (reflect and replicate)
  for _, mode in ipairs({"reflect", "replicate"}) do
    local want = build({4, 5}, function(i, j)
      return M[source_index(mode, i + 1, 0, 3) + 1][source_index(mode, j, 2, 4) + 1]
    end)
    both(x:pad({{-1, 2}, {2, -1}}, {mode = mode}), want, nil, {4, 5})
  end
  -- 1-D, float and bool keep their dtype
  both(Tensor{0, 1, 2, 3, 4}:pad({{4, 0}}, {mode = "reflect"}), {4, 3, 2, 1, 0, 1, 2, 3, 4})
  local f = Tensor{0.5, 1.5}:pad({0, 3}, {mode = "replicate"})
  T.eq(f:dtype(), d.float32)
  both(f, {0.5, 1.5, 1.5, 1.5, 1.5})
  local b = Tensor{true, false}:pad({1, 1}, {mode = "reflect"})
  T.eq(b:dtype(), d.bool)
  both(b, {false, true, false, true})
  both(Tensor{1, 2, 3}:pad({3, 0}, {mode = "circular"}), {1, 2, 3, 1, 2, 3})
  -- tinygrad's graphs on a data tensor
  T.eq(op_counts(x:pad({1, 2, 2, 1}, {mode = "reflect"})), "ADD=4 FLIP=4 PAD=6 RESHAPE=1 SHRINK=4")
  T.eq(op_counts(x:pad({1, 2, 2, 1}, {mode = "replicate"})), "ADD=4 EXPAND=2 PAD=6 RESHAPE=1 SHRINK=4")
  T.eq(op_counts(x:pad({1, 2, 2, 1}, {mode = "circular"})), "EXPAND=1 RESHAPE=3 SHRINK=1")
  T.raises("pad: reflect padding (3, 0) must be less than the size 3 of axis 0", function() return x:pad({{3, 0}, false}, {mode = "reflect"}) end)
  T.raises("pad: circular padding (5, 0) wraps around axis 1 of size 4 more than once", function() return x:pad({5, 0}, {mode = "circular"}) end)
  T.raises("pad: negative circular padding is not supported, got (-1, 0)", function() return x:pad({-1, 0}, {mode = "circular"}) end)
  T.raises("pad: mode 'wrap' is not supported (constant, reflect, replicate or circular)", function() return x:pad({1, 1}, {mode = "wrap"}) end)
  T.raises("pad: unknown option 'modes'", function() return x:pad({1, 1}, {modes = "reflect"}) end)
end)

T.test("options: positional or named, unknown and doubled names are errors", function()
  local x = m34()
  T.eq(shape_of(x:split{sizes = 2, dim = 1}[2]), shape_of(x:split(2, 1)[2]))
  check(ref(x:tril{diagonal = 1}), ref(x:tril(1)))
  T.raises("tril: diagonal given twice", function() return x:tril(1, {diagonal = 1}) end)
  T.raises("roll: takes at most 2 arguments, got 3", function() return x:roll(1, 0, 1) end)
  T.raises("roll: shifts is needed", function() return x:roll() end)
  -- an empty table after the arguments is an empty options table
  both(x:cat(x, {}), build({6, 4}, function(i, j) return M[i % 3 + 1][j + 1] end))
  both(Tensor.einsum("ij->j", x, {}), build({4}, function(j) return M[1][j + 1] + M[2][j + 1] + M[3][j + 1] end))
  both(Tensor(plane(1, 1, 2, 2)):conv_transpose2d(Tensor{{{{1}}}}, {}), plane(1, 1, 2, 2))
end)
