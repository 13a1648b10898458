-- test_verify.lua - the spec verifier from Lua: uop.verify names the rule
-- and node a hand-built graph breaks; k:verify checks one point or all of
-- them and names the first stage whose output breaks its spec; every point
-- of the sample programs and of a spread of kernels meets its spec.
local T = ...
local P = T.load("programs.lua")

-- the node of this op in root's graph (the last one in toposort order)
local function find(root, op)
  local found
  for _, u in ipairs(root:toposort()) do
    if u:op() == op then found = u end
  end
  return found
end

-- text (a listing) must break `rule` of `spec`, at the node of op `op`
local function broken(text, spec, rule, op)
  local root = uop.parse(text)
  local r = uop.verify(root, spec)
  T.eq(r.ok, false, rule .. ": verdict")
  T.eq(r.rule, rule, "the rule named")
  T.eq(r.node, find(root, op), rule .. ": the node named")
  T.contains(tostring(r), spec .. " spec: broken: " .. rule .. ": ", rule .. ": the text")
  T.contains(r.message, string.format("at %%%d = %s", find(root, op):id(), op), rule .. ": the message names the node")
end

T.test("hand-built graphs that break the spec are named by rule and node", function()
  -- a LOAD of something that is not an INDEX
  broken([[
%0 = DEFINE_GLOBAL float32.ptr(4) arg=0
%1 = CONST index arg=1
%2 = INDEX float32.ptr(4) (%0, %1)
%3 = CONST float32 arg=1.0
%4 = LOAD float32 (%3)
%5 = STORE void (%2, %4)
%6 = SINK void (%5)
]], "kernel", "LOAD(INDEX)", "LOAD")
  -- a LOAD through a value INDEX once loads are explicit (a non-pointer)
  broken([[
%0 = DEFINE_GLOBAL float32.ptr(4) arg=0
%1 = CONST int32 arg=1
%2 = INDEX float32 (%0, %1)
%3 = LOAD float32 (%2)
%4 = SINK void (%3)
]], "lowered", "LOAD through a pointer", "LOAD")
  -- a RANGE never ENDed
  broken([[
%0 = DEFINE_GLOBAL float32.ptr(4) arg=0
%1 = CONST index arg=4
%2 = RANGE index (%1) arg=(0, LOOP)
%3 = INDEX float32.ptr(4) (%0, %2)
%4 = CONST float32 arg=1.0
%5 = STORE void (%3, %4)
%6 = SINK void (%5)
]], "kernel", "RANGE closed by END", "RANGE")
  -- a STORE through a local pointer into a global buffer
  broken([[
%0 = DEFINE_GLOBAL float32.ptr(4) arg=0
%1 = CONST index arg=1
%2 = INDEX float32.ptr(4, local) (%0, %1)
%3 = CONST float32 arg=1.0
%4 = STORE void (%2, %3)
%5 = SINK void (%4)
]], "kernel", "INDEX keeps the buffer's address space", "INDEX")
  -- a DEFINE_GLOBAL in local space
  broken([[
%0 = DEFINE_GLOBAL float32.ptr(4, local) arg=0
%1 = SINK void (%0)
]], "codegen", "DEFINE_GLOBAL is a global pointer", "DEFINE_GLOBAL")
  -- in a linear program, a loop variable used after the END of its loop
  broken([[
%0 = DEFINE_GLOBAL float32.ptr(4) arg=0
%1 = CONST int32 arg=4
%2 = CONST float32 arg=1.0
%3 = RANGE int32 (%1) arg=(0, LOOP)
%4 = INDEX float32.ptr(4) (%0, %3)
%5 = STORE void (%4, %2)
%6 = END void (%5, %3)
%7 = ADD int32 (%3, %1)
%8 = SINK void (%6, %7)
%9 = LINEAR void (%0, %1, %2, %3, %4, %5, %6, %7, %8)
]], "program", "RANGE used inside its loop", "ADD")
  -- an index left in the lowered form
  broken([[
%0 = CONST index arg=3
%1 = CAST int32 (%0)
%2 = SINK void (%1)
]], "lowered", "index dtype lowered", "CONST")
  T.raises("uop.verify: unknown spec 'tensor'", uop.verify, uop.const("int32", 1), "tensor")
end)

