-- tensor_create.lua - making tensors: Tensor.new from nested tables,
-- numbers and UOps, empty, full, zeros, ones and the _like forms, arange,
-- linspace, eye, rand with its host generator and what tinygrad builds on
-- it: the distributions, the weight initialisers, randperm, multinomial.
local uop, shared = ...
local Tensor = uop.Tensor
local dtypes = uop.dtypes
local F32, I32, BOOL = dtypes.float32, dtypes.int32, dtypes.bool
local fail, is_tensor, is_opts = shared.fail, shared.is_tensor, shared.is_opts
-- error messages show a Tensor by its shape, never by its elements
local tostring = shared.show
local fmt_shape, prod, shape_eq = shared.fmt_shape, shared.prod, shared.shape_eq
local concat, ceildiv, new_shape_args = shared.concat, shared.ceildiv, shared.new_shape_args
local check_options = shared.check_options
local DTYPE_ONLY = {dtype = true}
local wrap, info, to_dtype, is_float = shared.wrap, shared.info, shared.to_dtype, shared.is_float
local from_lua, as_const, const_tensor = shared.from_lua, shared.as_const, shared.const_tensor
local reshape_raw, cumalu = shared.reshape_raw, shared.cumalu

-- shape of a nested table; on_path holds the tables being walked (a table
-- met again inside itself is refused), and a nesting past the rank limit is
-- refused at that depth, before the rest of it is walked
local MAX_RANK = 16
local function nested_shape(data, path, on_path, depth)
  if type(data) ~= "table" then return {} end
  if on_path[data] then fail("Tensor.new: the data nests itself (data%s is data%s)", path, on_path[data]) end
  if depth > MAX_RANK then
    fail("Tensor.new: the data nests deeper than %d levels (a shape has at most %d dimensions)", MAX_RANK, MAX_RANK)
  end
  local n = #data
  if n == 0 then return {0} end
  on_path[data] = path
  local sub = nested_shape(data[1], path .. "[1]", on_path, depth + 1)
  for i = 2, n do
    local s = nested_shape(data[i], path .. "[" .. i .. "]", on_path, depth + 1)
    if not shape_eq(s, sub) then
      fail("inhomogeneous shape: %s%s has shape %s, %s[1] has %s", "data", path .. "[" .. i .. "]", fmt_shape(s), path == "" and "data" or "data" .. path, fmt_shape(sub))
    end
  end
  on_path[data] = nil
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

-- a tensor of data, which Tensor.new describes
local function new_tensor(data, dtype)
  local dt = dtype and to_dtype(dtype)
  if is_tensor(data) then return dt and data:cast(dt) or data end
  if type(data) == "userdata" then return from_uop(data) end
  if type(data) == "number" or type(data) == "boolean" then return const_tensor(data, dt or from_lua(data)) end
  if type(data) ~= "table" then fail("Tensor: cannot make a tensor of a %s", type(data)) end
  local shape = nested_shape(data, "", {}, 1)
  local flat = flatten_values(data, {})
  if not dt then
    local all_bool, all_int = #flat > 0, #flat > 0
    for _, v in ipairs(flat) do
      if type(v) ~= "boolean" then all_bool = false end
      if type(v) == "number" and math.type(v) ~= "integer" then all_int = false end
    end
    dt = all_bool and BOOL or all_int and I32 or F32
  end
  -- bfloat16 data is made float32 and cast, as tinygrad makes it
  local store = (info(dt).host and dt ~= dtypes.bfloat16) and dt or F32
  local vals = {}
  for i, v in ipairs(flat) do vals[i] = as_const(v, store) end
  local b = wrap(uop.buffer(store, vals), {#vals}, store)
  return reshape_raw(b, shape):cast(dt)
end

-- Tensor.new(data [, dtype | {dtype =, requires_grad =}]): data a nested
-- table, a number or boolean (a constant of shape ()), a UOp of a tensor
-- graph, or a Tensor; requires_grad marks it for backward (requires_grad_)
function Tensor.new(data, dtype)
  local requires_grad
  if is_opts(dtype) then
    check_options("Tensor", dtype, {dtype = true, requires_grad = true})
    dtype, requires_grad = dtype.dtype, dtype.requires_grad
  end
  local t = new_tensor(data, dtype)
  if requires_grad ~= nil then t:requires_grad_(requires_grad) end
  return t
end

function Tensor.from_uop(u) return from_uop(u) end

-- raises "what: N bytes exceeds the host buffer limit (16 GiB)" before a
-- host buffer of shape's elements of dt is filled or allocated (the count
-- is taken in floating point, so a shape whose product overflows is refused too)
local function check_host_bytes(what, shape, dt)
  local bytes = 1.0 * info(dt).itemsize
  for i = 1, #shape do bytes = bytes * shape[i] end
  if bytes > uop._host_buffer_limit then
    fail("%s: %.0f bytes exceeds the host buffer limit (%d GiB)", what, bytes, uop._host_buffer_limit >> 30)
  end
end

-- Tensor.empty(shape...): a data buffer of zeros
function Tensor.empty(...)
  local shape, opts = new_shape_args("empty", ...)
  check_options("empty", opts, DTYPE_ONLY)
  local dt = to_dtype(opts.dtype or F32)
  if not info(dt).host then fail("empty: %s cannot be held in a host buffer", info(dt).name) end
  check_host_bytes("empty", shape, dt)
  return reshape_raw(wrap(uop.buffer(dt, prod(shape)), {prod(shape)}, dt), shape)
end

function Tensor.full(shape, value, opts)
  check_options("full", opts, DTYPE_ONLY)
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
  check_options("zeros", opts, DTYPE_ONLY)
  return Tensor.full(shape, 0.0, opts)
end

function Tensor.ones(...)
  local shape, opts = new_shape_args("ones", ...)
  check_options("ones", opts, DTYPE_ONLY)
  return Tensor.full(shape, 1.0, opts)
end

-- Tensor.empty with x's shape ({dtype =} defaults to x's dtype)
function Tensor:empty_like(opts)
  check_options("empty_like", opts, DTYPE_ONLY)
  return Tensor.empty(self._shape, {dtype = opts and opts.dtype or self._dtype})
