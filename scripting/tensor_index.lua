-- tensor_index.lua - selecting elements in the Tensor front end: slicing
-- (tinygrad's __getitem__: one SHRINK, a FLIP for negative steps, strides
-- by pad and reshape), a Tensor used as an index (a one-hot mask of the
-- index against an arange, WHERE and a sum; t[i] reaches it through
-- Tensor.__index in tensor.lua), gather, one_hot, masked_fill and the
-- triangular masks tril and triu.
local uop, shared = ...
local Tensor = uop.Tensor
local dtypes = uop.dtypes
local fail, is_tensor, fmt_shape = shared.fail, shared.is_tensor, shared.fmt_shape
-- error messages show a Tensor by its shape, never by its elements
local tostring = shared.show
local concat, ceildiv, named_args = shared.concat, shared.ceildiv, shared.named_args
local resolve_axis, info, is_int = shared.resolve_axis, shared.info, shared.is_int

-- Python's slice(start, stop, step).indices(size)
local function slice_indices(start, stop, step, size)
  local function clamp(v, lo, hi)
    if v < 0 then return math.max(v + size, lo) end
    return math.min(v, hi)
  end
  if step > 0 then
    return start == nil and 0 or clamp(start, 0, size), stop == nil and size or clamp(stop, 0, size)
  end
  return start == nil and size - 1 or clamp(start, -1, size - 1), stop == nil and -1 or clamp(stop, -1, size - 1)
end

