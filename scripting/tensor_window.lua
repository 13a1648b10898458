-- tensor_window.lua - sliding windows in the Tensor front end: tinygrad's
-- _pool (windows made of repeat, shrink, reshape and permute) and what is
-- built on it: max_pool2d and avg_pool2d (any number of spatial axes),
-- conv2d, conv_transpose2d (a conv2d of the input spread by its stride
-- with the flipped weight), max_unpool2d, unfold, interpolate (gathers of
-- the neighbouring samples, lerped), the cumulative ops cumsum, cumprod,
-- cummax and logcumsumexp (a masked square of differences to the running
-- maximum).
local uop, shared = ...
local Tensor = uop.Tensor
local fail, fmt_shape, prod, concat = shared.fail, shared.fmt_shape, shared.prod, shared.concat
-- error messages show a Tensor by its shape, never by its elements
local tostring = shared.show
local ceildiv, resolve_axis, info = shared.ceildiv, shared.resolve_axis, shared.info
local shrink_to, is_tensor, named_args = shared.shrink_to, shared.is_tensor, shared.named_args

-- ---------------------------------------------------------------- pooling, conv

local function make_tuple(v, n)
  if type(v) == "table" then return v end
  local r = {}
  for i = 1, n do r[i] = v end
  return r
end

-- tinygrad's _pool: (..., *spatial) -> (..., *out, *kernel) windows
-- (what, when given, names the calling function in errors)
function Tensor:_pool(k_, stride, dilation, what)
  local prefix = what and (what .. ": ") or ""
  local nk, nd = #k_, #self._shape
  if nd < nk then fail("%scannot pool %s with a %d-D kernel", prefix, fmt_shape(self._shape), nk) end
  local s_, d_ = make_tuple(stride or 1, nk), make_tuple(dilation or 1, nk)
  if #s_ ~= nk or #d_ ~= nk then fail("%sstride and dilation need %d values", what and prefix or "pool: ", nk) end
  for j = 1, nk do
    for _, v in ipairs{{"kernel sizes", k_[j], 0}, {"stride", s_[j], 1}, {"dilation", d_[j], 1}} do
      if math.type(v[2]) ~= "integer" or v[2] < v[3] then
        fail("%s%s must be integers >= %d, got %s", what and prefix or "pool: ", v[1], v[3], tostring(v[2]))
      end
    end
  end
  local noop = {table.unpack(self._shape, 1, nd - nk)}
  local i_ = {table.unpack(self._shape, nd - nk + 1, nd)}
  local o_, f_ = {}, {}
  for j = 1, nk do
    local k, d, i, s = k_[j], d_[j], i_[j], s_[j]
    if d * (k - 1) + 1 > i then fail("%skernel size %d (dilation %d) is greater than the input size %d", prefix, k, d, i) end
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

