-- tensor_names.lua - tinygrad's parameter names for the Tensor functions
-- written with plain positional parameters, so that a tinygrad user can name
-- them as in Python: x:cumsum{axis = 1}, x:transpose{dim0 = 0, dim1 = 1},
-- x:conv2d{weight = w, padding = 1}, Tensor.arange{start = 1, stop = 4},
-- x:pad{{{1, 1}, nil}, value = 3} (the list part of a lone options table is
-- the leading arguments).  Runs after the parts that define the functions;
-- the functions that take their arguments by name themselves (named_args)
-- are not listed.  A call with no options table goes straight to the
-- function; one with an options table has its names checked: an unknown
-- name, or one also given by position, is an error (tinygrad's TypeError).
local uop, shared = ...
local Tensor = uop.Tensor
local named_args, is_opts = shared.named_args, shared.is_opts

-- name = {tinygrad's parameters in order, takes = how many of them the Lua
-- function takes as arguments (the rest go in one options table after
-- them; all when absent), static = called without self}
local SIGNATURES = {
  -- movement
  transpose = {"dim0", "dim1"},
  flatten = {"start_dim", "end_dim"},
  unflatten = {"dim", "sizes"},
  squeeze = {"dim"},
  unsqueeze = {"dim"},
  pad = {"padding", "mode", "value", takes = 1},
  -- elementwise
  maximum = {"x"},
  minimum = {"x"},
  where = {"x", "y"},
  pow = {"x", "reverse"},
  clamp = {"min_", "max_"},
  clip = {"min_", "max_"},
  leaky_relu = {"neg_slope"},
  lerp = {"end", "weight"},
  copysign = {"other"},
  logaddexp = {"other"},
  cast = {"dtype"},
  bitcast = {"dtype"},
  -- indexing
  gather = {"dim", "index"},
  masked_fill = {"mask", "value"},
  masked_select = {"mask"},
  -- windows, cumulative ops, matmul
  cumsum = {"axis"},
  cumprod = {"axis"},
  cummax = {"axis"},
  conv2d = {"weight", "bias", "groups", "stride", "dilation", "padding", "dtype", takes = 1},
  dot = {"w", "dtype", takes = 1},
  matmul = {"x", "reverse", "dtype", takes = 1},
  -- creation
  full_like = {"fill_value", "dtype", takes = 1},
  full = {"shape", "fill_value", "dtype", takes = 2, static = true},
  arange = {"start", "stop", "step", "dtype", takes = 3, static = true},
  linspace = {"start", "stop", "steps", "dtype", takes = 3, static = true},
  randperm = {"n", "dtype", takes = 1, static = true},
  -- gradients
  backward = {"gradient"},
  requires_grad_ = {"requires_grad"},
}

-- Lua spells Python's keyword-like names with a trailing underscore
-- (tinygrad's own min_, max_); `end` is a Lua keyword, so lerp takes end_
local LUA_SPELLING = {["end"] = "end_"}

-- whether f(...) needs its names looked at: more arguments than the Lua
-- function takes, or an options table last
local function named_call(takes, ...)
  local n = select("#", ...)
  return n > takes or (n > 0 and is_opts((select(n, ...))))
end

-- the arguments of f(...) by their Lua names, laid out as the Lua function
-- takes them: the first `takes` in order, then the rest in a table
local function positional(what, names, takes, ...)
  local a = named_args(what, names, nil, ...)
  local out = {}
  for i = 1, takes do out[i] = a[names[i]] end
  if takes == #names then return out, takes end
  local rest = {}
  for i = takes + 1, #names do rest[names[i]] = a[names[i]] end
  out[takes + 1] = rest
  return out, takes + 1
end

for name, sig in pairs(SIGNATURES) do
  local fn, takes, names = Tensor[name], sig.takes or #sig, {}
  assert(fn, "tensor_names.lua: no Tensor." .. name)
  for i, param in ipairs(sig) do names[i] = LUA_SPELLING[param] or param end
  if sig.static then
    Tensor[name] = function(...)
      if not named_call(takes, ...) then return fn(...) end
      local args, n = positional(name, names, takes, ...)
      return fn(table.unpack(args, 1, n))
    end
  else
    Tensor[name] = function(self, ...)
      if not named_call(takes, ...) then return fn(self, ...) end
      local args, n = positional(name, names, takes, ...)
      return fn(self, table.unpack(args, 1, n))
    end
  end
end

