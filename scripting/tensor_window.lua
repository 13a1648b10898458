-- tensor_window.lua - sliding windows in the Tensor front end: tinygrad's
-- _pool (windows made of repeat, shrink, reshape and permute) and what is
-- built on it: conv2d and the cumulative ops cumsum, cumprod and cummax;
-- logcumsumexp (a masked square of differences to the running maximum).
local uop, shared = ...
local Tensor = uop.Tensor
local fail, fmt_shape, prod, concat = shared.fail, shared.fmt_shape, shared.prod, shared.concat
local ceildiv, resolve_axis, info = shared.ceildiv, shared.resolve_axis, shared.info
local shrink_to, named_args = shared.shrink_to, shared.named_args

-- ---------------------------------------------------------------- pooling, conv

local function make_tuple(v, n)
  if type(v) == "table" then return v end
  local r = {}
  for i = 1, n do r[i] = v end
  return r
end

-- tinygrad's _pool: (..., *spatial) -> (..., *out, *kernel) windows
function Tensor:_pool(k_, stride, dilation)
  local nk, nd = #k_, #self._shape
  if nd < nk then fail("cannot pool %s with a %d-D kernel", fmt_shape(self._shape), nk) end
  local s_, d_ = make_tuple(stride or 1, nk), make_tuple(dilation or 1, nk)
  if #s_ ~= nk or #d_ ~= nk then fail("pool: stride and dilation need %d values", nk) end
  local noop = {table.unpack(self._shape, 1, nd - nk)}
  local i_ = {table.unpack(self._shape, nd - nk + 1, nd)}
  local o_, f_ = {}, {}
  for j = 1, nk do
    local k, d, i, s = k_[j], d_[j], i_[j], s_[j]
    if d * (k - 1) + 1 > i then fail("kernel size %d (dilation %d) is greater than the input size %d", k, d, i) end
    o_[j] = ceildiv(i - d * (k - 1), s)
    f_[j] = math.max(1, ceildiv(o_[j] * s - d, i))
  end
  local reps, sizes, kx, kos, ko1, ko = {}, {}, {}, {}, {}, {}
  for _ = 1, #noop do reps[#reps + 1] = 1 end
  for j = 1, nk do
    local k, i, d, f, o, s = k_[j], i_[j], d_[j], f_[j], o_[j], s_[j]
    reps[#reps + 1] = ceildiv(k * (i * f + d), i)
    sizes[j] = k * (i * f + d)
    kx[#kx + 1], kx[#kx + 2] = k, i * f + d
    kos[#kos + 1], kos[#kos + 2] = k, o * s
    ko1[#ko1 + 1], ko1[#ko1 + 2], ko1[#ko1 + 3] = k, o, s
    ko[#ko + 1], ko[#ko + 2] = k, o
  end
  local x = self:repeat_(reps)
  x = shrink_to(x, concat(noop, sizes))
  x = x:reshape(concat(noop, kx))
  x = shrink_to(x, concat(noop, kos)):reshape(concat(noop, ko1))
  local ko11 = {}
  for j = 1, nk do ko11[#ko11 + 1], ko11[#ko11 + 2], ko11[#ko11 + 3] = k_[j], o_[j], 1 end
  x = shrink_to(x, concat(noop, ko11)):reshape(concat(noop, ko))
  local order = {}
  for i = 0, #noop - 1 do order[#order + 1] = i end
  for j = 0, nk - 1 do order[#order + 1] = #noop + j * 2 + 1 end
  for j = 0, nk - 1 do order[#order + 1] = #noop + j * 2 end
  return x:permute(order)
end

local function pool_pads(padding, dims)
  if math.type(padding) == "integer" then
    local r = {}
    for i = 1, 2 * dims do r[i] = padding end
    return r
  end
  if type(padding) ~= "table" or (#padding ~= dims and #padding ~= 2 * dims) then
    fail("conv2d: padding must be an integer or a list of %d or %d integers", dims, 2 * dims)
  end
  if #padding == 2 * dims then return padding end
  -- per-axis padding (h, w, ...) -> flat (w, w, h, h)
  local r = {}
  for i = dims, 1, -1 do r[#r + 1], r[#r + 2] = padding[i], padding[i] end
  return r
end

-- x:conv2d(w, {bias=, groups=, stride=, dilation=, padding=, dtype=}):
-- NCHW input, OIHW weight (any number of spatial dims), one REDUCE_AXIS
function Tensor:conv2d(weight, opts)
  opts = opts or {}
  local groups, stride, dilation = opts.groups or 1, opts.stride or 1, opts.dilation or 1
  if #self._shape < 3 or #self._shape ~= #weight._shape then
    fail("conv2d: input %s and weight %s need the same number of dimensions (at least 3)", fmt_shape(self._shape), fmt_shape(weight._shape))
  end
  local bs, cin_ = self._shape[1], self._shape[2]
  local cout, cin = weight._shape[1], weight._shape[2]
  local HW = {table.unpack(weight._shape, 3)}
  if groups * cin ~= cin_ then
    fail("conv2d: input %s does not match weight %s: %d input channels vs %d groups * %d",
      fmt_shape(self._shape), fmt_shape(weight._shape), cin_, groups, cin)
  end
  if cout % groups ~= 0 then fail("conv2d: %d output channels do not split into %d groups", cout, groups) end
  local x = self:pad(pool_pads(opts.padding or 0, #HW)):_pool(HW, stride, dilation)
  local rcout = cout // groups
  local oyx = {table.unpack(x._shape, 3, #x._shape - #HW)}
  local ones = {}
  for i = 1, #oyx do ones[i] = 1 end
  x = x:reshape(concat({bs, groups, cin, 1}, oyx, HW)):expand(concat({bs, groups, cin, rcout}, oyx, HW))
  local order = {0, 1, 3}
  for i = 0, #oyx - 1 do order[#order + 1] = 4 + i end
  order[#order + 1] = 2
  for i = 0, #HW - 1 do order[#order + 1] = 4 + #oyx + i end
  x = x:permute(order)
  local axes = {}
  for i = 0, #oyx do axes[#axes + 1] = -1 - i end
  local ret = x:mul(weight:reshape(concat({1, groups, rcout}, ones, {cin}, HW)))
    :sum(axes, {keepdim = true, dtype = opts.dtype}):reshape(concat({bs, cout}, oyx))
  if opts.bias then
    local bones = {}
    for i = 1, #HW do bones[i] = 1 end
    ret = ret:add(opts.bias:reshape(concat({1, -1}, bones)))
  end
  return ret
end

-- ---------------------------------------------------------------- cumulative

local function identity_element(op, dt)
  if op == "ADD" then return 0 end
  if op == "MUL" then return 1 end
  return info(dt).min
end

local function cumalu(self, axis, op, include_initial)
  local size = self._shape[axis + 1]
  local pl = size - (include_initial and 0 or 1)
  local pooled = self:transpose(axis, -1)
    :pad({pl, include_initial and -1 or 0}, {value = identity_element(op, self._dtype)})
    :_pool({size})
  local r
  if op == "ADD" then r = pooled:sum(-1) elseif op == "MAX" then r = pooled:max(-1) else r = pooled:prod(-1) end
  return r:transpose(axis, -1)
end

local function split_cumalu(self, axis, op)
  axis = resolve_axis(self, axis)
  if #self._shape == 0 or prod(self._shape) == 0 then return self end
  local s = self._shape[axis + 1]
  local SPLIT = 256
  if s <= SPLIT * 2 then return cumalu(self, axis, op) end
  local ret = self:transpose(axis, -1):pad({ceildiv(s, SPLIT) * SPLIT - s, 0}, {value = identity_element(op, self._dtype)})
    :unflatten(-1, {-1, SPLIT})
  ret = cumalu(ret, #ret._shape - 1, op)
  local last = {}
  last[#ret._shape] = -1
  local base = ret:slice(last)
  base = cumalu(base, #base._shape - 1, op, true)
  base = base:unsqueeze(-1):expand(concat(base._shape, {ret._shape[#ret._shape]}))
  local function fix(x)
    x = x:flatten(-2)
    local spec = {}
    spec[#x._shape] = {-s}
    return x:slice(spec):transpose(axis, -1)
  end
  if op == "ADD" then return fix(ret):add(fix(base)) end
  if op == "MAX" then return fix(ret):maximum(fix(base)) end
  return fix(ret):mul(fix(base))
end

function Tensor:cumsum(axis) return split_cumalu(self, axis or 0, "ADD") end
function Tensor:cumprod(axis) return split_cumalu(self, axis or 0, "MUL") end
function Tensor:cummax(axis) return split_cumalu(self, axis or 0, "MAX") end

-- Tensor.ones(n, n):tril(): ones on and below the diagonal, as tinygrad's
-- tril builds it (a row index + 1 <= column index mask picking zeros)
local function lower_triangle_ones(n)
  local ones = Tensor.ones(n, n)
  local above = Tensor.arange(n):unsqueeze(-1):add(1):le(Tensor.arange(n))
  return above:where(ones:zeros_like(), ones)
end

-- log(cumsum(exp(x))) along axis (default 0), computed stably: each
-- prefix's terms are taken relative to the running maximum, the terms
-- after the prefix masked to the dtype's lowest value
function Tensor:logcumsumexp(...)
  local a = named_args("logcumsumexp", {"axis"}, {axis = 0}, ...)
  if math.type(a.axis) ~= "integer" then fail("logcumsumexp: axis must be an integer, got %s", type(a.axis)) end
  if #self._shape == 0 then return self end
  local axis = resolve_axis(self, a.axis)
  local x = self:transpose(axis, -1)
  local last = x._shape[#x._shape]
  local keep = {}
  for i = 1, #self._shape - 1 do keep[i] = -1 end
  local x_rows = x:unsqueeze(-2):expand(concat(keep, {last, -1}))
  local x_cummax = x:cummax(-1)
  local lowest = info(self._dtype).min
  local ret = lower_triangle_ones(last):where(x_rows:sub(x_cummax:unsqueeze(-1)), lowest)
    :exp():sum(-1):log():add(x_cummax)
  return ret:transpose(-1, axis)
end

-- for the parts that follow
shared.cumalu = cumalu
