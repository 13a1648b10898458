-- tensor_realize.lua - a tensor's values: realize (compile and run through
-- uop.compile), tolist, item, and tostring in numpy's layout.
local uop, shared = ...
local Tensor = uop.Tensor
local fail, is_tensor, prod, wrap = shared.fail, shared.is_tensor, shared.prod, shared.wrap
local info, reshape_raw = shared.info, shared.reshape_raw

-- the BUFFER holding self's values when self is a buffer (maybe reshaped)
local function realized_buffer(self)
  local u = self.uop
  if u:op() == "RESHAPE" then u = u:src()[1] end
  if u:op() == "BUFFER" and uop._has_data(u) then return u end
  return nil
end

local MOVEMENT = {RESHAPE = true, EXPAND = true, PERMUTE = true, PAD = true, SHRINK = true, FLIP = true}

-- u with the node `held` under its movement ops replaced by the buffer b
-- that holds held's values: u itself when u is held, else the view of b
-- that u's movement ops make (as tinygrad realizes a view's base); a
-- reshape of the buffer stays a reshape of it
local function view_of(u, held, b)
  -- a work stored once along the axes it does not use is held SHRINKed to
  -- index 0 on them, and read through an EXPAND of that shape
  local once = held:op() == "SHRINK" and held:src()[1] or nil
  local moves = {}
  while u ~= held and u ~= once do
    if not MOVEMENT[u:op()] then fail("realize: the program's output %s is not under the tensor's movement ops", tostring(held)) end
    moves[#moves + 1] = u
    u = u:src()[1]
  end
  local n = prod(uop.shape(held))
  local function reshaped(shape) return reshape_raw(wrap(b, {n}, b:dtype()), shape).uop end
  local v = reshaped(uop.shape(held))
  if u == once then v = wrap(v, uop.shape(held), b:dtype()):expand(uop.shape(once)).uop end
  for i = #moves, 1, -1 do
    local m = moves[i]
    if m:op() == "RESHAPE" and (v == b or (v:op() == "RESHAPE" and v:src()[1] == b)) then
      v = reshaped(uop.shape(m))
    else
      local src = m:src()
      src[1] = v
      v = uop.new(m:op(), m:dtype(), src, m:arg())
    end
  end
  return v
end
Tensor._view_of = view_of

-- is self a realized buffer or a view of one (no work left but moving its
-- elements)?
local function realized_view(self)
  local u = self.uop
  while MOVEMENT[u:op()] do u = u:src()[1] end
  return u:op() == "BUFFER" and uop._has_data(u)
end

-- t:realize(...): computes self (and the other tensors given) with
-- uop.compile; each becomes its result buffer reshaped to its shape, or the
-- view of it its movement ops make when the program stored the work under
-- them (tensors that are views of one work share its buffer); one with no
-- elements becomes an empty buffer without compiling anything
function Tensor:realize(...)
  local pending = {}
  for _, t in ipairs({self, ...}) do
    if not is_tensor(t) then fail("realize: expected Tensors, got %s", type(t)) end
    if realized_view(t) then
      -- nothing to do: a view of a realized buffer is realized, as in tinygrad
    elseif prod(t._shape) == 0 then
      -- no elements: an empty buffer, with no kernel (as tinygrad schedules none)
      local dt = t:dtype()
      t.uop = reshape_raw(wrap(uop.buffer(dt, 0), {0}, dt), t._shape).uop
    else
      pending[#pending + 1] = t
    end
  end
  if #pending == 0 then return self end
  if type(uop.compile) ~= "function" then fail("uop.compile is not available") end
  -- realizing a value is not a request to debug it: the current kernel stays
  local program = uop.compile(#pending == 1 and pending[1] or pending, {select = false})
  local outs, held = program:run(), program:outputs()
  for i, t in ipairs(pending) do
    local b = outs[i]
    if not b then fail("realize: the program returned %d outputs for %d tensors", #outs, #pending) end
    for j = 1, i - 1 do
      if held[j] == held[i] then b = outs[j] end
    end
    t.uop = view_of(t.uop, held[i], b)
  end
  return self
end

-- the buffer holding self's values in order: self's own once realized, or,
-- for a view of a realized buffer, a contiguous copy (tinygrad's `_data`)
local function values_buffer(self)
  self:realize()
  return realized_buffer(self) or realized_buffer(self:contiguous():realize())
end

function Tensor:tolist()
  return uop.buffer_values(values_buffer(self), self._shape)
end

function Tensor:item()
  if self:numel() ~= 1 then fail("item: the tensor has %d elements, not 1", self:numel()) end
  return uop.buffer_values(values_buffer(self))[1]
end

function Tensor:__tostring()
  if not is_tensor(self) then fail("Tensor.__tostring: needs a Tensor, got %s", type(self)) end
  -- an empty tensor prints as numpy prints it, without listing its (maybe
  -- very many) empty rows
  if #self._shape > 0 and prod(self._shape) == 0 then return "[]" end
  return Tensor.format_values(self:tolist(), self._shape, self._dtype)
end
