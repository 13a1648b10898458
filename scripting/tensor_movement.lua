-- tensor_movement.lua - the movement ops of the Tensor front end: reshape,
-- expand (broadcasting), permute, transpose, flip, shrink, pad (constant,
-- reflect, replicate and circular), pad_to, shrink_to, flatten, squeeze, repeat,
-- repeat_interleave, roll, diag and diagonal; each is RESHAPE/EXPAND/
-- PERMUTE/FLIP/SHRINK/PAD nodes (and, for the padding modes, slices joined
-- by cat), as tinygrad builds them.  Slicing is in tensor_index.lua.
local uop, shared = ...
local Tensor = uop.Tensor
local fail, fmt_shape, prod, shape_eq = shared.fail, shared.fmt_shape, shared.prod, shared.shape_eq
-- error messages show a Tensor by its shape, never by its elements
local tostring = shared.show
local copy, concat, is_tensor = shared.copy, shared.concat, shared.is_tensor
local shape_args, ivec, wrap = shared.shape_args, shared.ivec, shared.wrap
local resolve_axis, named_args = shared.resolve_axis, shared.named_args

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
  if n > shared.MAX_DIMS then fail("reshape: a shape has at most %d dimensions, got %d", shared.MAX_DIMS, n) end
  local infer, known, known_f = nil, 1, 1.0
  for i = 1, n do
    local v = list[i]
    if v == nil then v = self._shape[i] end
    -- a float with an integer value (2^40) counts as that integer, as in shape_args
    if math.type(v) == "float" and v == math.floor(v) then v = math.tointeger(v) or v end
    if math.type(v) ~= "integer" then fail("reshape: dimension %d is %s, not an integer", i - 1, tostring(v)) end
    if v == -1 then
      if infer then fail("reshape: only one dimension can be -1, got %s", fmt_shape(list)) end
      infer = i
    elseif v < 0 then
      fail("reshape: negative dimension %d", v)
    else
      known, known_f = known * v, known_f * v
    end
    shape[i] = v
  end
  -- the product in floating point too: an integer product past 2^63 wraps
  if known_f > 2.0 ^ 56 then
    fail("reshape: %s has too many elements (at most 2^56)", fmt_shape(shape))
  end
  if infer then
    if known == 0 then fail("reshape: cannot infer -1 of %s with a zero-size dimension", fmt_shape(shape)) end
    if self:numel() % known ~= 0 then
      fail("reshape: cannot infer -1 of %s for %s: %d elements are not a multiple of %d", fmt_shape(shape),
        fmt_shape(self._shape), self:numel(), known)
    end
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
  shared.check_numel("expand", new)
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

-- the target shape of pad_to and shrink_to, as integers or one list of
-- them, false (or a hole) keeping an axis's size: one entry per axis
local function target_shape(what, self, ...)
  local list, n = {...}, select("#", ...)
  if n == 1 and type(list[1]) == "table" and not is_tensor(list[1]) then
    list, n = list[1], 0
    for k in pairs(list) do
      if math.type(k) ~= "integer" or k < 1 then fail("%s: unexpected key %s in the shape", what, tostring(k)) end
      n = math.max(n, k)
    end
  end
  if n ~= #self._shape then fail("%s: expected %d sizes, one per axis of %s, got %d", what, #self._shape, fmt_shape(self._shape), n) end
  for i = 1, n do
    if list[i] and math.type(list[i]) ~= "integer" then fail("%s: size %d is %s, not an integer", what, i - 1, tostring(list[i])) end
  end
  return list
end

-- x:pad_to(shape): x padded with zeros after its elements up to shape
function Tensor:pad_to(...)
  local target, pads = target_shape("pad_to", self, ...), {}
  for i, s in ipairs(self._shape) do pads[i] = target[i] and {0, target[i] - s} or false end
  return self:pad(pads)
end

-- x:shrink_to(shape): the first shape[i] elements of each axis
function Tensor:shrink_to(...)
  local target, arg = target_shape("shrink_to", self, ...), {}
  for i = 1, #self._shape do arg[i] = target[i] and {0, target[i]} or false end
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