-- tinygrad's _resolve_pool_pads: an int, one value per spatial axis (h, w,
-- ...) or PyTorch's flat pairs (w_before, w_after, h_before, ...) -> flat pairs
local function pool_pads(padding, dims, what)
  if math.type(padding) == "integer" then
    local r = {}
    for i = 1, 2 * dims do r[i] = padding end
    return r
  end
  if type(padding) ~= "table" or is_tensor(padding) or (#padding ~= dims and #padding ~= 2 * dims) then
    fail("%s: padding must be an integer or a list of %d or %d integers", what or "conv2d", dims, 2 * dims)
  end
  for i = 1, #padding do
    if math.type(padding[i]) ~= "integer" then fail("%s: padding must be integers, got %s", what or "conv2d", tostring(padding[i])) end
  end
  if #padding == 2 * dims then return padding end
  -- per-axis padding (h, w, ...) -> flat (w, w, h, h)
  local r = {}
  for i = dims, 1, -1 do r[#r + 1], r[#r + 2] = padding[i], padding[i] end
  return r
end

-- flat pairs (last axis first) -> {{before, after}, ...} in axis order
local function flat_to_grouped(pads)
  local g, n = {}, #pads // 2
  for dim = 1, n do g[dim] = {pads[2 * (n - dim) + 1], pads[2 * (n - dim) + 2]} end
  return g
end

-- tinygrad's _apply_ceil_mode: more padding after each spatial axis so that
-- _pool makes ceil((i + pads - window) / s) + 1 outputs, but no window that
-- starts in the padding after the input
local function apply_ceil_mode(self, pads, k_, s_, d_)
  local nk = #k_
  s_, d_ = make_tuple(s_, nk), make_tuple(d_, nk)
  local i_ = {table.unpack(self._shape, #self._shape - nk + 1)}
  local grouped, r = flat_to_grouped(pads), {table.unpack(pads)}
  for dim = 1, nk do
    local i, d, k, s = i_[dim], d_[dim], k_[dim], s_[dim]
    local pb, pa = grouped[dim][1], grouped[dim][2]
    local o = ceildiv(i + pb + pa - (d * (k - 1) + 1), s) + 1
    local at = #r - 2 * (dim - 1)
    r[at] = r[at] + s * (o - 1) + (d * (k - 1) + 1) - (i + pb + pa) - math.max(s * (o - 1) - (pb + i - 1), 0)
  end
  return r
end

-- kernel_size, stride and dilation of a pool over dims spatial axes
-- (default 2): the kernel as a list, the stride the kernel's when not
-- given; checks they are positive integers, a list one per axis
local function pool_args(what, self, a, dims)
  local k_ = make_tuple(a.kernel_size or 2, dims or 2)
  local stride, dilation = a.stride or k_, a.dilation or 1
  for _, v in ipairs({{"kernel_size", k_}, {"stride", stride}, {"dilation", dilation}}) do
    local list = type(v[2]) == "table" and v[2] or {v[2]}
    if type(v[2]) == "table" and #list ~= #k_ then fail("%s: %s needs %d values, got %d", what, v[1], #k_, #list) end
    for _, x in ipairs(list) do
      if math.type(x) ~= "integer" or x < 1 then fail("%s: %s must be positive integers, got %s", what, v[1], tostring(x)) end
    end
  end
  if #self._shape < #k_ then fail("%s: cannot pool %s with a %d-D kernel", what, fmt_shape(self._shape), #k_) end
  local axes = {}
  for i = 1, #k_ do axes[i] = i - 1 - #k_ end
  return k_, stride, dilation, axes
end

local POOL_ARGS = {"kernel_size", "stride", "dilation", "padding", "ceil_mode"}

-- x:max_pool2d([kernel_size [, {stride=, dilation=, padding=, ceil_mode=,
-- return_indices=}]]): the max of each window (padding counts as the
-- dtype's lowest value); with return_indices also each max's flat index
-- in its spatial plane
function Tensor:max_pool2d(...)
  local a = named_args("max_pool2d", {"kernel_size", "stride", "dilation", "padding", "ceil_mode", "return_indices"}, nil, ...)
  local k_, stride, dilation, axes = pool_args("max_pool2d", self, a)
  local pads = pool_pads(a.padding or 0, #k_, "max_pool2d")
  if a.ceil_mode then pads = apply_ceil_mode(self, pads, k_, stride, dilation) end
  local pooled = self:pad(pads, {value = info(self._dtype).min}):_pool(k_, stride, dilation, "max_pool2d")
  if not a.return_indices then return pooled:max(axes) end
  local spatial = {table.unpack(self._shape, #self._shape - #k_ + 1)}
  local size = prod(spatial)
  local idx = Tensor.arange(size, 0, -1):reshape(spatial)
  local m = pooled:eq(pooled:max(axes, {keepdim = true}))
  idx = m:mul(idx:pad(pads, {value = info(idx._dtype).min}):_pool(k_, stride, dilation))
  return pooled:max(axes), idx:max(axes):sub(size, true)
end

-- x:avg_pool2d([kernel_size [, {stride=, dilation=, padding=, ceil_mode=,
-- count_include_pad=}]]): the mean of each window; count_include_pad=false
-- divides by the number of elements that are not padding
function Tensor:avg_pool2d(...)
  local a = named_args("avg_pool2d", {"kernel_size", "stride", "dilation", "padding", "ceil_mode", "count_include_pad"}, nil, ...)
  local k_, stride, dilation, axes = pool_args("avg_pool2d", self, a)
  local function pool(x, p) return x:pad(p):_pool(k_, stride, dilation, "avg_pool2d") end
  local reg_pads = pool_pads(a.padding or 0, #k_, "avg_pool2d")
  local ceil_pads = apply_ceil_mode(self, reg_pads, k_, stride, dilation)
  if a.count_include_pad == false then
    local pads = a.ceil_mode and ceil_pads or reg_pads
    return pool(self, pads):sum(axes):div(pool(self:ones_like(), pads):sum(axes))
  end
  if not a.ceil_mode then return pool(self, reg_pads):mean(axes) end
  local extra = {}
  for i = 1, #ceil_pads do extra[i] = ceil_pads[i] - reg_pads[i] end
  return pool(self, ceil_pads):sum(axes):div(pool(self:pad(reg_pads):ones_like(), extra):sum(axes))
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
  local x = self:pad(pool_pads(opts.padding or 0, #HW, "conv2d")):_pool(HW, stride, dilation)
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

-- x:conv_transpose2d(w, {bias=, groups=, stride=, dilation=, padding=,
-- output_padding=}): the transposed convolution; w is (cin, cout/groups,
-- *kernel), any number of spatial axes
function Tensor:conv_transpose2d(...)
  local a = named_args("conv_transpose2d", {"weight", "bias", "groups", "stride", "dilation", "padding", "output_padding"}, nil, ...)
  local weight, groups = a.weight, a.groups or 1
  if not is_tensor(weight) then fail("conv_transpose2d: the weight must be a Tensor, got %s", type(weight)) end
  if #self._shape < 3 or #self._shape ~= #weight._shape then
    fail("conv_transpose2d: input %s and weight %s need the same number of dimensions (at least 3)", fmt_shape(self._shape), fmt_shape(weight._shape))
  end
  if math.type(groups) ~= "integer" or groups < 1 or weight._shape[1] % groups ~= 0 then
    fail("conv_transpose2d: %s input channels of the weight %s do not split into %s groups", weight._shape[1], fmt_shape(weight._shape), tostring(groups))
  end
  if self._shape[2] ~= weight._shape[1] then
    fail("conv_transpose2d: input %s has %d channels, the weight %s has %d", fmt_shape(self._shape), self._shape[2], fmt_shape(weight._shape), weight._shape[1])
  end
  local HW = {table.unpack(weight._shape, 3)}
  local nk = #HW
  local flips = {}
  for i = 3, #weight._shape do flips[#flips + 1] = i end
  local w = weight:unflatten(0, {groups, -1}):transpose(1, 2):flip(flips)
  local padding = flat_to_grouped(pool_pads(a.padding or 0, nk, "conv_transpose2d"))
  local stride, dilation, output_padding = make_tuple(a.stride or 1, nk), make_tuple(a.dilation or 1, nk), make_tuple(a.output_padding or 0, nk)
  for _, v in ipairs({{"stride", stride}, {"dilation", dilation}, {"output_padding", output_padding}}) do
    if #v[2] ~= nk then fail("conv_transpose2d: %s needs %d values, got %d", v[1], nk, #v[2]) end
    for _, x in ipairs(v[2]) do
      if math.type(x) ~= "integer" or x < (v[1] == "output_padding" and 0 or 1) then
        fail("conv_transpose2d: %s must be integers >= %d, got %s", v[1], v[1] == "output_padding" and 0 or 1, tostring(x))
      end
    end
  end
  local x = self
  local strided = false
  for i = 1, nk do if stride[i] > 1 then strided = true end end
  if strided then
    -- each input element followed by stride-1 zeros: (k) -> (k, 1) -> (k, s) -> (k*s) -> (k*s - (s-1))
    local lead = {x._shape[1], x._shape[2]}
    local split, pads = {}, {false, false}
    for i = 1, nk do
      split[#split + 1], split[#split + 2] = x._shape[2 + i], 1
      pads[#pads + 1], pads[#pads + 2] = false, {0, stride[i] - 1}
    end
    x = x:reshape(concat(lead, split)):pad(pads)
    local joined = {}
    for i = 1, nk do joined[i] = x._shape[2 * i + 1] * stride[i] end
    x = x:reshape(concat(lead, joined))
    local keep = {false, false}
    for i = 1, nk do keep[2 + i] = {0, x._shape[2 + i] - (stride[i] - 1)} end
    x = x:shrink(keep)
  end
  local conv_pads = {}
  for i = nk, 1, -1 do
    local k, d, p, op = HW[i], dilation[i], padding[i], output_padding[i]
    conv_pads[#conv_pads + 1] = (k - 1) * d - p[1]
    conv_pads[#conv_pads + 1] = (k - 1) * d - p[2] + op
  end
  return x:conv2d(w:flatten(0, 1), {groups = groups, bias = a.bias, dilation = dilation, padding = conv_pads})
end

-- x:max_unpool2d(indices [, {kernel_size=, stride=, dilation=, padding=,
-- output_size=}]): max_pool2d's values put back at the flat indices it
-- returned, zeros elsewhere, in a (bs, c, *spatial) of the size the pool
-- was made from (or output_size's last axes); a maximum that overlapping
-- windows share is added once per window, as tinygrad's one-hot sum does
function Tensor:max_unpool2d(...)
  local a = named_args("max_unpool2d", {"indices", "kernel_size", "stride", "dilation", "padding", "output_size"}, nil, ...)
  local indices = a.indices
  if not is_tensor(indices) then fail("max_unpool2d: the indices must be a Tensor, got %s", type(indices)) end
  if #self._shape < 3 then fail("max_unpool2d: expected (bs, c, *spatial), got %s", fmt_shape(self._shape)) end
  local bs, c = self._shape[1], self._shape[2]
  local spatial = {table.unpack(self._shape, 3)}
  local n, out = #spatial, {}
  if a.output_size ~= nil then
    if type(a.output_size) ~= "table" or is_tensor(a.output_size) or #a.output_size < n then
      fail("max_unpool2d: output_size must be a list of at least %d sizes", n)
    end
    out = {table.unpack(a.output_size, #a.output_size - n + 1)}
  else
    local k_, stride, dilation = pool_args("max_unpool2d", self, a, n)
    if #k_ ~= n then fail("max_unpool2d: kernel_size needs %d values, got %d", n, #k_) end
    local s_, d_ = make_tuple(stride, n), make_tuple(dilation, n)
    local p_ = flat_to_grouped(pool_pads(a.padding or 0, n, "max_unpool2d"))
    for i = 1, n do out[i] = (spatial[i] - 1) * s_[i] - (p_[i][1] + p_[i][2]) + d_[i] * (k_[i] - 1) + 1 end
  end
  for i = 1, n do
    if math.type(out[i]) ~= "integer" or out[i] < 1 then fail("max_unpool2d: output size %s is not a positive integer", tostring(out[i])) end
  end
  local hot = shared.one_hot_along_dim(indices:reshape(bs, c, 1, -1), prod(out), 2, "max_unpool2d")
  return hot:where(self:reshape(bs, c, 1, -1), 0):sum(3):reshape(concat({bs, c}, out))
end

-- x:unfold(dim, size, step): dim replaced by (windows, size): the windows of
-- `size` elements that start every `step` along dim
function Tensor:unfold(...)
  local a = named_args("unfold", {"dim", "size", "step"}, nil, ...)
  local size, step = a.size, a.step
  if math.type(size) ~= "integer" or size < 0 then fail("unfold: size must be an integer >= 0, got %s", tostring(size)) end
  if math.type(step) ~= "integer" or step <= 0 then fail("unfold: step must be an integer > 0, got %s", tostring(step)) end
  if #self._shape == 0 then fail("unfold: a 0-d tensor has no axis to unfold") end
  local dim = resolve_axis(self, a.dim, false, "unfold")
  if size > self._shape[dim + 1] then
    fail("unfold: size %d is more than axis %d's %d elements", size, dim, self._shape[dim + 1])
  end
  local to_last, back = {}, {}
  for i = 0, #self._shape - 1 do if i ~= dim then to_last[#to_last + 1] = i end end
  to_last[#to_last + 1] = dim
  for pos, axis in ipairs(to_last) do back[axis + 1] = pos - 1 end
  back[#back + 1] = #self._shape
  return self:permute(to_last):_pool({size}, step, 1, "unfold"):permute(back)
end

local INTERPOLATE_MODES = {linear = true, nearest = true, ["nearest-exact"] = true}

-- x:interpolate(size [, {mode=, align_corners=}]): the last #size axes
-- resampled to size: "linear" (bilinear, trilinear... over several axes;
-- align_corners maps the corner samples onto each other), "nearest" or
-- "nearest-exact"; in x's dtype
function Tensor:interpolate(...)
  local a = named_args("interpolate", {"size", "mode", "align_corners"}, {mode = "linear", align_corners = false}, ...)
  local size, mode, corners = a.size, a.mode, a.align_corners
  local nd = #self._shape
  if type(size) ~= "table" or is_tensor(size) or #size == 0 or #size > nd then
    fail("interpolate: size must be a list of 1 to %d sizes, got %s", nd, tostring(size))
  end
  for _, s in ipairs(size) do
    if math.type(s) ~= "integer" or s < 1 then fail("interpolate: sizes must be positive integers, got %s", tostring(s)) end
  end
  if not INTERPOLATE_MODES[mode] then
    fail("interpolate: mode must be 'linear', 'nearest' or 'nearest-exact', got %s", tostring(mode))
  end
  if type(corners) ~= "boolean" then fail("interpolate: align_corners must be a boolean, got %s", type(corners)) end
  if corners and mode ~= "linear" then fail("interpolate: align_corners needs mode 'linear'") end
  local x, expand = self, {table.unpack(self._shape)}
  for k = 1, #size do
    local axis, want = nd - k + 1, size[#size - k + 1]
    local have = self._shape[axis]
    local c = corners and 1 or 0
    if want - c == 0 then fail("interpolate: align_corners needs at least 2 samples on axis %d", axis - 1) end
    local scale = (have - c) / (want - c)
    local arr, reshape = Tensor.arange(want, {dtype = uop.dtypes.float32}), {}
    for i = 1, nd do reshape[i] = 1 end
    reshape[axis], expand[axis] = want, want
    local function spread(t) return t:reshape(reshape):expand(expand) end
    if mode == "linear" then
      local index = corners and arr:mul(scale, true) or arr:add(0.5):mul(scale, true):sub(0.5)
      index = index:clip(0, have - 1)
      local low, high, frac = spread(index:floor():int()), spread(index:ceil():int()), spread(index:sub(index:floor()))
      x = x:gather(axis - 1, low):lerp(x:gather(axis - 1, high), frac)
    else
      local index = mode == "nearest-exact" and arr:add(0.5):mul(scale, true) or arr:mul(scale, true)
      x = x:gather(axis - 1, spread(index:cast(uop.dtypes.int32)))
    end
  end
  return x:cast(self._dtype)
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
-- tinygrad's cumprod has no default axis
function Tensor:cumprod(axis)
  if axis == nil then fail("cumprod: an axis is needed") end
  return split_cumalu(self, axis, "MUL")
end
function Tensor:cummax(axis) return split_cumalu(self, axis or 0, "MAX") end

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
  local ret = Tensor.ones(last, last):tril():where(x_rows:sub(x_cummax:unsqueeze(-1)), lowest)
    :exp():sum(-1):log():add(x_cummax)
  return ret:transpose(-1, axis)
end

-- for the parts that follow
shared.cumalu = cumalu
