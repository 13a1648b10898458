-- test_index_gate_rules.lua - the rules the scheduler's index arithmetic
-- needs to come out as tinygrad v0.12.0's: a gate (WHERE(c, i, Invalid))
-- moves out of arithmetic on either side of a commutative op, clauses of a
-- gate that use none of its index's ranges are dropped, and float constants
-- fold in double precision.
local T = ...
local idx, f32 = uop.dtypes.index, uop.dtypes.float32
local inv = uop.const(idx, uop.Invalid)
local r0, r1 = uop.range(4, 0), uop.range(6, 1)
local n = uop.var("n", 0, 9)

T.test("propagate_invalid: a gate second in a commutative op moves out too", function()
  local g = r0:lt(3):where(r0 + 5, inv)
  -- ADD(y, gated) and ADD(gated, y): both WHERE(r0 < 3, (r0 + 5) + y, Invalid)
  for _, e in ipairs{uop.new("ADD", idx, {r1, g}), uop.new("ADD", idx, {g, r1})} do
    local s = uop.rewrite(e, "propagate_invalid")
    T.eq(s:op(), "WHERE")
    T.eq(s:src()[1], r0:lt(3))
    T.eq(s:src()[2], uop.new("ADD", idx, {r0 + 5, r1}))
    T.eq(s:src()[3], inv)
  end
  -- Invalid absorbs arithmetic on either side
  T.eq(uop.rewrite(uop.new("MUL", idx, {r1, inv}), "propagate_invalid"), inv)
  T.eq(uop.rewrite(uop.new("MUL", idx, {inv, r1}), "propagate_invalid"), inv)
end)

T.test("pm_drop_and_clauses: a gate's clause on no range of the index goes", function()
  local keep1, drop, keep2 = r0:lt(3), n:lt(5), r1:lt(4)
  local gate = uop.new("AND", uop.dtypes.bool, {uop.new("AND", uop.dtypes.bool, {keep1, drop}), keep2})
  local s = uop.rewrite(gate:where(r0 * 6 + r1, inv), "pm_drop_and_clauses + symbolic_simple")
  T.eq(s:op(), "WHERE")
  T.eq(s:src()[1], uop.new("AND", uop.dtypes.bool, {keep1, keep2}), "the kept clauses in their order")
  -- every clause on a range of the index: nothing to drop
  local all = uop.new("AND", uop.dtypes.bool, {keep1, keep2}):where(r0 * 6 + r1, inv)
  T.eq(uop.rewrite(all, "pm_drop_and_clauses"), all)
  -- no clause kept: the index alone
  T.eq(uop.rewrite(drop:where(r0, inv), "pm_drop_and_clauses + symbolic_simple"), r0)
end)

T.test("float constants fold in double precision, as v0.12.0 folds them", function()
  local r = uop.simplify(uop.const(f32, 15.0):reciprocal(), "symbolic")
  T.eq(r:op(), "CONST")
  T.eq(r:arg(), 1 / 15)  -- 0.06666666666666667, not float32's 0.06666667014360428
  T.eq(uop.simplify(uop.const(f32, 0.1) * 3.0, "symbolic"):arg(), 0.1 * 3.0)
  T.eq(uop.simplify(uop.const(uop.dtypes.float64, 0.1):cast(f32), "symbolic"):arg(), 0.1)
end)
