-- tensor_math.lua - more elementwise functions of the Tensor front end, each
-- built from other ops as tinygrad v0.12.0 builds it (so the kernels match
-- node for node): the inverse trigonometric functions (asin by Abramowitz
-- and Stegun 4.4.46, acos and atan from it), the hyperbolic ones and their
-- inverses (through exp and log), the activations celu, selu, mish,
-- logsigmoid, softsign, hardsigmoid and hardswish, and the tests isfinite,
-- isclose and allclose.  Python's scalar-first forms (1 - x) are the reverse ops.
local uop, shared = ...
local Tensor = uop.Tensor
local fail, named_args, check_number, is_tensor = shared.fail, shared.named_args, shared.check_number, shared.is_tensor

local NO_NAMES, NO_DEFAULTS = {}, {}

-- the coefficients of asin's polynomial in |x|, evaluated by Horner's rule
-- from 0.0 as tinygrad's polyN does
local ASIN_POLY = {-0.0012624911, 0.0066700901, -0.0170881256, 0.0308918810, -0.0501743046, 0.0889789874,
                   -0.2145988016, 1.5707963050}

local function poly_n(x, coefficients)
  local acc = nil
  for _, c in ipairs(coefficients) do acc = (acc and acc:mul(x) or x:mul(0.0, true)):add(c) end
  return acc
end

-- sign(x) (pi/2 - sqrt(1 - |x|) p(|x|))
function Tensor:asin(...)
  named_args("asin", NO_NAMES, NO_DEFAULTS, ...)
  local x = self:abs():sub(1.0, true):sqrt():mul(poly_n(self:abs(), ASIN_POLY)):sub(math.pi / 2, true)
  return self:sign():mul(x)
end

-- pi/2 - asin(x)
function Tensor:acos(...)
  named_args("acos", NO_NAMES, NO_DEFAULTS, ...)
  return self:asin():sub(math.pi / 2, true)
end

-- asin(x / sqrt(1 + x^2))
function Tensor:atan(...)
  named_args("atan", NO_NAMES, NO_DEFAULTS, ...)
  return self:div(self:mul(self):add(1, true):sqrt()):asin()
end

-- (exp(x) - exp(-x)) / 2
function Tensor:sinh(...)
  named_args("sinh", NO_NAMES, NO_DEFAULTS, ...)
  return self:exp():sub(self:neg():exp()):div(2)
end

-- (exp(x) + exp(-x)) / 2
function Tensor:cosh(...)
  named_args("cosh", NO_NAMES, NO_DEFAULTS, ...)
  return self:exp():add(self:neg():exp()):div(2)
end

-- log(x + sqrt(x^2 + 1))
function Tensor:asinh(...)
  named_args("asinh", NO_NAMES, NO_DEFAULTS, ...)
  return self:add(self:square():add(1):sqrt()):log()
end

-- log(x + sqrt(x^2 - 1))
function Tensor:acosh(...)
  named_args("acosh", NO_NAMES, NO_DEFAULTS, ...)
  return self:add(self:square():sub(1):sqrt()):log()
end

-- log((1 + x) / (1 - x)) / 2
function Tensor:atanh(...)
  named_args("atanh", NO_NAMES, NO_DEFAULTS, ...)
  return self:add(1, true):div(self:sub(1, true)):log():div(2)
end

-- max(x, 0) + min(alpha (exp(x / alpha) - 1), 0)
function Tensor:celu(...)
  local a = named_args("celu", {"alpha"}, {alpha = 1.0}, ...)
  check_number("celu", "alpha", a.alpha)
  return self:maximum(0):add(self:div(a.alpha):exp():sub(1):mul(a.alpha, true):minimum(0))
end

-- gamma * (x >= 0 ? x : alpha (exp(x) - 1))
function Tensor:selu(...)
  local a = named_args("selu", {"alpha", "gamma"}, {alpha = 1.67326, gamma = 1.0507}, ...)
  check_number("selu", "alpha", a.alpha)
  check_number("selu", "gamma", a.gamma)
  return self:ge(0):detach():where(self, self:exp():sub(1):mul(a.alpha, true)):mul(a.gamma, true)
end

-- x tanh(softplus(x))
function Tensor:mish(...)
  named_args("mish", NO_NAMES, NO_DEFAULTS, ...)
  return self:mul(self:softplus():tanh())
end

-- -softplus(-x)
function Tensor:logsigmoid(...)
  named_args("logsigmoid", NO_NAMES, NO_DEFAULTS, ...)
  return self:neg():softplus():neg()
end

-- x / (1 + |x|)
function Tensor:softsign(...)
  named_args("softsign", NO_NAMES, NO_DEFAULTS, ...)
  return self:div(self:abs():add(1, true))
end

-- relu(alpha x + beta) - relu(alpha x + beta - 1)
function Tensor:hardsigmoid(...)
  local a = named_args("hardsigmoid", {"alpha", "beta"}, {alpha = 1 / 6, beta = 0.5}, ...)
  check_number("hardsigmoid", "alpha", a.alpha)
  check_number("hardsigmoid", "beta", a.beta)
  local y = self:mul(a.alpha, true):add(a.beta)
  return y:relu():sub(y:sub(1):relu())
end

-- x relu6(x + 3) / 6
function Tensor:hardswish(...)
  named_args("hardswish", NO_NAMES, NO_DEFAULTS, ...)
  return self:mul(self:add(3):relu6()):mul(1 / 6)
end

-- not (isinf(x) or isnan(x))
function Tensor:isfinite(...)
  named_args("isfinite", NO_NAMES, NO_DEFAULTS, ...)
  return self:isinf():bitwise_or(self:isnan()):logical_not()
end

-- |x - y| <= atol + rtol |y| where both are finite; equal infinities; NaN
-- with NaN when equal_nan
function Tensor:isclose(...)
  local a = named_args("isclose", {"other", "rtol", "atol", "equal_nan"}, {rtol = 1e-05, atol = 1e-08, equal_nan = false}, ...)
  local other = a.other
  if not is_tensor(other) then fail("isclose: other must be a Tensor, got %s", type(other)) end
  check_number("isclose", "rtol", a.rtol)
  check_number("isclose", "atol", a.atol)
  if type(a.equal_nan) ~= "boolean" then fail("isclose: equal_nan must be a boolean, got %s", type(a.equal_nan)) end
  local finite_close = self:isfinite():bitwise_and(other:isfinite())
    :bitwise_and(self:sub(other):abs():le(other:abs():mul(a.rtol, true):add(a.atol, true)))
  local infinite_close = self:isinf():bitwise_or(other:isinf()):bitwise_and(self:eq(other))
  local nan_close = self:isnan():bitwise_and(other:isnan()):bitwise_and(a.equal_nan)
  return finite_close:bitwise_or(infinite_close):bitwise_or(nan_close)
end

-- x:allclose(other [, {rtol =, atol =, equal_nan =}]): whether every
-- element is close (isclose), a Lua boolean; runs a kernel, as in tinygrad
function Tensor:allclose(...)
  local a = named_args("allclose", {"other", "rtol", "atol", "equal_nan"}, nil, ...)
  local close = self:isclose(a.other, {rtol = a.rtol, atol = a.atol, equal_nan = a.equal_nan})
  return close:all():item()
end
