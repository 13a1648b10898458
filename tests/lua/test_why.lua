-- test_why.lua - k:why(rule, node) says why a rule does or does not rewrite
-- a node: tried inside the stage that runs it, where the pass stands at the
-- current point.  A planted rule rewrites the node the stage's trace says
-- it did; a pattern that fails names the sub-pattern, the node and what
-- differs; a rule that declines or fails says so; a rule tried before it
-- takes the node first; k:why(node) asks every rule that can match it; the
-- stage is picked from the current point; and for every rewrite of several
-- programs' stages, the rule tried right before it gives exactly the node
-- the stage made, and is the first of the set's rules that rewrites it.
local T = ...

local P = T.load("programs.lua")

local function mul_to_add()
  return uop.rules{ {name = "mul_to_add", pattern = "(MUL:int32 a b)", rewrite = function(m) return m.a + m.b end} }
end
local PLANTED_LINE = debug.getinfo(mul_to_add, "S").linedefined + 1

local function planted()
  local k = uop.compile(P.matmul3()):kernel(1)
  k:insert(15, mul_to_add())
  local stage, culprit = k:bisect{quiet = true}
  T.eq(stage, 15)
  return k, culprit
end

-- the first node under root (toposorted) for which pred holds
local function find(root, pred)
  for _, u in ipairs(root:toposort()) do if pred(u) then return u end end
end

