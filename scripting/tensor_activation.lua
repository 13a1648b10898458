-- tensor_activation.lua - activation functions of the Tensor front end, each
-- built from the elementwise ops as tinygrad v0.12.0 builds it: gelu (the
-- tanh form), quick_gelu, swish and silu, relu6, hardtanh, elu, softplus
-- and erf (Abramowitz and Stegun 7.1.26).  Arguments go by position or by
-- tinygrad's name: x:elu(0.5), x:elu{alpha=0.5}, x:hardtanh{max_val=2}.
local uop, shared = ...
local Tensor = uop.Tensor
local fail, named_args, check_number = shared.fail, shared.named_args, shared.check_number

local NO_NAMES, NO_DEFAULTS = {}, {}

-- x * sigmoid(x); silu is the same graph
function Tensor:swish(...)
  named_args("swish", NO_NAMES, NO_DEFAULTS, ...)
  return self:mul(self:sigmoid())
end

function Tensor:silu(...)
  named_args("silu", NO_NAMES, NO_DEFAULTS, ...)
  return self:swish()
end

-- x * sigmoid(1.702 x)
function Tensor:quick_gelu(...)
  named_args("quick_gelu", NO_NAMES, NO_DEFAULTS, ...)
  return self:mul(self:mul(1.702):sigmoid())
end

-- 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
function Tensor:gelu(...)
  named_args("gelu", NO_NAMES, NO_DEFAULTS, ...)
  local inner = self:add(self:pow(3):mul(0.044715, true)):mul(math.sqrt(2 / math.pi), true)
  return self:mul(0.5, true):mul(inner:tanh():add(1, true))
end

-- relu(x) - relu(x - 6)
function Tensor:relu6(...)
  named_args("relu6", NO_NAMES, NO_DEFAULTS, ...)
  return self:relu():sub(self:sub(6):relu())
end

-- clamp(x, min_val, max_val)
function Tensor:hardtanh(...)
  local a = named_args("hardtanh", {"min_val", "max_val"}, {min_val = -1, max_val = 1}, ...)
  check_number("hardtanh", "min_val", a.min_val)
  check_number("hardtanh", "max_val", a.max_val)
  return self:clamp(a.min_val, a.max_val)
end

-- relu(x) - alpha * relu(1 - exp(x))
function Tensor:elu(...)
  local a = named_args("elu", {"alpha"}, {alpha = 1.0}, ...)
  check_number("elu", "alpha", a.alpha)
  return self:relu():sub(self:exp():sub(1, true):relu():mul(a.alpha, true))
end

-- (1/beta) * logaddexp(beta x, 0)
function Tensor:softplus(...)
  local a = named_args("softplus", {"beta"}, {beta = 1.0}, ...)
  check_number("softplus", "beta", a.beta)
  if a.beta == 0 then fail("softplus: beta must not be zero") end
  return self:mul(a.beta):logaddexp(0.0):mul(1 / a.beta, true)
end

-- the coefficients of erf's polynomial in t, highest power first
local ERF_POLY = {1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592}

-- sign(x) (1 - t p(t) exp(-x^2)), t = 1 / (1 + 0.3275911 |x|); p is
-- evaluated by Horner's rule from 0.0 as tinygrad's polyN does
function Tensor:erf(...)
  named_args("erf", NO_NAMES, NO_DEFAULTS, ...)
  local t = self:abs():mul(0.3275911, true):add(1.0, true):div(1.0, true)
  local poly = nil
  for _, c in ipairs(ERF_POLY) do
    poly = (poly and poly:mul(t) or t:mul(0.0, true)):add(c)
  end
  return self:sign():mul(t:mul(poly):mul(self:square():neg():exp()):sub(1.0, true))
end
