-- tensor_movement.lua - the movement ops of the Tensor front end: reshape,
-- expand (broadcasting), permute, transpose, flip, shrink, pad, flatten,
-- squeeze, repeat and slicing; each is RESHAPE/EXPAND/PERMUTE/FLIP/SHRINK/PAD
-- nodes, as tinygrad builds them.
local uop, shared = ...
local Tensor = uop.Tensor
local fail, fmt_shape, prod, shape_eq = shared.fail, shared.fmt_shape, shared.prod, shared.shape_eq
local copy, concat, ceildiv = shared.copy, shared.concat, shared.ceildiv
local shape_args, ivec, wrap = shared.shape_args, shared.ivec, shared.wrap
local resolve_axis = shared.resolve_axis

-- tinygrad's movement ops return self when the shape does not change
-- (permute and flip when they are the identity)
local function reshape_raw(self, shape)
  if shape_eq(shape, self._shape) then return self end
  return wrap(uop.new("RESHAPE", self._dtype, {self.uop, ivec(shape)}), shape, self._dtype)
end

function Tensor:reshape(...)
  local shape, list, n = {}, nil, select("#", ...)
  if n == 1 and type((...)) == "table" then
    list = (...)
    n = #list
  else
    list = {...}
  end
  local infer, known = nil, 1
  for i = 1, n do
    local v = list[i]
    if v == nil then v = self._shape[i] end
    if math.type(v) ~= "integer" then fail("reshape: dimension %d is %s, not an integer", i - 1, tostring(v)) end
    if v == -1 then
      if infer then fail("reshape: only one dimension can be -1, got %s", fmt_shape(list)) end
      infer = i
    elseif v < 0 then
      fail("reshape: negative dimension %d", v)
    else
      known = known * v
    end
    shape[i] = v
  end
  if infer then
    if known == 0 then fail("reshape: cannot infer -1 of %s with a zero-size dimension", fmt_shape(shape)) end
    shape[infer] = self:numel() // known
  end
  if prod(shape) ~= self:numel() then
    fail("cannot reshape %s to %s: %d elements vs %d", fmt_shape(self._shape), fmt_shape(shape), self:numel(), prod(shape))
  end
  return reshape_raw(self, shape)
end
Tensor.view = Tensor.reshape

local function broadcast_to(self, new)
  if shape_eq(self._shape, new) then return self end
  if #self._shape > #new then
    fail("cannot broadcast %s to fewer dimensions %s", fmt_shape(self._shape), fmt_shape(new))
  end
  local aligned = {}
  for i = 1, #new - #self._shape do aligned[i] = 1 end
  for i = 1, #self._shape do aligned[#aligned + 1] = self._shape[i] end
  for i = 1, #new do
    if aligned[i] ~= new[i] and aligned[i] ~= 1 then
      fail("cannot broadcast %s to %s", fmt_shape(self._shape), fmt_shape(new))
    end
  end
  local r = reshape_raw(self, aligned)
  if shape_eq(aligned, new) then return r end
  return wrap(uop.new("EXPAND", self._dtype, {r.uop, ivec(new)}), copy(new), self._dtype)
end

function Tensor:expand(...)
  local want = shape_args("expand", ...)
  local pad = #want - #self._shape
  local new = {}
  for i = 1, #want do
    local from = i - pad >= 1 and self._shape[i - pad] or 1
    new[i] = want[i] == -1 and from or want[i]
  end
  return broadcast_to(self, new)
end

