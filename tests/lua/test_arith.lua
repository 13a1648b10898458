-- test_arith.lua - Lua operators and comparison methods build the nodes
-- tinygrad v0.12.0's math mixin builds; bounds and evaluation.
local T = ...
local d = uop.dtypes

local function shape(u)
  -- op(src, ...) with CONSTs as their value and vars by name
  if u:op() == "CONST" then return tostring(u:arg()) end
  if u:op() == "DEFINE_VAR" then return u:arg()[1] end
  local parts = {}
  for _, s in ipairs(u:src()) do parts[#parts + 1] = shape(s) end
  return u:op() .. "(" .. table.concat(parts, ", ") .. ")"
end

local x = uop.var("x", 0, 10)
local y = uop.var("y", 0, 3)

T.test("numbers become CONSTs of the other side's dtype", function()
  T.eq(shape(x + 1), "ADD(x, 1)")
  T.eq(shape(1 + x), "ADD(1, x)")
  T.eq((x + 1):src()[2]:dtype(), d.index)
  T.eq(shape(x * y), "MUL(x, y)")
  T.eq(shape(x // 2), "IDIV(x, 2)")
  T.eq(shape(x % 3), "MOD(x, 3)")
  T.eq(shape(7 % x), "MOD(7, x)")
  local f = uop.const(d.float32, 2.0)
  T.eq((f + 1):src()[2]:dtype(), d.float32)
  T.eq((f + 1):src()[2]:arg(), 1.0)
end)

T.test("subtraction and negation follow tinygrad", function()
  T.eq(shape(x - 1), "ADD(x, -1)")
  T.eq(shape(x - y), "ADD(x, MUL(y, -1))")
  T.eq(shape(5 - x), "ADD(5, MUL(x, -1))")
  T.eq(shape(-x), "MUL(x, -1)")
  local f = uop.const(d.float32, 2.0)
  T.eq(shape(-f), "MUL(2.0, -1.0)")
  local b = x:lt(3)
  T.eq(shape(-b), "CMPNE(CMPLT(x, 3), true)")
  T.eq(shape(f / 4), "MUL(2.0, RECIPROCAL(4.0))")
end)

T.test("comparisons", function()
  T.eq(shape(x:lt(3)), "CMPLT(x, 3)")
  T.eq(x:lt(3):dtype(), d.bool)
  T.eq(shape(x:gt(3)), "CMPLT(3, x)")
  T.eq(shape(x:ne(3)), "CMPNE(x, 3)")
  T.eq(shape(x:eq(3)), "CMPNE(CMPNE(x, 3), true)")
  T.eq(shape(x:ge(3)), "CMPNE(CMPLT(x, 3), true)")
  T.eq(shape(x:le(3)), "CMPNE(CMPLT(3, x), true)")
end)

T.test("max, min, where, cast", function()
  T.eq(shape(x:max(y)), "MAX(x, y)")
  T.eq(shape(x:min(2)), "MUL(MAX(MUL(x, -1), -2), -1)")
  T.eq(shape(x:lt(3):where(x, 0)), "WHERE(CMPLT(x, 3), x, 0)")
  T.eq(shape(x:lt(3):where(0, y)), "WHERE(CMPLT(x, 3), 0, y)")
  T.raises("where: x or y must be a UOp", function() return x:lt(3):where(1, 2) end)
  local c = x:cast(d.int32)
  T.eq(c:op(), "CAST"); T.eq(c:dtype(), d.int32)
  T.ok(rawequal(x:cast(d.index), x), "cast to the same dtype is the node itself")
  T.raises("dtype expected", x.cast, x, 3)
end)

T.test("vmin, vmax and eval of (x*4 + 3) // 2", function()
  local e = (x * 4 + 3) // 2
  T.eq(e:vmin(), 1)
  T.eq(e:vmax(), 21)
  T.eq(e:eval{x = 3}, 7)
  T.eq(e:eval{x = 10}, 21)
  T.eq(math.type(e:eval{x = 0}), "integer")
  T.eq(x:lt(3):eval{x = 1}, true)
  T.eq(x:lt(3):eval{x = 5}, false)
  T.eq(x:lt(3):vmin(), false)
  T.eq(x:lt(3):vmax(), true)
  T.eq(((x - 7) % 3):eval{x = 2}, -2, "MOD is the C remainder")
  T.eq(((x - 7) // 2):eval{x = 0}, -3, "IDIV truncates toward zero")
end)

T.test("bounds and eval errors are Lua errors", function()
  local f = uop.const(d.float32, 1.0)
  T.raises("has dtype float32, which has no integer bounds", f.vmin, f)
  T.raises("has dtype float32, which has no integer bounds", f.vmax, f)
  T.raises("eval: variable 'x' has no value", function() return (x + 1):eval{} end)
  T.raises("eval: division by zero", function() return (x // 0):eval{x = 1} end)
  T.raises("eval: value of 'x' must be an integer, got string", function() return x:eval{x = "a"} end)
  T.raises("eval: binding names must be strings", function() return x:eval{[1] = 3} end)
end)

T.test("render", function()
  local text = ((x * 4 + 3) // 2):render()
  T.eq(type(text), "string")
  T.contains(text, "x*4")
  T.contains(text, "//2")
  T.eq(uop.render(x), x:render())
end)
