-- tensor_reduce.lua - reductions of the Tensor front end: REDUCE_AXIS for
-- sum, prod and max, and what is built on them (min, mean, softmax,
-- log_softmax, dot and matmul).
local uop, shared = ...
local Tensor = uop.Tensor
local dtypes = uop.dtypes
local F32 = dtypes.float32
local fail, is_opts, fmt_shape, copy = shared.fail, shared.is_opts, shared.fmt_shape, shared.copy
local concat, wrap, axes_list, info = shared.concat, shared.wrap, shared.axes_list, shared.info
local to_dtype, is_float, least_upper = shared.to_dtype, shared.is_float, shared.least_upper
local sum_acc, reshape_raw, inverse = shared.sum_acc, shared.reshape_raw, shared.inverse

-- ---------------------------------------------------------------- reductions

local function reduce(self, op, axis, keepdim)
  local axes = #self._shape == 0 and {} or axes_list(self, axis)
  local red, seen = {}, {}
  for _, a in ipairs(axes) do
    if seen[a] then fail("axis %d appears more than once", a) end
    seen[a] = true
    if self._shape[a + 1] ~= 1 then red[#red + 1] = a end
  end
  table.sort(red)
  local ret = self
  if #red > 0 then
    local shape = copy(self._shape)
    for _, a in ipairs(red) do shape[a + 1] = 1 end
    ret = wrap(uop.new("REDUCE_AXIS", self._dtype, {self.uop}, {uop.ops[op], red}), shape, self._dtype)
  end
  if keepdim then return ret end
  local shape = {}
  for i = 1, #self._shape do if not seen[i - 1] then shape[#shape + 1] = self._shape[i] end end
  return reshape_raw(ret, shape)
end

-- (axis, opts) of a reduction: t:sum(), t:sum(1), t:sum{0, 1}, t:sum(0, {keepdim=true}), t:sum{keepdim=true}
local function reduce_args(axis, opts)
  if is_opts(axis) then return nil, axis end
  return axis, opts or {}
end

function Tensor:sum(axis, opts)
  axis, opts = reduce_args(axis, opts)
  local dt = opts.dtype and to_dtype(opts.dtype)
  local ret = reduce(self:cast(dt or sum_acc(self._dtype)), "ADD", axis, opts.keepdim)
  local low = self._dtype == dtypes.float16 or self._dtype == dtypes.bfloat16 or info(self._dtype).name:match("^fp8")
  if dt == nil and low then return ret:cast(self._dtype) end
  return ret
end

function Tensor:prod(axis, opts)
  axis, opts = reduce_args(axis, opts)
  return reduce(self:cast(opts.dtype and to_dtype(opts.dtype) or self._dtype), "MUL", axis, opts.keepdim)
end

function Tensor:max(axis, opts)
  axis, opts = reduce_args(axis, opts)
  return reduce(self, "MAX", axis, opts.keepdim)
end

function Tensor:min(axis, opts)
  axis, opts = reduce_args(axis, opts)
  return inverse(inverse(self):max(axis, {keepdim = opts.keepdim}))
end

function Tensor:mean(axis, opts)
  axis, opts = reduce_args(axis, opts)
  local out = is_float(self._dtype) and self._dtype or F32
  local num = self:cast(sum_acc(self._dtype)):sum(axis, {keepdim = opts.keepdim})
  local kept = self:sum(axis, {keepdim = true})._shape
  local count = 1
  for i = 1, #self._shape do if self._shape[i] ~= kept[i] then count = count * self._shape[i] end end
  return num:div(count):cast(out)
end

function Tensor:softmax(axis)
  axis = axis or -1
  local m = self:sub(self:max(axis, {keepdim = true}):detach())
  local e = m:exp()
  return e:div(e:sum(axis, {keepdim = true}))
end

function Tensor:log_softmax(axis)
  axis = axis or -1
  local m = self:sub(self:max(axis, {keepdim = true}):detach())
  local ss = m:exp():sum(axis, {keepdim = true})
  return m:sub(ss:log())
end

-- ---------------------------------------------------------------- matmul

function Tensor:dot(w, opts)
  opts = opts or {}
  local dt = opts.dtype and to_dtype(opts.dtype)
  local dx, dw = #self._shape, #w._shape
  if dx == 0 or dw == 0 then fail("dot: both tensors need to be at least 1-D, got %d-D and %d-D", dx, dw) end
  local axis_w = -math.min(dw, 2)
  if self._shape[dx] ~= w._shape[dw + axis_w + 1] then
    fail("cannot dot %s and %s", fmt_shape(self._shape), fmt_shape(w._shape))
  end
  local ones = {}
  for i = 1, math.min(dx - 1, dw - 1, 1) do ones[i] = 1 end
  local xs = concat({table.unpack(self._shape, 1, dx - 1)}, ones, {self._shape[dx]})
  local ws = concat({table.unpack(w._shape, 1, math.max(dw - 2, 0))}, ones, {table.unpack(w._shape, dw + axis_w + 1, dw)})
  local x = self:reshape(xs)
  local wt = w:reshape(ws):transpose(-1, axis_w)
  return x:mul(wt):sum(-1, {dtype = dt}):cast(dt or least_upper(x._dtype, wt._dtype))
end

function Tensor:matmul(x, opts)
  if opts and opts.reverse then return x:dot(self, opts) end
  return self:dot(x, opts)
end
