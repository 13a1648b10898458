-- tensor.lua - the Tensor front end: tinygrad v0.12.0's Tensor API in Lua.
-- A Tensor is a table {uop = <tensor-graph UOp>} with a shape and a dtype;
-- each operation builds the UOps tinygrad's Tensor builds (BUFFER, CONST on
-- a DEVICE, RESHAPE/EXPAND/PERMUTE/PAD/SHRINK/FLIP, ALU ops, REDUCE_AXIS),
-- decomposed as tinygrad decomposes them (a - b is a + (-b), -x is x * -1,
-- a / b is a * reciprocal(b), exp through EXP2, log through LOG2, cos
-- through SIN, ...).  Nothing is computed until realize, tolist, item or
-- tostring; uop.reference(t) evaluates a graph naively.
--
-- Conventions:
--   * axes are 0-based; negative axes count from the end
--   * shapes as varargs or one table: Tensor.ones(2, 3) or Tensor.ones{2, 3}
--   * options in a trailing table: t:sum(0, {keepdim=true}),
--     Tensor.zeros(2, 2, {dtype="int32"}), x:conv2d(w, {stride=2, padding=1})
--   * dtypes by value (uop.dtypes.float16) or by name ("float16", "half")
--   * Lua numbers are "weak" like Python scalars: int32 tensor + 1 stays
--     int32, int32 tensor + 1.5 becomes float32
--   * t:pad{{1, 2}, {0, 1}}: (before, after) per axis (nil or false: none;
--     negative values cut); t:pad{1, 2, 0, 1}: PyTorch's flat order (last
--     axis first); {value = v} pads with v instead of 0
--   * t:slice{spec, ...}: one spec per leading axis, the rest kept whole.
--     A spec is an index (the axis is dropped), {start, stop [, step]}
--     (stop exclusive, nil ends, negative values from the end, negative
--     steps walk backwards), or nil/false/{} for the whole axis:
--       t:slice{{0, 2}, {1, 3}}   t:slice{1}   t:slice{false, {nil, nil, -1}}
--   * comparisons are methods (Lua's < and == must return booleans):
--     t:lt(x) t:gt(x) t:le(x) t:ge(x) t:eq(x) t:ne(x); a == b is identity
--   * operators: + - * / // % ^ (pow), unary -, & | ~ (xor), ~t, << >>
--   * Tensor.rand uses a host generator (splitmix64) into a data buffer;
--     Tensor.manual_seed(n) makes it reproducible (the seed starts at 0)
local uop = ...

local Tensor = {}
Tensor.__index = Tensor
uop.Tensor = Tensor

local dtypes = uop.dtypes
local F32, I32, U32, BOOL = dtypes.float32, dtypes.int32, dtypes.uint32, dtypes.bool
local INDEX = dtypes.index
local SELF_SOURCE = "=uopdb/tensor.lua"

-- ---------------------------------------------------------------- errors

-- raises msg at the first caller outside this file
local function fail(fmt, ...)
  local msg = select("#", ...) > 0 and string.format(fmt, ...) or fmt
  local where = ""
  if debug and debug.getinfo then
    for level = 2, 64 do
      local info = debug.getinfo(level, "Sl")
      if not info then break end
      if info.source ~= SELF_SOURCE and info.what ~= "C" then
        if info.currentline and info.currentline > 0 then where = info.short_src .. ":" .. info.currentline .. ": " end
        break
      end
    end
  end
  error(where .. msg, 0)
end

local function is_tensor(v) return getmetatable(v) == Tensor end

-- ---------------------------------------------------------------- dtypes

local dt_cache = {}
local function info(dt)
  local key = tostring(dt)
  local i = dt_cache[key]
  if not i then
    i = uop._dtype_info(dt)
    dt_cache[key] = i
  end
  return i
end

-- a dtype from a dtype value or a name; raises on anything a tensor cannot have
local function to_dtype(v)
  local dt = v
  if type(v) == "string" then
    dt = dtypes[v] or dtypes[(v:gsub("^dtypes%.", ""))]
    if not dt then
      local ok, i = pcall(uop._dtype_info, v)
      if not ok then fail("bad dtype '%s': no such dtype", v) end
      dt = i.dtype
    end
  elseif type(v) ~= "userdata" or not pcall(tostring, v) then
    fail("bad dtype: expected a dtype or a dtype name, got %s", type(v))
  end
  local ok, i = pcall(info, dt)
  if not ok then fail("bad dtype: %s", tostring(v)) end
  if i.kind == "other" then
    fail("bad dtype '%s': a tensor needs a scalar number or bool dtype", i.name)
  end
  return i.dtype
end

local function is_float(dt) return info(dt).kind == "float" end
local function is_int(dt) local k = info(dt).kind return k == "int" or k == "uint" end
local function is_unsigned(dt) return info(dt).kind == "uint" end
local function is_bool(dt) return info(dt).kind == "bool" end
local least_upper = uop._least_upper
local function least_upper_float(dt) return is_float(dt) and dt or least_upper(dt, F32) end

-- tinygrad's sum_acc_dtype
local function sum_acc(dt)
  if is_unsigned(dt) then return least_upper(dt, U32) end
  if is_int(dt) or is_bool(dt) then return least_upper(dt, I32) end
  return least_upper(dt, F32)
end

-- the dtype a Lua value has on its own (tinygrad's dtypes.from_py)
local function from_lua(v)
  if type(v) == "boolean" then return BOOL end
  if math.type(v) == "integer" then return I32 end
  if math.type(v) == "float" then return F32 end
  fail("expected a Tensor, number or boolean, got %s", type(v))
end

-- v as a constant of dt (tinygrad's dtypes.as_const)
local function as_const(v, dt)
  local k = info(dt).kind
  if k == "bool" then
    if type(v) == "boolean" then return v end
    return v ~= 0
  end
  if type(v) == "boolean" then v = v and 1 or 0 end
  if k == "float" then return v + 0.0 end
  if math.type(v) == "float" then
    if v ~= v or v == math.huge or v == -math.huge then fail("cannot make %s a constant of %s", tostring(v), info(dt).name) end
    local t = v >= 0 and math.floor(v) or math.ceil(v)
    return math.tointeger(t) or fail("%s does not fit in %s", tostring(v), info(dt).name)
  end
  return v
end

-- ---------------------------------------------------------------- shapes

local function fmt_shape(s)
  local parts = {}
  for i = 1, #s do parts[i] = tostring(s[i]) end
  if #s == 1 then return "(" .. parts[1] .. ",)" end
  return "(" .. table.concat(parts, ", ") .. ")"
end

local function prod(s)
  local n = 1
  for i = 1, #s do n = n * s[i] end
  return n
end

local function shape_eq(a, b)
  if #a ~= #b then return false end
  for i = 1, #a do if a[i] ~= b[i] then return false end end
  return true
end

local function copy(s)
  local r = {}
  for i = 1, #s do r[i] = s[i] end
  return r
end

local function concat(...)
  local r = {}
  for _, l in ipairs({...}) do for i = 1, #l do r[#r + 1] = l[i] end end
  return r
end

local function ceildiv(a, b) return -((-a) // b) end

-- a table of options: a table with some key that is not a list index
local function is_opts(v)
  if type(v) ~= "table" or is_tensor(v) then return false end
  for k in pairs(v) do
    if type(k) ~= "number" then return true end
  end
  return false
end

-- (shape, opts) from varargs: ints, or one table, then maybe an options table
local function shape_args(what, ...)
  local n = select("#", ...)
  local args = {...}
  local opts = {}
  if n > 0 and type(args[n]) == "table" and (is_opts(args[n]) or (n > 1 and next(args[n]) == nil)) then
    opts = args[n]
    n = n - 1
  end
  local list
  if n == 1 and type(args[1]) == "table" then
    list = args[1]
    n = #list
  else
    list = args
  end
  local shape = {}
  for i = 1, n do
    local v = list[i]
    if math.type(v) ~= "integer" then
      if math.type(v) == "float" and v == math.floor(v) then v = math.tointeger(v) end
      if math.type(v) ~= "integer" then fail("%s: dimension %d of the shape is %s, not an integer", what, i - 1, tostring(v)) end
    end
    shape[i] = v
  end
  return shape, opts
end

-- shape_args for a new tensor's shape, where -1 ("keep") means nothing
local function new_shape_args(what, ...)
  local shape, opts = shape_args(what, ...)
  for i = 1, #shape do
    if shape[i] < 0 then fail("%s: dimension %d of the shape is %d, negative", what, i - 1, shape[i]) end
  end
  return shape, opts
end

-- ---------------------------------------------------------------- UOps

-- the device node, built on first use (opening the module builds no nodes)
local function device() return uop.new("DEVICE", dtypes.void, {}, "CPU") end

-- the integer vector a movement op carries: VCONST of index.vec(n) (a CONST
-- index for one value, an empty VECTORIZE for none)
local function ivec(list)
  local n = #list
  if n == 0 then return uop.new("VECTORIZE", "index.vec(0)", {}) end
  if n == 1 then return uop.const(INDEX, list[1]) end
  return uop.new("VCONST", INDEX:vec(n), {}, list)
end

local function wrap(u, shape, dt)
  return setmetatable({uop = u, _shape = shape, _dtype = dt or u:dtype()}, Tensor)
end

-- a CONST of dt on the device (shape ()); unique like tinygrad's full
local function const_tensor(v, dt, unique)
  local src = {device()}
  if unique then src[2] = uop._unique() end
  return wrap(uop.new("CONST", dt, src, as_const(v, dt)), {}, dt)
end

-- ---------------------------------------------------------------- axes

local function resolve_axis(self, axis, extra)
  local total = #self._shape + (extra and 1 or 0)
  if math.type(axis) ~= "integer" then fail("axis must be an integer, got %s", tostring(axis)) end
  local lim = math.max(1, total)
  if axis < -lim or axis > lim - 1 then
    fail("axis %d out of range for a %d-D tensor", axis, #self._shape)
  end
  return axis < 0 and axis + total or axis
end

-- a list of axes from an int, a table of ints, or nil (all)
local function axes_list(self, axis)
  local r = {}
  if axis == nil then
    for i = 0, #self._shape - 1 do r[#r + 1] = i end
  elseif type(axis) == "table" then
    for i = 1, #axis do r[i] = resolve_axis(self, axis[i]) end
  else
    r[1] = resolve_axis(self, axis)
  end
  return r
end

-- ---------------------------------------------------------------- properties

function Tensor:shape() return copy(self._shape) end
function Tensor:dtype() return self._dtype end
function Tensor:ndim() return #self._shape end
function Tensor:numel() return prod(self._shape) end
function Tensor:size(dim)
  if dim == nil then return copy(self._shape) end
  return self._shape[resolve_axis(self, dim) + 1]
end
function Tensor:is_floating_point() return is_float(self._dtype) end

-- ---------------------------------------------------------------- movement

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

-- ---------------------------------------------------------------- elementwise

local function alu(op, self, ...)
  local src = {}
  for i, t in ipairs({...}) do src[i] = t.uop end
  local u = self.uop:alu(op, table.unpack(src))
  return wrap(u, copy(self._shape))
end

local function broadcast_shape(a, b)
  local n = math.max(#a, #b)
  local out = {}
  for i = 1, n do
    local ia, ib = i - (n - #a), i - (n - #b)
    local x, y = ia >= 1 and a[ia] or 1, ib >= 1 and b[ib] or 1
    if x ~= y and x ~= 1 and y ~= 1 then fail("cannot broadcast %s with %s", fmt_shape(a), fmt_shape(b)) end
    out[i] = (x == 0 or y == 0) and 0 or math.max(x, y)
  end
  return out
end

-- tinygrad's _broadcasted: y made a Tensor (a Lua number takes self's
-- dtype where it fits), dtypes promoted, both broadcast to one shape
local function broadcasted(self, y, reverse, match_dtype)
  local x = self
  if not is_tensor(y) then
    local ydt
    if is_float(x._dtype) or (is_int(x._dtype) and math.type(y) == "integer") then ydt = x._dtype
    else ydt = from_lua(y) end
    y = const_tensor(y, ydt)
  end
  if match_dtype ~= false and x._dtype ~= y._dtype then
    local out = least_upper(x._dtype, y._dtype)
    x, y = x:cast(out), y:cast(out)
  end
  if reverse then x, y = y, x end
  local out = broadcast_shape(x._shape, y._shape)
  local function bc(t) return broadcast_to(t:cast(sum_acc(t._dtype)), out):cast(t._dtype) end
  return bc(x), bc(y)
end

local function binop(op, self, x, reverse)
  local a, b = broadcasted(self, x, reverse)
  return alu(op, a, b)
end

function Tensor:cast(dtype)
  local dt = to_dtype(dtype)
  if dt == self._dtype then return self end
  if (dt == dtypes.uint8 or dt == dtypes.uint16) and is_float(self._dtype) then
    return wrap(uop.new("CAST", dt, {self.uop:cast(I32)}), copy(self._shape), dt)
  end
  return wrap(self.uop:cast(dt), copy(self._shape), dt)
end
function Tensor:float() return self:cast(F32) end
function Tensor:half() return self:cast(dtypes.float16) end
function Tensor:int() return self:cast(I32) end
function Tensor:long() return self:cast(dtypes.int64) end
function Tensor:double() return self:cast(dtypes.float64) end
function Tensor:bool() return self:cast(BOOL) end

function Tensor:add(x, reverse) return binop("ADD", self, x, reverse) end
function Tensor:mul(x, reverse) return binop("MUL", self, x, reverse) end

function Tensor:logical_not()
  local a, b = broadcasted(self:cast(BOOL), true)
  return alu("CMPNE", a, b)
end

function Tensor:neg()
  if is_bool(self._dtype) then return self:logical_not() end
  return self:mul(-1)
end

function Tensor:sub(x, reverse)
  local a, b = broadcasted(self, x, reverse)
  return a:add(b:neg())
end

function Tensor:reciprocal()
  local x = self:cast(least_upper_float(self._dtype))
  return alu("RECIPROCAL", x)
end

function Tensor:div(x, reverse, rounding)
  local num, den = broadcasted(self, x, reverse)
  local d = num:cast(least_upper_float(num._dtype)):mul(den:cast(least_upper_float(den._dtype)):reciprocal())
  local out = is_int(num._dtype) and num._dtype or d._dtype
  local dt = least_upper(num._dtype, den._dtype)
  if is_int(dt) and rounding then
    num, den = num:cast(dt), den:cast(dt)
    if rounding == "trunc" then return num:idiv(den) end
    local tdiv, tmod = num:idiv(den), binop("MOD", num, den)
    local opposite = num:gt(0):bitwise_and(den:lt(0)):bitwise_or(num:lt(0):bitwise_and(den:gt(0)))
    return opposite:bitwise_and(tmod:ne(0)):where(tdiv:sub(1), tdiv)
  end
  if rounding == "trunc" then return d:trunc():cast(out) end
  if rounding == "floor" then return d:floor():cast(out) end
  if rounding then fail("div: rounding mode '%s' is not supported", tostring(rounding)) end
  return d
end

-- IDIV: integer division truncating toward zero
function Tensor:idiv(x, reverse) return binop("IDIV", self, x, reverse) end
function Tensor:floordiv(x, reverse) return self:div(x, reverse, "floor") end

function Tensor:mod(x, reverse)
  local a, b = broadcasted(self, x, reverse)
  return a:sub(a:div(b, false, "floor"):mul(b))
end

local function check_bitwise(self, what)
  if not (is_int(self._dtype) or is_bool(self._dtype)) then
    fail("%s: %s is not supported (an integer or bool dtype is needed)", what, info(self._dtype).name)
  end
end
function Tensor:bitwise_and(x, reverse) check_bitwise(self, "bitwise_and") return binop("AND", self, x, reverse) end
function Tensor:bitwise_or(x, reverse) check_bitwise(self, "bitwise_or") return binop("OR", self, x, reverse) end
function Tensor:bitwise_xor(x, reverse) check_bitwise(self, "bitwise_xor") return binop("XOR", self, x, reverse) end
function Tensor:bitwise_not()
  check_bitwise(self, "bitwise_not")
  if is_bool(self._dtype) then return self:logical_not() end
  return self:bitwise_xor(-1)
end

local function check_shift(self, x, reverse, what)
  if not (is_unsigned(self._dtype) and math.type(x) == "integer" and x >= 0 and not reverse) then
    fail("%s: needs an unsigned tensor and a non-negative integer shift", what)
  end
end
function Tensor:lshift(x, reverse) check_shift(self, x, reverse, "lshift") return self:mul(1 << x) end
function Tensor:rshift(x, reverse) check_shift(self, x, reverse, "rshift") return self:idiv(1 << x) end

function Tensor:lt(x) local a, b = broadcasted(self, x) return alu("CMPLT", a, b) end
function Tensor:gt(x) local a, b = broadcasted(self, x, true) return alu("CMPLT", a, b) end
function Tensor:ne(x) local a, b = broadcasted(self, x) return alu("CMPNE", a, b) end
function Tensor:eq(x) return self:ne(x):logical_not() end
function Tensor:ge(x) return self:lt(x):logical_not() end
function Tensor:le(x) return self:gt(x):logical_not() end

function Tensor:maximum(x) return binop("MAX", self, x) end

-- -x for floats, ~x for ints, not x for bools
local function inverse(self)
  if is_float(self._dtype) then return self:neg() end
  if is_int(self._dtype) then return self:bitwise_not() end
  return self:logical_not()
end

function Tensor:minimum(x)
  local t, y = broadcasted(self, x)
  return inverse(inverse(t):maximum(inverse(y)))
end

-- cond:where(x, y)
function Tensor:where(x, y)
  if is_tensor(x) then x, y = broadcasted(x, y)
  elseif is_tensor(y) then y, x = broadcasted(y, x) end
  local cond
  cond, x = broadcasted(self, x, false, false)
  cond, y = broadcasted(cond, y, false, false)
  local bx, by = broadcasted(x, y)
  return alu("WHERE", cond:cast(BOOL), bx, by)
end

function Tensor:pow(x, reverse)
  local base, exponent = broadcasted(self, x, reverse)
  if not is_float(base._dtype) and not (math.type(x) == "integer" and x >= 0) then
    fail("pow: the base needs to be float")
  end
  local ret = alu("POW", base, exponent)
  if not reverse and not is_float(self._dtype) and is_float(exponent._dtype) then
    return ret:round():cast(self._dtype)
  end
  return ret
end

local function float_unary(op)
  return function(self) return alu(op, self:cast(least_upper_float(self._dtype))) end
end
Tensor.exp2 = float_unary("EXP2")
Tensor.log2 = float_unary("LOG2")
Tensor.sqrt = float_unary("SQRT")
Tensor.sin = float_unary("SIN")

function Tensor:trunc() return alu("TRUNC", self) end

function Tensor:exp()
  if is_float(self._dtype) then
    return self:cast(least_upper(self._dtype, F32)):mul(1 / math.log(2)):exp2():cast(self._dtype)
  end
  return self:mul(1 / math.log(2)):exp2()
end

function Tensor:log() return self:log2():mul(math.log(2)) end

function Tensor:cos()
  if is_float(self._dtype) then
    return self:cast(least_upper(self._dtype, F32)):sub(math.pi / 2, true):sin():cast(self._dtype)
  end
  return self:sub(math.pi / 2, true):sin()
end

function Tensor:tan() return self:sin():div(self:cos()) end
function Tensor:rsqrt() return self:sqrt():reciprocal() end
function Tensor:square() return self:mul(self) end
function Tensor:relu() return self:gt(0):where(self, 0) end
function Tensor:sigmoid() return self:mul(-1 / math.log(2)):exp2():add(1, true):reciprocal() end
function Tensor:tanh() return self:mul(2.0, true):sigmoid():mul(2.0, true):sub(1.0) end
function Tensor:leaky_relu(slope) return self:lt(0):where(self:mul(slope or 0.01, true), self) end
function Tensor:silu() return self:mul(self:sigmoid()) end

function Tensor:sign()
  return self:ne(0):where(self:lt(0):where(self:full_like(-1), self:full_like(1)), self:full_like(0)):add(self:mul(0))
end
function Tensor:abs() return self:mul(self:sign()) end

function Tensor:floor()
  local b = self:trunc()
  return self:lt(b):where(b:sub(1), b)
end
function Tensor:ceil()
  local b = self:trunc()
  return self:gt(b):where(b:add(1), b)
end
function Tensor:round()
  local b = self:cast(I32):div(2.0)
  return self:gt(0):eq(b:cast(I32):eq(b)):where(self:sub(0.5):ceil(), self:add(0.5):floor())
end

function Tensor:clamp(lo, hi)
  if lo == nil and hi == nil then fail("clamp: at least one of min and max is needed") end
  local r = self
  if lo ~= nil then r = self:lt(lo):where(lo, self) end
  if hi ~= nil then r = r:gt(hi):where(hi, r) end
  return r
end
Tensor.clip = Tensor.clamp

function Tensor:contiguous()
  local u = self.uop
  if u:op() == "CONTIGUOUS" then return self end
  local base = u:op() == "RESHAPE" and u:src()[1] or u
  if base:op() == "BUFFER" then return self end
  return wrap(uop.new("CONTIGUOUS", self._dtype, {u}), copy(self._shape), self._dtype)
end

function Tensor:detach()
  return wrap(uop.new("DETACH", self._dtype, {self.uop}), copy(self._shape), self._dtype)
end

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

-- ---------------------------------------------------------------- creation

-- shape and flat values of a nested table
local function nested_shape(data, path)
  if type(data) ~= "table" then return {} end
  local n = #data
  if n == 0 then return {0} end
  local sub = nested_shape(data[1], path .. "[1]")
  for i = 2, n do
    local s = nested_shape(data[i], path .. "[" .. i .. "]")
    if not shape_eq(s, sub) then
      fail("inhomogeneous shape: %s%s has shape %s, %s[1] has %s", "data", path .. "[" .. i .. "]", fmt_shape(s), path == "" and "data" or "data" .. path, fmt_shape(sub))
    end
  end
  return concat({n}, sub)
end

local function flatten_values(data, out)
  if type(data) == "table" then
    for i = 1, #data do flatten_values(data[i], out) end
  else
    if type(data) ~= "number" and type(data) ~= "boolean" then
      fail("Tensor: elements must be numbers or booleans, got %s", type(data))
    end
    out[#out + 1] = data
  end
  return out
end

local function from_uop(u)
  local shape = uop.shape(u)
  if not shape then fail("Tensor: %s has no tensor shape", tostring(u)) end
  return wrap(u, shape)
end

-- Tensor.new(data [, dtype]): data a nested table, a number or boolean (a
-- constant of shape ()), a UOp of a tensor graph, or a Tensor
function Tensor.new(data, dtype)
  if is_opts(dtype) then dtype = dtype.dtype end
  local dt = dtype and to_dtype(dtype)
  if is_tensor(data) then return dt and data:cast(dt) or data end
  if type(data) == "userdata" then return from_uop(data) end
  if type(data) == "number" or type(data) == "boolean" then return const_tensor(data, dt or from_lua(data)) end
  if type(data) ~= "table" then fail("Tensor: cannot make a tensor of a %s", type(data)) end
  local shape = nested_shape(data, "")
  local flat = flatten_values(data, {})
  if not dt then
    local all_bool, all_int = #flat > 0, #flat > 0
    for _, v in ipairs(flat) do
      if type(v) ~= "boolean" then all_bool = false end
      if type(v) == "number" and math.type(v) ~= "integer" then all_int = false end
    end
    dt = all_bool and BOOL or all_int and I32 or F32
  end
  local store = info(dt).host and dt or F32
  local vals = {}
  for i, v in ipairs(flat) do vals[i] = as_const(v, store) end
  local b = wrap(uop.buffer(store, vals), {#vals}, store)
  return reshape_raw(b, shape):cast(dt)
end

function Tensor.from_uop(u) return from_uop(u) end

-- Tensor.empty(shape...): a data buffer of zeros
function Tensor.empty(...)
  local shape, opts = new_shape_args("empty", ...)
  local dt = to_dtype(opts.dtype or F32)
  if not info(dt).host then fail("empty: %s cannot be held in a host buffer", info(dt).name) end
  return reshape_raw(wrap(uop.buffer(dt, prod(shape)), {prod(shape)}, dt), shape)
end

function Tensor.full(shape, value, opts)
  opts = opts or {}
  if type(shape) ~= "table" then shape = {shape} end
  shape = new_shape_args("full", shape)
  local dt = opts.dtype and to_dtype(opts.dtype) or from_lua(value)
  local ones = {}
  for i = 1, #shape do ones[i] = 1 end
  return const_tensor(value, dt, true):reshape(ones):expand(shape)
end

function Tensor.zeros(...)
  local shape, opts = new_shape_args("zeros", ...)
  return Tensor.full(shape, 0.0, opts)
end

function Tensor.ones(...)
  local shape, opts = new_shape_args("ones", ...)
  return Tensor.full(shape, 1.0, opts)
end

function Tensor:full_like(value, opts)
  return Tensor.full(self._shape, value, {dtype = opts and opts.dtype or self._dtype})
end
function Tensor:zeros_like(opts) return self:full_like(0, opts) end
function Tensor:ones_like(opts) return self:full_like(1, opts) end

-- Tensor.arange(stop) / (start, stop [, step]) [, {dtype=}]
function Tensor.arange(start, stop, step, opts)
  if is_opts(stop) then stop, opts = nil, stop
  elseif is_opts(step) then step, opts = nil, step end
  opts = opts or {}
  if stop == nil then start, stop = 0, start end
  step = step or 1
  for _, v in ipairs({start, stop, step}) do
    if type(v) ~= "number" then fail("arange: start, stop and step must be numbers") end
  end
  if step == 0 then fail("arange: step must not be zero") end
  local any_float = math.type(start) == "float" or math.type(stop) == "float" or math.type(step) == "float"
  local dt = opts.dtype and to_dtype(opts.dtype) or (any_float and F32 or I32)
  local i = info(dt)
  if i.kind ~= "float" and (start < i.min or i.max < stop - step) then
    fail("arange [%s, %s) is not representable in dtype %s", tostring(start), tostring(stop), i.name)
  end
  local len = math.ceil((stop - start) / step)
  if math.type(start) == "integer" and math.type(stop) == "integer" and math.type(step) == "integer" then
    len = ceildiv(stop - start, step)
  end
  if len <= 0 then return Tensor.new({}, dt) end
  return cumalu(Tensor.full({math.tointeger(len)}, step, {dtype = dt}), 0, "ADD"):add(start - step):cast(dt)
end

function Tensor.eye(n, m, opts)
  if is_opts(m) then m, opts = nil, m end
  opts = opts or {}
  m = m or n
  if math.type(n) ~= "integer" or math.type(m) ~= "integer" or n < 0 or m < 0 then
    fail("eye: sizes must be non-negative integers, got %s, %s", tostring(n), tostring(m))
  end
  return Tensor.arange(n):unsqueeze(-1):eq(Tensor.arange(m)):cast(opts.dtype and to_dtype(opts.dtype) or F32)
end

-- random numbers: splitmix64 on the host, uniform in [0, 1)
local rng_state = 0
function Tensor.manual_seed(seed)
  if math.type(seed) ~= "integer" then fail("manual_seed: the seed must be an integer") end
  rng_state = seed
end

local function splitmix(state)
  state = state + 0x9E3779B97F4A7C15
  local z = state
  z = (z ~ (z >> 30)) * 0xBF58476D1CE4E5B9
  z = (z ~ (z >> 27)) * 0x94D049BB133111EB
  return state, z ~ (z >> 31)
end

function Tensor.rand(...)
  local shape, opts = new_shape_args("rand", ...)
  local dt = to_dtype(opts.dtype or F32)
  if not is_float(dt) then fail("rand only supports float dtypes, got %s", info(dt).name) end
  local bits = info(dt).mantissa
  local state = opts.seed or rng_state
  if math.type(state) ~= "integer" then fail("rand: the seed must be an integer") end
  local vals = {}
  local scale = 2.0 ^ -bits
  for i = 1, prod(shape) do
    local z
    state, z = splitmix(state)
    vals[i] = (z >> (64 - bits)) * scale
  end
  if not opts.seed then rng_state = state end
  local store = info(dt).host and dt or F32
  local b = wrap(uop.buffer(store, vals), {#vals}, store)
  return reshape_raw(b, shape):cast(dt)
end

-- ---------------------------------------------------------------- realizing

-- the BUFFER holding self's values when self is a buffer (maybe reshaped)
local function realized_buffer(self)
  local u = self.uop
  if u:op() == "RESHAPE" then u = u:src()[1] end
  if u:op() == "BUFFER" and uop._has_data(u) then return u end
  return nil
end

-- t:realize(...): computes self (and the other tensors given) with
-- uop.compile; each becomes its result buffer reshaped to its shape
function Tensor:realize(...)
  local pending = {}
  for _, t in ipairs({self, ...}) do
    if not is_tensor(t) then fail("realize: expected Tensors, got %s", type(t)) end
    if not realized_buffer(t) then pending[#pending + 1] = t end
  end
  if #pending == 0 then return self end
  if type(uop.compile) ~= "function" then fail("uop.compile is not available") end
  local program = uop.compile(#pending == 1 and pending[1] or pending)
  local outs = program:run()
  for i, t in ipairs(pending) do
    local b = outs[i]
    if not b then fail("realize: the program returned %d outputs for %d tensors", #outs, #pending) end
    t.uop = reshape_raw(wrap(b, {prod(t._shape)}, b:dtype()), t._shape).uop
  end
  return self
end

function Tensor:tolist()
  self:realize()
  return uop.buffer_values(realized_buffer(self), self._shape)
end

function Tensor:item()
  if self:numel() ~= 1 then fail("item: the tensor has %d elements, not 1", self:numel()) end
  self:realize()
  return uop.buffer_values(realized_buffer(self))[1]
end

-- the shortest decimal that reads back as v in dt (numpy's float repr)
local function float_repr(v, dt)
  if v ~= v then return "nan" end
  if v == math.huge then return "inf" end
  if v == -math.huge then return "-inf" end
  local name = info(dt).name
  -- whole numbers print without an exponent, as numpy does (90., not 9e+01)
  if v == math.floor(v) and math.abs(v) < 1e16 then return string.format("%.0f.", v) end
  local s
  for p = 1, 17 do
    s = string.format("%." .. p .. "g", v)
    local back = tonumber(s)
    if name == "float32" then back = string.unpack("f", string.pack("f", back)) end
    if back == v or (name ~= "float32" and name ~= "float64" and p >= 4) then break end
  end
  if not s:find("[.e]") then s = s .. "." end
  return s
end

-- numpy's layout: [[1. 2.]\n [3. 4.]], decimal points aligned, long axes
-- summarised with ...
local function format_values(values, shape, dt)
  local k = info(dt).kind
  local function fmt(v)
    if k == "bool" then return v and "True" or "False" end
    if k ~= "float" then return string.format("%d", v) end
    return float_repr(v, dt)
  end
  if #shape == 0 then return fmt(values) end
  local summarise = prod(shape) > 1000
  local function shown(i, n) return not summarise or n <= 6 or i <= 3 or i > n - 3 end
  -- widths of the integer and fraction parts (split at the point for floats)
  local left, right, plain = 0, 0, k ~= "float"
  local function split(s)
    if plain or s:find("e") or not s:find("%.") then return s, "" end
    return s:match("^(.-%.)(.*)$")
  end
  local function collect(a, dim)
    if dim > #shape then
      local s = fmt(a)
      if k == "float" and (s:find("e") or not s:find("%.")) then plain = true end
      return
    end
    for i = 1, #a do if shown(i, #a) then collect(a[i], dim + 1) end end
  end
  local function measure(a, dim)
    if dim > #shape then
      local l, r = split(fmt(a))
      left, right = math.max(left, #l), math.max(right, #r)
      return
    end
    for i = 1, #a do if shown(i, #a) then measure(a[i], dim + 1) end end
  end
  collect(values, 1)
  measure(values, 1)
  local function cell(v)
    local l, r = split(fmt(v))
    return string.rep(" ", left - #l) .. l .. r .. string.rep(" ", right - #r)
  end
  local function render(a, dim)
    local n = #a
    local parts = {}
    for i = 1, n do
      if summarise and n > 6 and i == 4 then parts[#parts + 1] = "..." end
      if shown(i, n) then parts[#parts + 1] = dim == #shape and cell(a[i]) or render(a[i], dim + 1) end
    end
    local sep = dim == #shape and " " or (string.rep("\n", #shape - dim) .. string.rep(" ", dim))
    return "[" .. table.concat(parts, sep) .. "]"
  end
  return render(values, 1)
end

Tensor.format_values = format_values

function Tensor:__tostring()
  return format_values(self:tolist(), self._shape, self._dtype)
end

-- ---------------------------------------------------------------- operators

local function op2(method)
  return function(a, b)
    if is_tensor(a) then return a[method](a, b) end
    return b[method](b, a, true)
  end
end
Tensor.__add = op2("add")
Tensor.__sub = op2("sub")
Tensor.__mul = op2("mul")
Tensor.__div = op2("div")
Tensor.__idiv = op2("floordiv")
Tensor.__mod = op2("mod")
Tensor.__pow = op2("pow")
Tensor.__band = op2("bitwise_and")
Tensor.__bor = op2("bitwise_or")
Tensor.__bxor = op2("bitwise_xor")
Tensor.__shl = op2("lshift")
Tensor.__shr = op2("rshift")
function Tensor.__unm(a) return a:neg() end
function Tensor.__bnot(a) return a:bitwise_not() end
function Tensor.__len(a)
  if #a._shape == 0 then fail("len of a 0-d tensor") end
  return a._shape[1]
end
function Tensor.__concat(a, b) return tostring(a) .. tostring(b) end

Tensor.dtypes = dtypes
setmetatable(Tensor, {__call = function(_, ...) return Tensor.new(...) end})
