-- test_origin.lua - k:origin(node) says where a node came from: the rewrite
-- after which it is first in the graph, how (made by the rule, inside the
-- rule's result, or rebuilt when a rewrite below it changed a source), and
-- the same for the node it came from, back to the kernel as scheduled or a
-- stage that is not a rewrite.  Each step is checked against the points
-- themselves (the node is there after the step's rewrite and not before)
-- and against k:rewrites.
local T = ...

local matmul3 = T.load("programs.lua").matmul3

local function mul_to_add()
  return uop.rules{ {name = "mul_to_add", pattern = "(MUL:int32 a b)", rewrite = function(m) return m.a + m.b end} }
end
local PLANTED_LINE = debug.getinfo(mul_to_add, "S").linedefined + 1

local function contains(root, u)
  for _, x in ipairs(root:toposort()) do if x == u then return true end end
  return false
end

-- whether u is in the graph at stage s after r of its rewrites (r nil: the whole stage)
local function there(k, u, s, r)
  if r then k:seek(s, r) else k:seek(s) end
  return contains(k:root(), u)
end

-- checks every step of o against the points and the stages' rewrites; k ends at stage 22
local function check_steps(k, o)
  local steps = o.steps
  T.ok(#steps >= 1, "at least one step")
  for i, st in ipairs(steps) do
    local what = string.format("step %d (%s at %s)", i, st.how, st.point)
    if i > 1 then T.ok(st.node == steps[i - 1].from, what .. " explains the node the step before came from") end
    if st.how == "scheduled" then
      T.eq(st.point, "0", what)
      T.ok(there(k, st.node, 0), what .. ": in the kernel as scheduled")
    elseif st.rewrite == 0 then
      T.eq(st.how, "stage", what)
      T.ok(there(k, st.node, st.stage) and not there(k, st.node, st.stage - 1), what .. ": made by that stage")
    else
      T.eq(st.point, st.stage .. "." .. st.rewrite, what)
      T.ok(there(k, st.node, st.stage, st.rewrite), what .. ": there after the rewrite")
      T.ok(not there(k, st.node, st.stage, st.rewrite - 1), what .. ": not there before it")
      if st.how ~= "stage" then
        local w = k:rewrites(st.stage, {quiet = true})[st.rewrite]
        T.eq(st.rule, w.rule, what)
        T.eq(st.where, w.where, what)
        T.ok(st.before == w.before and st.after == w.after, what .. ": the rewrite's nodes")
      end
      if st.how == "rule" then T.ok(st.node == st.after and st.from == st.before, what) end
      if st.how == "part" then T.ok(st.node ~= st.after and contains(st.after, st.node) and st.from == st.before, what) end
      if st.how == "rebuilt" then
        T.ok(st.from:op() == st.node:op() and st.from:dtype() == st.node:dtype() and st.from ~= st.node, what)
        T.ok(there(k, st.from, st.stage, st.rewrite - 1), what .. ": the older node is there before the rewrite")
      end
    end
  end
  local last = steps[#steps]
  T.ok(last.how == "scheduled" or last.how == "stage" or o.truncated, "the walk ends at its start")
  k:seek(22)
end

-- the planted rule's culprit, with the kernel at stage 22
local function planted()
  local k = uop.compile(matmul3()):kernel(1)
  k:insert(15, mul_to_add())
  local stage, culprit = k:bisect{quiet = true}
  T.eq(stage, 15)
  k:seek(22)
  return k, culprit
end

T.test("the node a planted rule made: its rule, where it is written, the rewrite, back to stage 0", function()
  local k, culprit = planted()
  local node = culprit.after_node
  local o = k:origin(node)
  local first = o.steps[1]
  T.eq(first.how, "rule")
  T.eq(first.rule, "mul_to_add")
  T.eq(first.where, "tests/lua/test_origin.lua:" .. PLANTED_LINE)
  T.eq(first.stage, 15)
  T.eq(first.rewrite, culprit.index)
  T.eq(first.of, culprit.of)
  T.ok(first.from == culprit.before_node, "made from the MUL the rule rewrote")
  T.ok(o.node == node and not o.truncated and not o.lost)
  check_steps(k, o)
  -- the text reads latest first, with the node it came from under each step
  local text = tostring(o)
  T.ok(text:find("origin of %" .. node:id() .. " = ADD int32", 1, true), text)
  T.ok(text:find(string.format("at %-6sis the result of rule mul_to_add (tests/lua/test_origin.lua:%d), which rewrote %%%d",
                               "15." .. culprit.index, PLANTED_LINE, culprit.before_node:id()), 1, true), text)
  T.ok(text:find("%" .. culprit.before_node:id() .. " = MUL int32", 1, true), text)
  -- the id and "%id" name the same node
  T.eq(tostring(k:origin(node:id())), text)
  T.eq(tostring(k:origin("%" .. node:id())), text)
end)

T.test("a node above the planted rule's: rebuilt by that rewrite, found in its history", function()
  local k, culprit = planted()
  local index
  for _, u in ipairs(k:root():toposort()) do
    if u:op() == "INDEX" and contains(u, culprit.after_node) then index = u break end
  end
  T.ok(index, "an INDEX reads through the wrong ADD")
  local o = k:origin(index)
  check_steps(k, o)
  local rebuilt
  for _, st in ipairs(o.steps) do
    if st.how == "rebuilt" and st.rule == "mul_to_add" then rebuilt = st end
  end
  T.ok(rebuilt, tostring(o))
  T.eq(rebuilt.point, "15." .. culprit.index)
  T.ok(rebuilt.before == culprit.before_node and rebuilt.after == culprit.after_node)
  T.ok(contains(rebuilt.from, culprit.before_node), "the older INDEX read through the MUL")
  T.ok(tostring(o):find("rebuilt: below it rule mul_to_add", 1, true), tostring(o))
end)

T.test("nodes apply opts made end the walk at stage 7; nodes of the AST at stage 0", function()
  local k = uop.compile(matmul3()):kernel(1) -- default opts: the reduce is unrolled by stage 7
  k:seek(9)
  local made7
  for _, u in ipairs(k:root():toposort()) do
    local o = k:origin(u)
    if o.steps[#o.steps].how == "stage" and o.steps[#o.steps].stage == 7 then made7 = o break end
  end
  T.ok(made7, "some node comes from apply opts")
  check_steps(k, made7)
  T.ok(tostring(made7):find("made by stage 7 (apply opts), which is not a rewrite", 1, true), tostring(made7))
  -- a node in the graph from point 0 to 22 is simply scheduled
  local ast = {}
  k:seek(0)
  for _, u in ipairs(k:root():toposort()) do ast[u] = true end
  k:seek(22)
  local kept
  for _, u in ipairs(k:root():toposort()) do if ast[u] then kept = u break end end
  T.ok(kept, "a node kept from the AST")
  local o = k:origin(kept)
  T.eq(#o.steps, 1)
  T.eq(o.steps[1].how, "scheduled")
  T.ok(tostring(o):find("at 0     is in the kernel as scheduled", 1, true), tostring(o))
end)

T.test("origin from a rewrite point, and the step limit", function()
  local k, culprit = planted()
  k:seek(15, culprit.index)
  local o = k:origin(culprit.after_node)
  T.eq(o.steps[1].point, "15." .. culprit.index)
  local one = k:origin(culprit.after_node, {steps = 1})
  T.eq(#one.steps, 1)
  T.ok(one.truncated, "more to go")
  T.ok(tostring(one):find("stopped after 1 step (k:origin(%" .. culprit.after_node:id() .. ", {steps = 4}) goes further)",
                          1, true), tostring(one))
  -- one rewrite earlier the node is not there yet
  k:seek(15, culprit.index - 1)
  T.raises("origin: %" .. culprit.after_node:id() .. " is not in the graph at point 15." .. (culprit.index - 1),
           function() k:origin(culprit.after_node) end)
end)

T.test("origin refuses what is not a node of the graph, with one line", function()
  local k = uop.compile(matmul3()):kernel(1)
  k:seek(22)
  T.raises("origin: 'abc' is not a node id", function() k:origin("abc") end)
  T.raises("origin: takes a node, its id or \"%ID\", got table", function() k:origin({}) end)
  T.raises("origin: no node %4000000000", function() k:origin(4000000000) end)
  T.raises("origin: no node %-1", function() k:origin(-1) end)
  T.raises("is not in the graph at point 22", function() k:origin(uop.var("not_here", 0, 3)) end)
  local u = k:root()
  T.raises("origin: steps must be a whole number from 1 to 100000", function() k:origin(u, {steps = 0}) end)
  T.raises("origin: steps must be a whole number from 1 to 100000", function() k:origin(u, {steps = 1.5}) end)
  T.raises("origin: unknown option 'step'", function() k:origin(u, {step = 3}) end)
  T.ok(k:origin(u).steps[1], "the session goes on")
end)

T.test("every node of the 3x3 matmul at points 9 and 22 has an origin whose steps hold", function()
  -- with opts and without: stages with few rewrites and nodes made by their first ones
  for _, opts in ipairs{"heuristic", "none"} do
    local k = uop.compile(matmul3(), {opts = opts}):kernel(1)
    for _, point in ipairs{9, 22} do
      k:seek(point)
      for _, u in ipairs(k:root():toposort()) do
        local o = k:origin(u, {steps = 1000})
        T.ok(not o.truncated and not o.lost, tostring(o))
        check_steps(k, o)
        k:seek(point)
      end
    end
  end
end)

T.test("a conv2d's output INDEX is followed back to apply opts through devectorize's rebuilds", function()
  Tensor.manual_seed(3)
  local x, w = Tensor.rand(1, 32, 56, 56), Tensor.rand(64, 32, 3, 3) -- upcast by the default opts
  local k = uop.compile(x:conv2d(w, {padding = 1})):kernel(1)
  k:seek(22)
  local index
  for _, u in ipairs(k:root():toposort()) do if u:op() == "INDEX" then index = u end end
  local o = k:origin(index, {steps = 1000})
  local last = o.steps[#o.steps]
  T.eq(last.point, "7", tostring(o))
  T.eq(last.how, "stage")
  check_steps(k, o)
end)