function Tensor:permute(...)
  local order = shape_args("permute", ...)
  if #order ~= #self._shape then
    fail("permute: order %s has %d axes for a %d-D tensor", fmt_shape(order), #order, #self._shape)
  end
  local seen, identity, shape = {}, true, {}
  for i = 1, #order do
    order[i] = resolve_axis(self, order[i])
    if seen[order[i]] then fail("permute: %s is not a permutation", fmt_shape(order)) end
    seen[order[i]] = true
    if order[i] ~= i - 1 then identity = false end
    shape[i] = self._shape[order[i] + 1]
  end
  if identity then return self end
  return wrap(uop.new("PERMUTE", self._dtype, {self.uop}, order), shape, self._dtype)
end

function Tensor:transpose(dim0, dim1)
  dim0, dim1 = dim0 or 1, dim1 or 0
  local order = {}
  for i = 0, #self._shape - 1 do order[i + 1] = i end
  local a, b = resolve_axis(self, dim0), resolve_axis(self, dim1)
  order[a + 1], order[b + 1] = order[b + 1], order[a + 1]
  return self:permute(order)
end

function Tensor:flip(...)
  local axes = shape_args("flip", ...)
  local flags = {}
  for i = 1, #self._shape do flags[i] = false end
  local any = false
  for _, a in ipairs(axes) do
    local r = resolve_axis(self, a)
    if flags[r + 1] then fail("flip: axis %d appears more than once", a) end
    flags[r + 1] = true
    any = true
  end
  if not any then return self end
  return wrap(uop.new("FLIP", self._dtype, {self.uop}, flags), copy(self._shape), self._dtype)
end

-- shrink{{b, e} or nil, ...}: keep [b, e) of each axis
function Tensor:shrink(arg)
  local n = 0
  for k in pairs(arg) do if math.type(k) == "integer" and k > n then n = k end end
  if n > #self._shape then fail("shrink: %d ranges for a %d-D tensor", n, #self._shape) end
  local b, e, shape = {}, {}, {}
  for i = 1, #self._shape do
    local r = arg[i]
    local s = self._shape[i]
    if r then
      b[i], e[i] = r[1] or 0, r[2] or s
      if not (math.type(b[i]) == "integer" and math.type(e[i]) == "integer" and 0 <= b[i] and b[i] <= e[i] and e[i] <= s) then
        fail("shrink: (%s, %s) is not a range of axis %d of size %d", tostring(b[i]), tostring(e[i]), i - 1, s)
      end
    else
      b[i], e[i] = 0, s
    end
    shape[i] = e[i] - b[i]
  end
  if shape_eq(shape, self._shape) then return self end
  return wrap(uop.new("SHRINK", self._dtype, {self.uop, ivec(b), ivec(e)}), shape, self._dtype)
end

local function shrink_to(self, shape)
  local arg = {}
  for i = 1, #self._shape do arg[i] = {0, shape[i]} end
  return self:shrink(arg)
end

-- the PAD node itself; pads are {{before, after}, ...}, all >= 0
local function pad_raw(self, pads)
  local b, a, shape, any = {}, {}, {}, false
  for i = 1, #self._shape do
    b[i], a[i] = pads[i][1], pads[i][2]
    shape[i] = self._shape[i] + b[i] + a[i]
    if b[i] ~= 0 or a[i] ~= 0 then any = true end
  end
  if not any then return self end
  return wrap(uop.new("PAD", self._dtype, {self.uop, ivec(b), ivec(a)}), shape, self._dtype)
end

-- PyTorch's flat padding (last axis first) to (before, after) per axis
local function flat_to_grouped(flat, ndim)
  if #flat % 2 ~= 0 then fail("pad: flat padding needs an even number of values, got %d", #flat) end
  if #flat // 2 > ndim then fail("pad: %d pairs for a %d-D tensor", #flat // 2, ndim) end
  local g = {}
  for i = 1, ndim do g[i] = {0, 0} end
  for k = 1, #flat // 2 do g[ndim - k + 1] = {flat[2 * k - 1], flat[2 * k]} end
  return g
end

function Tensor:pad(padding, opts)
  opts = opts or {}
  local value = opts.value or 0
  if opts.mode and opts.mode ~= "constant" then fail("pad: mode '%s' is not supported (only constant)", tostring(opts.mode)) end
  local flat, n = true, 0
  for k, v in pairs(padding) do
    if math.type(k) ~= "integer" then fail("pad: unexpected key %s in the padding", tostring(k)) end
    if type(v) ~= "number" then flat = false end
    if k > n then n = k end
  end
  local px
  if flat then
    px = flat_to_grouped(padding, #self._shape)
  else
    if n > #self._shape then fail("pad: %d axes of padding for a %d-D tensor", n, #self._shape) end
    px = {}
    for i = 1, #self._shape do
      local p = padding[i]
      if p and (math.type(p[1] or 0) ~= "integer" or math.type(p[2] or 0) ~= "integer") then
        fail("pad: the padding of axis %d must be a pair of integers", i - 1)
      end
      px[i] = p and {p[1] or 0, p[2] or 0} or {0, 0}
    end
  end
  local negative = false
  for i = 1, #px do if px[i][1] < 0 or px[i][2] < 0 then negative = true end end
  local x, pads = self, px
  if negative then
    local arg = {}
    pads = {}
    for i = 1, #px do
      local pb, pa, s = px[i][1], px[i][2], self._shape[i]
      arg[i] = {-math.min(pb, 0), math.min(pa + s, s)}
      if arg[i][2] < arg[i][1] then fail("pad: (%d, %d) removes more than axis %d has", pb, pa, i - 1) end
      pads[i] = {math.max(pb, 0), math.max(pa, 0)}
    end
    x = self:shrink(arg)
  end
  if value == 0 then return pad_raw(x, pads) end
  return pad_raw(x, pads) + pad_raw(Tensor.ones_like(x), pads):where(0, value)
end

function Tensor:flatten(start_dim, end_dim)
  if #self._shape == 0 then return self:reshape{1} end
  local s, e = resolve_axis(self, start_dim or 0), resolve_axis(self, end_dim or -1)
  local shape = {}
  for i = 1, s do shape[#shape + 1] = self._shape[i] end
  local p = 1
  for i = s + 1, e + 1 do p = p * self._shape[i] end
  shape[#shape + 1] = p
  for i = e + 2, #self._shape do shape[#shape + 1] = self._shape[i] end
  return self:reshape(shape)
end

function Tensor:unflatten(dim, sizes)
  dim = resolve_axis(self, dim)
  local shape = {}
  for i = 1, dim do shape[#shape + 1] = self._shape[i] end
  for i = 1, #sizes do shape[#shape + 1] = sizes[i] end
  for i = dim + 2, #self._shape do shape[#shape + 1] = self._shape[i] end
  return self:reshape(shape)
end

function Tensor:squeeze(dim)
  local shape = {}
  if dim == nil then
    for i = 1, #self._shape do if self._shape[i] ~= 1 then shape[#shape + 1] = self._shape[i] end end
    return self:reshape(shape)
  end
  dim = resolve_axis(self, dim)
  if #self._shape == 0 or self._shape[dim + 1] ~= 1 then return self end
  for i = 1, #self._shape do if i ~= dim + 1 then shape[#shape + 1] = self._shape[i] end end
  return self:reshape(shape)
end

function Tensor:unsqueeze(dim)
  dim = resolve_axis(self, dim, true)
  local shape = {}
  for i = 1, dim do shape[#shape + 1] = self._shape[i] end
  shape[#shape + 1] = 1
  for i = dim + 1, #self._shape do shape[#shape + 1] = self._shape[i] end
  return self:reshape(shape)
end

function Tensor:repeat_(...)
  local repeats = shape_args("repeat", ...)
  if #repeats < #self._shape then
    fail("repeat: %d repeats for a %d-D tensor", #repeats, #self._shape)
  end
  local base = {}
  for i = 1, #repeats - #self._shape do base[i] = 1 end
  for i = 1, #self._shape do base[#base + 1] = self._shape[i] end
  local unsq, exp, final = {}, {}, {}
  for i = 1, #repeats do
    local r, s = repeats[i], base[i]
    if r == 1 then
      unsq[#unsq + 1], exp[#exp + 1] = s, s
    else
      unsq[#unsq + 1], unsq[#unsq + 2] = 1, s
      exp[#exp + 1], exp[#exp + 2] = r, s
    end
    final[i] = r * s
  end
  return self:reshape(unsq):expand(exp):reshape(final)
end
Tensor["repeat"] = Tensor.repeat_

-- slicing, see the header
function Tensor:slice(specs)
  local n = 0
  for k in pairs(specs) do
    if math.type(k) ~= "integer" or k < 1 then fail("slice: unexpected key %s", tostring(k)) end
    if k > n then n = k end
  end
  if n > #self._shape then fail("slice: %d indices for a %d-D tensor", n, #self._shape) end
  local x = self
  local drop = {}
  for i = 1, #self._shape do
    local spec, size = specs[i], self._shape[i]
    if math.type(spec) == "integer" then
      local k = spec < 0 and spec + size or spec
      if k < 0 or k >= size then fail("slice: index %d out of range for axis %d of size %d", spec, i - 1, size) end
      local arg = {}
      arg[i] = {k, k + 1}
      x = x:shrink(arg)
      drop[i] = true
    elseif type(spec) == "table" then
      local start, stop, step = spec[1], spec[2], spec[3] or 1
      if math.type(step) ~= "integer" or step == 0 then fail("slice: step of axis %d must be a non-zero integer", i - 1) end
      for _, v in ipairs({start or 0, stop or 0}) do
        if math.type(v) ~= "integer" then fail("slice: bounds of axis %d must be integers", i - 1) end
      end
      -- Python's slice.indices
      local lo, hi
      if step > 0 then
        lo = start == nil and 0 or (start < 0 and math.max(start + size, 0) or math.min(start, size))
        hi = stop == nil and size or (stop < 0 and math.max(stop + size, 0) or math.min(stop, size))
        hi = math.max(hi, lo)
      else
        -- walk a flipped axis forwards: element j of the flip is size-1-j
        lo = start == nil and size - 1 or (start < 0 and math.max(start + size, -1) or math.min(start, size - 1))
        hi = stop == nil and -1 or (stop < 0 and math.max(stop + size, -1) or math.min(stop, size - 1))
        x = x:flip(i - 1)
        lo, hi = size - 1 - lo, size - 1 - hi
        hi = math.max(hi, lo)
        step = -step
      end
      local arg = {}
      arg[i] = {lo, hi}
      x = x:shrink(arg)
      if step > 1 then
        local len = hi - lo
        local count = ceildiv(len, step)
        local pads = {}
        pads[i] = {0, count * step - len}
        x = x:pad(pads)
        local before, after = {}, {}
        for d = 1, i - 1 do before[#before + 1] = x._shape[d] end
        for d = i + 1, #x._shape do after[#after + 1] = x._shape[d] end
        x = x:reshape(concat(before, {count, step}, after))
        local sh = {}
        sh[i + 1] = {0, 1}
        x = x:shrink(sh):reshape(concat(before, {count}, after))
      end
    elseif spec ~= nil and spec ~= false then
      fail("slice: the spec of axis %d must be an integer, a {start, stop, step} table, nil or false", i - 1)
    end
  end
  local shape = {}
  for i = 1, #x._shape do if not drop[i] then shape[#shape + 1] = x._shape[i] end end
  return x:reshape(shape)
end

-- for the parts that follow
shared.reshape_raw = reshape_raw
shared.broadcast_to = broadcast_to
shared.shrink_to = shrink_to
