-- tensor_elementwise.lua - elementwise ops of the Tensor front end: operands
-- made tensors, promoted and broadcast (tinygrad's _broadcasted), the ALU
-- ops, and what tinygrad decomposes into them (sub, div, mod, comparisons,
-- exp, log, cos, sigmoid, round, clamp, isnan, isinf, lerp, copysign,
-- logaddexp, ...); also contiguous and detach.
local uop, shared = ...
local Tensor = uop.Tensor
local F32, I32, BOOL = uop.dtypes.float32, uop.dtypes.int32, uop.dtypes.bool
local fail, is_tensor, fmt_shape = shared.fail, shared.is_tensor, shared.fmt_shape
-- error messages show a Tensor by its shape, never by its elements
local tostring = shared.show
local copy, wrap, info, is_float = shared.copy, shared.wrap, shared.info, shared.is_float
local is_int, is_unsigned, is_bool = shared.is_int, shared.is_unsigned, shared.is_bool
local least_upper, least_upper_float = shared.least_upper, shared.least_upper_float
local sum_acc, from_lua, const_tensor = shared.sum_acc, shared.from_lua, shared.const_tensor
local broadcast_to = shared.broadcast_to

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

-- x:div(y [, reverse [, rounding_mode]]), or with {reverse =, rounding_mode = }
function Tensor:div(x, ...)
  local a = shared.named_args("div", {"reverse", "rounding_mode"}, nil, ...)
  local reverse, rounding = a.reverse, a.rounding_mode
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

-- a boolean amount or exponent is the integer 0 or 1, as a Python bool is an int
local function bool_as_int(x)
  if type(x) == "boolean" then return x and 1 or 0 end
  return x
end

local function check_shift(self, x, reverse, what)
  if not (is_unsigned(self._dtype) and math.type(x) == "integer" and x >= 0 and not reverse) then
    fail("%s: needs an unsigned tensor and a non-negative integer shift", what)
  end
end
function Tensor:lshift(x, reverse)
  x = bool_as_int(x)
  check_shift(self, x, reverse, "lshift")
  return self:mul(1 << x)
end
function Tensor:rshift(x, reverse)
  x = bool_as_int(x)
  check_shift(self, x, reverse, "rshift")
  return self:idiv(1 << x)
end

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
  x = bool_as_int(x)
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
-- half to even: x.5 goes down when trunc(x) is even and x > 0 (or odd and x < 0)
function Tensor:round()
  local b = self:trunc():div(2.0)
  return self:gt(0):eq(b:trunc():eq(b)):where(self:sub(0.5):ceil(), self:add(0.5):floor())
end

function Tensor:clamp(lo, hi)
  if lo == nil and hi == nil then fail("clamp: at least one of min and max is needed") end
  local r = self
  if lo ~= nil then r = self:lt(lo):where(lo, self) end
  if hi ~= nil then r = r:gt(hi):where(hi, r) end
  return r
end
Tensor.clip = Tensor.clamp

-- x != x: true only for NaN (false for every integer and bool)
function Tensor:isnan() return self:ne(self) end

-- x:isinf([detect_positive [, detect_negative]]) or {detect_positive=, detect_negative=}
function Tensor:isinf(...)
  local a = shared.named_args("isinf", {"detect_positive", "detect_negative"},
    {detect_positive = true, detect_negative = true}, ...)
  for _, k in ipairs({"detect_positive", "detect_negative"}) do
    if type(a[k]) ~= "boolean" then fail("isinf: %s must be a boolean, got %s", k, type(a[k])) end
  end
  return self:eq(math.huge):mul(a.detect_positive):add(self:eq(-math.huge):mul(a.detect_negative))
end

-- self + (finish - self) * weight; a uint8 self with a Tensor weight is
-- interpolated in fixed point with a 7-bit weight, as tinygrad does
function Tensor:lerp(finish, weight)
  if not is_tensor(finish) then fail("lerp: the end must be a Tensor, got %s", type(finish)) end
  if not is_tensor(weight) and type(weight) ~= "number" then
    fail("lerp: the weight must be a Tensor or a number, got %s", type(weight))
  end
  if self._dtype == uop.dtypes.uint8 and is_tensor(weight) then
    local W_PREC = 7
    local w_i = weight:mul(1 << W_PREC):add(0.5):cast(uop.dtypes.int16)
    local step = finish:sub(self):cast(uop.dtypes.int8):mul(w_i):add(1 << (W_PREC - 1)):cast(uop.dtypes.uint16)
    return self:add(step:rshift(W_PREC)):cast(uop.dtypes.uint8)
  end
  return self:add(finish:sub(self):mul(weight))
end

local function check_operand(what, x)
  if not is_tensor(x) and type(x) ~= "number" and type(x) ~= "boolean" then
    fail("%s: expected a Tensor, number or boolean, got %s", what, type(x))
  end
end

-- |self| with the sign of other (other < 0 picks -|self|; -0.0 counts as
-- positive); the dtype is the promoted one, as for any binary op
function Tensor:copysign(other)
  check_operand("copysign", other)
  local _, o = broadcasted(self, other)
  -- two abs graphs, as tinygrad builds them (each sign has its own constants)
  return o:lt(0):where(self:abs():neg(), self:abs()):add(o:mul(0))
end

-- log(exp(self) + exp(other)), shifted by the maximum
function Tensor:logaddexp(other)
  check_operand("logaddexp", other)
  local m = self:maximum(other)
  local _, o = broadcasted(self, other)
  return self:sub(m):exp():add(o:sub(m):exp()):log():add(m)
end

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

-- for the parts that follow
shared.inverse = inverse
shared.alu = alu
