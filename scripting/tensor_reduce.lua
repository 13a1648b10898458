-- tensor_reduce.lua - reductions of the Tensor front end: REDUCE_AXIS for
-- sum, prod and max, and what is built on them (min, mean, var, std,
-- argmax, argmin, any, all, softmax, log_softmax, logsumexp, dot and matmul).
local uop, shared = ...
local Tensor = uop.Tensor
local dtypes = uop.dtypes
local F32 = dtypes.float32
local fail, is_opts, fmt_shape, copy = shared.fail, shared.is_opts, shared.fmt_shape, shared.copy
-- error messages show a Tensor by its shape, never by its elements
local tostring = shared.show
local concat, wrap, axes_list, info = shared.concat, shared.wrap, shared.axes_list, shared.info
local to_dtype, is_float, least_upper = shared.to_dtype, shared.is_float, shared.least_upper
local sum_acc, reshape_raw, inverse = shared.sum_acc, shared.reshape_raw, shared.inverse
local is_tensor, check_number, resolve_axis = shared.is_tensor, shared.check_number, shared.resolve_axis
local I32 = dtypes.int32

-- ---------------------------------------------------------------- reductions

-- tinygrad's _reduce; with keepdim it is UOp.r: REDUCE_AXIS over the axes
-- that are not 1, sorted, keeping them as 1 (self when there are none)
local function reduce(self, op, axis, keepdim)
  local axes = #self._shape == 0 and {} or axes_list(self, axis)
  local red, seen = {}, {}
  -- an axis named twice is reduced once, as tinygrad does
  for _, a in ipairs(axes) do
    if not seen[a] and self._shape[a + 1] ~= 1 then red[#red + 1] = a end
    seen[a] = true
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

-- (axis, opts) of what(axis, opts), checked: the axis an integer, a list
-- of integers or nil (also opts.axis), keepdim a boolean, and no option
-- but axis, keepdim and the names in extra
local function checked_reduce_args(what, axis, opts, extra)
  if is_opts(axis) then axis, opts = nil, axis end
  local allowed = {axis = true, keepdim = true}
  for _, k in ipairs(extra or {}) do allowed[k] = true end
  shared.check_options(what, opts, allowed)
  opts = opts or {}
  if axis ~= nil and opts.axis ~= nil then fail("%s: axis given twice", what) end
  if axis == nil then axis = opts.axis end
  if axis ~= nil and math.type(axis) ~= "integer" then
    local ok = type(axis) == "table" and not is_tensor(axis)
    if ok then for _, a in pairs(axis) do ok = ok and math.type(a) == "integer" end end
    if not ok then fail("%s: axis must be an integer, a list of integers or nil, got %s", what, type(axis)) end
  end
  if opts.keepdim ~= nil and type(opts.keepdim) ~= "boolean" then
    fail("%s: keepdim must be a boolean, got %s", what, type(opts.keepdim))
  end
  return axis, opts
end

function Tensor:sum(axis, opts)
  axis, opts = checked_reduce_args("sum", axis, opts, {"dtype"})
  local dt = opts.dtype and to_dtype(opts.dtype)
  local ret = reduce(self:cast(dt or sum_acc(self._dtype)), "ADD", axis, opts.keepdim)
  local low = self._dtype == dtypes.float16 or self._dtype == dtypes.bfloat16 or info(self._dtype).name:match("^fp8")
  if dt == nil and low then return ret:cast(self._dtype) end
  return ret
end

function Tensor:prod(axis, opts)
  axis, opts = checked_reduce_args("prod", axis, opts, {"dtype"})
  return reduce(self:cast(opts.dtype and to_dtype(opts.dtype) or self._dtype), "MUL", axis, opts.keepdim)
end

function Tensor:max(axis, opts)
  axis, opts = checked_reduce_args("max", axis, opts)
  return reduce(self, "MAX", axis, opts.keepdim)
end

function Tensor:min(axis, opts)
  axis, opts = checked_reduce_args("min", axis, opts)
  return inverse(inverse(self):max(axis, {keepdim = opts.keepdim}))
end

function Tensor:mean(axis, opts)
  axis, opts = checked_reduce_args("mean", axis, opts)
  local out = is_float(self._dtype) and self._dtype or F32
  local num = self:cast(sum_acc(self._dtype)):sum(axis, {keepdim = opts.keepdim})
  local kept = self:sum(axis, {keepdim = true})._shape
  local count = 1
  for i = 1, #self._shape do if self._shape[i] ~= kept[i] then count = count * self._shape[i] end end
  return num:div(count):cast(out)
end

-- an axis that must be one integer (or nil)
local function single_axis(what, axis)
  if type(axis) == "table" then fail("%s: axis must be an integer or nil, not a list", what) end
  return axis
end

-- sum((x - mean)^2) / max(0, n - correction); correction defaults to 1
function Tensor:var(axis, opts)
  axis, opts = checked_reduce_args("var", axis, opts, {"correction"})
  local correction = opts.correction
  if correction == nil then correction = 1 end
  check_number("var", "correction", correction)
  local squares = self:sub(self:mean(axis, {keepdim = true})):square()
  local kept = squares:sum(axis, {keepdim = true})._shape
  local n = 1
  for i = 1, #self._shape do if self._shape[i] ~= kept[i] then n = n * self._shape[i] end end
  return squares:sum(axis, {keepdim = opts.keepdim}):div(math.max(0, n - correction))
end

function Tensor:std(axis, opts)
  axis, opts = checked_reduce_args("std", axis, opts, {"correction"})
  return self:var(axis, {keepdim = opts.keepdim, correction = opts.correction}):sqrt()
end

-- the first index of the maximum: the elements equal to the maximum are
-- weighted n, n-1, ..., 1 by position, the largest weight wins, n - it is
-- the index (int32).  With no axis the tensor is flattened (and keepdim
-- has no effect, as in tinygrad).
function Tensor:argmax(axis, opts)
  axis, opts = checked_reduce_args("argmax", axis, opts)
  axis = single_axis("argmax", axis)
  if axis == nil then return self:flatten():argmax(0) end
  if #self._shape == 0 then fail("argmax: a 0-d tensor has no axis %d", axis) end
  axis = resolve_axis(self, axis)
  local n = self._shape[axis + 1]
  local shape = {n}
  for i = axis + 2, #self._shape do shape[#shape + 1] = 1 end
  local is_max = self:eq(self:max(axis, {keepdim = true}))
  local weighted = is_max:mul(uop.Tensor.arange(n, 0, -1):reshape(shape))
  return weighted:max(axis, {keepdim = opts.keepdim}):sub(n, true):cast(I32)
end

function Tensor:argmin(axis, opts)
  axis, opts = checked_reduce_args("argmin", axis, opts)
  return inverse(self):argmax(single_axis("argmin", axis), {keepdim = opts.keepdim})
end

-- whether any element is true: the maximum of the values as bools
function Tensor:any(axis, opts)
  axis, opts = checked_reduce_args("any", axis, opts)
  return self:bool():max(axis, {keepdim = opts.keepdim})
end

function Tensor:all(axis, opts)
  axis, opts = checked_reduce_args("all", axis, opts)
  return self:logical_not():any(axis, {keepdim = opts.keepdim}):logical_not()
end

-- log(sum(exp(x - m))) + m with m the maximum; as in tinygrad, m is
-- squeezed at the axis, so keepdim=true broadcasts the two
function Tensor:logsumexp(axis, opts)
  axis, opts = checked_reduce_args("logsumexp", axis, opts)
  axis = single_axis("logsumexp", axis)
  local m = self:max(axis, {keepdim = true})
  return self:sub(m):exp():sum(axis, {keepdim = opts.keepdim}):log():add(m:squeeze(axis))
end

-- x - max(x), cast to dtype when one is given (the softmaxes compute in it),
-- its exp and the sum of that
local function softmax_parts(self, what, ...)
  local a = shared.named_args(what, {"axis", "dtype"}, {axis = -1}, ...)
  local m = self:sub(self:max(a.axis, {keepdim = true}):detach())
  if a.dtype ~= nil then m = m:cast(to_dtype(a.dtype)) end
  local e = m:exp()
  return m, e, e:sum(a.axis, {keepdim = true})
end

-- x:softmax([axis = -1] [, {dtype = }])
function Tensor:softmax(...)
  local _, e, ss = softmax_parts(self, "softmax", ...)
  return e:div(ss)
end

function Tensor:log_softmax(...)
  local m, _, ss = softmax_parts(self, "log_softmax", ...)
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
  local dot_opts = {dtype = opts and opts.dtype}
  if opts and opts.reverse then return x:dot(self, dot_opts) end
  return self:dot(x, dot_opts)
end

-- for the parts that follow
shared.reduce = reduce
