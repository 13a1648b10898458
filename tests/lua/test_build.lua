-- test_build.lua - building nodes: const, var, range, new, node; args;
-- identity; tostring; error messages.
local T = ...
local d = uop.dtypes

T.test("var is a DEFINE_VAR of dtype index with (name, lo, hi)", function()
  local x = uop.var("bx", 0, 10)
  T.eq(x:op(), "DEFINE_VAR")
  T.eq(x:dtype(), d.index)
  local a = x:arg()
  T.eq(#a, 3)
  T.eq(a[1], "bx"); T.eq(a[2], 0); T.eq(a[3], 10)
  T.eq(#x:src(), 0)
  T.eq(tostring(x), string.format('UOp %%%d = DEFINE_VAR index arg=("bx", 0, 10)', x:id()))
end)

T.test("hash-consing: building twice gives the very same value", function()
  local a, b = uop.var("hx", 0, 5), uop.var("hx", 0, 5)
  T.ok(rawequal(a, b), "rawequal")
  T.ok(rawequal(a + 1, b + 1), "rawequal of derived nodes")
  T.ok(uop.var("hx", 0, 6) ~= a, "different bounds, different node")
  T.ok(rawequal(uop.node(a:id()), a), "uop.node(id) returns the same box")
  T.eq(uop.node(99999999), nil)
end)

T.test("Lua's comparison operators on nodes name the methods that build comparisons", function()
  local a = uop.var("a", 0, 10)
  -- < and > (and <= >=) can only give a boolean in Lua, never a CMPLT node
  T.raises("give a boolean, not a UOp: write a:lt(b)", function() return a < 3 end)
  T.raises("give a boolean, not a UOp", function() return 3 <= a end)
  T.raises("give a boolean, not a UOp", function() return a > a end)
  T.eq(a:lt(3):op(), "CMPLT")
end)

T.test("const of ints, floats, bools and Invalid", function()
  local c = uop.const(d.int32, 3)
  T.eq(c:op(), "CONST"); T.eq(c:arg(), 3); T.eq(math.type(c:arg()), "integer")
  local f = uop.const(d.float32, 1.5)
  T.eq(f:arg(), 1.5); T.eq(f:dtype(), d.float32)
  T.eq(uop.const(d.bool, true):arg(), true)
  T.eq(uop.const(d.float32, 2):arg(), 2.0)
  T.ok(rawequal(uop.const(d.index, uop.Invalid):arg(), uop.Invalid), "Invalid round-trips")
  T.eq(tostring(uop.const(d.int32, 3)), string.format("UOp %%%d = CONST int32 arg=3", c:id()))
end)

T.test("range: int end becomes an index CONST; axis type defaults to LOOP", function()
  local r = uop.range(16, 1, "REDUCE")
  T.eq(r:op(), "RANGE"); T.eq(r:dtype(), d.index)
  T.eq(r:src()[1]:op(), "CONST"); T.eq(r:src()[1]:arg(), 16)
  T.eq(r:arg()[1], 1)
  T.ok(rawequal(r:arg()[2], uop.axis.REDUCE), "axis value")
  T.ok(rawequal(uop.range(16, 2):arg()[2], uop.axis.LOOP), "default LOOP")
  local n = uop.var("rn", 1, 8)
  T.ok(rawequal(uop.range(n, 0, uop.axis.GLOBAL):src()[1], n), "UOp end")
  T.raises("unknown axis type 'REDUC'", uop.range, 4, 0, "REDUC")
end)

T.test("new with srcs and args of every kind", function()
  local x = uop.var("nx", 0, 3)
  local s = uop.new("SINK", d.void, {x})
  T.eq(s:op(), "SINK"); T.ok(rawequal(s:src()[1], x), "source")
  local arg = {1, "a", true, 2.5, uop.ops.ADD, uop.axis.LOOP, d.float32, uop.None, {3}}
  local c = uop.new(uop.ops.CUSTOM, d.int32, {}, arg)
  T.eq(tostring(c), string.format('UOp %%%d = CUSTOM int32 arg=(1, "a", true, 2.5, Ops.ADD, LOOP, float32, None, (3,))', c:id()))
  local back = c:arg()
  T.eq(back[2], "a"); T.eq(back[4], 2.5)
  T.ok(rawequal(back[5], uop.ops.ADD), "op value")
  T.eq(tostring(back[5]), "Ops.ADD")
  T.eq(tostring(back[6]), "AxisType.LOOP")
  T.eq(back[7], d.float32)
  T.ok(rawequal(back[8], uop.None), "None in a tuple")
  T.eq(back[9][1], 3)
  T.eq(uop.new("ADD", "index", {x, x}):op(), "ADD")
end)

T.test("bad input gives clear errors", function()
  local x = uop.var("ex", 0, 3)
  T.eq(T.err(uop.new, "ADDD", d.int32, {x, x}), "unknown op 'ADDD'")
  T.eq(T.err(uop.new, "ADD", d.int32, {x, x}), "ADD: result dtype int32 differs from its sources' index")
  T.eq(T.err(uop.new, "ADD", d.index, {x}), "ADD needs 2 sources, got 1")
  T.raises("source 2 of ADD must be a UOp, got number", uop.new, "ADD", d.index, {x, 3})
  T.raises("a table arg must be a list", uop.new, "CUSTOM", d.int32, {}, {a = 1})
  T.raises("a UOp cannot be an arg", uop.new, "CUSTOM", d.int32, {}, x)
  T.raises("UOp expected", x.lt, 3, 4)
  T.raises("var: 'v' has lo 5 > hi 1", uop.var, "v", 5, 1)
  T.raises("does not fit in an integer", uop.const, d.int8, 1e300)
  T.raises("does not fit in an integer", function() return x + 1e19 end)
  local loop = {}
  loop[1] = loop
  T.raises("arg: tables nested more than 32 deep", uop.new, "CUSTOM", d.int32, {}, loop)
  -- a Lua error from a method names the Lua line
  T.raises("test_build.lua:", function() return x + "a" end)
  T.raises("expected a UOp or a number, got string", function() return x + "a" end)
end)

T.test("graph_size, toposort, node_count", function()
  local x = uop.var("gx", 0, 3)
  local e = (x + 1) * 2
  T.eq(e:graph_size(), 5)
  local order = e:toposort()
  T.eq(#order, 5)
  T.ok(rawequal(order[#order], e), "root last")
  local pos = {}
  for i, u in ipairs(order) do pos[u] = i end
  for _, u in ipairs(order) do
    for _, s in ipairs(u:src()) do T.ok(pos[s] < pos[u], "sources first") end
  end
  T.ok(uop.node_count() >= 5, "node_count")
end)

T.test("ops and axis tables", function()
  T.eq(tostring(uop.ops.WHERE), "Ops.WHERE")
  T.eq(uop.ops.WHERE:name(), "WHERE")
  T.eq(uop.axis.UPCAST:name(), "UPCAST")
  T.eq(uop.ops.NOPE, nil)
end)

T.test("sink and find (from the prelude)", function()
  local x = uop.var("fx", 0, 3)
  local a, b = x + 1, x * 2
  local s = uop.sink(a, b)
  T.eq(s:op(), "SINK"); T.eq(s:dtype(), d.void)
  T.ok(rawequal(s:src()[1], a) and rawequal(s:src()[2], b), "sources in order")
  local adds = uop.find(s, "ADD")
  T.eq(#adds, 1); T.ok(rawequal(adds[1], a), "the ADD")
  local consts = uop.find(s, function(u) return u:op() == "CONST" end)
  T.eq(#consts, 2)
end)
