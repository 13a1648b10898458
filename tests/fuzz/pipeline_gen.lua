-- pipeline_gen.lua - random whole tensor programs for the end-to-end
-- checker: each program is Lua code that builds tensors with the Tensor API,
-- compiles them with uop.compile (with the default opts, sometimes with random
-- PADTO/UPCAST/UNROLL/THREAD opts per kernel, sometimes with opts a beam search finds on a
-- small time budget) and runs them with p:run{validate = true}.  A failure (an error
-- raised anywhere, or outputs that differ from the reference) is shrunk to a
-- smaller program that fails the same way and reported as runnable Lua.
--
--   local gen = dofile("tests/fuzz/pipeline_gen.lua")
--   local failure = gen.check(seed)       -- nil, or {code=, message=, seed=}
--   gen.run{count = 200, seed = 1, report = print}
--
-- Float values are tracked as exact or not: an input is a multiple of 1/4,
-- and +, -, *, max, sums and the movement ops keep a value exact while its
-- bound times its granularity fits float32's mantissa.  Ops whose result
-- jumps (comparisons, casts to int or bool, floor, mod) are only applied to
-- exact values, so the JIT and the reference cannot disagree by rounding;
-- programs with inexact outputs are validated with a float tolerance.
local gen = {}

local MAX_NUMEL = 1500
local INT_LIMIT = 1 << 30
local FLOAT_LIMIT = 1e6
local EXACT_BITS = 1 << 22

-- ---------------------------------------------------------------- random