end

function Tensor:full_like(value, opts)
  check_options("full_like", opts, DTYPE_ONLY)
  return Tensor.full(self._shape, value, {dtype = opts and opts.dtype or self._dtype})
end
function Tensor:zeros_like(opts) return self:full_like(0, opts) end
function Tensor:ones_like(opts) return self:full_like(1, opts) end

-- Tensor.arange(stop) / (start, stop [, step]) [, {dtype=}]
function Tensor.arange(start, stop, step, opts)
  if is_opts(stop) then stop, opts = nil, stop
  elseif is_opts(step) then step, opts = nil, step end
  check_options("arange", opts, DTYPE_ONLY)
  opts = opts or {}
  if stop == nil then start, stop = 0, start end
  step = step or 1
  for _, v in ipairs({start, stop, step}) do
    if type(v) ~= "number" then fail("arange: start, stop and step must be numbers") end
    if v ~= v or v == math.huge or v == -math.huge then
      fail("arange: start, stop and step must be finite, got %s", tostring(v))
    end
  end
  if step == 0 then fail("arange: step must not be zero") end
  local any_float = math.type(start) == "float" or math.type(stop) == "float" or math.type(step) == "float"
  local dt = opts.dtype and to_dtype(opts.dtype) or (any_float and F32 or I32)
  local i = info(dt)
  if i.kind ~= "float" and (start < i.min or i.max < stop - step) then
    fail("arange: [%s, %s) is not representable in dtype %s", tostring(start), tostring(stop), i.name)
  end
  local len = math.ceil((stop - start) / step)
  if math.type(start) == "integer" and math.type(stop) == "integer" and math.type(step) == "integer" then
    len = ceildiv(stop - start, step)
  end
  if len <= 0 then return Tensor.new({}, dt) end
  local n = math.tointeger(len)
  if not n then
    fail("arange: [%s, %s) in steps of %s has %.0f elements: more than a tensor can hold", tostring(start),
         tostring(stop), tostring(step), len)
  end
  return cumalu(Tensor.full({n}, step, {dtype = dt}), 0, "ADD"):add(start - step):cast(dt)
end

-- Tensor.linspace(start, stop, steps [, {dtype=}]): steps values from start
-- to stop inclusive, start + arange(steps) * step computed in float32 (the
-- default dtype) and cast to dtype
function Tensor.linspace(start, stop, steps, opts)
  check_options("linspace", opts, DTYPE_ONLY)
  opts = opts or {}
  if type(start) ~= "number" or type(stop) ~= "number" then fail("linspace: start and stop must be numbers") end
  if math.type(steps) ~= "integer" then fail("linspace: steps must be an integer, got %s", tostring(steps)) end
  if steps < 0 then fail("linspace: number of steps must be non-negative") end
  local dt = to_dtype(opts.dtype or F32)
  if dt == BOOL then fail("linspace with bool dtype is not supported") end
  if steps == 1 then return Tensor.new({start}, dt) end
  return Tensor.arange(steps):mul((stop - start) / (steps - 1)):add(start, true):cast(dt)
end

