-- test_midstage_points.lua - the rewrite points inside a stage (N.R, the
-- graph right after rewrite R of stage N): a node that only such points
-- hold is found there by k:origin and k:why, which name those points and
-- where to stand, as a walk over every point says; k:verify at such a point
-- checks its graph but says it is inside the stage, where the rewrite
-- leaves forms that break the spec for a while, and whether the stage's
-- output meets it.
local T = ...

local function matmul3()
  local A = Tensor.new({{1, 2, 3}, {4, 5, 6}, {7, 8, 9}}, "float32")
  return uop.compile(A:matmul(A)):kernel(1)
end

-- the nodes of every point 0..22, as a set
local function stage_end_nodes(k)
  local ends = {}
  for s = 0, 22 do
    k:seek(s)
    for _, u in ipairs(k:root():toposort()) do ends[u] = true end
  end
  return ends
end

-- node -> the rewrite points {stage, r} that hold it, for the nodes no
-- point 0..22 has, by visiting every rewrite point (of the stages listed,
-- default all); and those nodes in order
local function inside_only(k, stages)
  local ends, at, order = stage_end_nodes(k), {}, {}
  for _, s in ipairs(stages or {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22}) do
    k:seek(s)
    for r = 1, #k:rewrites(s, {quiet = true}) - 1 do
      k:seek(s, r)
      for _, u in ipairs(k:root():toposort()) do
        if not ends[u] then
          if not at[u] then at[u], order[#order + 1] = {}, u end
          table.insert(at[u], {s, r})
        end
      end
    end
  end
  return at, order
end

-- "it is at points 15.1 to 15.7, 15.9: :goto 15.7" for the points pts
local function where_text(pts)
  local runs, i = {}, 1
  local first_end
  while i <= #pts do
    local j = i
    while j < #pts and pts[j + 1][1] == pts[j][1] and pts[j + 1][2] == pts[j][2] + 1 do j = j + 1 end
    local a, b = pts[i][1] .. "." .. pts[i][2], pts[j][1] .. "." .. pts[j][2]
    runs[#runs + 1] = i == j and a or a .. " to " .. b
    first_end = first_end or b
    i = j + 1
  end
  return string.format("it is at point%s %s: :goto %s", #pts > 1 and "s" or "", table.concat(runs, ", "), first_end)
end

T.test("origin of a node only rewrite point 15.7 holds, asked at 15.8, names 15.7", function()
  local k = matmul3()
  k:seek(15)
  -- the ADD rewrite 8 rewrites: at 15.7, gone at 15.8 and at every point 0..22
  local w = k:rewrites(15, {quiet = true})[8]
  local add = w.before
  T.eq(add:op(), "ADD")
  local ends = stage_end_nodes(k)
  T.ok(not ends[add], "no stage's output has the ADD")
  local at = inside_only(k)
  T.ok(at[add], "some rewrite point has the ADD")
  local want = where_text(at[add])
  T.eq(want, "it is at point 15.7: :goto 15.7")
  k:seek(15, 7)
  T.eq(k:origin(add).steps[1].point, "15.7", "asked where it is, the walk starts there")
  k:seek(15, 8)
  local msg = T.err(k.origin, k, add)
  T.contains(msg, string.format("origin: %%%d is not in the graph at point 15.8 (%s)", add:id(), want))
  T.ok(not msg:find("no point of this kernel", 1, true), "the message does not say it is nowhere")
  -- asked from the end of the pipeline
  k:seek(22)
  T.raises(string.format("%%%d is not in the graph at point 22 (%s)", add:id(), want), k.origin, k, add)
  -- k:why, for a node that no rule rewrites, where the stage's rules see neither
  local rewritten = {}
  for _, rw in ipairs(k:rewrites(15, {quiet = true})) do rewritten[rw.before] = true end
  local left
  for _, u in ipairs(select(2, inside_only(k, {15}))) do
    if not rewritten[u] then left = u end
  end
  T.ok(left, "a node inside stage 15 that no rule rewrites")
  k:seek(22)
  T.raises(string.format("%%%d is not in the graph at point 15, the end of stage 15, where its rules would see it (%s)",
    left:id(), where_text(at[left])), k.why, k, "lower_const", left, {stage = 15})
  -- a node of no point at all still says so
  T.raises("(it is at no point of this kernel)", k.origin, k, uop.var("nowhere", 0, 3))
end)

T.test("for every node only rewrite points hold, origin names exactly those points", function()
  local k = matmul3()
  local at, order = inside_only(k)
  T.ok(#order > 100, "the kernel has many such nodes")
  k:seek(22)
  for _, u in ipairs(order) do
    local want = where_text(at[u])
    if #want < 80 then -- a long list is cut short in the message
      T.raises(string.format("%%%d is not in the graph at point 22 (%s)", u:id(), want), k.origin, k, u)
    end
  end
end)

T.test("finding a node inside the stages of a 512x512 matmul takes well under a second", function()
  local k = uop.compile(Tensor.rand(512, 512):matmul(Tensor.rand(512, 512))):kernel(1)
  local at, order = inside_only(k, {9, 14, 15})
  -- the nodes every tenth rewrite point of those stages holds first, and
  -- every node some points apart hold
  local picked, several = {}, 0
  for _, u in ipairs(order) do
    local pts, many = at[u], false
    for i = 2, #pts do many = many or pts[i][1] ~= pts[i - 1][1] or pts[i][2] ~= pts[i - 1][2] + 1 end
    if many then several = several + 1 end
    if many or pts[1][2] % 10 == 0 then picked[#picked + 1] = u end
  end
  T.ok(several > 0, "some node is at two runs of points apart")
  T.ok(#picked >= 20, "nodes picked")
  k:seek(22)
  local slowest = 0
  for _, u in ipairs(picked) do
    local want = where_text(at[u])
    local t0 = os.clock()
    local msg = T.err(k.origin, k, u)
    slowest = math.max(slowest, os.clock() - t0)
    if #want < 80 then T.contains(msg, "(" .. want .. ")") else T.contains(msg, ":goto ") end
  end
  T.ok(slowest < 1, string.format("the slowest took %.3f s", slowest))
end)

T.test("verify inside a stage: the graph is checked, and said to be inside the stage", function()
  local k = matmul3()
  -- 15.7: the END still closes the index CASTs of the RANGEs, which the
  -- stage's last rewrite drops (the engine's own END, not a rebuild of ours)
  k:seek(15)
  local last = k:rewrites(15, {quiet = true})[20]
  T.eq(last.rule, "consumer_drop_cast")
  T.eq(last.before:src()[2]:op(), "CAST")
  k:seek(15, 7)
  local r = k:verify()
  T.eq(r.ok, false, "the graph at 15.7 breaks the codegen spec")
  T.eq(r.rule, "RANGE closed by END")
  T.eq(r.point, 15)
  T.eq(r.spec, "codegen")
  T.eq(r.inside_stage, true)
  T.eq(r.stage_end_ok, true)
  T.eq(r.stage_end_message, nil)
  T.contains(tostring(r), "point 15.7 (stage 15 lower index dtype, codegen spec): breaks it: RANGE closed by END")
  T.contains(tostring(r), "point 15.7 is inside stage 15, between two of its rewrites, where the graph may break the spec for a while")
  T.contains(tostring(r), "the stage's output, point 15, meets the spec")
  -- a point inside that meets it
  k:seek(15, 2)
  r = k:verify()
  T.eq(r.ok, true)
  T.eq(r.inside_stage, true)
  T.eq(r.stage_end_ok, true)
  T.contains(tostring(r), "point 15.2 is inside stage 15, between two of its rewrites; the stage's output, point 15, meets the spec too")
  -- the points that are not inside: the stage's input and end, and whole stages
  for _, p in ipairs{{15, 0}, {15, 20}, {15}, {14}} do
    k:seek(p[1], p[2])
    r = k:verify()
    T.eq(r.ok, true)
    T.eq(r.inside_stage, false, table.concat(p, "."))
    T.eq(r.stage_end_ok, nil)
    T.ok(not tostring(r):find("inside stage", 1, true), "no note at " .. table.concat(p, "."))
  end
  T.ok(k:verify("all").ok, "every point 0..22 meets its spec")
end)

T.test("verify inside a stage whose output breaks the spec, or which failed", function()
  local k = matmul3()
  k:insert(15, uop.rules{ {name = "drop_end", pattern = "(END s:void (RANGE) ...)", rewrite = function(m) return m.s end} })
  k:seek(15, 2)
  local r = k:verify()
  T.eq(r.ok, true)
  T.eq(r.inside_stage, true)
  T.eq(r.stage_end_ok, false)
  T.contains(r.stage_end_message, "RANGE closed by END")
  T.contains(tostring(r), "the stage's output, point 15, breaks the spec: RANGE closed by END")
  k:remove(15)
  k:insert(15, uop.rules{ {name = "end_fails", pattern = "(END s (RANGE:int32) ...)",
    rewrite = function() error("no END may close an int32 RANGE") end} })
  T.raises("end_fails", k.seek, k, 15)
  local made = #k:rewrites(15, {quiet = true})
  T.ok(made > 7, "rewrites made before the failure")
  k:seek(15, made)
  r = k:verify()
  T.eq(r.inside_stage, true)
  T.eq(r.stage_end_ok, nil)
  T.contains(tostring(r), string.format("point 15.%d is inside stage 15, after the last rewrite it made before it failed; "
    .. "stage 15 failed, so it has no output to check", made))
  k:seek(15, 7)
  T.contains(tostring(k:verify()), "between two of its rewrites, where the graph may break the spec for a while")
end)