local R = math.random -- the generator (math.random, seeded per program)
local function rint(lo, hi) return R(lo, hi) end
local function chance(p) return R() < p end
local function pick(list) return list[R(1, #list)] end

local function prod(s)
  local n = 1
  for i = 1, #s do n = n * s[i] end
  return n
end

local function copy(s)
  local r = {}
  for i = 1, #s do r[i] = s[i] end
  return r
end

local function shape_str(s)
  local p = {}
  for i = 1, #s do p[i] = tostring(s[i]) end
  return "{" .. table.concat(p, ", ") .. "}"
end

local function random_dim() return chance(0.15) and 1 or rint(2, 6) end

local function random_shape(nd)
  local s = {}
  for i = 1, nd or rint(2, 4) do s[i] = random_dim() end
  return s
end

-- ---------------------------------------------------------------- leaves

local function leaf_data(shape, dt)
  local function elem()
    if dt == "bool" then return chance(0.5) and "true" or "false" end
    if dt == "int32" then return tostring(rint(-4, 4)) end
    local q = rint(-16, 16)
    return q % 4 == 0 and tostring(q // 4) or string.format("%g", q / 4)
  end
  local function level(d)
    if d > #shape then return elem() end
    local parts = {}
    for i = 1, shape[d] do parts[i] = level(d + 1) end
    return "{" .. table.concat(parts, ", ") .. "}"
  end
  if #shape == 0 then return "{" .. elem() .. "}" end
  return level(1)
end

-- the expression of a data tensor of shape and dtype ("float32", "int32", "bool")
local function leaf_expr(shape, dt)
  local e = "Tensor.new(" .. leaf_data(shape, dt) .. ', "' .. dt .. '")'
  if #shape == 0 then e = e .. ":reshape{}" end
  return e
end

-- ---------------------------------------------------------------- values

-- a value: {name, expr, t (the Tensor while generating), shape, dt, M (bound
-- of |x|), g (granularity bits: floats are multiples of 2^-g), exact, leaf}
local function float_exact(M, g) return M * (2.0 ^ g) <= EXACT_BITS end

local function fits(dt, M)
  if dt == "int32" then return M <= INT_LIMIT end
  if dt == "float32" then return M <= FLOAT_LIMIT end
  return true
end

local RANK = {bool = 1, int32 = 2, float32 = 3}
local function promote(a, b) return RANK[a] >= RANK[b] and a or b end

-- ---------------------------------------------------------------- the program

local Prog = {}
Prog.__index = Prog

local function new_prog()
  return setmetatable({vals = {}, env = setmetatable({}, {__index = _ENV}), count = 0}, Prog)
end

-- evaluates expr in the program's environment; the Tensor or nil, error
function Prog:eval(expr)
  local chunk, err = load("return " .. expr, "=fuzz", "t", self.env)
  if not chunk then return nil, err end
  local ok, t = pcall(chunk)
  if not ok then return nil, tostring(t) end
  return t
end

-- adds `local vN = expr` with the given facts; nil when it is too big, raises
-- (a failure of the front end) when building it raises
function Prog:add(expr, facts)
  local t, err = self:eval(expr)
  if not t then error({build = true, expr = expr, message = err}, 0) end
  local shape = t:shape()
  if prod(shape) > MAX_NUMEL or prod(shape) == 0 then return nil end
  local dt = tostring(t:dtype())
  if facts.dt and facts.dt ~= dt then
    error({build = true, expr = expr, message = string.format("dtype %s, expected %s", dt, facts.dt)}, 0)
  end
  if not fits(dt, facts.M or 0) then return nil end
  self.count = self.count + 1
  local v = {name = "v" .. self.count, expr = expr, t = t, shape = shape, dt = dt, M = facts.M or 1,
             g = facts.g or 0, leaf = facts.leaf}
  v.exact = dt ~= "float32" or (facts.exact ~= false and float_exact(v.M, v.g))
  self.env[v.name] = t
  self.vals[#self.vals + 1] = v
  return v
end

function Prog:leaf(shape, dt)
  return self:add(leaf_expr(shape, dt), {dt = dt, M = dt == "bool" and 1 or 4, g = dt == "float32" and 2 or 0,
                                         leaf = true})
end

-- ---------------------------------------------------------------- shapes

local function broadcast(a, b)
  local n = math.max(#a, #b)
  local out = {}
  for i = 1, n do
    local x, y = a[i - (n - #a)] or 1, b[i - (n - #b)] or 1
    if x ~= y and x ~= 1 and y ~= 1 then return nil end
    out[i] = math.max(x, y)
  end
  return out
end

-- a random shape that broadcasts with s
local function partner_shape(s)
  if #s == 0 then return random_shape(rint(1, 2)) end
  local r = rint(1, 4)
  if r == 1 then return copy(s) end
  if r == 2 then
    local o = copy(s)
    for i = 1, #o do if chance(0.4) then o[i] = 1 end end
    return o
  end
  if r == 3 then
    local o = {}
    for i = rint(1, #s), #s do o[#o + 1] = s[i] end
    return o
  end
  if #s < 4 then
    local o = {rint(2, 3)}
    for i = 1, #s do o[#o + 1] = chance(0.3) and 1 or s[i] end
    return o
  end
  return copy(s)
end

-- another operand for a: an existing value that broadcasts with it, or a new data tensor
function Prog:partner(a, dt)
  local cands = {}
  for _, v in ipairs(self.vals) do
    if v ~= a and (not dt or v.dt == dt) and broadcast(a.shape, v.shape) then cands[#cands + 1] = v end
  end
  if #cands > 0 and chance(0.5) then return pick(cands) end
  if chance(0.15) and (not dt or dt == a.dt) then return a end
  return self:leaf(partner_shape(a.shape), dt or pick({"float32", "float32", "int32", "bool"}))
end

-- ---------------------------------------------------------------- scalars

-- a Lua constant for an operand of dtype dt: text, |value|, granularity bits
local function scalar_for(dt, nonzero)
  if dt == "float32" and chance(0.5) then
    local c = pick({0.5, 1.5, -0.25, 2.5, -1.75, 0.75})
    local g = (c * 2) % 1 == 0 and 1 or 2
    return string.format("%g", c), math.abs(c), g
  end
  local c = rint(-3, 3)
  if nonzero and c == 0 then c = 2 end
  return tostring(c), math.abs(c), 0
end

-- ---------------------------------------------------------------- ops

local ops = {}

-- elementwise add/sub/mul/maximum/minimum with a value, data or a constant
ops.arith = function(P, a)
  if a.dt == "bool" then return nil end
  local op = pick({"add", "sub", "mul", "maximum", "minimum", "add", "mul"})
  local btext, bM, bg, bdt, bexact
  if chance(0.35) then
    btext, bM, bg = scalar_for(a.dt)
    bdt, bexact = a.dt, true
    if btext:find("[.e]") then bdt = "float32" end
  else
    local b = P:partner(a)
    if not b or b.dt == "bool" then return nil end
    btext, bM, bg, bdt, bexact = b.name, b.M, b.g, b.dt, b.exact
  end
  local M, g
  if op == "mul" then M, g = a.M * bM, a.g + bg
  elseif op == "add" or op == "sub" then M, g = a.M + bM, math.max(a.g, bg)
  else M, g = math.max(a.M, bM), math.max(a.g, bg) end
  local ops_sym = {add = "+", sub = "-", mul = "*"}
  local expr
  if ops_sym[op] and chance(0.5) then expr = a.name .. " " .. ops_sym[op] .. " " .. btext
  else expr = string.format("%s:%s(%s)", a.name, op, btext) end
  return expr, {dt = promote(a.dt, bdt), M = M, g = g, exact = a.exact and bexact}
end

-- division: by a constant (exact for powers of two) or by |b| + 1
ops.div = function(P, a)
  if chance(0.5) then
    local c = pick({2, 4, -2, 0.5, 3, -5})
    local exact = a.exact and (c == 2 or c == 4 or c == -2 or c == 0.5)
    local g = a.g + (math.abs(c) >= 2 and math.floor(math.log(math.abs(c), 2) + 0.5) or 0)
    return string.format("%s:div(%s)", a.name, tostring(c)), {dt = "float32", M = a.M / math.min(math.abs(c), 1), g = g,
                                                              exact = exact}
  end
  local b = P:partner(a)
  if not b or b.dt == "bool" then return nil end
  return string.format("%s / (%s:abs() + 1)", a.name, b.name), {dt = "float32", M = a.M, exact = false}
end

-- integer division and modulo by a constant or by |b| + 1 (floats: by 2 or 4, exactly)
ops.intdiv = function(P, a)
  if a.dt == "bool" or not a.exact then return nil end
  local op = pick({"idiv", "floordiv", "mod"})
  if a.dt == "float32" then
    if op == "idiv" then return nil end
    local c = pick({2, 4})
    local M = op == "mod" and c or a.M / c + 1
    return string.format("%s:%s(%s)", a.name, op, c), {dt = "float32", M = M, g = a.g}
  end
  if chance(0.6) then
    local c = pick({1, 2, 3, -2, 5, -3, 4})
    local M = op == "mod" and math.abs(c) or a.M + 1
    return string.format("%s:%s(%s)", a.name, op, c), {dt = "int32", M = M}
  end
  local b = P:partner(a, "int32")
  if not b then return nil end
  return string.format("%s:%s(%s:abs() + 1)", a.name, op, b.name), {dt = "int32", M = op == "mod" and b.M + 1 or a.M + 1}
end

ops.bitwise = function(P, a)
  if a.dt == "float32" then return nil end
  local op = pick({"bitwise_and", "bitwise_or", "bitwise_xor"})
  local btext, bM
  if a.dt == "int32" and chance(0.4) then
    btext = tostring(rint(-6, 6))
    bM = math.abs(tonumber(btext))
  else
    local b = P:partner(a, a.dt)
    if not b then return nil end
    btext, bM = b.name, b.M
  end
  local M = 1
  while M <= math.max(a.M, bM) do M = M * 2 end
  return string.format("%s:%s(%s)", a.name, op, btext), {dt = a.dt, M = M}
end

ops.compare = function(P, a)
  if not a.exact then return nil end
  local op = pick({"lt", "gt", "le", "ge", "eq", "ne"})
  if chance(0.4) and a.dt ~= "bool" then
    local c = scalar_for(a.dt)
    return string.format("%s:%s(%s)", a.name, op, c), {dt = "bool"}
  end
  local b = P:partner(a)
  if not b or not b.exact then return nil end
  return string.format("%s:%s(%s)", a.name, op, b.name), {dt = "bool"}
end

ops.where = function(P, a)
  local cond
  if a.dt == "bool" then
    cond = a
    a = P:partner(cond)
    if not a then return nil end
  else
    cond = P:partner(a, "bool")
  end
  if not cond then return nil end
  local otext, oM, og, odt, oexact
  if chance(0.4) then
    otext, oM, og = scalar_for(a.dt == "bool" and "int32" or a.dt)
    odt, oexact = otext:find("[.e]") and "float32" or (a.dt == "bool" and "int32" or a.dt), true
    if a.dt == "bool" then odt = promote(odt, "int32") end
  else
    local b = P:partner(a)
    if not b then return nil end
    otext, oM, og, odt, oexact = b.name, b.M, b.g, b.dt, b.exact
  end
  local bshape = broadcast(cond.shape, a.shape)
  local other = P.env[otext]
  if not bshape or (other and not broadcast(bshape, other:shape())) then return nil end
  local dt = promote(a.dt, odt)
  if a.dt == "bool" and otext:match("^%-?%d") then dt = promote("int32", odt) end
  local expr = chance(0.5) and string.format("%s:where(%s, %s)", cond.name, a.name, otext)
    or string.format("%s:where(%s, %s)", cond.name, otext, a.name)
  return expr, {dt = dt, M = math.max(a.M, oM), g = math.max(a.g, og), exact = a.exact and oexact}
end

-- unary ops; the ones that jump only on exact values
ops.unary = function(P, a)
  local n = a.name
  if a.dt == "bool" then
    return pick({n .. ":logical_not()", "-" .. n}), {dt = "bool"}
  end
  local f = {
    function() return n .. ":neg()", {dt = a.dt, M = a.M, g = a.g, exact = a.exact} end,
    function() return n .. ":abs()", {dt = a.dt, M = a.M, g = a.g, exact = a.exact} end,
    function() return n .. ":relu()", {dt = a.dt, M = a.M, g = a.g, exact = a.exact} end,
    function() return n .. ":square()", {dt = a.dt, M = a.M * a.M, g = 2 * a.g, exact = a.exact} end,
    function() return n .. ":sign()", {dt = a.dt, M = 1, g = 0, exact = a.exact} end,
    function()
      local lo, hi = -rint(0, 3), rint(0, 3)
      return string.format("%s:clamp(%d, %d)", n, lo, hi), {dt = a.dt, M = math.min(a.M, 3), g = a.g, exact = a.exact}
    end,
    function()
      if a.M > 6 then return nil end
      return n .. ":exp()", {dt = "float32", M = math.exp(a.M), exact = false}
    end,
    function() return n .. ":abs():add(1):log()", {dt = "float32", M = math.log(a.M + 1) + 1, exact = false} end,
    function() return n .. ":abs():sqrt()", {dt = "float32", M = math.sqrt(a.M) + 1, exact = false} end,
    function()
      if a.M > 20 then return nil end
      return n .. (chance(0.5) and ":sin()" or ":cos()"), {dt = "float32", M = 1, exact = false}
    end,
    function() return n .. (chance(0.5) and ":sigmoid()" or ":tanh()"), {dt = "float32", M = 1, exact = false} end,
    function() return n .. ":abs():add(1):reciprocal()", {dt = "float32", M = 1, exact = false} end,
    function()
      if a.dt ~= "float32" or not a.exact then return nil end
      return n .. ":" .. pick({"floor", "ceil", "trunc", "round"}) .. "()", {dt = "float32", M = a.M + 1, g = 0}
    end,
    function()
      if a.dt ~= "int32" then return nil end
      return n .. ":bitwise_not()", {dt = "int32", M = a.M + 1}
    end,
  }
  return pick(f)()
end

ops.cast = function(P, a)
  local to = pick({"float32", "int32", "bool"})
  if to == a.dt then return nil end
  if a.dt == "float32" and not a.exact then return nil end
  local M = to == "bool" and 1 or a.M
  local method = pick({":cast(\"" .. to .. "\")", to == "float32" and ":float()" or to == "int32" and ":int()" or ":bool()"})
  return a.name .. method, {dt = to, M = M, g = to == "float32" and a.g or 0, exact = a.exact}
end

local function keep(a) return {dt = a.dt, M = a.M, g = a.g, exact = a.exact} end

-- a random factorisation of n into 1..4 dims
local function random_factorisation(n)
  local nd = rint(1, 4)
  local s = {}
  local rest = n
  for i = 1, nd - 1 do
    local divs = {}
    for d = 1, rest do if rest % d == 0 and d <= 12 then divs[#divs + 1] = d end end
    s[i] = pick(divs)
    rest = rest // s[i]
  end
  s[nd] = rest
  return s
end

local function perm(n)
  local p = {}
  for i = 1, n do p[i] = i - 1 end
  for i = n, 2, -1 do
    local j = rint(1, i)
    p[i], p[j] = p[j], p[i]
  end
  return p
end

ops.movement = function(P, a)
  local s, n, nd = a.shape, a.name, #a.shape
  local f = {
    function()
      local r = random_factorisation(prod(s))
      if #r > 1 and chance(0.3) then r[rint(1, #r)] = -1 end
      return n .. ":reshape" .. shape_str(r), keep(a)
    end,
    function()
      if nd < 2 then return nil end
      return n .. ":permute" .. shape_str(perm(nd)), keep(a)
    end,
    function()
      if nd < 2 then return nil end
      return string.format("%s:transpose(%d, %d)", n, rint(0, nd - 1), rint(-nd, -1)), keep(a)
    end,
    function()
      local o = copy(s)
      local any = false
      for i = 1, nd do if o[i] == 1 then o[i] = rint(2, 4) any = true end end
      if not any or chance(0.3) then
        if nd >= 4 then return nil end
        table.insert(o, 1, rint(2, 3))
        return n .. ":unsqueeze(0):expand" .. shape_str(o), keep(a)
      end
      return n .. ":expand" .. shape_str(o), keep(a)
    end,
    function()
      if nd == 0 then return nil end
      local parts = {}
      for i = 1, nd do
        local lo, hi = rint(0, 2), rint(0, 2)
        if s[i] > 2 and chance(0.2) then lo = -1 end
        parts[i] = string.format("{%d, %d}", lo, hi)
      end
      local f2 = keep(a)
      if chance(0.3) then
        local v = a.dt == "int32" and tostring(rint(-3, 3)) or "1.5"
        if a.dt == "bool" then
          -- as tinygrad: a value other than false promotes (true, ints: int32; floats: float32)
          v = pick({"true", "false", "2", "-1", "1.5"})
          f2.dt = v == "false" and "bool" or v == "1.5" and "float32" or "int32"
          f2.g = v == "1.5" and 1 or 0
        end
        f2.M = math.max(a.M, 3)
        return string.format("%s:pad({%s}, {value = %s})", n, table.concat(parts, ", "), v), f2
      end
      return string.format("%s:pad{%s}", n, table.concat(parts, ", ")), f2
    end,
    function()
      if nd == 0 then return nil end
      local parts = {}
      for i = 1, nd do
        if chance(0.3) then parts[i] = "false" else
          local b = rint(0, s[i] - 1)
          parts[i] = string.format("{%d, %d}", b, rint(b + 1, s[i]))
        end
      end
      return n .. ":shrink{" .. table.concat(parts, ", ") .. "}", keep(a)
    end,
    function()
      if nd == 0 then return nil end
      local axes = {}
      for i = 0, nd - 1 do if chance(0.5) then axes[#axes + 1] = i end end
      if #axes == 0 then axes[1] = rint(0, nd - 1) end
      return n .. ":flip" .. shape_str(axes), keep(a)
    end,
    function()
      if nd == 0 then return nil end
      local parts = {}
      for i = 1, rint(1, nd) do
        local r = rint(1, 4)
        if r == 1 then parts[i] = tostring(rint(-s[i], s[i] - 1))
        elseif r == 2 then parts[i] = "false"
        else
          local step = pick({1, 2, 3, -1, -2})
          local st = chance(0.5) and tostring(rint(-s[i], s[i])) or "nil"
          local sp = chance(0.5) and tostring(rint(-s[i], s[i])) or "nil"
          parts[i] = string.format("{%s, %s, %d}", st, sp, step)
        end
      end
      return n .. ":slice{" .. table.concat(parts, ", ") .. "}", keep(a)
    end,
    function()
      if nd >= 4 then return nil end
      return string.format("%s:unsqueeze(%d)", n, rint(-nd - 1, nd)), keep(a)
    end,
    function()
      if nd < 2 then return nil end
      return n .. ":flatten(" .. rint(0, nd - 2) .. ")", keep(a)
    end,
    function()
      return n .. ":contiguous()", keep(a)
    end,
    function()
      if nd == 0 or nd > 3 then return nil end
      local r = {}
      for i = 1, nd do r[i] = chance(0.5) and 1 or 2 end
      return n .. ":repeat_" .. shape_str(r), keep(a)
    end,
  }
  return pick(f)()
end

ops.reduce = function(P, a)
  local nd = #a.shape
  local op = pick({"sum", "sum", "max", "min", "prod", "mean"})
  local axes, n = {}, 1
  for i = 0, nd - 1 do if chance(0.5) then axes[#axes + 1] = i end end
  local axis_text
  if nd == 0 or chance(0.15) then
    axis_text, n = nil, prod(a.shape)
  elseif #axes == 0 or chance(0.4) then
    local ax = rint(-nd, nd - 1)
    axis_text = tostring(ax)
    n = a.shape[(ax % nd) + 1]
  else
    axis_text = shape_str(axes)
    for _, ax in ipairs(axes) do n = n * a.shape[ax + 1] end
  end
  local keepdim = chance(0.5)
  local args = axis_text or ""
  if keepdim then args = (axis_text and axis_text .. ", " or "") .. "{keepdim = true}" end
  local expr = string.format("%s:%s(%s)", a.name, op, args)
  local dt = a.dt
  if op == "sum" then
    if dt == "bool" then dt = "int32" end
    return expr, {dt = dt, M = a.M * n, g = a.g, exact = a.exact}
  elseif op == "prod" then
    local M = a.M ^ n
    if M > (dt == "float32" and 1e5 or 1e8) then return nil end
    return expr, {dt = dt, M = math.max(M, 1), g = a.g * n, exact = a.exact}
  elseif op == "mean" then
    return expr, {dt = "float32", M = a.M, exact = false}
  end
  return expr, keep(a)
end

ops.matmul = function(P, a)
  if a.dt == "bool" or #a.shape == 0 then return nil end
  local K = a.shape[#a.shape]
  local bshape
  if #a.shape >= 2 and chance(0.3) then
    -- with itself transposed
    return string.format("%s:matmul(%s:transpose(-1, -2))", a.name, a.name),
      {dt = a.dt, M = a.M * a.M * K, g = 2 * a.g, exact = a.exact}
  end
  bshape = {K, rint(1, 5)}
  if #a.shape >= 3 and chance(0.5) then table.insert(bshape, 1, a.shape[#a.shape - 2]) end
  local b = P:leaf(bshape, a.dt == "int32" and pick({"int32", "float32"}) or "float32")
  if not b then return nil end
  local expr = chance(0.5) and string.format("%s:matmul(%s)", a.name, b.name) or string.format("%s:dot(%s)", a.name, b.name)
  return expr, {dt = promote(a.dt, b.dt), M = a.M * b.M * K, g = a.g + b.g, exact = a.exact and b.exact}
end

ops.softmax = function(P, a)
  if #a.shape == 0 or a.dt == "bool" then return nil end
  local ax = rint(-#a.shape, #a.shape - 1)
  if chance(0.7) then return string.format("%s:softmax(%d)", a.name, ax), {dt = "float32", M = 1, exact = false} end
  return string.format("%s:log_softmax(%d)", a.name, ax), {dt = "float32", M = 2 * a.M + 3, exact = false}
end

ops.cumsum = function(P, a)
  if #a.shape == 0 then return nil end
  local ax = rint(0, #a.shape - 1)
  local dt = a.dt == "bool" and "int32" or a.dt
  return string.format("%s:cumsum(%d)", a.name, ax), {dt = dt, M = a.M * a.shape[ax + 1], g = a.g, exact = a.exact}
end

ops.conv2d = function(P, a)
  if #a.shape ~= 4 or a.dt == "bool" then return nil end
  local C, H, W = a.shape[2], a.shape[3], a.shape[4]
  local pad = rint(0, 1)
  local kh, kw = rint(1, math.min(3, H + 2 * pad)), rint(1, math.min(3, W + 2 * pad))
  local groups = (C % 2 == 0 and chance(0.3)) and 2 or 1
  local cout = groups * rint(1, 2)
  local w = P:leaf({cout, C // groups, kh, kw}, a.dt == "int32" and pick({"int32", "float32"}) or "float32")
  if not w then return nil end
  local o = {}
  if pad > 0 then o[#o + 1] = "padding = " .. pad end
  if chance(0.4) then o[#o + 1] = "stride = " .. rint(1, 2) end
  if groups > 1 then o[#o + 1] = "groups = " .. groups end
  local expr = string.format("%s:conv2d(%s%s)", a.name, w.name, #o > 0 and ", {" .. table.concat(o, ", ") .. "}" or "")
  return expr, {dt = promote(a.dt, w.dt), M = a.M * w.M * (C // groups) * kh * kw, g = a.g + w.g,
                exact = a.exact and w.exact}
end

local OP_WEIGHTS = {
  {"arith", 6}, {"div", 1}, {"intdiv", 2}, {"bitwise", 1}, {"compare", 2}, {"where", 2}, {"unary", 4},
  {"cast", 2}, {"movement", 7}, {"reduce", 4}, {"matmul", 1}, {"softmax", 1}, {"cumsum", 1}, {"conv2d", 1},
}
local TOTAL_WEIGHT = 0
for _, w in ipairs(OP_WEIGHTS) do TOTAL_WEIGHT = TOTAL_WEIGHT + w[2] end

local function random_op()
  local x = rint(1, TOTAL_WEIGHT)
  for _, w in ipairs(OP_WEIGHTS) do
    x = x - w[2]
    if x <= 0 then return w[1] end
  end
end

-- ---------------------------------------------------------------- opts

-- the ranges of a kernel at stage 6 from its listing: {output = {sizes}, reduce = {sizes}}
-- in axis-id order (the order stage 7 counts them in)
local function kernel_ranges(listing)
  local consts, ranges = {}, {}
  for line in listing:gmatch("[^\n]+") do
    local id, v = line:match("^%%(%d+)%s*=%s*CONST%s+%S+%s+arg=(%-?%d+)%s*$")
    if id then consts[id] = tonumber(v) end
    local src, arg = line:match("^%%%d+%s*=%s*RANGE%s+%S+%s+%(%%(%d+)[^)]*%)%s+arg=%((.-)%)")
    if src then
      local key = {}
      for num in arg:gmatch("%-?%d+") do key[#key + 1] = tonumber(num) end
      ranges[#ranges + 1] = {src = src, key = key, type = arg:match("(%u[%u_]*)%s*$")}
    end
  end
  table.sort(ranges, function(x, y)
    for i = 1, math.min(#x.key, #y.key) do
      if x.key[i] ~= y.key[i] then return x.key[i] < y.key[i] end
    end
    return #x.key < #y.key
  end)
  local out = {output = {}, reduce = {}}
  for _, r in ipairs(ranges) do
    local size = consts[r.src]
    if size and size > 1 then
      if r.type == "LOOP" or r.type == "GLOBAL" or r.type == "LOCAL" then out.output[#out.output + 1] = size
      elseif r.type == "REDUCE" or r.type == "GROUP_REDUCE" then out.reduce[#out.reduce + 1] = size end
    end
  end
  return out
end

-- up to two valid random opts for a kernel with these ranges, sometimes after a PADTO of an
-- output range (its padded part is stored nowhere, so any kernel stays right)
local function random_opts(ranges)
  local opts = {}
  local threaded = false
  if #ranges.output > 0 and chance(0.15) then
    local axis = rint(1, #ranges.output)
    local size = ranges.output[axis]
    local to = pick{4, 8}
    local padded = (size + to - 1) // to * to
    if padded > size and size > padded // 4 then
      opts[1] = {"PADTO", axis - 1, to}
      ranges.output[axis] = padded
    end
  end
  for _ = 1, rint(1, 2) do
    local kind = chance(0.5) and "UPCAST" or "UNROLL"
    -- THREAD (at most once) splits an output range over cores, like UPCAST's bookkeeping
    if kind == "UPCAST" and not threaded and chance(0.3) then kind, threaded = "THREAD", true end
    local list = kind == "UNROLL" and ranges.reduce or ranges.output
    if #list > 0 then
      local axis = rint(1, #list)
      local divs = {}
      for d = 2, math.min(list[axis], 8) do if list[axis] % d == 0 then divs[#divs + 1] = d end end
      if #divs > 0 then
        local amount = pick(divs)
        opts[#opts + 1] = {kind, axis - 1, amount}
        if amount == list[axis] then table.remove(list, axis) else list[axis] = list[axis] // amount end
      end
    end
  end
  return opts
end

-- ---------------------------------------------------------------- rendering

local function opts_text(opts)
  local ks = {}
  for k in pairs(opts) do ks[#ks + 1] = k end
  table.sort(ks)
  local parts = {}
  for _, k in ipairs(ks) do
    local os = {}
    for i, o in ipairs(opts[k]) do os[i] = string.format('{"%s", %d, %d}', o[1], o[2], o[3]) end
    parts[#parts + 1] = string.format("[%d] = {%s}", k, table.concat(os, ", "))
  end
  return "{" .. table.concat(parts, ", ") .. "}"
end

-- the program as Lua code that returns the validation report; with
-- gen.check_points set, it also checks every kernel at every point 0..22
-- (with gen.check_executor, by that executor, skipping points it refuses)
-- spec: {stmts = {{name, expr}...}, outputs = {names}, opts = {[k] = {...}}, beam = {width, budget} or nil,
-- atol, rtol}
function gen.render(spec)
  local lines = {}
  for _, s in ipairs(spec.stmts) do lines[#lines + 1] = string.format("local %s = %s", s.name, s.expr) end
  local out = #spec.outputs == 1 and spec.outputs[1] or "{" .. table.concat(spec.outputs, ", ") .. "}"
  if spec.opts and next(spec.opts) then
    lines[#lines + 1] = string.format("local p = uop.compile(%s, {kernel_opts = %s})", out, opts_text(spec.opts))
  elseif spec.beam then
    lines[#lines + 1] = string.format("local p = uop.compile(%s, {beam = %d, beam_budget = %g, beam_cache = false})", out,
                                      spec.beam.width, spec.beam.budget)
  else
    lines[#lines + 1] = string.format("local p = uop.compile(%s)", out)
  end
  local tol = spec.atol and string.format(", atol = %g, rtol = %g", spec.atol, spec.rtol) or ""
  lines[#lines + 1] = string.format("local _, rep = p:run{validate = true, quiet = true%s}", tol)
  lines[#lines + 1] = "assert(rep.ok, rep.text)"
  if gen.check_points then
    -- every kernel at every point of its pipeline, on the program's data; by
    -- gen.check_executor when set, skipping the points it refuses
    local how = gen.check_executor and string.format(", executor = %q", gen.check_executor) or ""
    lines[#lines + 1] = string.format("for i = 1, #p:kernels() do for n = 0, 22 do local ok, r = pcall(p:kernel(i).check, "
      .. "p:kernel(i), n, {quiet = true%s%s}) "
      .. "assert(ok or (%s and tostring(r):find('cannot be compiled: ', 1, true)), r) "
      .. "assert(not ok or r.ok, 'kernel ' .. i .. ' at stage ' .. n .. ': ' .. tostring(ok and r.text)) end end",
      tol, how, tostring(gen.check_executor ~= nil))
  end
  return table.concat(lines, "\n") .. "\n"
end

-- runs a program's code; nil when it passes, else the failure message
function gen.run_code(code)
  local chunk, err = load(code, "=program", "t")
  if not chunk then return "does not load: " .. err end
  local ok, msg = pcall(chunk)
  if ok then return nil end
  return tostring(msg)
end

-- a failure's kind, to keep shrinking on the same bug: the message with
-- numbers and node ids left out
local function failure_kind(msg)
  if msg:find("^program:%d+: validate:") or msg:find("elements? differ") or msg:find("^program:%d+: validate: output") then
    return "mismatch"
  end
  local first = msg:match("^[^\n]*")
  return (first:gsub("^program:%d+: ", ""):gsub("%%%d+", "%%"):gsub("%d+", "N"))
end

-- ---------------------------------------------------------------- building one program

local function build(seed)
  math.randomseed(seed)
  R = math.random
  local P = new_prog()
  local nleaves = rint(1, 2)
  local roots = {}
  for _ = 1, nleaves do
    local s = chance(0.15) and {rint(1, 2), rint(1, 3), rint(2, 5), rint(2, 5)} or random_shape()
    roots[#roots + 1] = P:leaf(s, pick({"float32", "float32", "int32", "int32", "bool"}))
  end
  local nops = rint(1, 6)
  local cur = roots[#roots]
  local results = {}
  local tries = 0
  while #results < nops and tries < 60 do
    tries = tries + 1
    local a = chance(0.7) and cur or pick(P.vals)
    local expr, facts = ops[random_op()](P, a)
    if expr then
      local v = P:add(expr, facts)
      if v then
        cur = v
        results[#results + 1] = v
      end
    end
  end
  if #results == 0 then results[1] = cur end
  local outputs = {results[#results]}
  if #results > 1 and chance(0.2) then table.insert(outputs, 1, results[rint(1, #results - 1)]) end
  local spec = {stmts = {}, outputs = {}, opts = {}}
  local inexact = false
  for _, v in ipairs(P.vals) do spec.stmts[#spec.stmts + 1] = {name = v.name, expr = v.expr, shape = v.shape, dt = v.dt,
                                                             leaf = v.leaf} end
  for i, v in ipairs(outputs) do
    spec.outputs[i] = v.name
    if not v.exact then inexact = true end
  end
  if inexact then spec.atol, spec.rtol = 1e-3, 1e-3 end
  -- opts from the kernels' ranges at stage 6
  if chance(0.5) then
    local list = {}
    for i, v in ipairs(outputs) do list[i] = P.env[v.name] end
    local p = uop.compile(#list == 1 and list[1] or list)
    for k = 1, #p:kernels() do
      if chance(0.6) then
        local o = random_opts(kernel_ranges(p:kernel(k):listing(6)))
        if #o > 0 then spec.opts[k] = o end
      end
    end
  end
  -- or a beam search of the opts, on a small budget (the result depends on timings; it is validated all the same)
  if not next(spec.opts) and chance(0.08) then spec.beam = {width = rint(1, 2), budget = 0.05} end
  return spec
end

-- ---------------------------------------------------------------- shrinking

local function used_names(spec)
  local live = {}
  for _, o in ipairs(spec.outputs) do live[o] = true end
  for i = #spec.stmts, 1, -1 do
    local s = spec.stmts[i]
    if live[s.name] then
      for name in s.expr:gmatch("v%d+") do live[name] = true end
    end
  end
  return live
end

local function prune(spec)
  local live = used_names(spec)
  local stmts = {}
  for _, s in ipairs(spec.stmts) do if live[s.name] then stmts[#stmts + 1] = s end end
  return {stmts = stmts, outputs = spec.outputs, opts = spec.opts, beam = spec.beam, atol = spec.atol, rtol = spec.rtol}
end

local function with(spec, changes)
  local r = {stmts = spec.stmts, outputs = spec.outputs, opts = spec.opts, beam = spec.beam, atol = spec.atol,
             rtol = spec.rtol}
  for k, v in pairs(changes) do r[k] = v end
  return prune(r)
end

local function size_of(spec) return #spec.stmts * 1000 + #gen.render(spec) end

-- a smaller spec that fails the same way (a few hundred runs at most)
function gen.shrink(spec, kind)
  local budget = 300
  local function still_fails(cand)
    if budget <= 0 then return false end
    budget = budget - 1
    local msg = gen.run_code(gen.render(cand))
    return msg and failure_kind(msg) == kind, msg
  end
  spec = prune(spec)
  local progress = true
  while progress and budget > 0 do
    progress = false
    local cands = {}
    if spec.beam then cands[#cands + 1] = with(spec, {beam = false}) end
    if next(spec.opts) then
      cands[#cands + 1] = with(spec, {opts = {}})
      for k in pairs(spec.opts) do
        local o = {}
        for k2, v in pairs(spec.opts) do if k2 ~= k then o[k2] = v end end
        cands[#cands + 1] = with(spec, {opts = o})
      end
    end
    if #spec.outputs > 1 then
      for _, o in ipairs(spec.outputs) do cands[#cands + 1] = with(spec, {outputs = {o}}) end
    end
    for _, s in ipairs(spec.stmts) do
      if not s.leaf then
        if #spec.outputs == 1 and s.name ~= spec.outputs[1] then cands[#cands + 1] = with(spec, {outputs = {s.name}}) end
        local stmts = {}
        for i, t in ipairs(spec.stmts) do
          stmts[i] = t ~= s and t or {name = s.name, expr = leaf_expr(s.shape, s.dt), shape = s.shape, dt = s.dt, leaf = true}
        end
        cands[#cands + 1] = with(spec, {stmts = stmts})
      end
    end
    table.sort(cands, function(x, y) return size_of(x) < size_of(y) end)
    for _, c in ipairs(cands) do
      if size_of(c) < size_of(spec) and still_fails(c) then
        spec = c
        progress = true
        break
      end
    end
  end
  return spec
end

-- ---------------------------------------------------------------- checking

-- checks the program of one seed: nil when it passes, else a failure table
-- {seed, message, code (shrunk), original}
function gen.check(seed, opts)
  opts = opts or {}
  local ok, spec = pcall(build, seed)
  if not ok then
    local e = spec
    if type(e) == "table" and e.build then
      return {seed = seed, message = "building " .. e.expr .. ": " .. tostring(e.message), code = "(front end) " .. e.expr}
    end
    return {seed = seed, message = "generator: " .. tostring(e), code = ""}
  end
  local code = gen.render(spec)
  if opts.before_run then opts.before_run(code) end
  local msg = gen.run_code(code)
  if not msg then return nil end
  local small = opts.no_shrink and spec or gen.shrink(spec, failure_kind(msg))
  local small_code = gen.render(small)
  return {seed = seed, message = gen.run_code(small_code) or msg, code = small_code, original = code}
end

function gen.format_failure(f)
  return string.format("-- program seed %d failed: %s\n%s", f.seed, f.message:gsub("\n", "\n-- "), f.code)
end

-- checks count programs of seeds seed*100000 + i; returns checked, failures
function gen.run(o)
  local failures = {}
  for i = 1, o.count do
    local seed = (o.seed or 1) * 100000 + i
    local f = gen.check(seed, o)
    if f then
      failures[#failures + 1] = f
      if o.report then o.report(gen.format_failure(f)) end
      if o.max_failures and #failures >= o.max_failures then return i, failures end
    end
    if o.progress and i % o.progress == 0 then o.progress_fn(i, #failures) end
  end
  return o.count, failures
end

gen.kernel_ranges = kernel_ranges
gen.failure_kind = failure_kind
return gen