T.test("k:verify checks a point against the spec of its form", function()
  local k = uop.compile(P.matmul3()):kernel(1)
  local r = k:verify()
  T.eq(r.ok, true, "point 0")
  T.eq(r.point, 0)
  T.eq(r.spec, "kernel")
  T.eq(r.nodes, #k:root():toposort(), "nodes checked at point 0")
  T.contains(tostring(r), "r_3_3_3 point 0 (as scheduled, kernel spec): ok, " .. r.nodes .. " nodes")
  for n, spec in pairs{[1] = "codegen", [15] = "codegen", [16] = "lowered", [20] = "lowered", [21] = "program", [22] = "program"} do
    local v = k:verify(n)
    T.eq(v.ok, true, "point " .. n)
    T.eq(v.spec, spec, "spec of point " .. n)
    T.eq(uop.spec_for_point(n), spec, "uop.spec_for_point(" .. n .. ")")
  end
  -- the program spec counts instructions: the LINEAR's sources
  k:seek(22)
  T.eq(k:verify().nodes, #k:root():src())
  T.eq(uop.verify(k:root()).spec, "program", "a LINEAR gets the program spec")
  -- a rewrite point inside a stage
  k:seek(15, 2)
  T.contains(tostring(k:verify()), "point 15.2 (stage 15 lower index dtype, codegen spec): ok")
  T.raises("verify: no point 23", function() return k:verify(23) end)
  T.raises('verify: takes a point 0..22, "N.R" or "all", not "every"', function() return k:verify("every") end)
  -- a rewrite point by name, as :verify 15.7 gives it; one past the stage's rewrites is refused
  local inside = k:verify("15.7")
  T.eq(inside.point, 15)
  T.eq(inside.inside_stage, true)
  T.eq(inside.stage_end_ok, true)
  T.raises("verify: stage 15 made ", function() return k:verify("15.999") end)
end)

T.test("k:verify('all') names the first stage whose output breaks the spec, and the node", function()
  local k = uop.compile(P.matmul3()):kernel(1)
  T.eq(k:verify("all").ok, true, "as compiled")
  -- a rule that drops the END of the store's loop: the RANGE stays open
  k:insert(4, uop.rules{ {name = "drop_end", pattern = "(END s:void (RANGE) ...)", rewrite = function(m) return m.s end} })
  local r = k:verify("all")
  T.eq(r.ok, false)
  T.eq(r.first_bad, 4, "the stage the rule is in")
  T.eq(r.rule, "RANGE closed by END")
  T.eq(r.node:op(), "RANGE")
  T.eq(r.node:arg()[2], uop.axis.LOOP, "the output's loop")
  T.contains(tostring(r), "r_3_3_3: stage 4 (initial symbolic) is the first whose output breaks its spec")
  T.contains(tostring(r), "points 0 to 3 meet their spec")
  k:remove(4)
  -- a rule that brings the index dtype back after it was lowered
  k:insert(17, uop.rules{ {name = "index_again", pattern = "(ADD:int32 a b)",
    rewrite = function(m) return (m.a:cast("index") + m.b:cast("index")):cast("int32") end} })
  r = k:verify("all")
  T.eq(r.first_bad, 17)
  T.eq(r.rule, "index dtype lowered")
  T.eq(r.node:op(), "CAST")
  T.eq(tostring(r.node:dtype()), "index")
  T.contains(r.message, string.format("at %%%d = CAST index", r.node:id()))
  k:remove(17)
  T.eq(k:verify("all").ok, true, "with the rule removed")
  -- a stage that fails: its point cannot be computed, and the points before it met their spec
  k:insert(15, uop.rules{ {name = "boom", pattern = "(MUL:int32 a b)", rewrite = function() error("boom") end} })
  r = k:verify("all")
  T.eq(r.ok, false)
  T.eq(r.first_bad, 15)
  T.contains(tostring(r), "r_3_3_3: point 15 cannot be computed: stage 15 (lower index dtype): rule \"boom\"")
  T.contains(tostring(r), "\n  points 0 to 14 meet their spec")
end)

T.test("uop.verify_stages turns the check after every stage on and off", function()
  local was = uop.verify_stages()
  T.eq(uop.verify_stages(false), false)
  T.eq(uop.verify_stages(true), true)
  T.eq(uop.verify_stages(), true)
  uop.verify_stages(was)
  T.raises("bad argument", uop.verify_stages, 1)
end)

-- every point of every kernel of a program meets its spec
local function all_points_verify(t, opts, what)
  local p = uop.compile(t, opts)
  for i, k in ipairs(p:kernels()) do
    local r = k:verify("all")
    T.ok(r.ok, string.format("%s, kernel %d: %s", what, i, tostring(r)))
  end
end

T.test("every point of the sample programs meets its spec", function()
  -- samples/matmul3x3.lua: A:matmul(A) with the default opts, then UPCAST 3
  local A = Tensor.new({{1, 2, 3}, {4, 5, 6}, {7, 8, 9}}, "float32")
  all_points_verify(A:matmul(A), nil, "matmul3x3 sample")
  local p2 = uop.compile(A:matmul(A))
  local k2 = p2:kernel(1)
  k2:opts{{"UPCAST", 1, 3}}
  T.ok(k2:verify("all").ok, "matmul3x3 sample with UPCAST 3")
  k2:opts{{"UPCAST", 1, 3}, {"UNROLL", 0, 3}, {"THREAD", 0, 3}}
  T.ok(k2:verify("all").ok, "matmul3x3 with UPCAST, UNROLL and THREAD")
end)

T.test("every point of a spread of kernels meets its spec", function()
  Tensor.manual_seed(3)
  local x = Tensor.rand(4, 6)
  local idx = Tensor.new({2, 0, 5}, "int32")
  local progs = {
    {x:sum(1), "sum"},
    {x:softmax(1), "softmax"},
    {x:exp():sigmoid(), "exp and sigmoid"},
    {x:exp(), "exp, native", {transcendentals = "native"}},
    {x:pad({{1, 1}, {0, 2}}):sum(0), "padded sum"},
    {x:max(0), "max"},
    {x:argmax(1), "argmax"},
    {x:cumsum(1), "cumsum"},
    {x:slice{nil, idx}, "gather by a tensor index"},
    {x:cast("float16") * 2 + 1, "half"},
    {Tensor.rand(1, 2, 6, 6):conv2d(Tensor.rand(3, 2, 3, 3), {padding = 1}), "conv2d"},
    {x:matmul(Tensor.rand(6, 5)), "matmul", {opts = "none"}},
    {Tensor.rand(64, 64):matmul(Tensor.rand(64, 64)), "matmul 64, heuristic opts"},
    {(x * 3):cast("int32") // 2, "integer division"},
    {Tensor.arange(12):reshape(3, 4):sum(1), "arange"},
  }
  for _, e in ipairs(progs) do all_points_verify(e[1], e[3], e[2]) end
end)
