-- test_bisect_spec.lua - k:bisect on points that cannot be run: a point
-- whose graph breaks its spec is wrong (a rule that drops a loop's END is
-- named, at its stage and inside it), one that meets its spec is only not
-- checked, and a bisect that leaves points not checked says so instead of
-- calling the kernel right.
local T = ...

-- the README's matmul: A times itself
local function matmul()
  local A = Tensor.new({{1, 2, 3}, {4, 5, 6}, {7, 8, 9}}, "float32")
  return A:matmul(A)
end

-- drops the END that closes a loop: the kernel can no longer be run, and breaks the spec
local function drop_end()
  return uop.rules{ {name = "drop_end", pattern = "(END s:void (RANGE) ...)", rewrite = function(m) return m.s end} }
end
local DROP_LINE = debug.getinfo(drop_end, "S").linedefined + 1
local WHERE = "tests/lua/test_bisect_spec.lua:" .. DROP_LINE

-- the lines of a text
local function lines(text)
  local out = {}
  for line in tostring(text):gmatch("[^\n]+") do out[#out + 1] = line end
  return out
end

T.test("a rule that drops an END is named by bisect: its point cannot be run and breaks its spec", function()
  local k = uop.compile(matmul()):kernel(1)
  k:insert(4, drop_end())
  -- the spec verifier and bisect agree on the stage
  local v = k:verify("all")
  T.eq(v.first_bad, 4)
  local stage, culprit, reports = k:bisect{quiet = true}
  T.eq(stage, 4)
  T.ok(culprit ~= nil, "the culprit is named")
  T.eq(culprit.rule, "drop_end")
  T.eq(culprit.where, WHERE)
  T.ok(culprit.index >= 1 and culprit.index <= culprit.of, "a rewrite of the stage")
  T.ok(culprit.before:find("END", 1, true), culprit.before)
  T.ok(culprit.after:find("STORE", 1, true), culprit.after)
  T.eq(culprit.before_node:op(), "END")
  T.eq(culprit.effect, nil)
  T.ok(culprit.spec and culprit.spec:find("^RANGE closed by END: "), tostring(culprit.spec))
  T.eq(culprit.spec, v.message)
  -- the point is judged wrong; its report says why
  T.ok(reports[5] and reports[5].ok == false, "point 4 is in the reports, wrong")
  T.eq(reports.unchecked, 0)
  local text = tostring(reports)
  local l = lines(text)
  T.ok(l[1]:find("^bisect r_3_3_3: first wrong at stage 4 %(initial symbolic%); %d+ of 23 points checked$"), l[1])
  T.eq(l[2], "  stage 3 is right, stage 4 is wrong")
  T.contains(text, "\n  culprit: rewrite " .. culprit.index .. " of " .. culprit.of .. " in stage 4, rule drop_end (" .. WHERE .. "): ")
  T.contains(text, "\n  breaks its codegen spec: RANGE closed by END: no END or REDUCE closes this RANGE at %")
  T.contains(text, "; it cannot be run: RANGE used outside its loop")
  T.contains(text, "\n   4  initial symbolic     BREAKS its spec (RANGE closed by END), cannot be run\n")
  T.ok(not text:find("no checked stage differs", 1, true), "no clean verdict")
  -- every point in order: the same verdict, the points before it right
  local all_stage, all_culprit, all_reports = k:bisect{quiet = true, all = true}
  T.eq(all_stage, 4)
  T.eq(all_culprit.rule, "drop_end")
  for n = 0, 3 do T.ok(all_reports[n + 1].ok, "point " .. n .. " right") end
  -- the culprit's point: the one before it runs right, its own breaks the spec
  k:seek(4, culprit.index - 1)
  T.ok(k:check(nil, {quiet = true}).ok, "right before the culprit")
  k:seek(4, culprit.index)
  T.eq(k:verify().ok, false)
end)

T.test("inside a stage, a rewrite point that cannot be run and breaks its spec is wrong", function()
  -- in stage 19 the END is dropped before the stage's last rewrite, so the
  -- bisection of its rewrites judges a point inside it by its spec
  local k = uop.compile(matmul()):kernel(1)
  k:insert(19, drop_end())
  local stage, culprit = k:bisect{quiet = true}
  T.eq(stage, 19)
  T.eq(culprit.rule, "drop_end")
  T.eq(culprit.where, WHERE)
  T.ok(culprit.index < culprit.of, "the culprit is not the stage's last rewrite: " .. culprit.index .. " of " .. culprit.of)
  T.ok(culprit.spec and culprit.spec:find("^RANGE closed by END: "), tostring(culprit.spec))
  k:seek(19, culprit.index - 1)
  T.ok(k:check(nil, {quiet = true}).ok, "right before the culprit")
  k:seek(19, culprit.index)
  T.eq(k:verify().ok, false)
end)

T.test("a clean kernel still bisects clean, every point checked", function()
  local k = uop.compile(matmul()):kernel(1)
  local stage, culprit, reports = k:bisect{quiet = true}
  T.eq(stage, nil)
  T.eq(culprit, nil)
  T.eq(reports.unchecked, 0)
  T.eq(lines(reports)[1], "bisect r_3_3_3: no checked stage differs from the reference; 1 of 23 points checked")
  stage, culprit, reports = k:bisect{quiet = true, all = true}
  T.eq(stage, nil)
  T.eq(reports.unchecked, 0)
  T.eq(lines(reports)[1], "bisect r_3_3_3: no checked stage differs from the reference; 23 of 23 points checked")
end)

T.test("a wrong rule whose points run is judged on data: no spec on its culprit", function()
  local k = uop.compile(matmul()):kernel(1)
  k:insert(15, uop.rules{ {name = "mul_to_add", pattern = "(MUL:int32 a b)", rewrite = function(m) return m.a + m.b end} })
  local stage, culprit = k:bisect{quiet = true}
  T.eq(stage, 15)
  T.eq(culprit.rule, "mul_to_add")
  T.eq(culprit.spec, nil)
end)

T.test("points the interpreter cannot run but that meet their spec stay not checked, and the verdict says so", function()
  -- a variable standing for the constant 3: the graph meets its spec, the interpreter runs no DEFINE_VAR
  local k = uop.compile(matmul()):kernel(1)
  k:insert(19, uop.rules{ {name = "three_to_var", pattern = "c@(CONST:int32 3)",
                           rewrite = function(m) return uop.new("DEFINE_VAR", m.c:dtype(), {}, {"three", 3, 3}) end} })
  T.ok(k:verify("all").ok, "every point meets its spec")
  for _, all in ipairs{false, true} do
    local stage, culprit, reports = k:bisect{quiet = true, all = all}
    T.eq(stage, nil)
    T.eq(culprit, nil)
    local text = tostring(reports)
    local _, unchecked = text:gsub("not checked: DEFINE_VAR %%%d+: variables %(DEFINE_VAR%) are not supported", "")
    T.ok(unchecked >= 1, text)
    T.eq(reports.unchecked, unchecked)
    T.ok(lines(text)[1]:find("^bisect r_3_3_3: no checked stage differs from the reference, but " .. unchecked ..
                             " points could not be checked, so the kernel is not known to be right; %d+ of 23 points checked$"),
         lines(text)[1])
    T.contains(text, "\n  19  final rewrite        not checked: DEFINE_VAR %")
  end
end)
