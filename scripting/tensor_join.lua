-- tensor_join.lua - joining and splitting tensors in the Tensor front end:
-- cat (each tensor padded to the joined size along the axis, then added),
-- stack (cat of unsqueezed tensors), split and chunk (slices), meshgrid
-- (reshapes broadcast to one shape).  Functions of several tensors take
-- them as arguments or as one list: Tensor.cat(a, b, {dim = 1}),
-- a:cat(b, {dim = 1}), Tensor.cat({a, b}); those that make several
-- tensors return a list of them.
local uop, shared = ...
local Tensor = uop.Tensor
local fail, is_tensor, is_opts, fmt_shape = shared.fail, shared.is_tensor, shared.is_opts, shared.fmt_shape
-- error messages show a Tensor by its shape, never by its elements
local tostring = shared.show
local ceildiv, resolve_axis, named_args = shared.ceildiv, shared.resolve_axis, shared.named_args
local broadcast_to, broadcast_shapes = shared.broadcast_to, shared.broadcast_shapes
local trailing_opts = shared.trailing_opts

-- (tensors, options) of f(t1, t2, ..., {opts}), f({t1, t2, ...}, {opts}) or
-- f{t1, t2, ..., dim = 1} (the options' list part continues the tensors,
-- so a:cat{b, dim = 1} is a:cat(b, {dim = 1})); allowed: the option names
local function tensor_args(what, allowed, ...)
  local args = {...}
  local opts, n = trailing_opts(args, select("#", ...))
  args, n, opts = shared.split_list_part(args, n, opts)
  shared.check_options(what, opts, allowed)
  local list = args
  if n == 1 and type(args[1]) == "table" and not is_tensor(args[1]) then
    list = args[1]
    n = #list
  end
  if n == 0 then fail("%s: at least one Tensor is needed", what) end
  local ts = {}
  for i = 1, n do
    if not is_tensor(list[i]) then fail("%s: operand %d is a %s, not a Tensor", what, i, type(list[i])) end
    ts[i] = list[i]
  end
  return ts, opts
end

-- Tensor.cat(t1, t2, ..., {dim = 0}): joined along an existing axis
function Tensor.cat(...)
  local ts, opts = tensor_args("cat", {dim = true}, ...)
  local first = ts[1]
  local dim = resolve_axis(first, opts.dim or 0, false, "cat")
  for i = 2, #ts do
    local t, same = ts[i], #ts[i]._shape == #first._shape
    for j = 1, #first._shape do
      if same and j ~= dim + 1 and t._shape[j] ~= first._shape[j] then same = false end
    end
    if not same then
      fail("cat: tensors of shapes %s and %s differ outside axis %d", fmt_shape(first._shape), fmt_shape(t._shape), dim)
    end
  end
  local offsets = {0}
  for i, t in ipairs(ts) do offsets[i + 1] = offsets[i] + t._shape[dim + 1] end
  local total, ret = offsets[#ts + 1], nil
  for i, t in ipairs(ts) do
    local pads = {}
    for j = 1, #t._shape do pads[j] = false end
    pads[dim + 1] = {offsets[i], total - offsets[i + 1]}
    local p = t:pad(pads)
    ret = ret and ret:add(p) or p
  end
  return ret
end

-- Tensor.stack(t1, t2, ..., {dim = 0}): joined along a new axis
function Tensor.stack(...)
  local ts, opts = tensor_args("stack", {dim = true}, ...)
  local dim = opts.dim or 0
  resolve_axis(ts[1], dim, true, "stack")
  local us = {}
  for i, t in ipairs(ts) do us[i] = t:unsqueeze(dim) end
  return Tensor.cat(us, {dim = dim})
end

-- t:split(sizes [, dim]): a list of slices along dim; an integer size cuts
-- pieces of that size (the last may be smaller), a list gives each size
function Tensor:split(...)
  local a = named_args("split", {"sizes", "dim"}, nil, ...)
  if #self._shape == 0 then fail("split: a 0-d tensor has no axis to split") end
  local dim = resolve_axis(self, a.dim or 0, false, "split")
  local dim_sz, sizes = self._shape[dim + 1], a.sizes
  if math.type(sizes) == "integer" then
    local list = {}
    for i = 0, math.max(1, dim_sz) - 1, math.max(1, sizes) do list[#list + 1] = math.min(sizes, dim_sz - i) end
    sizes = list
  elseif type(sizes) ~= "table" or is_tensor(sizes) or is_opts(sizes) then
    fail("split: sizes must be an integer or a list of integers, got %s", type(sizes))
  end
  local total = 0
  for i = 1, #sizes do
    if math.type(sizes[i]) ~= "integer" then fail("split: size %d is %s, not an integer", i, tostring(sizes[i])) end
    total = total + sizes[i]
  end
  if total ~= dim_sz then
    fail("split: the sizes sum to %d, not to the size %d of axis %d", total, dim_sz, dim)
  end
  local pieces, start = {}, 0
  for i = 1, #sizes do
    local spec = {}
    spec[dim + 1] = {start, start + sizes[i]}
    pieces[i] = self:slice(spec)
    start = start + sizes[i]
  end
  return pieces
end

-- t:chunk(chunks [, dim]): a list of at most chunks pieces of equal size
-- (the last may be smaller)
function Tensor:chunk(...)
  local a = named_args("chunk", {"chunks", "dim"}, nil, ...)
  if #self._shape == 0 then fail("chunk: a 0-d tensor has no axis to chunk") end
  local dim = resolve_axis(self, a.dim or 0, false, "chunk")
  local chunks, dim_sz = a.chunks, self._shape[dim + 1]
  if math.type(chunks) ~= "integer" or chunks <= 0 then fail("chunk: chunks must be a positive integer, got %s", tostring(chunks)) end
  if dim_sz > 0 then return self:split(ceildiv(dim_sz, chunks), dim) end
  local zeros = {}
  for i = 1, chunks do zeros[i] = 0 end
  return self:split(zeros, dim)
end

-- Tensor.meshgrid(t1, t2, ..., {indexing = "ij"}): the list of coordinate
-- grids ("xy" swaps the first two axes)
function Tensor.meshgrid(...)
  local ts, opts = tensor_args("meshgrid", {indexing = true}, ...)
  local indexing = opts.indexing or "ij"
  if indexing ~= "ij" and indexing ~= "xy" then fail("meshgrid: indexing must be \"ij\" or \"xy\", got %s", tostring(indexing)) end
  if #ts == 1 then return {ts[1]} end
  local shaped, shapes = {}, {}
  for i, t in ipairs(ts) do
    local basis = i - 1
    if indexing == "xy" and i <= 2 then basis = 2 - i end
    local shape = {-1}
    for k = 1, #ts - 1 - basis do shape[k + 1] = 1 end
    shaped[i] = t:reshape(shape)
    shapes[i] = shaped[i]._shape
  end
  local out = broadcast_shapes("meshgrid", shapes)
  for i, t in ipairs(shaped) do shaped[i] = broadcast_to(t, out) end
  return shaped
end

-- for the parts that follow
shared.tensor_args = tensor_args
