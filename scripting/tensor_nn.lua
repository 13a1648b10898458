-- tensor_nn.lua - the neural-network functions of the Tensor front end, each
-- built from other ops as tinygrad v0.12.0 builds it: layernorm, batchnorm,
-- linear, var_mean and std_mean, the losses (cross_entropy, nll_loss,
-- binary_crossentropy and its logits form, sparse_categorical_crossentropy),
-- scaled_dot_product_attention and dropout (which does nothing unless
-- Tensor.training is set, tinygrad's default), and sequential (a list of
-- functions applied in turn).  Arguments go by position or
-- by tinygrad's name: x:cross_entropy(y, {label_smoothing = 0.1}).
local uop, shared = ...
local Tensor = uop.Tensor
local fail, named_args, check_number, is_tensor = shared.fail, shared.named_args, shared.check_number, shared.is_tensor
local fmt_shape, shape_eq, resolve_axis = shared.fmt_shape, shared.shape_eq, shared.resolve_axis
local one_hot_along_dim, least_upper, dtypes = shared.one_hot_along_dim, shared.least_upper, uop.dtypes

-- tinygrad's Tensor.training: dropout only drops while it is true
Tensor.training = false

local function check_tensor(what, name, v)
  if not is_tensor(v) then fail("%s: %s must be a Tensor, got %s", what, name, type(v)) end
  return v
end

local REDUCTIONS = {mean = true, sum = true, none = true}

-- label_smoothing of the cross entropies: a number in [0, 1]
local function check_smoothing(what, ls)
  check_number(what, "label_smoothing", ls)
  if ls < 0 or ls > 1 then fail("%s: label_smoothing must be in [0, 1], got %s", what, tostring(ls)) end
end

local function check_reduction(what, reduction)
  if not REDUCTIONS[reduction] then
    fail("%s: reduction must be one of mean, sum or none, got %s", what, shared.show(reduction))
  end
end

