-- test_rewrite.lua - uop.rules and uop.rewrite: Lua and template rewrites,
-- the trace, statistics, and errors that name the rule.
local T = ...
local d = uop.dtypes

local x = uop.var("rx", 0, 10)

T.test("a Lua rewrite returns the very node x, and the trace names the rule", function()
  local e = x + 0
  local rs = uop.rules{
    {name = "add0", pattern = "(ADD x (CONST 0))", rewrite = function(m) return m.x end},
  }
  local r, trace = uop.rewrite(e, rs)
  T.ok(rawequal(r, x), "rewritten to x itself")
  T.eq(#trace.rewrites, 1)
  local rw = trace.rewrites[1]
  T.eq(rw.rule, "add0")
  T.ok(rawequal(rw.before, e), "before")
  T.ok(rawequal(rw.after, x), "after")
  T.eq(type(rw.ms), "number")
  T.eq(rw.pass, 1)
  -- the rule is written at the line of its rewrite function (line 11 of this file)
  T.ok(rw.where:match("test_rewrite%.lua:11$"), "where is " .. rw.where)
  T.eq(#trace.passes, 1)
  T.eq(trace.passes[1].rewrites, 1)
  T.ok(rawequal(trace.passes[1].before, e) and rawequal(trace.passes[1].after, x), "pass roots")
  T.eq(trace.rules.add0.matches, 1)
  T.eq(trace.rules.add0.rewrites, 1)
end)

T.test("template rewrites, default names, and order of application", function()
  local rs = uop.rules{
    {pattern = "(ADD x (CONST 0))", rewrite = "x"},
    {name = "mul1", pattern = "(MUL x 1)", rewrite = "x"},
  }
  T.eq(#rs, 2)
  local names = rs:names()
  T.eq(names[1], "rule1"); T.eq(names[2], "mul1")
  T.eq(tostring(rs), "RuleSet rules (2 rules: rule1, mul1)")
  local r, trace = uop.rewrite((x * 1) + 0, rs)
  T.ok(rawequal(r, x), "both rules applied")
  T.eq(#trace.rewrites, 2)
  T.eq(trace.rewrites[1].rule, "mul1")
  T.eq(trace.rewrites[2].rule, "rule1")
  local stats = rs:stats()
  T.eq(stats.mul1.rewrites, 1)
  T.contains(stats.mul1.where, "test_rewrite.lua:")
end)

T.test("captures table and the matched root", function()
  local seen
  local rs = uop.rules{{name = "swap", pattern = "(ADD a:index b@(CONST))",
    rewrite = function(m, root) seen = root; return m.a * m.b:arg() end}}
  local e = x + 5
  local r = uop.rewrite(e, rs)
  T.ok(rawequal(seen, e), "second argument is the matched node")
  T.ok(rawequal(r, x * 5), "built from the captures")
end)

T.test("returning nil means no rewrite; when can refuse a match", function()
  local e = x + 0
  local r, trace = uop.rewrite(e, {{pattern = "(ADD x 0)", rewrite = function() return nil end}})
  T.ok(rawequal(r, e), "unchanged")
  T.eq(#trace.rewrites, 0)
  local r2 = uop.rewrite(e, {{pattern = "(ADD x 0)", rewrite = "x", when = function(m) return m.x:vmax() > 100 end}})
  T.ok(rawequal(r2, e), "when false: no rewrite")
  local r3 = uop.rewrite(e, {{pattern = "(ADD x 0)", rewrite = "x", when = function(m) return m.x:vmax() == 10 end}})
  T.ok(rawequal(r3, x), "when true: rewrite")
end)

T.test("bottom_up option and rule sets passed as plain tables", function()
  local e = (x + 0) * 1
  local r = uop.rewrite(e, {{pattern = "(ADD x 0)", rewrite = "x"}, {pattern = "(MUL x 1)", rewrite = "x"}},
                        {bottom_up = true, name = "simp"})
  T.ok(rawequal(r, x), "bottom-up reaches the fixed point too")
  local _, trace = uop.rewrite(e, {{pattern = "(MUL x 1)", rewrite = "x"}}, {name = "simp"})
  T.eq(trace.passes[1].name, "simp")
end)

T.test("a Lua error in a rewrite function names the rule", function()
  local rs = uop.rules{{name = "boom", pattern = "(ADD x 0)", rewrite = function() error("kaboom") end}}
  local msg = T.err(uop.rewrite, x + 0, rs)
  T.contains(msg, 'rule "boom"')
  T.contains(msg, "kaboom")
  msg = T.err(uop.rewrite, x + 0, {{name = "bad", pattern = "(ADD x 0)", rewrite = function() return 3 end}})
  T.contains(msg, 'rule "bad"')
  T.contains(msg, "rewrite must return a UOp or nil, got number")
  msg = T.err(uop.rewrite, x + 0, {{name = "w", pattern = "(ADD x 0)", rewrite = "x", when = function() error("nope") end}})
  T.contains(msg, 'rule "w"')
  -- the session goes on: the same graph still rewrites
  T.ok(rawequal(uop.rewrite(x + 0, {{pattern = "(ADD x 0)", rewrite = "x"}}), x), "still works")
end)

T.test("bad rule tables are clear errors", function()
  T.raises("rule 1 ('p') has no pattern", uop.rules, {{name = "p", rewrite = "x"}})
  T.raises("rule 1 ('r') has no rewrite", uop.rules, {{name = "r", pattern = "(ADD x 0)"}})
  T.raises("'(' is never closed", uop.rules, {{name = "c", pattern = "(ADD x", rewrite = "x"}})
  T.raises("rule 2 must be a table, got number", uop.rules, {{pattern = "x", rewrite = "x"}, 5})
  T.raises("'rewrite' must be a function or a string, got number", uop.rules, {{pattern = "x", rewrite = 1}})
  T.raises("uopdb.RuleSet expected", uop.rewrite, x, 5)
end)

T.test("a rewrite loop is an error, not a hang", function()
  local msg = T.err(uop.rewrite, x + 1, {{name = "flip", pattern = "(ADD a b)",
    rewrite = function(m) return m.a + (m.b + 0) end}}, {max_rewrites = 50})
  T.ok(#msg > 0, "has a message")
end)

T.test("trace_lines summarises a trace", function()
  local e = x + 0
  local _, trace = uop.rewrite(e, {{name = "z", pattern = "(ADD x 0)", rewrite = "x"}})
  T.eq(uop.trace_lines(trace), string.format("z (%s): %%%d -> %%%d", trace.rewrites[1].where, e:id(), x:id()))
  T.ok(trace.rewrites[1].where:match("test_rewrite%.lua:%d+$"), "where")
end)

T.test("trace = false: the same result alone, rules counted but not timed", function()
  local rs = uop.rules{{name = "add0", pattern = "(ADD x 0)", rewrite = "x"}, {name = "mul1", pattern = "(MUL x 1)", rewrite = "x"}}
  local e = (x + 0) * 1 + x * 2
  local traced = uop.rewrite(e, rs)
  local before = rs:stats()
  local n = select("#", uop.rewrite(e, rs, {trace = false}))
  T.eq(n, 1, "new_root alone")
  local r = uop.rewrite(e, rs, {trace = false})
  T.ok(rawequal(r, traced), "the same node as with the trace")
  T.ok(rawequal(r, x + x * 2), "and the right one")
  local after = rs:stats()
  T.eq(after.add0.rewrites - before.add0.rewrites, 2, "two untraced calls, one x + 0 each")
  T.eq(after.mul1.rewrites - before.mul1.rewrites, 2, "and one x * 1 each")
  T.eq(after.add0.ms, before.add0.ms, "no rule time measured")
  T.raises("uop.rewrite: trace must be true or false, got", uop.rewrite, e, rs, {trace = "no"})
  T.raises("uop.rewrite: progress must be true or false, got", uop.rewrite, e, rs, {progress = 1})
  T.raises("uop.rewrite: unknown option 'botom_up' (known: bottom_up,", uop.rewrite, e, rs, {botom_up = true})
end)

T.test("uop.simplify keeps no trace: the sym rules count their rewrites but measure no time", function()
  local sym = uop.ruleset("sym")
  local function totals()
    local rewrites, ms = 0, 0
    for _, s in pairs(sym:stats()) do rewrites, ms = rewrites + s.rewrites, ms + s.ms end
    return rewrites, ms
  end
  local y = uop.var("sy", 0, 7)
  local e = (y * 4 + 3) // 4 + (y + 0) * 1
  local r0, ms0 = totals()
  local s = uop.simplify(e)
  local r1, ms1 = totals()
  T.ok(rawequal(s, uop.rewrite(e, "sym")), "the result uop.rewrite gives")
  T.ok(r1 > r0, "rules fired")
  T.eq(ms1, ms0, "no rule time measured, so no trace either")
end)