-- the padding modes other than constant, as tinygrad builds them: circular
-- repeats the tensor and shrinks; reflect and replicate cat slices of each
-- axis to it in turn; negative pads cut at the end
local function pad_mode(self, px, mode)
  local pads = {}
  for i = 1, #px do pads[i] = {math.max(px[i][1], 0), math.max(px[i][2], 0)} end
  if mode == "circular" then
    for i = 1, #px do
      if px[i][1] > self._shape[i] or px[i][2] > self._shape[i] then
        fail("pad: circular padding (%d, %d) wraps around axis %d of size %d more than once", px[i][1], px[i][2], i - 1, self._shape[i])
      end
    end
    for i = 1, #px do
      if px[i][1] < 0 or px[i][2] < 0 then fail("pad: negative circular padding is not supported, got (%d, %d)", px[i][1], px[i][2]) end
    end
    local reps = {}
    for i = 1, #pads do reps[i] = 1 + (pads[i][1] ~= 0 and 1 or 0) + (pads[i][2] ~= 0 and 1 or 0) end
    local x = self:repeat_(reps)
    local arg = {}
    for i = 1, #pads do
      local pb, pa, s, xs = pads[i][1], pads[i][2], self._shape[i], x._shape[i]
      arg[i] = {pb == 0 and 0 or s - pb, pa == 0 and xs or xs - s + pa}
    end
    return x:shrink(arg)
  end
  local x = self
  for d = 1, #pads do
    local pb, pa, s = pads[d][1], pads[d][2], x._shape[d]
    local before, after
    if mode == "reflect" then
      if pb >= s or pa >= s then
        fail("pad: reflect padding (%d, %d) must be less than the size %d of axis %d", pb, pa, s, d - 1)
      end
      if pb > 0 then
        local spec = {}
        spec[d] = {pb, 0, -1}
        before = x:slice(spec)
      end
      if pa > 0 then
        local spec = {}
        spec[d] = {s - 2 >= 0 and s - 2 or nil, s - 2 - pa >= 0 and s - 2 - pa or nil, -1}
        after = x:slice(spec)
      end
    else
      local function edge(lo, count)
        local arg, shape = {}, copy(x._shape)
        arg[d] = {lo, lo + 1}
        shape[d] = count
        return x:shrink(arg):expand(shape)
      end
      if pb > 0 then before = edge(0, pb) end
      if pa > 0 then after = edge(s - 1, pa) end
    end
    local parts = {}
    for _, t in ipairs({before or false, x, after or false}) do if t then parts[#parts + 1] = t end end
    x = Tensor.cat(parts, {dim = d - 1})
  end
  local arg = {}
  for i = 1, #px do
    local s = x._shape[i]
    arg[i] = {-math.min(px[i][1], 0), math.min(px[i][2] + s, s)}
  end
  return x:shrink(arg)
end

local PAD_MODES = {constant = true, reflect = true, replicate = true, circular = true}

-- t:pad(padding [, {value =, mode =}]), see the header of tensor.lua
function Tensor:pad(padding, opts)
  shared.check_options("pad", opts, {value = true, mode = true})
  opts = opts or {}
  local value, mode = opts.value or 0, opts.mode or "constant"
  if not PAD_MODES[mode] then
    fail("pad: mode '%s' is not supported (constant, reflect, replicate or circular)", tostring(mode))
  end
  if type(padding) ~= "table" or is_tensor(padding) then fail("pad: the padding must be a table, got %s", type(padding)) end
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
  if mode ~= "constant" then return pad_mode(self, px, mode) end
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

-- t:repeat_interleave(repeats [, dim]): each element repeated in place
-- along dim (the flattened tensor when dim is nil)
function Tensor:repeat_interleave(...)
  local a = named_args("repeat_interleave", {"repeats", "dim"}, nil, ...)
  local repeats = a.repeats
  if math.type(repeats) ~= "integer" or repeats < 0 then
    fail("repeat_interleave: repeats must be a non-negative integer, got %s", tostring(repeats))
  end
  local x, dim = self, nil
  if a.dim == nil then x, dim = self:flatten(), 0 else dim = resolve_axis(self, a.dim, false, "repeat_interleave") end
  local shp = x._shape
  local head, tail = {table.unpack(shp, 1, dim + 1)}, {table.unpack(shp, dim + 2, #shp)}
  x = x:reshape(concat(head, {1}, tail)):expand(concat(head, {repeats}, tail))
  return x:reshape(concat({table.unpack(shp, 1, dim)}, {shp[dim + 1] * repeats}, tail))
end

-- t:roll(shifts [, dims]): elements shifted along dims, wrapping around;
-- without dims the flattened tensor is rolled
function Tensor:roll(...)
  local a = named_args("roll", {"shifts", "dims"}, nil, ...)
  if a.shifts == nil then fail("roll: shifts is needed") end
  if a.dims == nil then return self:flatten():roll(a.shifts, 0):reshape(self._shape) end
  local dims = type(a.dims) == "table" and a.dims or {a.dims}
  local shifts = type(a.shifts) == "table" and a.shifts or {a.shifts}
  local resolved = {}
  for i = 1, #dims do resolved[i] = resolve_axis(self, dims[i], false, "roll") end
  if #dims ~= #shifts then fail("roll: %d dims for %d shifts", #dims, #shifts) end
  local reps, specs = {}, {}
  for i = 1, #self._shape do reps[i] = 1 end
  for i, dim in ipairs(resolved) do
    local size, shift = self._shape[dim + 1], shifts[i]
    if math.type(shift) ~= "integer" then fail("roll: shifts must be integers, got %s", tostring(shift)) end
    if size == 0 then fail("roll: cannot roll axis %d of size 0", dim) end
    reps[dim + 1] = 2
    local delta = size - shift % size
    specs[dim + 1] = {delta, delta + size}
  end
  return self:repeat_(reps):slice(specs)
end

-- t:diag(): the 1-D t on the diagonal of a square matrix of zeros
function Tensor:diag()
  if #self._shape ~= 1 then fail("diag: expected a 1-D tensor, got %s", fmt_shape(self._shape)) end
  local n = self._shape[1]
  return self:unsqueeze(-1):pad({false, {0, n}}):flatten():shrink({{0, n * n}}):reshape(n, n)
end

-- t:diagonal(): the main diagonal of a square matrix
function Tensor:diagonal()
  if #self._shape ~= 2 or self._shape[1] ~= self._shape[2] then
    fail("diagonal: expected a square matrix, got %s", fmt_shape(self._shape))
  end
  local n = self._shape[1]
  return self:flatten():pad({0, n}):reshape(n, n + 1):slice{false, 0}
end

-- for the parts that follow
shared.reshape_raw = reshape_raw
shared.pad_raw = pad_raw
shared.broadcast_to = broadcast_to
shared.shrink_to = shrink_to