-- the broadcast shape of several shapes (tinygrad's _broadcast_shape)
local function broadcast_shapes(what, shapes)
  local n = 0
  for _, s in ipairs(shapes) do n = math.max(n, #s) end
  local out = {}
  for i = 1, n do
    local size, zero = 1, false
    for _, s in ipairs(shapes) do
      local v = s[i - (n - #s)] or 1
      if v == 0 then zero = true end
      if v ~= 1 and size ~= 1 and v ~= size then
        local parts = {}
        for k, t in ipairs(shapes) do parts[k] = fmt_shape(t) end
        fail("%s: cannot broadcast shapes %s", what, table.concat(parts, ", "))
      end
      if v ~= 1 then size = v end
    end
    out[i] = zero and 0 or size
  end
  return out
end

-- index == arange(num_classes) along axis dim of index (tinygrad's
-- _one_hot_along_dim): a bool mask with the classes on that axis
local function one_hot_along_dim(index, num_classes, dim, what)
  if not is_int(index._dtype) then
    fail("%s: the index must have an integer dtype, got %s", what, info(index._dtype).name)
  end
  local offset = #index._shape - resolve_axis(index, dim, false, what) - 1
  local dt = num_classes > 2147483647 and dtypes.int64 or dtypes.int32
  local shape = {num_classes}
  for i = 1, offset do shape[i + 1] = 1 end
  return index:eq(Tensor.arange(num_classes, {dtype = dt}):reshape(shape))
end

-- the tensor part of indexing: x already sliced, dims the (0-based) axes
-- of x indexed by the (int) tensors
local function tensor_index(x, dims, tensors)
  local shapes = {}
  for i, t in ipairs(tensors) do shapes[i] = t._shape end
  local big = broadcast_shapes("slice", shapes)
  local d0, nd = dims[1], #x._shape
  local before, after = {table.unpack(x._shape, 1, d0)}, {table.unpack(x._shape, d0 + 1, nd)}
  local pre_reduce = concat(before, big, after)
  local mask
  for k, dim in ipairs(dims) do
    local t = tensors[k]
    local ones = {}
    for i = 1, nd - d0 do ones[i] = 1 end
    local i = t:reshape(concat(t._shape, ones)):expand(pre_reduce)
    local m = one_hot_along_dim(i, x._shape[dim + 1], dim - nd, "slice")
    mask = mask and mask:mul(m) or m
  end
  local big_ones = {}
  for i = 1, #big do big_ones[i] = 1 end
  local axes = {}
  for k, dim in ipairs(dims) do axes[k] = dim + #big end
  local r = mask:where(x:reshape(concat(before, big_ones, after)), 0):sum(axes, {dtype = x._dtype})
  -- indices on axes that are not next to each other: the broadcast axes go first
  local consecutive = true
  for k = 2, #dims do if dims[k] ~= dims[k - 1] + 1 then consecutive = false end end
  if d0 ~= 0 and #dims ~= 1 and not consecutive then
    local order = {}
    for i = d0, d0 + #big - 1 do order[#order + 1] = i end
    for i = 0, d0 - 1 do order[#order + 1] = i end
    for i = d0 + #big, #r._shape - 1 do order[#order + 1] = i end
    r = r:permute(order)
  end
  return r
end

-- t:slice{spec, ...}: see the header of tensor.lua; a Tensor spec is an
-- integer tensor of indices into its axis (negative ones from the end)
function Tensor:slice(specs)
  if type(specs) ~= "table" or is_tensor(specs) then
    fail("slice: expected a table of specs, got %s", is_tensor(specs) and "a Tensor (use t:slice{i})" or type(specs))
  end
  local n = 0
  for k in pairs(specs) do
    if math.type(k) ~= "integer" or k < 1 then fail("slice: unexpected key %s", tostring(k)) end
    if k > n then n = k end
  end
  if n > #self._shape then fail("slice: %d indices for a %d-D tensor", n, #self._shape) end
  local parsed = {}
  local shrinks, flips, strides, any_stride = {}, {}, {}, false
  for i = 1, #self._shape do
    local spec, size = specs[i], self._shape[i]
    local b0, b1, stride = 0, size, 1
    local p = {}
    if is_tensor(spec) then
      if not is_int(spec._dtype) then
        fail("slice: a tensor index must have an integer dtype, got %s", info(spec._dtype).name)
      end
      p.tensor = spec:lt(0):where(spec:add(size), spec)
    elseif math.type(spec) == "integer" then
      if spec >= size or spec < -size then fail("slice: index %d out of range for axis %d of size %d", spec, i - 1, size) end
      b0 = spec < 0 and spec + size or spec
      b1 = b0 + 1
      p.int = true
    elseif type(spec) == "table" then
      local start, stop = spec[1], spec[2]
      stride = spec[3] or 1
      if math.type(stride) ~= "integer" or stride == 0 then fail("slice: step of axis %d must be a non-zero integer", i - 1) end
      for _, v in ipairs({start or 0, stop or 0}) do
        if math.type(v) ~= "integer" then fail("slice: bounds of axis %d must be integers", i - 1) end
      end
      for k in pairs(spec) do
        if math.type(k) ~= "integer" or k < 1 or k > 3 then fail("slice: the range of axis %d has an unexpected key %s", i - 1, tostring(k)) end
      end
      local lo, hi = slice_indices(start, stop, stride, size)
      if stride * (hi - lo) < 0 then lo, hi = 0, 0
      elseif stride < 0 then lo, hi = hi + 1, lo + 1 end
      b0, b1 = lo, hi
      size = ceildiv(hi - lo, math.abs(stride))
    elseif spec ~= nil and spec ~= false then
      fail("slice: the spec of axis %d must be an integer, a {start, stop, step} table, a Tensor, nil or false", i - 1)
    end
    p.size = size
    parsed[i] = p
    shrinks[i] = {b0, b1}
    if stride < 0 then flips[#flips + 1] = i - 1 end
    strides[i] = math.abs(stride)
    if strides[i] ~= 1 then any_stride = true end
  end
  local x = self:shrink(shrinks):flip(flips)
  if any_stride then
    local pads, split, keep, final = {}, {}, {}, {}
    for i = 1, #x._shape do
      local s, st = x._shape[i], strides[i]
      pads[i] = {0, ceildiv(s, st) * st - s}
    end
    x = x:pad(pads)
    for i = 1, #x._shape do
      local s, st = x._shape[i], strides[i]
      split[#split + 1], split[#split + 2] = s // st, st
      keep[#keep + 1], keep[#keep + 2] = {0, s // st}, {0, 1}
      final[i] = s // st
    end
    x = x:reshape(split):shrink(keep):reshape(final)
  end
  local shape, dims, tensors = {}, {}, {}
  for i = 1, #parsed do
    if not parsed[i].int then
      shape[#shape + 1] = parsed[i].size
      if parsed[i].tensor then
        dims[#dims + 1] = #shape - 1
        tensors[#tensors + 1] = parsed[i].tensor
      end
    end
  end
  x = x:reshape(shape)
  if #dims > 0 then x = tensor_index(x, dims, tensors) end
  return x
end

-- x:gather(dim, index): out[..., i, ...] = x[..., index[..., i, ...], ...] along dim
function Tensor:gather(dim, index)
  if not is_tensor(index) then fail("gather: the index must be a Tensor, got %s", type(index)) end
  if #index._shape ~= #self._shape then
    fail("gather: the index %s and the tensor %s need the same number of dimensions", fmt_shape(index._shape), fmt_shape(self._shape))
  end
  dim = resolve_axis(self, dim, false, "gather")
  local arg = {}
  for d = 1, #self._shape do
    if d ~= dim + 1 then
      if index._shape[d] > self._shape[d] then
        fail("gather: the index %s is larger than the tensor %s on axis %d", fmt_shape(index._shape), fmt_shape(self._shape), d - 1)
      end
      arg[d] = {0, index._shape[d]}
    end
  end
  local x = self:shrink(arg):unsqueeze(-1):transpose(-1, dim)
  return one_hot_along_dim(index:unsqueeze(-1), self._shape[dim + 1], -1, "gather"):where(x, 0):sum(-1, {dtype = self._dtype})
end

-- t:one_hot(num_classes): int32 1 where the class is t's value; -1 (the
-- default) counts max(t) + 1 classes, which computes t
function Tensor:one_hot(...)
  local a = named_args("one_hot", {"num_classes"}, nil, ...)
  if not is_int(self._dtype) then fail("one_hot: expected an integer dtype, got %s", info(self._dtype).name) end
  local n = a.num_classes or -1
  if math.type(n) ~= "integer" or n < -1 then fail("one_hot: num_classes must be an integer >= 0 or -1, got %s", tostring(n)) end
  if n == -1 then n = math.tointeger(self:max():add(1):item()) end
  return one_hot_along_dim(self:unsqueeze(-1), n, -1, "one_hot"):where(1, 0)
end

-- t:masked_fill(mask, value): value where mask is true, t elsewhere
function Tensor:masked_fill(mask, value)
  if not is_tensor(mask) then fail("masked_fill: the mask must be a Tensor, got %s", type(mask)) end
  if value == nil then fail("masked_fill: a value is needed") end
  return mask:where(value, self)
end

-- the (r, c) bool mask row + diagonal <= column (tinygrad's _tri)
local function tri(what, self, diagonal)
  if #self._shape < 2 then fail("%s: expected a tensor of at least 2 dimensions, got %s", what, fmt_shape(self._shape)) end
  if math.type(diagonal) ~= "integer" then fail("%s: diagonal must be an integer, got %s", what, tostring(diagonal)) end
  local r, c = self._shape[#self._shape - 1], self._shape[#self._shape]
  return Tensor.arange(r):unsqueeze(-1):add(diagonal):le(Tensor.arange(c))
end

-- t:triu(diagonal): the elements on and above the diagonal, zeros below
function Tensor:triu(...)
  local a = named_args("triu", {"diagonal"}, nil, ...)
  return tri("triu", self, a.diagonal or 0):where(self, self:zeros_like())
end

-- t:tril(diagonal): the elements on and below the diagonal, zeros above
function Tensor:tril(...)
  local a = named_args("tril", {"diagonal"}, nil, ...)
  local diagonal = a.diagonal or 0
  if math.type(diagonal) ~= "integer" then fail("tril: diagonal must be an integer, got %s", tostring(diagonal)) end
  return tri("tril", self, diagonal + 1):where(self:zeros_like(), self)
end

-- for the parts that follow
shared.broadcast_shapes = broadcast_shapes
shared.one_hot_along_dim = one_hot_along_dim
