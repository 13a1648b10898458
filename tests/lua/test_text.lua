-- test_text.lua - listing, parse, tinygrad repr, DOT and diff from Lua.
local T = ...
local d = uop.dtypes

local x = uop.var("tx", 0, 10)
local e = (x * 4 + 3) // 2

local function lines(text)
  local out = {}
  for l in text:gmatch("[^\n]+") do out[#out + 1] = l end
  return out
end

T.test("listing: one line per node, the root last, named by id", function()
  local text = e:listing()
  local ls = lines(text)
  T.eq(#ls, e:graph_size())
  T.eq(ls[1], string.format('%%%d = DEFINE_VAR index arg=("tx", 0, 10)', x:id()))
  T.ok(ls[#ls]:match("^%%" .. e:id() .. " = IDIV"), "root last: " .. ls[#ls])
  T.eq(uop.listing(e), text)
  T.contains(e:listing{color = true}, "\27[", "colour codes when asked")
end)

T.test("parse(listing) returns the very same node", function()
  T.ok(rawequal(uop.parse(e:listing()), e), "round trip")
  local s = uop.sink(e, x:lt(3))
  T.ok(rawequal(uop.parse(s:listing()), s), "round trip of a sink")
end)

T.test("parse errors name the line and column", function()
  local msg = T.err(uop.parse, "%0 = FOO index")
  T.contains(msg, "parse: line 1, column")
  T.contains(msg, "FOO")
  T.raises("string expected", uop.parse, 42 == 0)
end)

T.test("tinygrad repr round trip", function()
  local text = e:to_tinygrad()
  T.contains(text, "UOp(Ops.IDIV, dtypes.index, arg=None, src=(")
  T.contains(text, "UOp(Ops.DEFINE_VAR, dtypes.index, arg=('tx', 0, 10), src=())")
  T.ok(rawequal(uop.from_tinygrad(text), e), "round trip")
  local pasted = "UOp(Ops.ADD, dtypes.int, arg=None, src=(\n" ..
                 "  UOp(Ops.CONST, dtypes.int, arg=1, src=()),\n" ..
                 "  UOp(Ops.CONST, dtypes.int, arg=2, src=()),))"
  local u = uop.from_tinygrad(pasted)
  T.eq(u:op(), "ADD"); T.eq(u:dtype(), d.int32)
  T.eq(u:src()[2]:arg(), 2)
  T.raises("from_tinygrad: line 1", uop.from_tinygrad, "UOp(Ops.NOPE, dtypes.int)")
end)

T.test("dot text, focus and files", function()
  local text = uop.dot(e)
  T.ok(text:match("^digraph"), "starts with digraph")
  T.contains(text, string.format("n%d -> n", x:id()))
  T.contains(text, "IDIV")
  local cut = uop.dot(e, {focus = x, radius = 1})
  T.ok(not cut:find("IDIV", 1, true), "IDIV is more than 1 edge from x")
  T.contains(uop.dot(e, {title = "my graph"}), "my graph")
  local path = os.tmpname() .. ".dot"
  T.eq(uop.dot(e, {file = path}), "wrote " .. path)
  local f = assert(io.open(path))
  T.eq(f:read("a"), text)
  f:close()
  os.remove(path)
  if os.execute("command -v dot >/dev/null 2>&1") then
    local svg = os.tmpname() .. ".svg"
    uop.dot(e, {file = svg})
    local g = assert(io.open(svg))
    T.contains(g:read("a"), "<svg", "rendered by Graphviz")
    g:close()
    os.remove(svg)
  end
  T.raises("cannot tell the format", uop.dot, e, {file = "/tmp/noextension"})
  T.contains(uop.diff_dot(x + 1, x + 2), "digraph")
  T.raises("option 'focus' must be a UOp", uop.dot, e, {focus = 3})
end)

T.test("diff shows removed and added nodes only", function()
  local a = (x + 0) * 2
  local b = uop.rewrite(a, {{pattern = "(ADD x 0)", rewrite = "x"}})
  local text, stats = uop.diff(a, b, {label_a = "before", label_b = "after", stats = true})
  T.contains(text, "--- before\n+++ after\n")
  local in_a, in_b = {}, {}
  for _, l in ipairs(lines(a:listing())) do in_a[l] = true end
  for _, l in ipairs(lines(b:listing())) do in_b[l] = true end
  for l in pairs(in_a) do
    if not in_b[l] then T.contains(text, "\n-" .. l .. "\n", "removed line") end
  end
  for l in pairs(in_b) do
    if not in_a[l] then T.contains(text, "\n+" .. l) end
  end
  T.eq(stats.added, 1)
  T.eq(stats.removed, 3)
  T.eq(select(1, uop.diff(a, a)):find("\n+", 1, true), nil, "no changes, no + lines")
  T.eq(select("#", uop.diff(a, b)), 1, "only the text unless stats are asked for")
  local bare = uop.diff(a, b, {context = 0})
  for l in bare:gmatch("[^\n]+") do
    T.ok(l:sub(1, 1) ~= " ", "context = 0 shows no unchanged line: " .. l)
  end
end)