-- Tensor.eye(n [, m] [, {m =, dtype = }])
function Tensor.eye(n, ...)
  local opts = shared.named_args("eye", {"m", "dtype"}, nil, ...)
  local m = opts.m or n
  if math.type(n) ~= "integer" or math.type(m) ~= "integer" or n < 0 or m < 0 then
    fail("eye: sizes must be non-negative integers, got %s, %s", tostring(n), tostring(m))
  end
  return Tensor.arange(n):unsqueeze(-1):eq(Tensor.arange(m)):cast(opts.dtype and to_dtype(opts.dtype) or F32)
end

-- random numbers: splitmix64 on the host (uop._random_buffer), uniform in [0, 1)
local rng_state = 0
function Tensor.manual_seed(seed)
  if math.type(seed) ~= "integer" then fail("manual_seed: the seed must be an integer") end
  rng_state = seed
end

function Tensor.rand(...)
  local shape, opts = new_shape_args("rand", ...)
  check_options("rand", opts, {dtype = true, seed = true})
  local dt = to_dtype(opts.dtype or F32)
  if not is_float(dt) then fail("rand only supports float dtypes, got %s", info(dt).name) end
  local bits = info(dt).mantissa
  local state = opts.seed or rng_state
  if math.type(state) ~= "integer" then fail("rand: the seed must be an integer") end
  local store = (info(dt).host and dt ~= dtypes.bfloat16) and dt or F32
  check_host_bytes("rand", shape, store)
  local n = prod(shape)
  -- the buffer is filled in C with the same generator; the state moves on
  -- by one step per element
  local b = wrap(uop._random_buffer(store, n, bits, state), {n}, store)
  if not opts.seed then rng_state = state + n * 0x9E3779B97F4A7C15 end
  return reshape_raw(b, shape):cast(dt)
end

-- the distributions tinygrad builds on rand, from the same generator:

-- Tensor.rand with x's shape ({dtype =} defaults to x's dtype)
function Tensor:rand_like(opts)
  check_options("rand_like", opts, DTYPE_ONLY)
  return Tensor.rand(self._shape, {dtype = opts and opts.dtype or self._dtype})
end

-- standard normal values by Box-Muller from two uniform draws (a rand of
-- x stacked with itself): cos(2 pi u0) sqrt(-2 log(1 - u1))
function Tensor:randn_like(opts)
  check_options("randn_like", opts, DTYPE_ONLY)
  local src = Tensor.rand(concat({2}, self._shape), {dtype = F32})
  local radius = src:slice{1}:sub(1, true):log():mul(-2):sqrt()
  return src:slice{0}:mul(2 * math.pi):cos():mul(radius):cast(opts and opts.dtype or self._dtype)
end

-- Tensor.randn(shape... [, {dtype =}])
function Tensor.randn(...)
  local shape, opts = new_shape_args("randn", ...)
  check_options("randn", opts, DTYPE_ONLY)
  return Tensor.empty(shape):randn_like{dtype = opts.dtype}
end

-- Tensor.normal(shape... [, {mean =, std =}]): std * randn + mean
function Tensor.normal(...)
  local shape, opts = new_shape_args("normal", ...)
  check_options("normal", opts, {mean = true, std = true, dtype = true})
  return Tensor.randn(shape, {dtype = opts.dtype}):mul(opts.std or 1.0, true):add(opts.mean or 0.0)
end

-- Tensor.uniform(shape... [, {low =, high =, dtype =}]): values in [low, high)
function Tensor.uniform(...)
  local shape, opts = new_shape_args("uniform", ...)
  check_options("uniform", opts, {low = true, high = true, dtype = true})
  local low, high = opts.low or 0.0, opts.high or 1.0
  shared.check_number("uniform", "low", low)
  shared.check_number("uniform", "high", high)
  return Tensor.rand(shape):mul(high - low, true):cast(opts.dtype and to_dtype(opts.dtype) or F32):add(low)
end

-- Tensor.randint(shape... [, {low = 0, high = 10, dtype = "int32"}]): integers in [low, high)
function Tensor.randint(...)
  local shape, opts = new_shape_args("randint", ...)
  check_options("randint", opts, {low = true, high = true, dtype = true})
  local low, high = opts.low or 0, opts.high or 10
  if math.type(low) ~= "integer" or math.type(high) ~= "integer" then
    fail("randint: low = %s and high = %s must be integers", tostring(low), tostring(high))
  end
  local dt = to_dtype(opts.dtype or I32)
  if not shared.is_int(dt) then fail("randint: dtype must be an integer dtype, got %s", info(dt).name) end
  return Tensor.uniform(shape, {low = low, high = high, dtype = dt})
end

