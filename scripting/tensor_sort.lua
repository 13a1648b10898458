-- tensor_sort.lua - sort, argsort and topk of the Tensor front end, built as
-- tinygrad v0.12.0 builds them: a bitonic sorting network over the axis
-- padded to a power of two (the padding sorts last: the dtype's largest
-- value, or its lowest when descending), the axis unflattened into one
-- axis of 2 per stage so that each compare-exchange is a split, a max, a
-- min and a cat; the indices come from matching each sorted value to its
-- original position, equal values told apart by how many came before.
local uop, shared = ...
local Tensor = uop.Tensor
local dtypes = uop.dtypes
local fail, named_args, resolve_axis, info = shared.fail, shared.named_args, shared.resolve_axis, shared.info

-- the bits needed to write n (0 for 0)
local function bit_length(n)
  local bits = 0
  while n > 0 do bits, n = bits + 1, n >> 1 end
  return bits
end

-- x:sort([dim [, descending]]) or {dim =, descending =}: (values, indices)
function Tensor:sort(...)
  local a = named_args("sort", {"dim", "descending"}, {dim = -1, descending = false}, ...)
  if type(a.descending) ~= "boolean" then fail("sort: descending must be a boolean, got %s", type(a.descending)) end
  local nd = #self._shape
  if nd == 0 then fail("sort: a 0-d tensor has no axis to sort") end
  local dim, descending = resolve_axis(self, a.dim, false, "sort"), a.descending
  local len = self._shape[dim + 1]
  if len <= 1 then return self, self:zeros_like{dtype = dtypes.int32} end
  local stages = bit_length(len - 1)
  local pads, twos = {}, {}
  for i = 1, nd do pads[i] = i == dim + 1 and {0, (1 << stages) - len} or false end
  for i = 1, stages do twos[i] = 2 end
  local fill = descending and info(self._dtype).min or info(self._dtype).max
  local x = self:pad(pads, {value = fill}):unflatten(dim, twos)
  for stage = 1, stages do
    local crossover, flips
    if stage ~= stages then
      -- flip the second half so that every box of this stage sorts one way
      crossover = dim + stages - stage - 1
      flips = {}
      for i = 1, stage + nd - dim do flips[i] = -i end
      local halves = x:split(1, crossover)
      x = halves[1]:cat(halves[2]:flip(flips), {dim = crossover}):contiguous()
    end
    for substage = stage - 1, 0, -1 do
      local partner = dim + stages - substage - 1
      local halves = x:split(1, partner)
      local larger, smaller = halves[1]:maximum(halves[2]), halves[1]:minimum(halves[2])
      x = (descending and larger:cat(smaller, {dim = partner}) or smaller:cat(larger, {dim = partner})):contiguous()
    end
    if stage ~= stages then
      local halves = x:split(1, crossover)
      x = halves[1]:cat(halves[2]:flip(flips), {dim = crossover})
    end
  end
  local keep = {}
  for i = 1, nd do keep[i] = {0, self._shape[i]} end
  x = x:flatten(dim, dim + stages - 1):shrink(keep)
  -- indices: the k-th occurrence of a value in the sorted axis is its
  -- k-th occurrence in the original one
  local mask_shape = {len, len}
  for i = 1, nd - dim - 1 do mask_shape[i + 2] = 1 end
  local mask = Tensor.ones(len, len, {dtype = dtypes.bool}):tril():reshape(mask_shape)
  local function counts(t) return mask:bitwise_and(t:unsqueeze(dim):eq(t:unsqueeze(dim + 1))):sum(dim + 1) end
  local count_orig, count_sorted = counts(self), counts(x)
  local cond = self:unsqueeze(dim + 1):eq(x:unsqueeze(dim))
    :bitwise_and(count_orig:unsqueeze(dim + 1):eq(count_sorted:unsqueeze(dim)))
  local idx_shape = {}
  for i = 1, nd do idx_shape[i] = i == dim + 1 and len or 1 end
  local idx = Tensor.arange(len):reshape(idx_shape)
  return x, cond:mul(idx:unsqueeze(dim + 1)):sum(dim)
end

-- the indices of x:sort
function Tensor:argsort(...)
  local a = named_args("argsort", {"dim", "descending"}, {dim = -1, descending = false}, ...)
  local _, idx = self:sort(a.dim, a.descending)
  return idx
end

-- the k largest (or smallest) values along dim, sorted, and their indices
function Tensor:topk(...)
  local a = named_args("topk", {"k", "dim", "largest", "sorted_"}, {dim = -1, largest = true, sorted_ = true}, ...)
  if not a.sorted_ then fail("topk: sorted_ = false is not supported") end
  if math.type(a.k) ~= "integer" or a.k < 0 then fail("topk: k must be a non-negative integer, got %s", shared.show(a.k)) end
  if #self._shape == 0 then fail("topk: a 0-d tensor has no axis") end
  local dim = resolve_axis(self, a.dim, false, "topk")
  if a.k > self._shape[dim + 1] then fail("topk: k = %d is more than axis %d's %d elements", a.k, dim, self._shape[dim + 1]) end
  local x, idx = self:sort(dim, a.largest)
  local keep = {}
  for i = 1, #self._shape do keep[i] = i == dim + 1 and {0, a.k} or {0, self._shape[i]} end
  return x:shrink(keep), idx:shrink(keep)
end