T.test("right before the planted rule's rewrite it rewrites the node into what the stage made", function()
  local k, culprit = planted()
  k:seek(15, culprit.index - 1)
  local before, after = culprit.before_node, culprit.after_node
  local w = k:why("mul_to_add", before)
  T.eq(w.verdict, "rewrites")
  T.ok(w.result == after, "the node the stage made")
  T.eq(w.rule, "mul_to_add")
  T.eq(w.where, "tests/lua/test_why.lua:" .. PLANTED_LINE)
  T.eq(w.pattern, "(MUL:int32 a b)")
  T.eq(w.stage, 15)
  T.eq(w.point, "15." .. (culprit.index - 1))
  T.eq(w.index, w.of) -- inserted after the stage's own rules
  T.ok(w.captures.a == before:src()[1] and w.captures.b == before:src()[2], "a and b are the MUL's sources")
  T.eq(#w.rewrites, 1)
  T.eq(w.rewrites[1].point, "15." .. culprit.index)
  T.eq(w.rewrites[1].rule, "mul_to_add")
  T.ok(w.rewrites[1].after == after)
  T.ok(w.in_output == false, "the MUL is gone by the stage's end")
  local text = tostring(w)
  T.contains(text, string.format("why rule mul_to_add (tests/lua/test_why.lua:%d) on %%%d = MUL int32", PLANTED_LINE, before:id()))
  T.contains(text, string.format("tried in stage 15 (lower index dtype) at point 15.%d, rule %d of %d there",
                                 culprit.index - 1, w.index, w.of))
  T.contains(text, "the pattern (MUL:int32 a b) matches: a = %" .. before:src()[1]:id())
  T.contains(text, "rewrites %" .. before:id() .. " into\n           %" .. after:id() .. " = ADD int32")
  T.contains(text, string.format("stage 15 rewrote %%%d at 15.%d by rule mul_to_add", before:id(), culprit.index))
  -- the id and "%id" name the same node
  T.eq(tostring(k:why("mul_to_add", before:id())), text)
  T.eq(tostring(k:why("mul_to_add", "%" .. before:id())), text)
end)

T.test("a pattern that fails names the sub-pattern, the node it fails on and what differs", function()
  local k = uop.compile(P.matmul3()):kernel(1)
  local probe = uop.rules{ {name = "times_five", pattern = "(ADD (MUL a 5) b)", rewrite = function(m) return m.b end} }
  k:insert(15, probe) -- forgets stages 15.. and moves the kernel back before them
  k:seek(15)
  -- r0*3 + r1: the straight order gets furthest, to the constant 3
  local node = find(k:root(), function(u)
    local s = u:src()
    return u:op() == "ADD" and #s == 2 and s[1]:op() == "MUL" and s[2]:op() == "RANGE" and s[1]:src()[2]:op() == "CONST"
  end)
  T.ok(node, "an ADD of MUL and RANGE")
  local three = node:src()[1]:src()[2]
  local w = k:why("times_five", node)
  T.eq(w.verdict, "no match")
  T.eq(w.point, "15")
  T.ok(w.miss.node == three, "it fails on the constant")
  T.eq(w.miss.pattern, "5")
  T.eq(w.miss.reason, "wants the value 5, it is " .. three:arg())
  T.contains(tostring(w), "no match: 5 fails on %" .. three:id() .. ": wants the value 5, it is " .. three:arg())
  T.contains(tostring(w), "in the pattern (ADD (MUL a 5) b)")
  T.ok(w.in_output and #w.rewrites == 0)
  T.contains(tostring(w), "stage 15 left %" .. node:id() .. " as it is")
  T.eq(w.fired, 0)
  -- a dtype: the float MUL of the loads is not int32
  k:insert(15, mul_to_add())
  k:seek(15)
  local fmul = find(k:root(), function(u) return u:op() == "MUL" and tostring(u:dtype()) == "float32" end)
  local f = k:why("mul_to_add", fmul)
  T.eq(f.verdict, "no match")
  T.eq(f.miss.reason, "its dtype float32 is not one the pattern allows")
  T.contains(tostring(f), "no match: (MUL:int32 a b) fails on %" .. fmul:id() .. ": its dtype float32")
end)

T.test("a rule that declines, and one that fails, say so; the session goes on", function()
  local k = uop.compile(P.matmul3()):kernel(1)
  local armed = false
  local never = uop.rules{
    {name = "never", pattern = "(MUL a b)", rewrite = function(m) return nil end},
    {name = "broken", pattern = "(MUL a b)", rewrite = function(m) if armed then error("no way") end end},
  }
  k:insert(15, never)
  k:seek(15)
  local mul = find(k:root(), function(u) return u:op() == "MUL" end)
  local w = k:why("never", mul)
  T.eq(w.verdict, "declined")
  T.eq(w.matches, 2) -- MUL is commutative: both orders are offered
  T.ok(w.captures.a == mul:src()[1] and w.captures.b == mul:src()[2], "the first match's captures")
  T.ok(w.result == nil)
  T.contains(tostring(w), "the pattern (MUL a b) matches (2 ways): a = %" .. mul:src()[1]:id())
  T.contains(tostring(w), "declined: the rule's condition or function gives nothing for any of them")
  -- a Lua rule says why it declines as a second result, its when too
  k:insert(15, uop.rules{
    {name = "says_why", pattern = "(MUL a b)", rewrite = function(m) return nil, "b is not a power of two" end},
    {name = "when_says", pattern = "(MUL a b)", when = function(m) return false, "only on Sundays" end,
     rewrite = function(m) return m.a end},
  })
  k:seek(15)
  local sw = k:why("says_why", mul)
  T.eq(sw.verdict, "declined")
  T.eq(sw.declined, "b is not a power of two")
  T.contains(tostring(sw), "  declined: b is not a power of two")
  T.eq(k:why("when_says", mul).declined, "only on Sundays")
  T.eq(w.declined, nil, "a rule that says nothing")
  T.ok(tostring(k:why(mul)):find("says_why +declined %(2 matches[^)]*%): b is not a power of two"), tostring(k:why(mul)))
  -- one line each when every rule is asked, with the first match's captures
  T.ok(tostring(k:why(mul)):find(string.format("never +declined %%(2 matches: a = %%%%%d, b = %%%%%d%%)",
                                               mul:src()[1]:id(), mul:src()[2]:id())), tostring(k:why(mul)))
  -- from stage 14 the rule is tried at stage 15's input, where the stage makes no rewrite
  k:seek(14)
  local mul14 = find(k:root(), function(u) return u:op() == "MUL" end)
  armed = true
  local e = k:why("broken", mul14)
  armed = false
  T.eq(e.verdict, "error")
  T.contains(e.error, "no way")
  T.contains(tostring(e), "the pattern (MUL a b) matches, and the rule fails: ")
  T.eq(k:why("never", mul14).verdict, "declined", "the session goes on")
end)

T.test("symbolic rules say why they decline", function()
  local k = uop.compile(P.matmul3()):kernel(1)
  k:seek(14)
  -- r0*3 + r1: bounds [0, 8]
  local node = find(k:root(), function(u)
    local s = u:src()
    return u:op() == "ADD" and #s == 2 and s[1]:op() == "MUL" and s[2]:op() == "RANGE"
  end)
  T.ok(node, "an index ADD")
  local w = k:why("fold_by_bounds", node)
  T.eq(w.verdict, "declined")
  T.eq(w.declined, string.format("its bounds [%d, %d] are not one value", node:vmin(), node:vmax()))
end)

T.test("a rule tried before it in the set takes the node first", function()
  local k = uop.compile(P.matmul3()):kernel(1)
  k:insert(15, mul_to_add())
  k:insert(15, uop.rules{ {name = "mul_to_max", pattern = "(MUL:int32 a b)", rewrite = function(m) return m.a:max(m.b) end} },
           {before = true})
  local rw = k:rewrites(15, {quiet = true})
  local first
  for i, r in ipairs(rw) do if r.rule == "mul_to_max" then first = i break end end
  T.ok(first, "the earlier rule fires")
  k:seek(15, first - 1)
  local w = k:why("mul_to_add", rw[first].before)
  T.eq(w.verdict, "rewrites")
  T.eq(w.result:op(), "ADD")
  T.eq(w.rewrites[1].rule, "mul_to_max")
  T.eq(w.rewrites[1].index, 1)
  T.ok(w.rewrites[1].index < w.index)
  T.eq(w.fired, 0)
  T.contains(tostring(w), "rule 1 of the set, offered the node before this one, which never saw it")
end)

T.test("the stage is the current one, the next or the last before; errors are one line", function()
  local k, culprit = planted()
  k:seek(22)
  local w = k:why("mul_to_add", culprit.after_node)
  T.eq(w.stage, 15)
  T.eq(w.point, "15")
  T.contains(tostring(w), "at its end, point 15")
  T.eq(tostring(k:why("mul_to_add", culprit.after_node, {stage = 15})), tostring(w))
  -- a node the stage rewrote away: the error says where to stand to ask
  T.raises(string.format("why: %%%d is not in the graph at point 15, the end of stage 15, where its rules would see it "
                         .. "(stage 15 rewrote it at 15.%d: :goto 15.%d stands right before)",
                         culprit.before_node:id(), culprit.index, culprit.index - 1),
           function() k:why("mul_to_add", culprit.before_node) end)
  -- from stage 14 a rule of stage 15 is tried at stage 15's input
  k:seek(14)
  local node = k:root()
  local s = k:why("lower_binary", node)
  T.eq(s.stage, 15)
  T.eq(s.point, "15.0")
  T.contains(tostring(s), "at its input, point 15.0")
  T.eq(s.verdict, "no match")
  -- a sym rule at stage 14, which runs sym itself: its end
  T.eq(k:why("fold_divmod_general", node).point, "14")
  -- errors
  T.raises("why: no stage runs a rule named nothing_like_it", function() k:why("nothing_like_it", node) end)
  T.raises("why: no stage runs a rule named mul_to_ad (did you mean mul_to_add?)", function() k:why("mul_to_ad", node) end)
  T.raises("why: stage 3 (split ranges) runs no rule named mul_to_add", function() k:why("mul_to_add", node, {stage = 3}) end)
  T.raises("why: stage must be a whole number from 1 to 22", function() k:why("mul_to_add", node, {stage = 23}) end)
  T.raises("why: stage must be a whole number from 1 to 22", function() k:why("mul_to_add", node, {stage = 1.5}) end)
  T.raises("why: unknown option 'stages'", function() k:why("mul_to_add", node, {stages = 3}) end)
  T.raises("why: 'abc' is not a node id", function() k:why("mul_to_add", "abc") end)
  T.raises("why: no node %4000000000", function() k:why("mul_to_add", 4000000000) end)
  T.raises("is not in the graph at point 15.0, the input of stage 15, where its rules would see it "
           .. "(it is at no point of this kernel)", function()
    k:why("mul_to_add", uop.var("not_here", 0, 3))
  end)
  -- a node of the scheduled kernel that stage 15 never sees: the points that have it
  local reduce
  for _, u in ipairs(k:root(3):toposort()) do if u:op() == "REDUCE" then reduce = u end end
  T.ok(reduce, "the kernel at point 3 has a REDUCE")
  T.raises(string.format("%%%d is not in the graph at point 15.0, the input of stage 15, where its rules would see it "
                         .. "(it is in the graph at points 0 to 6; name one of its stages with {stage = N})",
                         reduce:id()), function() k:why("mul_to_add", reduce) end)
  T.raises("bad argument #1", function() k:why(nil, node) end)
  T.eq(k:why("mul_to_add", node, {stage = 15}).point, "15.0", "the session goes on")
end)

T.test("k:why(node) asks every rule that can match the node; each agrees with k:why(rule, node)", function()
  local k, culprit = planted()
  k:seek(15, culprit.index - 1)
  local before = culprit.before_node
  local all = k:why(before)
  T.eq(all.stage, 15)
  T.eq(all.point, "15." .. (culprit.index - 1))
  T.ok(#all.rules >= 2, "lower_binary and mul_to_add at least")
  T.ok(all.rule == nil and all.fired == nil, "no one rule's fields at the top")
  local text = tostring(all)
  T.contains(text, "why on %" .. before:id() .. " = MUL int32")
  T.contains(text, string.format("the rules of stage 15 (lower index dtype) that can match MUL, tried at point 15.%d: %d of %d",
                                 culprit.index - 1, #all.rules, all.of))
  local last = 0
  for _, r in ipairs(all.rules) do
    T.ok(r.index > last, "in set order")
    last = r.index
    local one = k:why(r.rule, before)
    T.eq(r.verdict, one.verdict, r.rule)
    T.eq(r.where, one.where, r.rule)
    T.ok(r.result == one.result, r.rule .. ": the same result")
    if r.miss then T.eq(r.miss.reason, one.miss.reason, r.rule) end
    T.contains(text, string.format("%4d  %s", r.index, r.rule))
  end
  local by = all.rules[#all.rules]
  T.eq(by.rule, "mul_to_add")
  T.eq(by.verdict, "rewrites")
  T.ok(text:find("mul_to_add +rewrites it into %%" .. culprit.after_node:id() .. " = ADD int32"), text)
  T.eq(all.rewrites[1].rule, "mul_to_add")
  T.eq(tostring(k:why("%" .. before:id())), text)
  -- a hook stage has no rules
  T.raises("why: stage 7 (apply opts) runs no rules (it is an algorithm, not a rule pass)", function()
    k:why(before, {stage = 7})
  end)
end)

T.test("for every rewrite of several programs, the rule tried right before it makes what the stage made", function()
  Tensor.manual_seed(5)
  local programs = {
    uop.compile(P.matmul3()),
    uop.compile(Tensor.rand(4, 16):softmax(1)),
    uop.compile(Tensor.rand(1, 3, 8, 8):conv2d(Tensor.rand(4, 3, 3, 3))),
    uop.compile(Tensor.rand(6, 10):pad({{1, 2}, {0, 3}}):flip(1):exp()),
    uop.compile(Tensor.rand(12):cumsum(0)),
    uop.compile(Tensor.rand(64, 64):sum(1), {target = "gpu"}),
    uop.compile(Tensor.rand(32, 32):matmul(Tensor.rand(32, 32)), {target = "gpu"}),
  }
  local checked, stages = 0, {}
  for _, p in ipairs(programs) do
    for ki = 1, #p:kernels() do
      local k = p:kernel(ki)
      for s = 1, 22 do
        for r, w in ipairs(k:rewrites(s, {quiet = true})) do
          k:seek(s, r - 1)
          local y = k:why(w.rule, w.before, {stage = s})
          local what = string.format("stage %d rewrite %d (%s)", s, r, w.rule)
          T.eq(y.verdict, "rewrites", what)
          T.ok(y.result == w.after, what .. ": the node the stage made")
          -- of every rule that can match, the first that rewrites it is the stage's
          local first
          for _, x in ipairs(k:why(w.before, {stage = s}).rules) do
            if x.verdict == "rewrites" then first = x break end
          end
          T.ok(first and first.where == w.where and first.result == w.after, what .. ": the first rule that rewrites it")
          checked, stages[s] = checked + 1, true
        end
      end
    end
  end
  T.ok(checked > 500, "rewrites checked: " .. checked)
  -- stages whose rules read a context of their own are among them
  for _, s in ipairs{10, 11, 12, 20} do T.ok(stages[s], "stage " .. s) end
end)
