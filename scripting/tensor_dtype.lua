-- tensor_dtype.lua - dtypes for the Tensor front end: dtypes by value or
-- name, their kinds, tinygrad's promotion (least_upper_dtype, sum_acc_dtype,
-- from_py, as_const), constants of a dtype, cast and bitcast, the sizes of
-- elements (element_size, nbytes).
local uop, shared = ...
local Tensor = uop.Tensor
local dtypes = uop.dtypes
local F32, I32, U32, BOOL = dtypes.float32, dtypes.int32, dtypes.uint32, dtypes.bool
local fail, copy, device, wrap = shared.fail, shared.copy, shared.device, shared.wrap
-- error messages show a Tensor by its shape, never by its elements
local tostring = shared.show

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
  fail("expected a Tensor, number or boolean, got %s", rawequal(v, uop.Invalid) and "uop.Invalid" or type(v))
end

-- v as a constant of dt (tinygrad's dtypes.as_const)
local function as_const(v, dt)
  if type(v) ~= "number" and type(v) ~= "boolean" then
    fail("expected a Tensor, number or boolean, got %s", rawequal(v, uop.Invalid) and "uop.Invalid" or type(v))
  end
  local k = info(dt).kind
  if k == "bool" then
    if type(v) == "boolean" then return v end
    return v ~= 0
  end
  if type(v) == "boolean" then v = v and 1 or 0 end
  -- an integer becomes a float; a float is kept as it is (-0.0 keeps its sign)
  if k == "float" then return math.type(v) == "integer" and v + 0.0 or v end
  if math.type(v) == "float" then
    if v ~= v or v == math.huge or v == -math.huge then fail("cannot make %s a constant of %s", tostring(v), info(dt).name) end
    local t = v >= 0 and math.floor(v) or math.ceil(v)
    return math.tointeger(t) or fail("%s does not fit in %s", tostring(v), info(dt).name)
  end
  return v
end

-- a CONST of dt on the device (shape ()); unique like tinygrad's full
local function const_tensor(v, dt, unique)
  local src = {device()}
  if unique then src[2] = uop._unique() end
  return wrap(uop.new("CONST", dt, src, as_const(v, dt)), {}, dt)
end

function Tensor:cast(dtype)
  local dt = to_dtype(dtype)
  if dt == self._dtype then return self end
  if (dt == dtypes.uint8 or dt == dtypes.uint16) and is_float(self._dtype) then
    return wrap(uop.new("CAST", dt, {self.uop:cast(I32)}), copy(self._shape), dt)
  end
  return wrap(self.uop:cast(dt), copy(self._shape), dt)
end
-- the bits of each element read as dtype.  Between item sizes the last
-- axis changes length: the values go through unsigned integers of the two
-- sizes, joined by shifts and adds or split by shifts, as tinygrad does.
function Tensor:bitcast(dtype)
  if dtype == nil then fail("bitcast: a dtype is needed") end
  local ok, dt = pcall(to_dtype, dtype)
  if not ok then fail("bitcast: %s", (tostring(dt):gsub("^[^\n]-:%d+: ", ""))) end
  local ns, os = info(dt).itemsize, info(self._dtype).itemsize
  if ns ~= os then
    local nd = #self._shape
    if nd == 0 then fail("bitcast: a 0-d tensor cannot change its item size (%s to %s)", info(self._dtype).name, info(dt).name) end
    local last = self._shape[nd]
    if (last * os) % ns ~= 0 then fail("bitcast: unsupported size in bitcast (%s to %s, last axis %d)", info(self._dtype).name, info(dt).name, last) end
    local new_uint, old_uint = to_dtype("uint" .. 8 * ns), to_dtype("uint" .. 8 * os)
    local tmp = self:bitcast(old_uint)
    if ns > os then
      local rate = ns // os
      local shape = {table.unpack(self._shape, 1, nd - 1)}
      shape[#shape + 1], shape[#shape + 2] = last // rate, rate
      tmp = tmp:reshape(shape)
      local r
      for i = 0, rate - 1 do
        local range = {}
        range[#shape] = {i, i + 1}
        local part = tmp:shrink(range):cast(new_uint):lshift(8 * i * os)
        r = r and r:add(part) or part
      end
      return r:squeeze(-1):bitcast(dt)
    end
    local pieces = {}
    for i = 0, os // ns - 1 do pieces[#pieces + 1] = tmp:rshift(8 * i * ns) end
    return Tensor.stack(pieces, {dim = -1}):flatten(-2):cast(new_uint):bitcast(dt)
  end
  if dt == self._dtype then return self end
  return wrap(uop.new("BITCAST", dt, {self.uop}), copy(self._shape), dt)
end

function Tensor:float() return self:cast(F32) end
function Tensor:half() return self:cast(dtypes.float16) end
function Tensor:int() return self:cast(I32) end
function Tensor:long() return self:cast(dtypes.int64) end
function Tensor:double() return self:cast(dtypes.float64) end
function Tensor:bool() return self:cast(BOOL) end
function Tensor:short() return self:cast(dtypes.int16) end
function Tensor:bfloat16() return self:cast(dtypes.bfloat16) end

-- the bytes of one element, and of all of them
function Tensor:element_size() return info(self._dtype).itemsize end
function Tensor:nbytes() return self:numel() * info(self._dtype).itemsize end

function Tensor:is_floating_point() return is_float(self._dtype) end

-- for the parts that follow
shared.info = info
shared.to_dtype = to_dtype
shared.is_float = is_float
shared.is_int = is_int
shared.is_unsigned = is_unsigned
shared.is_bool = is_bool
shared.least_upper = least_upper
shared.least_upper_float = least_upper_float
shared.sum_acc = sum_acc
shared.from_lua = from_lua
shared.as_const = as_const
shared.const_tensor = const_tensor