-- the loss reduced as asked: "mean", "sum" or "none" (tinygrad's _do_reduction)
local function reduce_loss(what, t, reduction)
  check_reduction(what, reduction)
  if reduction == "mean" then return t:mean() end
  if reduction == "sum" then return t:sum() end
  return t
end

-- (x - mean) / sqrt(var + eps) over axis (default the last)
function Tensor:layernorm(...)
  local a = named_args("layernorm", {"axis", "eps"}, {axis = -1, eps = 1e-5}, ...)
  check_number("layernorm", "eps", a.eps)
  local y = self:sub(self:mean(a.axis, {keepdim = true}))
  return y:mul(y:mul(y):mean(a.axis, {keepdim = true}):add(a.eps):rsqrt())
end

-- (x - mean) * weight * invstd + bias, the per-channel tensors reshaped to
-- broadcast along axis (default 1)
function Tensor:batchnorm(...)
  local a = named_args("batchnorm", {"weight", "bias", "mean", "invstd", "axis"}, {axis = 1}, ...)
  check_tensor("batchnorm", "mean", a.mean)
  check_tensor("batchnorm", "invstd", a.invstd)
  local axes = type(a.axis) == "table" and a.axis or {a.axis}
  local on = {}
  for _, ax in ipairs(axes) do on[resolve_axis(self, ax, false, "batchnorm") + 1] = true end
  local shape = {}
  for i = 1, #self._shape do shape[i] = on[i] and self._shape[i] or 1 end
  local x = self:sub(a.mean:reshape(shape))
  if a.weight ~= nil then x = x:mul(check_tensor("batchnorm", "weight", a.weight):reshape(shape)) end
  local ret = x:mul(#a.invstd._shape == #axes and a.invstd:reshape(shape) or a.invstd)
  if a.bias ~= nil then return ret:add(check_tensor("batchnorm", "bias", a.bias):reshape(shape)) end
  return ret
end

-- x @ weight + bias (x * weight for a 1-D weight); dtype casts all three first
function Tensor:linear(...)
  local a = named_args("linear", {"weight", "bias", "dtype"}, nil, ...)
  local weight, bias = check_tensor("linear", "weight", a.weight), a.bias
  if bias ~= nil then check_tensor("linear", "bias", bias) end
  if a.dtype ~= nil then
    return self:cast(a.dtype):linear(weight:cast(a.dtype), bias and bias:cast(a.dtype))
  end
  local x = #weight._shape == 1 and self:mul(weight) or self:dot(weight)
  return bias and x:add(bias) or x
end

-- (var, mean) and (std, mean) as x:var / x:std and x:mean give them: two results
function Tensor:var_mean(...)
  local a = named_args("var_mean", {"axis", "keepdim", "correction"}, nil, ...)
  return self:var(a.axis, {keepdim = a.keepdim, correction = a.correction}), self:mean(a.axis, {keepdim = a.keepdim})
end
function Tensor:std_mean(...)
  local a = named_args("std_mean", {"axis", "keepdim", "correction"}, nil, ...)
  return self:std(a.axis, {keepdim = a.keepdim, correction = a.correction}), self:mean(a.axis, {keepdim = a.keepdim})
end

-- -sum(log_softmax(x) * Y) over the classes (axis 1, or 0 for a 1-D x); Y
-- holds probabilities (x's shape) or class indices (x's shape without the
-- class axis), smoothed towards uniform by label_smoothing
function Tensor:cross_entropy(...)
  local a = named_args("cross_entropy", {"Y", "reduction", "label_smoothing"}, {reduction = "mean", label_smoothing = 0.0}, ...)
  local Y, ls = check_tensor("cross_entropy", "Y", a.Y), a.label_smoothing
  check_smoothing("cross_entropy", ls)
  local classes_dim = #self._shape == 1 and 0 or 1
  if not shape_eq(self._shape, Y._shape) then
    if not shape_eq(self:max(classes_dim)._shape, Y._shape) then
      fail("cross_entropy: shape mismatch: input %s, target %s", fmt_shape(self._shape), fmt_shape(Y._shape))
    end
    Y = one_hot_along_dim(Y:unsqueeze(classes_dim), self._shape[classes_dim + 1], classes_dim, "cross_entropy")
  end
  Y = Y:mul(1 - ls, true):add(ls / Y._shape[classes_dim + 1])
  return reduce_loss("cross_entropy", self:log_softmax(classes_dim):mul(Y):sum(classes_dim), a.reduction):neg()
end

-- -x[i, Y[i]] weighted (by weight[Y[i]]; 0 where Y is ignore_index); the
-- mean divides by the weights' sum
function Tensor:nll_loss(...)
  local a = named_args("nll_loss", {"Y", "weight", "ignore_index", "reduction"}, {reduction = "mean"}, ...)
  local Y = check_tensor("nll_loss", "Y", a.Y)
  local weight = a.weight == nil and Y:ones_like() or check_tensor("nll_loss", "weight", a.weight)[Y]
  local masked = a.ignore_index == nil and weight or weight:mul(Y:ne(a.ignore_index))
  local nll = self:gather(1, Y:unsqueeze(1)):squeeze(1):neg():mul(masked)
  if a.reduction == "mean" then return nll:sum():div(masked:sum()) end
  return reduce_loss("nll_loss", nll, a.reduction)
end

-- -Y log(x) - (1 - Y) log(1 - x), x a probability
function Tensor:binary_crossentropy(...)
  local a = named_args("binary_crossentropy", {"Y", "reduction"}, {reduction = "mean"}, ...)
  local Y = check_tensor("binary_crossentropy", "Y", a.Y)
  local loss = Y:neg():mul(self:log()):sub(Y:sub(1, true):mul(self:sub(1, true):log()))
  return reduce_loss("binary_crossentropy", loss, a.reduction)
end

-- the same from logits: -(pos_weight Y logsigmoid(x) + (1 - Y) logsigmoid(-x))
function Tensor:binary_crossentropy_logits(...)
  local a = named_args("binary_crossentropy_logits", {"Y", "reduction", "pos_weight"}, {reduction = "mean"}, ...)
  local Y = check_tensor("binary_crossentropy_logits", "Y", a.Y)
  local log_p, log_1_minus_p = self:logsigmoid(), self:neg():logsigmoid()
  local weighted = a.pos_weight == nil and Y:mul(1, true)
    or check_tensor("binary_crossentropy_logits", "pos_weight", a.pos_weight):mul(Y)
  local loss = weighted:mul(log_p):add(Y:sub(1, true):mul(log_1_minus_p)):neg()
  return reduce_loss("binary_crossentropy_logits", loss, a.reduction)
end

-- cross entropy of logits x (classes on the last axis) against class
-- indices Y; entries equal to ignore_index (when it is not -1) count for
-- nothing, and the mean divides by the entries that count
function Tensor:sparse_categorical_crossentropy(...)
  local what = "sparse_categorical_crossentropy"
  local a = named_args(what, {"Y", "ignore_index", "label_smoothing", "reduction"},
    {ignore_index = -1, label_smoothing = 0.0, reduction = "mean"}, ...)
  local Y, ls = check_tensor(what, "Y", a.Y), a.label_smoothing
  check_smoothing(what, ls)
  check_reduction(what, a.reduction)
  local log_probs = self:log_softmax()
  local loss_mask = a.ignore_index ~= -1 and Y:ne(a.ignore_index) or Y:ones_like{dtype = dtypes.bool}
  local y = one_hot_along_dim(Y:unsqueeze(-1), self._shape[#self._shape], -1, what):mul(loss_mask:unsqueeze(-1))
  local smoothing = log_probs:mean(-1):mul(loss_mask):mul(ls, true)
  local unreduced = log_probs:mul(y):sum(-1):mul(1 - ls, true):add(smoothing)
  if a.reduction == "mean" then return unreduced:sum():div(loss_mask:sum()):neg() end
  if a.reduction == "sum" then return unreduced:sum():neg() end
  return unreduced:neg()
end

-- softmax(q k^T / sqrt(d) + mask) v, the scores in at least float32; a bool
-- mask keeps where true; is_causal masks the upper triangle; enable_gqa
-- repeats k and v's heads to q's
function Tensor:scaled_dot_product_attention(...)
  local what = "scaled_dot_product_attention"
  local a = named_args(what, {"key", "value", "attn_mask", "dropout_p", "is_causal", "enable_gqa"},
    {dropout_p = 0.0, is_causal = false, enable_gqa = false}, ...)
  local key, value, mask = check_tensor(what, "key", a.key), check_tensor(what, "value", a.value), a.attn_mask
  if #self._shape < 2 then fail("%s: the query needs at least 2 dimensions, got %s", what, fmt_shape(self._shape)) end
  if a.enable_gqa then
    key = key:repeat_interleave(self._shape[#self._shape - 2] // key._shape[#key._shape - 2], {dim = -3})
    value = value:repeat_interleave(self._shape[#self._shape - 2] // value._shape[#value._shape - 2], {dim = -3})
  end
  local dt = least_upper(least_upper(self._dtype, key._dtype), dtypes.float32)
  local qk = self:matmul(key:transpose(-2, -1), {dtype = dt}):div(math.sqrt(self._shape[#self._shape]))
  if a.is_causal then
    if mask ~= nil then fail("%s: cannot set attn_mask when is_causal is true", what) end
    mask = qk:ones_like{dtype = dtypes.bool}:tril()
  end
  if mask ~= nil then
    check_tensor(what, "attn_mask", mask)
    if mask._dtype == dtypes.bool then mask = mask:where(0, -math.huge) end
    qk = qk:add(mask)
  end
  return qk:cast(self._dtype):softmax(-1):dropout(a.dropout_p):matmul(value)
end

-- while Tensor.training: each element zeroed with probability p (from
-- Tensor.rand's generator), the rest scaled by 1 / (1 - p); else x itself
function Tensor:dropout(...)
  local a = named_args("dropout", {"p"}, {p = 0.5}, ...)
  check_number("dropout", "p", a.p)
  if a.p < 0 or a.p > 1 then fail("dropout: p = %s is out of range [0, 1]", tostring(a.p)) end
  if not Tensor.training or a.p == 0 then return self end
  if a.p == 1 then return self:zeros_like() end
  return Tensor.rand(self._shape):ge(a.p):contiguous():where(self, 0):div(1.0 - a.p)
end

-- x:sequential{f, g, ...}: g(f(x)); the functions are called with the
-- tensor so far, each must return a Tensor
function Tensor:sequential(...)
  local a = named_args("sequential", {"ll"}, nil, ...)
  local fns = a.ll
  if type(fns) ~= "table" or is_tensor(fns) then fail("sequential: expected a list of functions, got %s", type(fns)) end
  local x = self
  for i, f in ipairs(fns) do
    if type(f) ~= "function" and not (getmetatable(f) or {}).__call then
      fail("sequential: entry %d is a %s, not a function", i, type(f))
    end
    x = f(x)
    if not is_tensor(x) then fail("sequential: function %d returned a %s, not a Tensor", i, type(x)) end
  end
  return x
end
