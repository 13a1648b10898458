-- test_registry.lua - every rule set is reachable by name from Lua, and the
-- stage rows that uop.stages() returns are what k:stages() and :rules show.
local T = ...

T.test("uop.rulesets() lists every registered set and each one builds by name", function()
  local names = uop.rulesets()
  T.ok(#names >= 30, "the symbolic and the stage sets: " .. #names)
  local seen = {}
  for _, n in ipairs(names) do
    seen[n] = true
    T.ok(#uop.ruleset(n):names() > 0, n .. " has rules")
  end
  for _, want in ipairs{"sym", "symbolic", "gep_pushing", "pm_lower_index_dtype", "pm_add_loads", "pm_reduce",
                        "load_store_indexing", "pm_linearize_cleanups", "pm_decomp", "pm_reduce_unparented"} do
    T.ok(seen[want], "listed: " .. want)
  end
  T.raises("unknown rule set 'pm_nope'", uop.ruleset, "pm_nope")
end)

T.test("a composition by name is its parts in order", function()
  local a, b = uop.ruleset("pm_lower_index_dtype"):names(), uop.ruleset("load_store_indexing"):names()
  local ab = uop.ruleset("pm_lower_index_dtype + load_store_indexing"):names()
  T.eq(#ab, #a + #b)
  T.eq(ab[1], a[1])
  T.eq(ab[#ab], b[#b])
end)

T.test("uop.rewrite takes any registered set: pm_add_loads wraps a value INDEX in a LOAD", function()
  local d = uop.dtypes
  local buf = uop.new("DEFINE_GLOBAL", d.float32:ptr(16), {}, 0)
  local i = uop.new("INDEX", d.float32, {buf, uop.const(d.index, 3)})
  local out, trace = uop.rewrite(uop.sink(uop.new("STORE", d.void, {i, uop.const(d.float32, 1)})), "pm_add_loads")
  T.ok(#trace.rewrites >= 1, "pm_add_loads fired")
  T.eq(trace.rewrites[1].rule, "add_load")
  T.ok(out:listing():find("LOAD") == nil, "a store's INDEX is not loaded")
  local v = uop.rewrite(i, "pm_add_loads")
  T.eq(v:op(), "LOAD")
end)

T.test("uop.stages() is the table that runs: rows, kinds, what each runs", function()
  local rows = uop.stages()
  T.eq(#rows, 22)
  T.eq(rows[15].runs, "pm_lower_index_dtype + load_store_indexing")
  T.eq(rows[7].kind, "hook")
  T.eq(rows[7].hook, "apply_opts")
  T.eq(rows[22].kind, "line rewrite")
  T.eq(rows[11].context, "ReduceContext")
  T.eq(rows[17].kind, "pass")
  T.ok(rows[17].note ~= nil, "a stage that does nothing says why")
  T.eq(rows[2].runs, "pm_load_collapse")
  for n, r in ipairs(rows) do
    T.eq(r.number, n)
    if r.rules then T.ok(#uop.ruleset(r.rules):names() > 0, "row " .. n .. " names sets that build") end
  end
  local A = Tensor.new({{1, 2}, {3, 4}}, "float32")
  local k = uop.compile(A:matmul(A)):kernel(1)
  T.eq(k:stages()[15].runs, rows[15].runs)
end)
