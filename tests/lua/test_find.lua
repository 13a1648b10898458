-- test_find.lua - patterns of the rule language matched from Lua: k:find
-- lists the nodes of the graph at the current point that match (checked
-- against a plain Lua filter of the same graph), with their captures, and
-- when none does names the closest miss; uop.match and u:match give the
-- captures or why not; bad patterns and options are one-line errors.
local T = ...

local P = T.load("programs.lua")

local function kernel_at(point, r)
  local k = uop.compile(P.matmul3()):kernel(1)
  if r then k:seek(point, r) else k:seek(point) end
  return k
end

T.test("k:find lists the nodes that match, as a filter of the graph finds them", function()
  local k = kernel_at(15)
  local f = k:find("(MUL:int32 a b)")
  local want = uop.find(k:root(), function(u) return u:op() == "MUL" and tostring(u:dtype()) == "int32" end)
  T.ok(#want >= 1, "the index MULs")
  T.eq(#f.nodes, #want)
  for i, u in ipairs(want) do
    T.ok(f.nodes[i] == u, "node " .. i)
    local s = u:src()
    -- MUL is commutative: the written order binds first
    T.ok(f.captures[i].a == s[1] and f.captures[i].b == s[2], "captures of node " .. i)
  end
  T.eq(f.pattern, "(MUL:int32 a b)")
  T.eq(f.point, "15")
  local text = tostring(f)
  T.contains(text, string.format("find (MUL:int32 a b) at point 15: %d node%s", #want, #want == 1 and "" or "s"))
  T.contains(text, "%" .. want[1]:id() .. " = MUL int32")
  T.contains(text, "a = %" .. want[1]:src()[1]:id() .. ", b = %" .. want[1]:src()[2]:id())
  -- every load of the kernel, nested sources bound
  local loads = k:find("(LOAD (INDEX buf idx))")
  local all_loads = uop.find(k:root(), "LOAD")
  T.eq(#loads.nodes, #all_loads)
  for i, u in ipairs(loads.nodes) do
    T.ok(loads.captures[i].buf == u:src()[1]:src()[1] and loads.captures[i].idx == u:src()[1]:src()[2])
  end
end)

T.test("k:find's text is limited, its fields are not; a rewrite point's graph is searched", function()
  local k = kernel_at(15)
  local f = k:find("(LOAD (INDEX buf idx))", {limit = 2})
  T.ok(#f.nodes > 2)
  T.contains(tostring(f), string.format("... and %d more (the field nodes has them all)", #f.nodes - 2))
  local _, lines = tostring(f):gsub("\n", "")
  T.eq(lines, 3) -- the head, two nodes, the rest
  -- at 15.0 the index math is still in index dtype: no int32 MUL yet
  local k0 = kernel_at(15, 0)
  T.eq(#k0:find("(MUL:int32 a b)").nodes, 0)
  T.ok(#k0:find("(MUL:index a b)").nodes >= 1)
  T.eq(k0:find("(MUL:index a b)").point, "15.0")
end)

T.test("with no match, k:find names the node the match got furthest on and where it failed", function()
  local k = kernel_at(15)
  local f = k:find("(ADD x (MUL a 5))")
  T.eq(#f.nodes, 0)
  local c = f.closest
  T.ok(c, "a closest miss")
  T.eq(c.root:op(), "ADD")
  T.eq(c.node:op(), "CONST")
  T.eq(c.pattern, "5")
  T.eq(c.reason, "wants the value 5, it is " .. c.node:arg())
  T.ok(uop.match(c.root, "(ADD x (MUL a " .. c.node:arg() .. "))"), "with the value it has, it matches")
  local text = tostring(f)
  T.contains(text, "find (ADD x (MUL a 5)) at point 15: no node matches")
  T.contains(text, "  closest: %" .. c.root:id() .. " = ADD int32")
  T.contains(text, "    5 fails on %" .. c.node:id() .. ": wants the value 5, it is " .. c.node:arg())
end)

T.test("uop.match and u:match give the captures, or nil and why not", function()
  local x = uop.var("x", 0, 10)
  local e = x * 2 + 3
  local m = uop.match(e, "(ADD (MUL a c@(CONST)) 3)")
  T.ok(m.a == x and m.c:arg() == 2)
  T.ok(e:match("(ADD (MUL a c@(CONST)) 3)").a == x, "as a method")
  local none, why = uop.match(e, "(ADD (MUL a 4) 3)")
  T.eq(none, nil)
  local two = uop.const(uop.dtypes.index, 2)
  T.eq(why, "4 fails on %" .. two:id() .. ": wants the value 4, it is 2")
  local empty = uop.match(e, "(ADD _ _)")
  T.eq(next(empty), nil, "a match without captures is an empty table")
  T.raises("match: pattern line 1, column 1: '(' is never closed", function() uop.match(e, "(ADD") end)
  T.raises("bad argument #1", function() uop.match(3, "(ADD)") end)
end)

T.test("k:find refuses bad patterns and options with one line", function()
  local k = kernel_at(15)
  T.raises("find: pattern line 1, column 2: expected an op name", function() k:find("(\"x") end)
  -- a bare op name would capture every node: refused, naming the op's own form
  T.raises("find: pattern line 1, column 1: ADD alone captures any node: (ADD) matches the op", function() k:find("ADD") end)
  T.raises("column 6: CONST alone captures any node", function() uop.match(k:root(), "(ADD CONST x)") end)
  T.ok(#k:find("ADD@(ADD)").nodes > 0, "an op name with @ is a capture name like any other")
  T.raises("ALU alone captures any node: (ALU) matches the op", function() k:find("ALU") end)
  T.raises("ADD alone captures any node: (ADD:int32) matches the op", function() k:find("ADD:int32") end)
  T.raises("find: limit must be a whole number", function() k:find("(ADD)", {limit = -1}) end)
  T.raises("find: limit must be a whole number", function() k:find("(ADD)", {limit = 0.5}) end)
  T.raises("find: unknown option 'limits'", function() k:find("(ADD)", {limits = 3}) end)
  T.raises("bad argument #1", function() k:find(nil) end)
  T.ok(#k:find("(ADD)").nodes > 0, "the session goes on")
end)
