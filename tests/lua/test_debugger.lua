-- test_debugger.lua - the debugging story: a wrong rule planted in a stage
-- with k:insert is named by k:bisect (stage, rule, where, rewrite); rewrite
-- points (k:seek(n, r), k:next, k:prev, k:pos), also those of a stage that
-- failed, up to its failure; breakpoints by rule, op,
-- node and predicate; k:inserted / k:remove; uop.compile{rules=}.
local T = ...

local matmul3 = T.load("programs.lua").matmul3

-- a*b on index arithmetic rewritten to a+b: the classic wrong rule
local function mul_to_add()
  return uop.rules{ {name = "mul_to_add", pattern = "(MUL:index a b)", rewrite = function(m) return m.a + m.b end} }
end
local PLANTED_LINE = debug.getinfo(mul_to_add, "S").linedefined + 1

T.test("a planted wrong rule in stage 4 is named by bisect: stage, rule, where, rewrite", function()
  local p = uop.compile(matmul3())
  local k = p:kernel(1)
  T.ok(k:bisect{quiet = true} == nil, "right before the rule is planted")
  k:insert(4, mul_to_add())
  local stage, culprit, reports = k:bisect{quiet = true}
  T.eq(stage, 4)
  T.ok(culprit ~= nil, "the culprit is named")
  T.eq(culprit.rule, "mul_to_add")
  T.eq(culprit.where, "tests/lua/test_debugger.lua:" .. PLANTED_LINE)
  T.ok(culprit.index >= 1 and culprit.index <= culprit.of, "a rewrite of the stage")
  T.ok(culprit.before:find("MUL", 1, true), culprit.before)
  T.ok(culprit.after:find("ADD", 1, true), culprit.after)
  T.eq(culprit.before_node:op(), "MUL")
  -- the point before the culprit is right, the culprit's point is wrong
  T.ok(k:check(4, {quiet = true}).ok == false)
  k:seek(4, culprit.index - 1)
  T.ok(k:check(nil, {quiet = true}).ok, "right before the culprit")
  k:seek(4, culprit.index)
  T.ok(not k:check(nil, {quiet = true}).ok, "wrong after it")
  T.ok(reports[4].ok and not reports[5].ok, "reports by stage + 1")
  -- the reference comes from the untouched program: the output is still what it should be
  T.eq(k:remove(4, "rules"), 1)
  T.eq(#k:inserted(), 0)
  T.eq(k:bisect{quiet = true}, nil)
  -- a kernel with no wrong stage: its last point is right, the rest one line
  local _, _, clean = k:bisect{quiet = true}
  local lines = {}
  for line in tostring(clean):gmatch("[^\n]+") do lines[#lines + 1] = line end
  T.eq(#lines, 3, tostring(clean))
  T.eq(lines[1], "bisect r_3_3_3: no checked stage differs from the reference; 1 of 23 points checked")
  T.eq(lines[2], "   0-21 22 stages          -  (not needed for the verdict)")
  T.eq(lines[3], "  22  cleanup IF/ENDIF     matches the reference")
  -- every point checked: a line each
  _, _, clean = k:bisect{quiet = true, all = true}
  T.contains(tostring(clean), "\n  11  remove reduce        matches the reference\n")
end)

T.test("inserted rules appear in k:rules and k:rewrites under their names with their Lua line", function()
  local k = uop.compile(matmul3()):kernel(1)
  k:insert(4, mul_to_add())
  local ins = k:inserted()
  T.eq(#ins, 1)
  T.eq(ins[1].stage, 4)
  T.eq(ins[1].before, false)
  T.eq(ins[1].names[1], "mul_to_add")
  local rw = k:rewrites(4, {quiet = true})
  local found
  for _, w in ipairs(rw) do if w.rule == "mul_to_add" then found = w end end
  T.ok(found, "the planted rule fired in stage 4")
  T.eq(found.where, "tests/lua/test_debugger.lua:" .. PLANTED_LINE)
  T.ok(k:rules(4, {quiet = true}).mul_to_add >= 1)
  -- an inserted rule that never fires is listed with 0, and the header says where its set runs
  k:insert(4, uop.rules({{name = "never_fires", pattern = "(MUL:int32 a b)", rewrite = function() return nil end}}, "idle"),
           {before = true})
  local fired = k:rules(4)
  T.eq(fired.never_fires, 0)
  T.ok(fired.mul_to_add >= 1)
  T.contains(tostring(fired), "stage 4 (initial symbolic): ")
  T.contains(tostring(fired), "\n  it runs idle (inserted) + ")
  T.contains(tostring(fired), " + rules (inserted)\n")
  T.ok(tostring(fired):find("\n +0  never_fires +tests/lua/test_debugger.lua:%d+   inserted, never fired %(:why never_fires ID says why%)\n"),
       tostring(fired))
  T.raises("insert: rules go into stages 1 to 22", function() k:insert(0, mul_to_add()) end)
  T.raises("insert: unknown option 'befor'", function() k:insert(4, mul_to_add(), {befor = true}) end)
end)

T.test("uop.compile{rules=} inserts into every kernel; the reference stays the program's", function()
  local p = uop.compile(matmul3(), {rules = {[4] = mul_to_add()}})
  local _, rep = p:run{validate = true, quiet = true}
  T.ok(not rep.ok, "the planted rule breaks the kernel and validation says so")
  T.raises("rules: no stage 30", function() uop.compile(matmul3(), {rules = {[30] = mul_to_add()}}) end)
end)

T.test("rewrite points: seek, pos, next and prev across stages, diff of one rewrite", function()
  local k = uop.compile(matmul3()):kernel(1)
  local n15 = k:stages{quiet = true}[15].rewrites
  T.ok(n15 >= 3)
  local line = k:seek(15, 2)
  T.ok(line:find("stage 15 %(lower index dtype%), rewrite 2 of " .. n15), line)
  local s, r = k:pos()
  T.eq(s, 15); T.eq(r, 2)
  T.eq(k:root(), k:root()) -- stable
  T.ok(k:root() ~= k:root(15) and k:root() ~= k:root(14), "a point inside the stage")
  k:seek(15, 0)
  T.eq(k:root(), k:root(14))
  k:seek(15, n15)
  T.eq(k:root(), k:root(15))
  k:seek(15, n15)
  k:next()
  s, r = k:pos()
  T.ok(s > 15 and r == 1, "the first rewrite of the next stage that rewrites")
  k:prev()
  s, r = k:pos()
  T.eq(s, 15); T.eq(r, n15)
  k:seek(15, 1)
  local d = k:diff_text()
  T.ok(d:find("stage 15.0", 1, true) and d:find("stage 15.1", 1, true), d)
  T.raises("rewrite points are 15.0 to 15." .. n15, function() k:seek(15, n15 + 1) end)
  k:seek(15)
  s, r = k:pos()
  T.eq(s, 15); T.eq(r, nil)
end)

T.test("a stage that fails can be stepped into up to its failure, and asked why", function()
  local k = uop.compile(matmul3()):kernel(1)
  local armed = true
  k:insert(15, uop.rules{ {name = "grow", pattern = "(MUL:int32 a b)",
                           rewrite = function(m) if armed then return (m.a * 1) * m.b end end} })
  T.raises("rewrite loop", function() k:seek(15) end)
  local rw = k:rewrites(15)
  T.ok(#rw > 1 and rw.failed and rw.failed:find("rewrite loop", 1, true), "the rewrites before the failure")
  T.contains(tostring(rw), "then it failed: stage 15 (lower index dtype): rewrite loop")
  T.contains(tostring(k:rules(15)), "then it failed: stage 15 (lower index dtype): rewrite loop")
  local first
  for i, r in ipairs(rw) do if r.rule == "grow" then first = i break end end
  T.ok(first, "the planted rule fired")
  -- its rewrite point: the node it made is there, and the session can step around it
  T.contains(k:seek(15, first), string.format("rewrite %d of the %d it made before it failed: grow", first, #rw))
  local s, r = k:pos()
  T.ok(s == 15 and r == first)
  T.ok(uop.find(k:root(), function(u) return u == rw[first].after end)[1], "the node the rule made is in the graph")
  k:prev()
  T.eq(select(2, k:pos()), first - 1)
  T.contains(k:next(), "grow")
  T.raises("it made " .. #rw .. " rewrites before it failed", function() k:seek(15, #rw + 1) end)
  T.eq(select(2, k:pos()), first, "a failed seek leaves the position")
  -- asked why, the rule grows the node it made
  k:seek(15, first - 1)
  local w = k:why("grow", rw[first].before)
  T.eq(w.verdict, "rewrites")
  T.ok(w.result == rw[first].after)
  T.contains(w.failed, "rewrite loop")
  T.contains(tostring(w), string.format("stage 15 failed after %d rewrites: stage 15 (lower index dtype): rewrite loop", #rw))
  local row = k:stages()[15]
  T.contains(row.failed, "rewrite loop")
  T.eq(row.rewrites, #rw)
  T.ok(tostring(k:stages()):find("lower index dtype +%- +%- +" .. #rw .. " +%- +FAILED"), tostring(k:stages()))
  -- bisect names the stage that fails, right after a right one
  local stage, culprit, reports = k:bisect{quiet = true}
  T.eq(stage, 15)
  T.eq(culprit, nil)
  T.contains(reports.failed, "rewrite loop")
  T.contains(tostring(reports), "bisect r_3_3_3: stage 15 (lower index dtype) fails")
  T.contains(tostring(reports), "stage 14 is right; stage 15 (lower index dtype): rewrite loop")
  -- the stages after it are one line, as are the ones the verdict did not need
  T.contains(tostring(reports), "\n  16-22 7 stages           not reached: a stage before it failed")
  T.ok(not tostring(reports):find("\n  17  "), tostring(reports))
  -- where the node the rule made came from: the rule, at its rewrite
  k:seek(15, first)
  local o = k:origin(rw[first].after)
  T.eq(o.steps[1].how, "rule")
  T.eq(o.steps[1].rule, "grow")
  T.eq(o.steps[1].point, "15." .. first)
  T.eq(o.steps[#o.steps].how, "scheduled")
  -- the rule disarmed, the stage runs again when asked for, without removing anything
  armed = false
  T.contains(k:seek(15), "stage 15 (lower index dtype)")
  T.eq(k:rewrites(15).failed, nil)
end)

T.test("k:rules names an inserted rule whose error stopped its stage, not as one that never fired", function()
  local k = uop.compile(matmul3()):kernel(1)
  k:insert(15, uop.rules{ {name = "raises", pattern = "(MUL:int32 a b)", rewrite = function() error("no such case") end},
                          {name = "idle", pattern = "(MUL:int32 a b)", rewrite = function() return nil end} })
  T.raises("no such case", function() k:seek(15) end)
  local text = tostring(k:rules(15))
  T.ok(text:find("\n +0  raises +tests/lua/test_debugger.lua:%d+   inserted, its error stopped the stage %(below%)\n"), text)
  T.ok(text:find("\n +0  idle +tests/lua/test_debugger.lua:%d+   inserted, never fired"), text)
  T.contains(text, 'then it failed: stage 15 (lower index dtype): rule "raises"')
end)

T.test("breakpoints by rule, op, node and predicate; continue across stages", function()
  local k = uop.compile(matmul3()):kernel(1)
  k:seek(0)
  local b1, note = k:breakpoint{rule = "lower_binary"}
  T.eq(b1, 1)
  T.eq(note, nil, "a rule the stages run: no note")
  local at = k:continue()
  T.ok(at:find("breakpoint 1", 1, true) and at:find("lower_binary", 1, true), at)
  local s, r = k:pos()
  T.eq(s, 15)
  T.eq(k:rewrites(15, {quiet = true})[r].rule, "lower_binary")
  T.ok(k:delete(b1))
  T.ok(not k:delete(b1))
  k:breakpoint{op = "LOAD"}
  k:seek(0)
  at = k:continue()
  T.ok(at and at:find("LOAD", 1, true), tostring(at))
  k:delete(2)
  local seen = {}
  k:breakpoint{when = function(before, after) seen[#seen + 1] = before; return after:op() == "CAST" end}
  k:seek(0)
  at = k:continue()
  T.ok(at ~= nil and #seen >= 1, "the predicate ran")
  s, r = k:pos()
  T.eq(k:rewrites(s, {quiet = true})[r].after:op(), "CAST")
  k:delete(3)
  local target = k:rewrites(15, {quiet = true})[1].before
  k:breakpoint{node = target:id()}
  k:seek(0)
  T.ok(k:continue() ~= nil)
  T.eq(#k:breakpoints(), 1)
  T.raises("give exactly one of", function() k:breakpoint{rule = "a", op = "ADD"} end)
  -- a rule no stage runs is set, with a note naming the closest rule
  local typo, why = k:breakpoint{rule = "lower_binar"}
  T.eq(why, "no stage runs a rule named lower_binar yet (did you mean lower_binary?)")
  local _, none = k:breakpoint{rule = "zzzzzzzzzzzz"}
  T.eq(none, "no stage runs a rule named zzzzzzzzzzzz yet")
  k:delete(typo)
  k:delete(typo + 1)
  T.raises("unknown op 'NOPE'", function() k:breakpoint{op = "NOPE"} end)
  T.raises("unknown op 'add': did you mean ADD?", function() k:breakpoint{op = "add"} end)
  k:delete(4)
  T.raises("no breakpoints", function() k:continue() end)
end)

T.test("a tinygrad kernel AST compiles, steps, runs and bisects from Lua", function()
  local f = assert(io.open("tests/golden/tinygrad_matmul_ast.txt"))
  local ast = uop.from_tinygrad(f:read("a"))
  f:close()
  local a, b = {}, {}
  for i = 1, 9 do a[i] = i; b[i] = i + 9 end
  local p = uop.compile(ast, {buffers = {[1] = a, [2] = b}})
  local outs, rep = p:run{validate = true, quiet = true}
  T.ok(rep.ok, rep.text)
  T.eq(table.concat(uop.buffer_values(outs[1]), " "), "84.0 90.0 96.0 201.0 216.0 231.0 318.0 342.0 366.0")
  local k = p:kernel(1)
  k:seek(15)
  T.eq(k:pos(), 15)
  T.ok(k:check(4, {quiet = true}).ok)
  -- seeded random inputs when none are given: the same seed gives the same data
  local o1 = uop.compile(ast, {seed = 3}):run()
  local o2 = uop.compile(ast, {seed = 3}):run()
  T.eq(table.concat(uop.buffer_values(o1[1]), " "), table.concat(uop.buffer_values(o2[1]), " "))
  k:insert(4, mul_to_add())
  local stage, culprit = k:bisect{quiet = true}
  T.eq(stage, 4)
  T.eq(culprit.rule, "mul_to_add")
  T.raises("buffers[1] must be a list of 9 values", function() uop.compile(ast, {buffers = {[1] = {1, 2}}}) end)
  T.raises("unknown option 'buffer'", function() uop.compile(ast, {buffer = {}}) end)
  T.raises("is not a tensor", function() uop.compile(ast:src()[1]) end)
end)

-- the issue's three plantings: each names exactly its stage and its rule
local function mul_to_add_int32()
  return uop.rules{ {name = "mul_to_add32", pattern = "(MUL:int32 a b)", rewrite = function(m) return m.a + m.b end} }
end
local PLANTED32_LINE = debug.getinfo(mul_to_add_int32, "S").linedefined + 1

local function expect_culprit(k, stage, rule, line)
  local s, c = k:bisect{quiet = true}
  T.eq(s, stage)
  T.ok(c ~= nil, "a culprit at stage " .. tostring(s))
  T.eq(c.rule, rule)
  T.eq(c.where, "tests/lua/test_debugger.lua:" .. line)
end

T.test("planted at stage 15 of the 3x3 matmul: bisect names stage 15 and the rule", function()
  local k = uop.compile(matmul3()):kernel(1)
  k:insert(15, mul_to_add_int32())
  expect_culprit(k, 15, "mul_to_add32", PLANTED32_LINE)
end)

T.test("planted at stage 9 of a kernel with UPCAST 3: bisect names stage 9 and the rule", function()
  local k = uop.compile(matmul3()):kernel(1)
  k:opts{{"UPCAST", 1, 3}}
  T.eq(k:bisect{quiet = true}, nil)
  k:insert(9, mul_to_add())
  expect_culprit(k, 9, "mul_to_add", PLANTED_LINE)
end)

T.test("planted at stage 16 of a conv2d: bisect names stage 16 and the rule", function()
  local x = Tensor.new({{{{1, 2, 3, 4}, {5, 6, 7, 8}, {9, 10, 11, 12}, {13, 14, 15, 16}}}}, "float32")
  local w = Tensor.new({{{{1, 0, -1}, {2, 1, 0}, {0, 1, 2}}}}, "float32")
  local k = uop.compile(x:conv2d(w, {padding = 1}), {opts = "none"}):kernel(1)
  T.eq(k:bisect{quiet = true}, nil)
  k:insert(16, mul_to_add_int32())
  expect_culprit(k, 16, "mul_to_add32", PLANTED32_LINE)
end)

T.test("a rule that pushes an index past its buffer: check names the INDEX and the stage, and the session goes on", function()
  local p = uop.compile(matmul3())
  local k = p:kernel(1)
  k:insert(15, uop.rules{ {name = "past_the_end", pattern = "x@(INDEX b@(DEFINE_GLOBAL) i:int32)",
                           when = function(m) return m.i:op() ~= "ADD" or m.i:src()[2]:arg() ~= 100 end,
                           rewrite = function(m) return uop.new("INDEX", m.x:dtype(), {m.b, m.i + 100}) end} })
  local ok, msg = pcall(k.check, k, 15, {quiet = true})
  T.ok(not ok)
  T.ok(msg:find("at stage 15", 1, true) and msg:find("INDEX %", 1, true) and msg:find("past its", 1, true), msg)
  T.ok(msg:find("r%d+=") ~= nil, "the loop variables: " .. msg)
  T.ok(k:check(14, {quiet = true}).ok, "the session goes on")
  -- an access outside a buffer makes a point wrong, not uncheckable: bisect names the stage and the rule
  local stage, culprit, reports = k:bisect{quiet = true}
  T.eq(stage, 15)
  T.ok(reports[16].ok == false, "point 15 is wrong")
  T.contains(tostring(reports), "  15  lower index dtype    DIFFERS from the reference")
  T.contains(tostring(reports), "accesses memory outside a buffer: INDEX %")
  T.ok(culprit ~= nil, "the culprit is named")
  T.eq(culprit.rule, "past_the_end")
  T.contains(culprit.effect, "past its")
  T.contains(tostring(reports), "  after it the kernel accesses memory outside a buffer: INDEX %")
end)

T.test("rules that would run on the linear program are refused when inserted, naming where they can go", function()
  local k = uop.compile(matmul3()):kernel(1)
  local bad = uop.rules{ {name = "mul_to_add32", pattern = "(MUL:int32 a b)", rewrite = function(m) return m.a + m.b end} }
  T.raises("insert: rules in stage 22 (cleanup IF/ENDIF) would run on the linear program, where rules cannot run; "
           .. "insert them at stage 21 with {before = true}, or earlier", function() k:insert(22, bad) end)
  T.raises("insert: rules after stage 21 (linearize) would run on the linear program", function() k:insert(21, bad) end)
  T.raises("uop.compile: rules: rules in stage 22", function() uop.compile(matmul3(), {rules = {[22] = bad}}) end)
  T.eq(#k:inserted(), 0)
  -- before linearize they run, and bisect names them
  k:insert(21, bad, {before = true})
  local stage, culprit = k:bisect{quiet = true}
  T.eq(stage, 21)
  T.eq(culprit.rule, "mul_to_add32")
end)

T.test("a planted rule whose rewrite sends a load past its buffer at default opts is named, with the access", function()
  local a, b = Tensor.rand(64, 64), Tensor.rand(64, 64)
  local k = uop.compile(a:matmul(b)):kernel(1)
  k:insert(15, uop.rules{ {name = "mul_to_add32", pattern = "(MUL:int32 a b)", rewrite = function(m) return m.a + m.b end} })
  local stage, culprit, reports = k:bisect{quiet = true}
  T.eq(stage, 15)
  T.ok(culprit ~= nil, tostring(reports))
  T.eq(culprit.rule, "mul_to_add32")
  T.ok(culprit.effect:find("^INDEX %%%d+ reads 4 elements of buffer 1 %(input0%) at %d+, past its 4096 elements %(gidx0=%d+, r0=%d+"),
       culprit.effect)
  -- the point before the culprit runs and is right; the culprit's own point reads outside a buffer
  k:seek(15, culprit.index - 1)
  T.ok(k:check(nil, {quiet = true}).ok, "right before the culprit")
  k:seek(15, culprit.index)
  T.raises("past its", function() k:check(nil, {quiet = true}) end)
end)

T.test("a culprit that is its stage's last rewrite still says where the kernel accessed outside a buffer", function()
  local p = uop.compile(Tensor.rand(16, 16):matmul(Tensor.rand(16, 16)), {target = "gpu"})
  local k = p:kernel(1)
  k:insert(16, uop.rules{ {name = "far", pattern = "x@(INDEX b@(DEFINE_GLOBAL arg=1) i:int32)",
    when = function(m) return m.i:op() ~= "ADD" or m.i:src()[2]:arg() ~= 100000 end,
    rewrite = function(m) return uop.new("INDEX", m.x:dtype(), {m.b, m.i + 100000}) end} })
  local stage, culprit, reports = k:bisect{quiet = true}
  T.eq(stage, 16)
  T.eq(culprit.rule, "far")
  T.eq(culprit.index, culprit.of, "the culprit is the stage's last rewrite")
  local access = "INDEX %" .. culprit.after_node:id() .. " reads buffer 1 (input0) at 100000, past its 256 elements "
                 .. "(gidx1=0, lidx0=0, gidx0=0)"
  T.eq(culprit.effect, access)
  T.contains(tostring(reports), "\n  after it the kernel accesses memory outside a buffer: " .. access .. "\n")
end)

T.test("a kernel changed by inserted rules always runs bounds-checked: no crash without checked=true", function()
  local p = uop.compile(matmul3())
  local k = p:kernel(1)
  k:insert(15, uop.rules{ {name = "far_past_the_end", pattern = "x@(INDEX b@(DEFINE_GLOBAL) i:int32)",
                           when = function(m) return m.i:op() ~= "ADD" or m.i:src()[2]:arg() ~= 100000000 end,
                           rewrite = function(m) return uop.new("INDEX", m.x:dtype(), {m.b, m.i + 100000000}) end} })
  local ok, msg = pcall(p.run, p)
  T.ok(not ok)
  T.ok(msg:find("INDEX %", 1, true) and msg:find("past its", 1, true), msg)
  k:remove(15)
  T.ok(p:run{validate = true, quiet = true} ~= nil, "runs again once the rule is removed")
end)

T.test("k:diff takes the diff options: side by side, context, unknown keys refused", function()
  local k = uop.compile(matmul3()):kernel(1)
  local side = tostring(k:diff(14, 15, {side = true, width = 100}))
  for line in side:gmatch("[^\n]+") do T.ok(utf8.len(line) <= 100, "fits 100 columns: " .. line) end
  T.ok(side:find(" | ", 1, true), side)
  local none = tostring(k:diff(14, 15, {context = 0}))
  T.ok(not none:find("\n %", 1, true), "context = 0 shows changed lines only")
  T.raises("diff: unknown option 'bogus'", function() k:diff({bogus = 1}) end)
  k:seek(15, 1)
  T.ok(tostring(k:diff({context = 1})):find("stage 15.1", 1, true))
end)

T.test("each kernel of a program is checked on the inputs the reference gives, not on what the kernels before it made", function()
  local x = Tensor.new({{1, 2, 3, 4, 5, 6, 7, 8}, {8, 7, 6, 5, 4, 3, 2, 1}, {0, 1, 0, 1, 0, 1, 0, 1}, {3, 3, 3, 3, 3, 3, 3, 3}},
                       "float32")
  -- the rule planted in all three kernels of a softmax: each bisects to its own culprit
  local p = uop.compile(x:softmax(), {rules = {[15] = mul_to_add_int32()}})
  T.eq(#p:names(), 3)
  for i = 1, 3 do
    local stage, culprit, reports = p:kernel(i):bisect{quiet = true}
    T.eq(stage, 15, tostring(reports))
    T.eq(culprit.rule, "mul_to_add32")
  end
  -- only the first kernel broken: the second and third are right at every point
  local q = uop.compile(x:softmax())
  q:kernel(1):insert(15, mul_to_add_int32())
  T.ok(not q:kernel(1):check(22, {quiet = true}).ok, "the first kernel is wrong")
  for i = 2, 3 do
    T.ok(q:kernel(i):check(0, {quiet = true}).ok, "kernel " .. i .. " as scheduled")
    T.ok(q:kernel(i):check(22, {quiet = true}).ok, "kernel " .. i .. " at its last point")
    T.eq(q:kernel(i):bisect{quiet = true}, nil)
  end
end)

T.test("a run whose output is wrong names the first kernel that is wrong on its own", function()
  local x = Tensor.new({{1, 2, 3, 4, 5, 6, 7, 8}, {8, 7, 6, 5, 4, 3, 2, 1}, {0, 1, 0, 1, 0, 1, 0, 1}, {3, 3, 3, 3, 3, 3, 3, 3}},
                       "float32")
  local _, right = uop.compile(x:softmax()):run{validate = true}
  T.ok(right.ok and right.first_wrong_kernel == nil, "a right program names no kernel")
  -- kernel 2 of 3 broken: the output is wrong, and kernel 3, right on its own, is not blamed
  local q = uop.compile(x:softmax())
  q:kernel(2):insert(15, mul_to_add_int32())
  local _, rep = q:run{validate = true}
  T.eq(rep.ok, false)
  T.eq(rep.first_wrong_kernel, 2)
  T.contains(tostring(rep), "\nkernel 2 of 3 (r_4_8n1) is the first wrong one: given the reference of its inputs,\n"
                           .. "  tmp1 float32 (4, 1): 3 of 4 elements differ from the reference")
  -- kernels 1 and 2 broken: the first is named
  q:kernel(1):insert(15, mul_to_add_int32())
  _, rep = q:run{validate = true}
  T.eq(rep.first_wrong_kernel, 1)
  T.contains(tostring(rep), "kernel 1 of 3 (r_4_8) is the first wrong one")
  -- one kernel: the validation alone says it all
  local k = uop.compile(matmul3()):kernel(1)
  k:insert(15, mul_to_add_int32())
  _, rep = k:program():run{validate = true}
  T.eq(rep.ok, false)
  T.eq(rep.first_wrong_kernel, nil)
  T.ok(not tostring(rep):find("first wrong one", 1, true), tostring(rep))
end)

T.test("the stage table marks the stages that run inserted rules, names the rules, and forgets them once removed", function()
  local k = uop.compile(matmul3()):kernel(1)
  T.ok(not tostring(k:stages()):find("inserted", 1, true), "nothing inserted yet")
  k:insert(4, uop.rules{ {name = "mul_to_add", pattern = "(MUL:index a b)", rewrite = function(m) return m.a + m.b end} })
  local text = tostring(k:stages())
  T.ok(text:find("\n   4  initial symbolic [^\n]* written %+\n"), text)
  T.ok(text:find("\n   5  simplify ranges [^\n]* written\n"), text)
  T.contains(text, "\n  + 4 also runs inserted rules: mul_to_add (k:rules(4) counts their rewrites,\n      k:remove(4) takes")
  T.eq(k:stages()[4].inserted, "mul_to_add")
  T.eq(k:stages()[5].inserted, nil)
  k:remove(4)
  T.ok(not tostring(k:stages()):find("inserted", 1, true), tostring(k:stages()))
  T.eq(k:stages()[4].inserted, nil)
end)

T.test("a run wrong only through kernels each right within tolerance says the difference builds up", function()
  -- kernel 1 sums to 10.00002 instead of 10, well inside the tolerance; kernel 2 multiplies
  -- the difference by 1e6
  local a = Tensor.new({1, 2, 3, 4}, "float32")
  local p = uop.compile((a:sum():contiguous() - 10) * 1e6 + a)
  T.eq(#p:kernels(), 2)
  p:kernel(1):insert(4, uop.rules{ {name = "bump_sum", pattern = "(STORE i v@(REDUCE))",
    rewrite = function(m) return uop.new("STORE", "void", {m.i, m.v * 1.000002}) end} })
  T.ok(p:kernel(1):check(22, {quiet = true}).ok, "kernel 1 is right within the tolerance")
  local _, rep = p:run{validate = true}
  T.eq(rep.ok, false)
  T.eq(rep.first_wrong_kernel, nil)
  T.contains(tostring(rep), "\neach of the 2 kernels is right given the reference of its inputs: "
                           .. "the difference builds up from one kernel to the next")
end)

T.test("bisect checks the kernel as scheduled last, and only when no later point is right", function()
  local k = uop.compile(matmul3()):kernel(1)
  k:insert(1, mul_to_add())
  local seen = {}
  local stage, culprit, reports = k:bisect{quiet = true, progress = function(what) seen[#seen + 1] = what end}
  T.eq(stage, 1)
  T.eq(culprit.rule, "mul_to_add")
  T.eq(table.concat(seen, ", "), "stage 22, stage 11, stage 5, stage 2, stage 1, stage 0, rewrite 1 of 2 in stage 1")
  T.ok(reports[1].ok, "point 0 checked right")
  T.contains(tostring(reports), "  stage 0 is right, stage 1 is wrong")
end)

T.test("points of a large kernel run compiled with bounds checks: same verdicts, the access named", function()
  local a, b = Tensor.rand(128, 128), Tensor.rand(128, 128)
  local k = uop.compile(a:matmul(b)):kernel(1)
  T.ok(k:check(22, {quiet = true}).ok and k:check(16, {quiet = true}).ok, "right points are right")
  k:insert(15, uop.rules{ {name = "mul_to_add32", pattern = "(MUL:int32 a b)", rewrite = function(m) return m.a + m.b end} })
  local stage, culprit = k:bisect{quiet = true}
  T.eq(stage, 15)
  T.eq(culprit.rule, "mul_to_add32")
  -- an access outside a buffer names the program's buffer ("buffer 1 (input0)"), whichever executor ran it
  local access = "reads 4 elements of buffer %d %(input%d%) at %d+, past its 16384 elements"
  T.ok(culprit.effect:find(access), culprit.effect)
  k:seek(15, culprit.index)
  local ok, msg = pcall(k.check, k, nil, {quiet = true})
  T.ok(not ok and msg:find(access), msg)
  k:seek(15, culprit.index - 1)
  T.ok(k:check(nil, {quiet = true}).ok, "right before the culprit")
end)

T.test("a check says what ran it and the work it estimated: the loops each node depends on decide", function()
  -- a 256^3 matmul: its inner loop's few nodes run 256^3 times, so it runs compiled
  local mm = uop.compile(Tensor.rand(256, 256):matmul(Tensor.rand(256, 256))):kernel(1)
  local r = mm:check(0, {quiet = true})
  T.eq(r.executor, "compiled")
  T.ok(r.work > 256 ^ 3 and r.work < 16 * 256 ^ 3, "work " .. r.work)
  -- a softmax's row max over 64x4096 runs interpreted: its loop holds a handful of nodes, and the
  -- nodes outside it (the row's store, the buffers, the constants) do not run 4096 times per row
  local sm = uop.compile(Tensor.rand(64, 4096):softmax()):kernel(1)
  for _, n in ipairs{0, 13, 22} do
    r = sm:check(n, {quiet = true})
    T.eq(r.executor, "interpreter", "point " .. n)
    T.ok(r.work >= 64 * 4096 and r.work < 2 ^ 21, "point " .. n .. ": work " .. r.work)
  end
  -- the executor asked for is the one that ran
  T.eq(sm:check(22, {quiet = true, executor = "compiled"}).executor, "compiled")
  T.eq(mm:check(22, {quiet = true, executor = "interpreter"}).executor, "interpreter")
end)

-- every point of a kernel checked both ways: the interpreter's verdict and the compiled one's
local function both_ways(k, n)
  local iok, i = pcall(k.check, k, n, {quiet = true, executor = "interpreter"})
  local cok, c = pcall(k.check, k, n, {quiet = true, executor = "compiled"})
  return iok, i, cok, c
end

T.test("a point checked compiled gives the interpreter's verdict, for every point of several kernels", function()
  local a, b = Tensor.rand(32, 48), Tensor.rand(48, 40)
  local x, w = Tensor.rand(2, 3, 10, 10), Tensor.rand(4, 3, 3, 3)
  local s = Tensor.rand(16, 64)
  local programs = {uop.compile(a:matmul(b)), uop.compile(x:conv2d(w, {padding = 1})), uop.compile(s:softmax()),
                    uop.compile((s:exp() + 1):sum(1)), uop.compile(a:matmul(b), {rules = {[15] = mul_to_add_int32()}}),
                    uop.compile(a:matmul(b), {rules = {[16] = uop.rules{ {name = "far_past_the_end",
                      pattern = "x@(INDEX b@(DEFINE_GLOBAL arg=1) i:int32)",
                      when = function(m) return m.i:op() ~= "ADD" or m.i:src()[2]:arg() ~= 100000 end,
                      rewrite = function(m) return uop.new("INDEX", m.x:dtype(), {m.b, m.i + 100000}) end} }}})}
  local compared, wrong, stopped = 0, 0, 0
  for _, p in ipairs(programs) do
    for ki = 1, #p:names() do
      local k = p:kernel(ki)
      for n = 0, 22 do
        local iok, i, cok, c = both_ways(k, n)
        if cok then
          compared = compared + 1
          T.ok(iok, "the interpreter runs what compiles: " .. tostring(i))
          T.eq(c.ok, i.ok, k:name() .. " at " .. n)
          T.eq(c.mismatches, i.mismatches, k:name() .. " at " .. n)
          if not c.ok then wrong = wrong + 1 end
        elseif iok then
          T.ok(false, "every point of these kernels compiles, conv2d's Invalid index before stage 15 included: " .. c)
        else
          -- both stop at the same access outside a buffer, and say so in the same words
          T.ok(i:find("past its", 1, true), i)
          T.eq(c, i)
          stopped = stopped + 1
        end
      end
    end
  end
  T.ok(compared >= 150, "points compared: " .. compared)
  T.ok(wrong >= 3, "wrong points compared: " .. wrong)
  T.ok(stopped >= 1, "points stopped by an access outside a buffer: " .. stopped)
  T.raises('check: executor must be "auto", "interpreter" or "compiled", got jit', function()
    uop.compile(a:matmul(b)):kernel(1):check(22, {executor = "jit"})
  end)
  T.raises('bisect: executor must be', function() uop.compile(a:matmul(b)):kernel(1):bisect{executor = 1} end)
  -- the gpu target's points run in the GPU emulator: compiling them is refused when asked for
  T.raises('check: executor "compiled" is for the cpu target; the gpu target\'s points run in the GPU emulator', function()
    uop.compile(a:matmul(b), {target = "gpu"}):kernel(1):check(22, {executor = "compiled"})
  end)
  T.raises('bisect: executor "compiled" is for the cpu target', function()
    uop.compile(a:matmul(b), {target = "gpu"}):kernel(1):bisect{executor = "compiled"}
  end)
end)

T.test("bisect names the same culprit with each executor", function()
  for _, how in ipairs{"interpreter", "compiled", "auto"} do
    local k = uop.compile(Tensor.rand(64, 64):matmul(Tensor.rand(64, 64))):kernel(1)
    k:insert(15, mul_to_add_int32())
    local stage, culprit = k:bisect{quiet = true, executor = how}
    T.eq(stage, 15, how)
    T.eq(culprit.rule, "mul_to_add32", how)
  end
end)
