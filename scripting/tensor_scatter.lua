-- tensor_scatter.lua - writing values at indices in the Tensor front end,
-- built as tinygrad v0.12.0 builds it: scatter and scatter_reduce compare
-- the index against an arange along a new last axis (a one-hot mask), move
-- that axis to `dim`, and either keep the last value written to each place
-- (a chain of WHEREs over the index's entries, in order) or reduce the
-- masked values over the new axis; masked_select counts the mask once on
-- the host (its result's size depends on the data) and gathers through a
-- scatter of ones and a cumsum.
local uop, shared = ...
local Tensor = uop.Tensor
local dtypes = uop.dtypes
local fail, is_tensor, fmt_shape, named_args = shared.fail, shared.is_tensor, shared.fmt_shape, shared.named_args
local resolve_axis, info, is_bool, concat = shared.resolve_axis, shared.info, shared.is_bool, shared.concat
local shrink_to, broadcast_to, one_hot_along_dim = shared.shrink_to, shared.broadcast_to, shared.one_hot_along_dim
-- error messages show a Tensor by its shape, never by its elements
local tostring = shared.show

-- tinygrad's _pre_scatter: src and the one-hot mask, both of self's shape
-- plus a last axis of the index's size along dim, the mask true where that
-- entry of the index points
local function pre_scatter(what, self, dim, index, src)
  if not is_tensor(index) then fail("%s: the index must be a Tensor, got %s", what, type(index)) end
  if not is_tensor(src) then fail("%s: src must be a Tensor, got %s", what, type(src)) end
  dim = resolve_axis(self, dim, false, what)
  local nd = #self._shape
  if #index._shape ~= nd or #src._shape ~= nd then
    fail("%s: the tensor %s, the index %s and src %s need the same number of dimensions", what,
         fmt_shape(self._shape), fmt_shape(index._shape), fmt_shape(src._shape))
  end
  for d = 1, nd do
    if (d ~= dim + 1 and index._shape[d] > self._shape[d]) or index._shape[d] > src._shape[d] then
      fail("%s: the index %s must be no larger than src %s on every axis and than the tensor %s on every axis but %d",
           what, fmt_shape(index._shape), fmt_shape(src._shape), fmt_shape(self._shape), dim)
    end
  end
  if src._dtype ~= self._dtype then
    fail("%s: src is %s and the tensor %s; they must have the same dtype", what, info(src._dtype).name, info(self._dtype).name)
  end
  local size = self._shape[dim + 1]
  src = shrink_to(src, index._shape)
  src = src:unsqueeze(-1):expand(concat(src._shape, {size})):transpose(-1, dim)
  local mask = one_hot_along_dim(index:unsqueeze(-1), size, -1, what):transpose(-1, dim)
  local pads = {}
  for d = 1, nd do pads[d] = d ~= dim + 1 and {0, self._shape[d] - index._shape[d]} or false end
  pads[nd + 1] = false
  return src:pad(pads), mask:pad(pads)
end

-- tinygrad's _masked_setitem along the last axis: where several entries of
-- the index point at one place, the last one's value is kept
local function masked_setitem(target, values, mask)
  local masks, vals = mask:split(1, -1), values:split(1, -1)
  local m, v = masks[1], vals[1]
  for i = 2, #masks do m, v = m:bitwise_or(masks[i]), masks[i]:where(vals[i], v) end
  return m:squeeze(-1):where(v:squeeze(-1), target)
end

local REDUCE_OPS = {sum = true, prod = true, mean = true, amax = true, amin = true}

-- x:scatter_reduce(dim, index, src, reduce [, {include_self =}]): x with
-- src's values reduced into the places the index points at along dim
function Tensor:scatter_reduce(...)
  local a = named_args("scatter_reduce", {"dim", "index", "src", "reduce", "include_self"}, {include_self = true}, ...)
  local reduce, include_self = a.reduce, a.include_self
  if not REDUCE_OPS[reduce] then
    fail("scatter_reduce: reduce must be one of 'sum', 'prod', 'mean', 'amax' and 'amin', got %s", tostring(reduce))
  end
  if type(include_self) ~= "boolean" then fail("scatter_reduce: include_self must be a boolean, got %s", type(include_self)) end
  local src, mask = pre_scatter("scatter_reduce", self, a.dim, a.index, a.src)
  -- what the places no index points at start from: self, or the identity
  local function untouched(x, identity)
    if include_self then return x end
    return mask:any(-1):logical_not():where(x, identity)
  end
  if reduce == "sum" then return mask:where(src, 0):sum(-1):add(untouched(self, 0)) end
  if reduce == "prod" then return mask:where(src, 1):prod(-1):mul(untouched(self, 1)) end
  if reduce == "amax" then
    local lowest = info(src._dtype).min
    return mask:where(src, lowest):max(-1):maximum(untouched(self, lowest))
  end
  if reduce == "amin" then
    local highest = info(src._dtype).max
    return mask:where(src, highest):min(-1):minimum(untouched(self, highest))
  end
  local count = mask:where(1, 0):sum(-1):add(untouched(1, 0))
  return mask:where(src, 0):sum(-1):add(untouched(self, 0)):div(count)
end

-- x:scatter(dim, index, src [, reduce]): x with src's values (or the number
-- src) written where the index points along dim: out[..., index[i], ...] =
-- src[i]; reduce "add" or "multiply" combines them with x instead
function Tensor:scatter(...)
  local a = named_args("scatter", {"dim", "index", "src", "reduce"}, nil, ...)
  local reduce, src, index = a.reduce, a.src, a.index
  if reduce ~= nil and reduce ~= "add" and reduce ~= "multiply" then
    fail("scatter: reduce must be 'add' or 'multiply', got %s", tostring(reduce))
  end
  if reduce and is_tensor(src) then fail("scatter: reduce takes a number src; with a Tensor src use scatter_reduce") end
  if not is_tensor(index) then fail("scatter: the index must be a Tensor, got %s", type(index)) end
  if not is_tensor(src) then
    if type(src) ~= "number" and type(src) ~= "boolean" then fail("scatter: src must be a Tensor or a number, got %s", type(src)) end
    src = index:full_like(src, {dtype = self._dtype})
  end
  if reduce == "add" then return self:scatter_reduce(a.dim, index, src, "sum") end
  if reduce == "multiply" then return self:scatter_reduce(a.dim, index, src, "prod") end
  local values, mask = pre_scatter("scatter", self, a.dim, index, src)
  -- an index with no entry along dim writes nothing
  if values._shape[#values._shape] == 0 then return self end
  return masked_setitem(self, values, mask)
end

-- x:masked_select(mask): a 1-D tensor of x's elements where the mask (a
-- bool tensor broadcast to x's shape) is true, in order; counting them
-- runs a kernel, as in tinygrad
function Tensor:masked_select(mask)
  if not is_tensor(mask) then fail("masked_select: the mask must be a Tensor, got %s", type(mask)) end
  if not is_bool(mask._dtype) then fail("masked_select: the mask must be a bool tensor, got %s", info(mask._dtype).name) end
  local x, m = self:flatten(), broadcast_to(mask, self._shape):flatten()
  if x._shape[1] == 0 then return x end
  local running = m:cumsum()
  local selected = math.tointeger(running:slice{-1}:item())
  local counts = Tensor.zeros(selected, {dtype = dtypes.int32})
  return x:slice{counts:scatter(0, running, 1, "add"):cumsum()}
end