-- Tensor.scaled_uniform(shape...): uniform in [-1, 1) scaled by 1/sqrt(numel)
function Tensor.scaled_uniform(...)
  local shape, opts = new_shape_args("scaled_uniform", ...)
  check_options("scaled_uniform", opts, DTYPE_ONLY)
  return Tensor.uniform(shape, {low = -1.0, high = 1.0, dtype = opts.dtype}):mul(prod(shape) ^ -0.5)
end

-- a weight shape's fan in: the product of its axes after the first;
-- nonzero for the callers that divide by it
local function fan_in(what, shape, nonzero)
  if #shape == 0 then fail("%s: a weight shape needs at least one axis", what) end
  local fan = prod({table.unpack(shape, 2)})
  if nonzero and fan == 0 then fail("%s: the shape %s has a fan in of 0", what, fmt_shape(shape)) end
  return fan
end

-- Tensor.glorot_uniform(shape...): uniform in [-1, 1) times
-- sqrt(6 / (shape[1] + the fan in))
function Tensor.glorot_uniform(...)
  local shape, opts = new_shape_args("glorot_uniform", ...)
  check_options("glorot_uniform", opts, DTYPE_ONLY)
  local fans = fan_in("glorot_uniform", shape) + shape[1]
  if fans == 0 then fail("glorot_uniform: the shape %s has no fan to scale by", fmt_shape(shape)) end
  return Tensor.uniform(shape, {low = -1.0, high = 1.0, dtype = opts.dtype}):mul((6 / fans) ^ 0.5)
end

-- the gain PyTorch's kaiming initialisers give a leaky ReLU of slope a,
-- over the square root of the fan in
local function kaiming_scale(what, shape, opts)
  check_options(what, opts, {a = true, dtype = true})
  local slope = shared.check_number(what, "a", opts.a or 0.01)
  return math.sqrt(2.0 / (1 + slope ^ 2)) / math.sqrt(fan_in(what, shape, true))
end

-- Tensor.kaiming_uniform(shape... [, {a = 0.01, dtype =}]): uniform in
-- [-bound, bound), bound = sqrt(3) * gain / sqrt(fan in)
function Tensor.kaiming_uniform(...)
  local shape, opts = new_shape_args("kaiming_uniform", ...)
  local bound = math.sqrt(3.0) * kaiming_scale("kaiming_uniform", shape, opts)
  return Tensor.uniform(shape, {low = -bound, high = bound, dtype = opts.dtype})
end

-- Tensor.kaiming_normal(shape... [, {a = 0.01, dtype =}]): normal with
-- std = gain / sqrt(fan in)
function Tensor.kaiming_normal(...)
  local shape, opts = new_shape_args("kaiming_normal", ...)
  local std = kaiming_scale("kaiming_normal", shape, opts)
  return Tensor.normal(shape, {mean = 0.0, std = std, dtype = opts.dtype})
end

-- Tensor.randperm(n [, {dtype = "int32"}]): 0 .. n-1 in a random order
-- (the argsort of n uniform draws)
function Tensor.randperm(n, opts)
  check_options("randperm", opts, DTYPE_ONLY)
  if math.type(n) ~= "integer" or n < 0 then fail("randperm: n must be an integer >= 0, got %s", tostring(n)) end
  return Tensor.rand(n):argsort():cast(to_dtype(opts and opts.dtype or I32))
end

-- x:multinomial([num_samples = 1 [, replacement = false]]): indices drawn
-- with x's values (1-D, or one distribution per row of a 2-D x) as
-- weights: a uniform draw against each row's normalised cumulative sum;
-- more than one sample needs replacement, as in tinygrad
function Tensor:multinomial(...)
  local a = shared.named_args("multinomial", {"num_samples", "replacement"}, {num_samples = 1, replacement = false}, ...)
  local n, nd = a.num_samples, #self._shape
  if nd ~= 1 and nd ~= 2 then fail("multinomial: expected a 1-D or 2-D tensor of weights, got %s", fmt_shape(self._shape)) end
  if math.type(n) ~= "integer" or n < 1 then fail("multinomial: num_samples must be a positive integer, got %s", tostring(n)) end
  if type(a.replacement) ~= "boolean" then fail("multinomial: replacement must be a boolean, got %s", type(a.replacement)) end
  if not a.replacement and n ~= 1 then fail("multinomial: %d samples need replacement = true", n) end
  local weight = nd == 1 and self:unsqueeze(0) or self
  local rows, classes = weight._shape[1], weight._shape[2]
  if classes == 0 then fail("multinomial: no weights to draw from") end
  local cw = weight:cumsum(1):float()
  local cdf = cw:div(cw:slice{false, -1}:unsqueeze(1))
  local indices = Tensor.rand(n, rows, 1):expand(-1, -1, classes):ge(cdf):sum(2):permute(1, 0)
  return (nd == 1 and indices:squeeze(0) or indices):cast(I32)
end
