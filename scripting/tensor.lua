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
--     Tensor.zeros(2, 2, {dtype="int32"}), x:conv2d(w, {stride=2, padding=1});
--     tinygrad's names: x:max_pool2d(3, {stride=1, ceil_mode=true}); the
--     leading arguments may be named there too: t:roll{shifts=1, dims=0},
--     or given in a lone options table's list part: t:pad{{1, 1}, value=3};
--     Python keywords take a trailing underscore: lerp's end is end_
--   * functions of several tensors take them as arguments or one list:
--     Tensor.cat(a, b, {dim=1}) a:cat(b) Tensor.stack{a, b}; those that make
--     several tensors (split, chunk, meshgrid) return a list
--   * dtypes by value (uop.dtypes.float16) or by name ("float16", "half")
--   * Lua numbers are "weak" like Python scalars: int32 tensor + 1 stays
--     int32, int32 tensor + 1.5 becomes float32
--   * t:pad{{1, 2}, {0, 1}}: (before, after) per axis (nil or false: none;
--     negative values cut); t:pad{1, 2, 0, 1}: PyTorch's flat order (last
--     axis first); {value = v} pads with v instead of 0, {mode = "reflect"}
--     (or "replicate", "circular") pads with the tensor's own elements
--   * t:slice{spec, ...}: one spec per leading axis, the rest kept whole.
--     A spec is an index (the axis is dropped), {start, stop [, step]}
--     (stop exclusive, nil ends, negative values from the end, negative
--     steps walk backwards), nil/false/{} for the whole axis, or an integer
--     Tensor of indices into the axis (tinygrad's x[t]: the result has the
--     index's shape there; several index tensors broadcast together):
--       t:slice{{0, 2}, {1, 3}}   t:slice{1}   t:slice{false, {nil, nil, -1}}
--       t:slice{Tensor{2, 0}}     t:slice{1, Tensor{{0, 1}}}
--   * t[i] with a Tensor i is t:slice{i}; keys other than method names and
--     Tensors are errors, and so is t[k] = v (tinygrad's setitem)
--   * comparisons are methods (Lua's < and == must return booleans):
--     t:lt(x) t:gt(x) t:le(x) t:ge(x) t:eq(x) t:ne(x); a == b is identity
--   * operators: + - * / // % ^ (pow), unary -, & | ~ (xor), ~t, << >>
--   * Tensor.rand uses a host generator (splitmix64) into a data buffer;
--     Tensor.manual_seed(n) makes it reproducible (the seed starts at 0)
--
-- The front end is split by idea; the module runs the parts in this order
-- (scripting/lua_module.c), each receiving the module table and `shared`,
-- the table of helpers one part defines for the later ones:
--   tensor.lua              the class, errors, shapes and arguments, axes,
--                           properties, operators
--   tensor_dtype.lua        dtypes by name, promotion, constants, cast,
--                           bitcast
--   tensor_movement.lua     reshape, expand, permute, flip, shrink, pad and
--                           its modes, repeat, repeat_interleave, roll, diag
--   tensor_elementwise.lua  broadcasting, ALU ops and their decompositions
--   tensor_activation.lua   activation functions: gelu, elu, softplus, erf...
--   tensor_reduce.lua       sum, prod, max, min, mean, var, std, argmax,
--                           any, all, softmax, logsumexp, dot, matmul
--   tensor_window.lua       sliding windows: max_pool2d, avg_pool2d, conv2d,
--                           conv_transpose2d, max_unpool2d, unfold,
--                           interpolate, cumsum, cumprod, cummax,
--                           logcumsumexp
--   tensor_create.lua       Tensor.new, full, zeros, ones, arange, linspace,
--                           eye, rand and the distributions, initialisers,
--                           randperm, multinomial
--   tensor_index.lua        slice, tensor indices, gather, one_hot,
--                           masked_fill, tril, triu
--   tensor_join.lua         cat, stack, split, chunk, meshgrid
--   tensor_einsum.lua       einsum
--   tensor_math.lua         asin, acos, atan, sinh, cosh and inverses,
--                           celu, selu, mish, hardswish..., isfinite, isclose
--   tensor_nn.lua           layernorm, batchnorm, linear, the losses,
--                           scaled_dot_product_attention, dropout
--   tensor_sort.lua         sort, argsort, topk (a bitonic network)
--   tensor_scatter.lua      scatter, scatter_reduce, masked_select
--   tensor_format.lua       a tensor's values as numpy prints them
--   tensor_realize.lua      realize, tolist, item, tostring
--   tensor_grad.lua         gradient, requires_grad_, backward
--   tensor_names.lua        tinygrad's parameter names for the functions
--                           written with positional ones: x:cumsum{axis=1}
--   tensor_errors.lua       wraps every Tensor function so that an error
--                           inside the front end is one line at the
--                           caller's, naming the function and its arguments
local uop, shared = ...

local Tensor = {}
uop.Tensor = Tensor

local dtypes = uop.dtypes
local INDEX = dtypes.index
local INTERNAL = "=uopdb/"
-- the most dimensions a shape may have (SHAPE_MAX_DIMS in core/sched/shape.h)
local MAX_DIMS = 16

-- ---------------------------------------------------------------- errors

-- a string on one line: its control characters (a newline) as escapes
local function one_line(s)
  return (s:gsub("%c", function(c)
    return c == "\n" and "\\n" or c == "\t" and "\\t" or c == "\r" and "\\r" or "\\" .. c:byte()
  end))
end

local show -- a value as a message shows it (below)

-- raises msg at the first caller outside the front end (every Lua part of
-- the module is a chunk named "=uopdb/<file>"); a Tensor among the values
-- is shown by its shape and dtype, and a string on one line
local function fail(fmt, ...)
  local args = table.pack(...)
  for i = 1, args.n do
    local v = args[i]
    if getmetatable(v) == Tensor then args[i] = show(v)
    elseif type(v) == "string" then args[i] = one_line(v) end
  end
  local msg = args.n > 0 and string.format(fmt, table.unpack(args, 1, args.n)) or fmt
  local where = ""
  if debug and debug.getinfo then
    for level = 2, 64 do
      local info = debug.getinfo(level, "Sl")
      if not info then break end
      if info.source:sub(1, #INTERNAL) ~= INTERNAL and info.what ~= "C" then
        if info.currentline and info.currentline > 0 then where = info.short_src .. ":" .. info.currentline .. ": " end
        break
      end
    end
  end
  error(where .. msg, 0)
end

local function is_tensor(v) return getmetatable(v) == Tensor end

-- a value as an error message shows it: a Tensor by its shape and dtype
-- (tostring would compute and print its elements)
function show(v)
  if is_tensor(v) then
    local parts = {}
    for i = 1, #v._shape do parts[i] = tostring(v._shape[i]) end
    return "Tensor(" .. table.concat(parts, ", ") .. (#parts == 1 and ",) " or ") ") .. tostring(v._dtype)
  end
  -- a string keeps to one line: control characters as escapes, cut when long
  if type(v) == "string" then return one_line(#v > 60 and v:sub(1, 60) .. "..." or v) end
  return tostring(v)
end

-- t.name finds a method; t[i] with a Tensor i indexes like t:slice{i}
-- (tinygrad's x[i]); any other key is an error, never a silent nil
function Tensor.__index(self, key)
  if type(key) == "string" then return Tensor[key] end
  if is_tensor(key) then
    if not is_tensor(self) then fail("Tensor index: needs a Tensor to index, got %s", show(self)) end
    return self:slice{key}
  end
  local got = type(key) == "table" and "a table" or type(key) .. " " .. show(key)
  fail("Tensor index: the key must be a method name or a Tensor, got %s (slice with t:slice{...})", got)
end

-- t[k] = v: tinygrad's setitem writes into a realized buffer (assign),
-- which this front end does not have; an error, never a silent new field
-- (that would also shadow the method or index of that name)
function Tensor.__newindex(_, key)
  local target = type(key) == "string" and "t." .. show(key) or "t[" .. show(key) .. "]"
  fail("Tensor: %s = v is not supported (a Tensor is immutable here); build the new one with "
    .. "masked_fill, where or pad", target)
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

-- the options table ending args[1..n], if any, and the count before it; an
-- empty table after other arguments is an empty options table
local function trailing_opts(args, n)
  local last = args[n]
  if n > 0 and (is_opts(last) or (n > 1 and type(last) == "table" and not is_tensor(last) and next(last) == nil)) then
    return last, n - 1
  end
  return {}, n
end

-- f(..., {a, b, c = v}): the list part of an options table continues the
-- positional arguments args[1..n].  (args, n, opts) with those values moved
-- to args[n+1..] and opts a copy without them (opts itself when it has no
-- list part).
local function split_list_part(args, n, opts)
  local rest, top = {}, 0
  for k, v in pairs(opts) do
    if math.type(k) == "integer" and k >= 1 then
      args[n + k] = v
      if k > top then top = k end
    else
      rest[k] = v
    end
  end
  if top == 0 then return args, n, opts end
  return args, n + top, rest
end

-- named arguments of what(...), tinygrad's way: positional values in the
-- order of names, or by name in a trailing options table (f(a, {c = ...}),
-- f{a = ..., c = ...} or f{a, c = ...}); defaults (optional) fill the rest.
-- Unknown keys, surplus values and a name given twice are errors.
--   local a = named_args("elu", {"alpha"}, {alpha = 1.0}, ...)
local function named_args(what, names, defaults, ...)
  local args, total = {...}, select("#", ...)
  local opts, n = trailing_opts(args, total)
  -- f{a, c = ...}: a lone options table holds the leading arguments too
  if total == 1 and n == 0 then args, n, opts = split_list_part(args, n, opts) end
  if n > #names then fail("%s: takes at most %d arguments, got %d", what, #names, n) end
  local out, known = {}, {}
  for i, name in ipairs(names) do
    known[name] = true
    if i <= n then out[name] = args[i] end
  end
  for k, v in pairs(opts) do
    if not known[k] then fail("%s: unknown option '%s'", what, show(k)) end
    if out[k] ~= nil then fail("%s: %s given twice", what, k) end
    out[k] = v
  end
  for k, v in pairs(defaults or {}) do
    if out[k] == nil then out[k] = v end
  end
  return out
end

-- raises "what: unknown option 'k'" for a key of the options table opts
-- that is not in allowed (a set: {dtype = true}); opts may be nil
local function check_options(what, opts, allowed)
  if opts == nil then return end
  if type(opts) ~= "table" or is_tensor(opts) then fail("%s: the options must be a table, got %s", what, type(opts)) end
  for k in pairs(opts) do
    if not allowed[k] then fail("%s: unknown option '%s'", what, show(k)) end
  end
end

-- raises "what: name must be a number, got ..." unless v is a number
local function check_number(what, name, v)
  if type(v) ~= "number" then fail("%s: %s must be a number, got %s", what, name, type(v)) end
  return v
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
  if n > MAX_DIMS then fail("%s: a shape has at most %d dimensions, got %d", what, MAX_DIMS, n) end
  local shape = {}
  for i = 1, n do
    local v = list[i]
    if math.type(v) ~= "integer" then
      if math.type(v) == "float" and v == math.floor(v) then v = math.tointeger(v) end
      if math.type(v) ~= "integer" then fail("%s: dimension %d of the shape is %s, not an integer", what, i - 1, show(v)) end
    end
    shape[i] = v
  end
  return shape, opts
end

-- raises "what: the shape (...) has too many elements (at most 2^56)" for a
-- shape whose dims (zeros counted as ones, as core/sched/shape.h counts
-- them) multiply past 2^56; the product is taken in floating point, so an
-- integer product that would wrap is caught too
local function check_numel(what, shape)
  local n = 1.0
  for i = 1, #shape do n = n * math.max(shape[i], 1) end
  if n > 2.0 ^ 56 then fail("%s: the shape %s has too many elements (at most 2^56)", what, fmt_shape(shape)) end
end

-- shape_args for a new tensor's shape, where -1 ("keep") means nothing
local function new_shape_args(what, ...)
  local shape, opts = shape_args(what, ...)
  for i = 1, #shape do
    if shape[i] < 0 then fail("%s: dimension %d of the shape is %d, negative", what, i - 1, shape[i]) end
  end
  check_numel(what, shape)
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

-- ---------------------------------------------------------------- axes

-- axis as a 0-based index (extra: one past the end is allowed, for a new
-- axis); what, when given, names the function in the error
local function resolve_axis(self, axis, extra, what)
  local total = #self._shape + (extra and 1 or 0)
  local prefix = what and (what .. ": ") or ""
  if math.type(axis) ~= "integer" then fail("%saxis must be an integer, got %s", prefix, show(axis)) end
  local lim = math.max(1, total)
  if axis < -lim or axis > lim - 1 then
    fail("%saxis %d out of range for a %d-D tensor", prefix, axis, #self._shape)
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

-- ---------------------------------------------------------------- operators

-- the operators; called directly (Tensor.__add(x, y)) with no Tensor
-- operand they say so, as Lua itself never calls them that way
local function op2(method)
  return function(a, b)
    if is_tensor(a) then return a[method](a, b) end
    if is_tensor(b) then return b[method](b, a, true) end
    fail("Tensor.%s: needs a Tensor operand, got %s and %s", method, show(a), show(b))
  end
end
local function self_op(name, fn)
  return function(a, ...)
    if not is_tensor(a) then fail("Tensor.%s: needs a Tensor operand, got %s", name, show(a)) end
    return fn(a, ...)
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
Tensor.__unm = self_op("neg", function(a) return a:neg() end)
Tensor.__bnot = self_op("bitwise_not", function(a) return a:bitwise_not() end)
Tensor.__len = self_op("len", function(a)
  if #a._shape == 0 then fail("len of a 0-d tensor") end
  return a._shape[1]
end)
function Tensor.__concat(a, b) return tostring(a) .. tostring(b) end
-- Lua's <, <=, > and >= always give a boolean, so they cannot give
-- tinygrad's elementwise comparison: say which method does
local function comparison_operator()
  fail("Lua's <, <=, > and >= give a boolean, not a Tensor: write a:lt(b), a:le(b), a:gt(b) or a:ge(b) " ..
       "(a:eq(b) and a:ne(b) for == and ~=)")
end
Tensor.__lt = comparison_operator
Tensor.__le = comparison_operator

Tensor.dtypes = dtypes
setmetatable(Tensor, {__call = function(_, ...) return Tensor.new(...) end})

-- for the parts that follow
shared.fail = fail
shared.is_tensor = is_tensor
shared.show = show
shared.MAX_DIMS = MAX_DIMS
shared.is_opts = is_opts
shared.named_args = named_args
shared.check_options = check_options
shared.trailing_opts = trailing_opts
shared.split_list_part = split_list_part
shared.fmt_shape = fmt_shape
shared.prod = prod
shared.shape_eq = shape_eq
shared.copy = copy
shared.concat = concat
shared.ceildiv = ceildiv
shared.shape_args = shape_args
shared.check_number = check_number
shared.new_shape_args = new_shape_args
shared.check_numel = check_numel
shared.device = device
shared.ivec = ivec
shared.wrap = wrap
shared.resolve_axis = resolve_axis
shared.axes_list = axes_list
