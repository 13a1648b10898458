-- tensor_grad.lua - gradients, as tinygrad v0.12.0 computes them
-- (gradient.py, Tensor.gradient and Tensor.backward): the tensor graph is
-- walked from the output back towards the targets, and each node hands the
-- gradient it received to its sources through one rule per op.  The rules
-- build their UOps as tinygrad's UOp methods do: no dtype promotion, a
-- constant takes the dtype and the shape of the operand it meets, and no
-- broadcasting (every operand already has the node's shape).
--   z:gradient(x, y [, {gradient = g, materialize_grads = true}])  dz/dx, dz/dy
--   x:requires_grad_()  z:backward()  x.grad
local uop, shared = ...
local Tensor = uop.Tensor
local fail, is_tensor, is_opts, is_float = shared.fail, shared.is_tensor, shared.is_opts, shared.is_float
local wrap, copy, shape_eq, fmt_shape = shared.wrap, shared.copy, shared.shape_eq, shared.fmt_shape
local const_tensor, broadcast_to, reshape_raw, pad_raw = shared.const_tensor, shared.broadcast_to,
  shared.reshape_raw, shared.pad_raw
local check_options, alu, reduce = shared.check_options, shared.alu, shared.reduce
-- error messages show a Tensor by its shape, never by its elements
local tostring = shared.show

-- ---------------------------------------------------------------- UOp math

-- tinygrad's const_like: the value in t's dtype, broadcast to t's shape
local function const_like(t, v) return broadcast_to(const_tensor(v, t._dtype), t._shape) end
local function ufix(t, x) return is_tensor(x) and x or const_like(t, x) end

local function add(a, x) return alu("ADD", a, ufix(a, x)) end
local function mul(a, x) return alu("MUL", a, ufix(a, x)) end
local function ne(a, x) return alu("CMPNE", a, ufix(a, x)) end
local function logical_not(a) return ne(a, true) end
local function eq(a, x) return logical_not(ne(a, x)) end
local function lt(a, x) return alu("CMPLT", a, ufix(a, x)) end
local function gt(a, x) return alu("CMPLT", ufix(a, x), a) end
local function neg(a) return a._dtype == uop.dtypes.bool and logical_not(a) or mul(a, -1) end
local function rsub(a, x) return alu("ADD", ufix(a, x), neg(a)) end -- x - a
local function div(a, x) return mul(a, alu("RECIPROCAL", ufix(a, x))) end
local function band(a, x) return alu("AND", a, ufix(a, x)) end
local function where(c, x, y)
  if is_tensor(x) then return alu("WHERE", c, x, ufix(x, y)) end
  return alu("WHERE", c, ufix(y, x), y)
end
local function cast(a, dt)
  if dt == a._dtype then return a end
  return wrap(a.uop:cast(dt), copy(a._shape), dt)
end

-- the values of a movement op's integer vector (VCONST, one CONST, or none)
local function ivec_values(u)
  local op = u:op()
  if op == "VCONST" then return u:arg() end
  if op == "CONST" then return {u:arg()} end
  local vals = {}
  for i, s in ipairs(u:src()) do vals[i] = s:arg() end
  return vals
end

-- ---------------------------------------------------------------- rules

local LN2 = math.log(2)

-- gradient of src reduced to ret by op (ctx has ret's shape: the reduced
-- axes are kept as 1, so broadcasting back to src needs no reshape)
local function reduce_gradient(ctx, ret, src, op)
  local function to_input(x) return broadcast_to(x, src._shape) end
  if op == "ADD" then return {to_input(ctx)} end
  if op == "MAX" then
    local mask = cast(eq(src, to_input(ret)), ctx._dtype)
    local count = reduce(mask, "ADD", ret.uop:arg()[2], true)
    return {mul(div(mask, to_input(count)), to_input(ctx))}
  end
  if op == "MUL" then return {div(to_input(mul(ctx, ret)), src)} end
end

local REDUCE_OPS = {[uop.ops.ADD] = "ADD", [uop.ops.MAX] = "MAX", [uop.ops.MUL] = "MUL"}

-- op -> function(ctx, ret, src, u) returning one gradient (or false) per source
local RULES = {
  CAST = function(ctx, _, s) return {cast(ctx, s[1]._dtype)} end,
  RECIPROCAL = function(ctx, ret) return {mul(mul(neg(ctx), ret), ret)} end,
  SIN = function(ctx, _, s) return {mul(alu("SIN", rsub(s[1], math.pi / 2)), ctx)} end,
  LOG2 = function(ctx, _, s) return {div(ctx, mul(s[1], LN2))} end,
  EXP2 = function(ctx, ret) return {mul(mul(ret, ctx), LN2)} end,
  SQRT = function(ctx, ret) return {div(ctx, mul(ret, 2))} end,
  CMPLT = function() return {false, false} end,
  CMPNE = function() return {false, false} end,
  ADD = function(ctx) return {ctx, ctx} end,
  POW = function(ctx, ret, s)
    local b, e = s[1], s[2]
    local db = mul(ctx, where(band(eq(b, 0), eq(e, 0)), e, mul(e, alu("POW", b, add(e, -1)))))
    local de = mul(ctx, where(eq(b, 0), where(lt(e, 0), const_like(ret, -math.huge), 0),
      mul(mul(ret, alu("LOG2", b)), LN2)))
    return {db, de}
  end,
  MAX = function(ctx, _, s)
    local x, y = s[1], s[2]
    return {where(gt(x, y), ctx, where(eq(x, y), mul(ctx, 0.5), 0)),
            where(lt(x, y), ctx, where(eq(x, y), mul(ctx, 0.5), 0))}
  end,
  MUL = function(ctx, _, s) return {mul(s[2], ctx), mul(s[1], ctx)} end,
  WHERE = function(ctx, _, s)
    return {false, where(s[1], ctx, const_like(ctx, 0)), where(s[1], const_like(ctx, 0), ctx)}
  end,
  REDUCE_AXIS = function(ctx, ret, s, u) return reduce_gradient(ctx, ret, s[1], REDUCE_OPS[u:arg()[1]]) end,
  CONTIGUOUS = function(ctx) return {ctx} end,
  CONTIGUOUS_BACKWARD = function(ctx)
    return {wrap(uop.new("CONTIGUOUS", ctx._dtype, {ctx.uop}), copy(ctx._shape), ctx._dtype)}
  end,
  RESHAPE = function(ctx, _, s) return {reshape_raw(ctx, s[1]._shape), false} end,
  EXPAND = function(ctx, ret, s)
    local axes = {}
    for i = 1, #ret._shape do if s[1]._shape[i] ~= ret._shape[i] then axes[#axes + 1] = i - 1 end end
    return {reduce(ctx, "ADD", axes, true), false}
  end,
  PAD = function(ctx, _, s, u)
    local before, arg = ivec_values(u:src()[2]), {}
    for i = 1, #s[1]._shape do arg[i] = {before[i], before[i] + s[1]._shape[i]} end
    return {ctx:shrink(arg), false, false}
  end,
  SHRINK = function(ctx, _, s, u)
    local b, e, pads = ivec_values(u:src()[2]), ivec_values(u:src()[3]), {}
    for i = 1, #s[1]._shape do pads[i] = {b[i], s[1]._shape[i] - e[i]} end
    return {pad_raw(ctx, pads), false, false}
  end,
  PERMUTE = function(ctx, _, _, u)
    local order, inverse = u:arg(), {}
    for i, a in ipairs(order) do inverse[a + 1] = i - 1 end
    return {ctx:permute(inverse)}
  end,
  FLIP = function(ctx, _, _, u)
    local axes = {}
    for i, f in ipairs(u:arg()) do if f then axes[#axes + 1] = i - 1 end end
    return {ctx:flip(axes)}
  end,
  BITCAST = function() return {false} end,
}

-- ---------------------------------------------------------------- the walk

-- the nodes of root's graph (order: its toposort) that lie on a path to a
-- target, sources first; the walk does not pass through DETACH (tinygrad's
-- _deepwalk)
local function deepwalk(root, order, targets)
  local on_path = {}
  for _, u in ipairs(order) do
    local hit = false
    for _, s in ipairs(u:src()) do
      if targets[s:id()] or on_path[s:id()] then hit = true break end
    end
    on_path[u:id()] = hit
  end
  -- the toposort again, entering only nodes on a path and never a DETACH
  local out, seen, stack = {}, {}, {}
  if on_path[root:id()] and root:op() ~= "DETACH" then stack[1] = {root, 1} end
  seen[root:id()] = true
  while #stack > 0 do
    local top = stack[#stack]
    local u, k = top[1], top[2]
    local src = u:src()
    if k <= #src then
      top[2] = k + 1
      local s = src[k]
      if not seen[s:id()] and s:op() ~= "DETACH" and on_path[s:id()] then
        seen[s:id()] = true
        stack[#stack + 1] = {s, 1}
      end
    else
      out[#out + 1] = u
      stack[#stack] = nil
    end
  end
  return out
end

-- tinygrad's compute_gradient: the gradient of every node on a path from
-- root to a target, root's being root_grad
local function compute_gradient(root, root_grad, targets)
  local shapes, topo = uop._shapes(root)
  local function as_tensor(u) return wrap(u, copy(shapes[u:id()]), u:dtype()) end
  local grads = {[root:id()] = root_grad}
  local order = deepwalk(root, topo, targets)
  for i = #order, 1, -1 do
    local u = order[i]
    local ctx = grads[u:id()]
    if ctx then
      local rule = RULES[u:op()]
      if not rule then fail("gradient: no gradient for %s (%%%d) on the way to a target", u:op(), u:id()) end
      local src = u:src()
      local s = {}
      for k, x in ipairs(src) do s[k] = shapes[x:id()] and as_tensor(x) or x end
      local lgrads = rule(ctx, as_tensor(u), s, u)
      for k, x in ipairs(src) do
        local g = lgrads[k]
        if g then
          local have = grads[x:id()]
          grads[x:id()] = have and add(have, g) or g
        end
      end
    end
  end
  return grads
end

-- ---------------------------------------------------------------- Tensor

-- z:gradient(x, y, ... [, {gradient = g, materialize_grads = false}]): the
-- gradients of z with respect to each target, as a list
function Tensor:gradient(...)
  local targets, opts = {...}, {}
  if is_opts(targets[#targets]) then opts = table.remove(targets) end
  check_options("gradient", opts, {gradient = true, materialize_grads = true})
  if #targets == 0 then fail("gradient: needs a target Tensor") end
  for i, t in ipairs(targets) do
    if not is_tensor(t) then fail("gradient: target %d is %s, not a Tensor", i, tostring(t)) end
  end
  local g = opts.gradient
  if g ~= nil and not is_tensor(g) then fail("gradient: the gradient must be a Tensor, got %s", tostring(g)) end
  if g == nil and #self._shape ~= 0 then
    fail("gradient: %s is not a scalar; give the gradient of each element ({gradient = g})", tostring(self))
  end
  if not is_float(self._dtype) then fail("gradient: only float Tensors have a gradient, not %s", tostring(self)) end
  for _, t in ipairs(targets) do
    if not is_float(t._dtype) then fail("gradient: only float Tensors have a gradient, not %s", tostring(t)) end
  end
  if g == nil then g = const_tensor(1.0, self._dtype) end
  if not shape_eq(g._shape, self._shape) or g._dtype ~= self._dtype then
    fail("gradient: the gradient %s does not match %s", tostring(g), tostring(self))
  end
  local want = {}
  for _, t in ipairs(targets) do want[t.uop:id()] = true end
  local grads = compute_gradient(self.uop, g, want)
  local out = {}
  for i, t in ipairs(targets) do
    local got = grads[t.uop:id()]
    if not got then
      if not opts.materialize_grads then
        fail("gradient: target %d (%s) is not in the graph of %s", i, tostring(t), tostring(self))
      end
      got = const_like(t, 0)
    end
    out[i] = wrap(got.uop, copy(t._shape), got._dtype)
  end
  return out
end

-- the tensors marked with requires_grad_, in the order they were marked
-- (weak: a tensor no longer used goes)
local marked = setmetatable({}, {__mode = "v"})
local nmarked = 0

-- x:requires_grad_([flag]): marks x for backward (a constant becomes a
-- unique one first, so that no other constant shares its gradient)
function Tensor:requires_grad_(flag)
  flag = flag == nil or flag
  if type(flag) ~= "boolean" then fail("requires_grad_: the flag must be a boolean, got %s", tostring(flag)) end
  if flag and self.uop:op() == "CONST" then rawset(self, "uop", const_tensor(self.uop:arg(), self._dtype, true).uop) end
  rawset(self, "requires_grad", flag)
  if flag then
    nmarked = nmarked + 1
    marked[nmarked] = self
  end
  return self
end

-- z:backward([gradient]): adds to x.grad the gradient of z for every
-- tensor x marked with requires_grad_ that z is computed from; returns z
function Tensor:backward(gradient)
  if gradient ~= nil and not is_tensor(gradient) then
    fail("backward: the gradient must be a Tensor, got %s", tostring(gradient))
  end
  if gradient == nil and #self._shape ~= 0 then
    fail("backward: %s is not a scalar; give the gradient of each element (z:backward(g))", tostring(self))
  end
  local in_graph = {}
  for _, u in ipairs(self.uop:toposort()) do in_graph[u:id()] = true end
  -- the marked tensors still alive, in order (the list is compacted here,
  -- so it holds no more entries than live marked tensors after a backward)
  local need, listed, live = {}, {}, 0
  for k = 1, nmarked do
    local t = marked[k]
    marked[k] = nil
    if t and not listed[t] then
      listed[t] = true
      live = live + 1
      marked[live] = t
      if rawget(t, "requires_grad") and in_graph[t.uop:id()] then need[#need + 1] = t end
    end
  end
  nmarked = live
  if #need == 0 then return self end
  local args = {}
  for i, t in ipairs(need) do args[i] = t end
  args[#args + 1] = {gradient = gradient, materialize_grads = true}
  local grads = self:gradient(table.unpack(args))
  for i, t in ipairs(need) do
    local g = grads[i]
    if not shape_eq(g._shape, t._shape) then
      fail("backward: gradient shape %s does not match %s", fmt_shape(g._shape), fmt_shape(t._shape))
    end
    local have = rawget(t, "grad")
    rawset(t, "grad", have and have + g or g)
  end
  return self
end
