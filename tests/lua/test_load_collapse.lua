-- test_load_collapse.lua - stage 2 (pm_load_collapse): indexing a tensor by
-- another, written as a sum over r of (idx != r).where(0, x[r]), loses its
-- loop and becomes tinygrad v0.12.0's x[idx] guarded by 0 <= idx < 8
-- (tests/golden/tinygrad_load_collapse_{before,after}.txt, captured by
-- scripts/capture_tinygrad_stage18.py); the values are the same before and
-- after it, out-of-range indices included.
local T = ...

local function golden(name)
  local f = assert(io.open("tests/golden/" .. name))
  local text = f:read("a")
  f:close()
  return uop.from_tinygrad(text)
end

local X = {10, 11, 12, 13, 14, 15, 16, 17}

-- x[idx[i]] where 0 <= idx[i] < 8, else 0, in plain Lua
local function gathered(idx)
  local out = {}
  for i, j in ipairs(idx) do out[i] = (j >= 0 and j < 8) and X[j + 1] or 0 end
  return out
end

local function count(root, op)
  local n = 0
  for _, u in ipairs(root:toposort()) do if u:op() == op then n = n + 1 end end
  return n
end

T.test("stage 2 collapses the gather's REDUCE into tinygrad's guarded load", function()
  local ast = golden("tinygrad_load_collapse_before.txt")
  local want = golden("tinygrad_load_collapse_after.txt")
  local p = uop.compile(ast, {buffers = {[1] = {3, 0, 7, 5}, [2] = X}, select = false})
  local k = p:kernel(1)
  k:seek(1)
  T.eq(count(k:root(), "REDUCE"), 1)
  k:seek(2)
  T.eq(count(k:root(), "REDUCE"), 0)
  T.ok(k:root() == want, "stage 2 gives tinygrad's graph:\n" .. k:listing() .. "\nwant:\n" .. want:listing())
  T.contains(tostring(k:rules(2)), "reduce_load_collapse")
end)

T.test("the gather gives the same values before and after stage 2, out-of-range indices included", function()
  for _, idx in ipairs({{3, 0, 7, 5}, {-1, 8, 2, 100}}) do
    local p = uop.compile(golden("tinygrad_load_collapse_before.txt"), {buffers = {[1] = idx, [2] = X}, select = false})
    local outs, rep = p:run{validate = true, quiet = true}
    T.ok(rep.ok, rep.text)
    local got, want = uop.buffer_values(outs[1]), gathered(idx)
    for i = 1, 4 do T.eq(got[i], want[i], "element " .. i) end
    -- point 1 (the loop) and point 2 (collapsed) both check against the reference
    local k = p:kernel(1)
    for _, n in ipairs({1, 2, 22}) do
      local rep = k:check(n, {quiet = true})
      T.ok(rep.ok == true, "point " .. n .. ": " .. tostring(rep))
    end
  end
end)

T.test("a plain sum keeps its loop in stage 2", function()
  local x = Tensor.new({1, 2, 3, 4}, "float32")
  local k = uop.compile(x:sum(), {select = false}):kernel(1)
  k:seek(2)
  T.eq(count(k:root(), "REDUCE"), 1)
  T.eq(x:sum():item(), 10.0)
end)

-- ---- the reduce_collapse algebra, on sums over r in [0, 10) of int32 3 or 0 ----

local HEAD = [[
%0 = CONST index arg=10
%1 = RANGE index (%0) arg=(0, REDUCE)
%2 = DEFINE_VAR index arg=("lo", -5, 15)
%3 = DEFINE_VAR index arg=("hi", -5, 15)
%4 = CONST int32 arg=3
%5 = CONST int32 arg=0
%6 = CONST bool arg=true
%7 = CONST index arg=2
%8 = CONST index arg=3
]]

-- the sum over r of the value built by `body` (listing lines from %10 on, the value at `last`)
local function parse_sum(body, last)
  return uop.parse(HEAD .. body .. "%99 = REDUCE int32 (" .. last .. ", %1) arg=Ops.ADD\n")
end

-- sum over r in [0, 10) of 3 where pred(r, lo, hi), in plain Lua
local function brute(pred, lo, hi)
  local s = 0
  for r = 0, 9 do if pred(r, lo, hi) then s = s + 3 end end
  return s
end

local CASES = {
  {"bound_below", "%10 = CMPLT bool (%1, %2)\n%11 = WHERE int32 (%10, %5, %4)\n", "%11",
   function(r, lo) return not (r < lo) end},
  {"bound_above", "%10 = CMPLT bool (%1, %3)\n%11 = WHERE int32 (%10, %4, %5)\n", "%11",
   function(r, _, hi) return r < hi end},
  {"bound_both", "%10 = CMPLT bool (%1, %2)\n%11 = CMPNE bool (%10, %6)\n%12 = CMPLT bool (%1, %3)\n" ..
     "%13 = AND bool (%11, %12)\n%14 = WHERE int32 (%13, %4, %5)\n", "%14",
   function(r, lo, hi) return r >= lo and r < hi end},
  {"lift_add_lt", "%10 = ADD index (%1, %7)\n%11 = CMPLT bool (%10, %3)\n%12 = WHERE int32 (%11, %4, %5)\n", "%12",
   function(r, _, hi) return r + 2 < hi end},
  {"lift_mul_lt", "%10 = MUL index (%1, %8)\n%11 = CMPLT bool (%10, %3)\n%12 = WHERE int32 (%11, %4, %5)\n", "%12",
   function(r, _, hi) return r * 3 < hi end},
  {"mul_cast_bool", "%10 = CMPLT bool (%1, %3)\n%11 = CAST int32 (%10)\n%12 = MUL int32 (%4, %11)\n", "%12",
   function(r, _, hi) return r < hi end},
  {"reduce_of_add", "%10 = CMPLT bool (%1, %2)\n%11 = WHERE int32 (%10, %5, %4)\n%12 = CMPLT bool (%1, %3)\n" ..
     "%13 = WHERE int32 (%12, %4, %5)\n%14 = ADD int32 (%11, %13)\n", "%14", nil},
}

T.test("pm_reduce_collapse turns sums over a range into counts, each rule by its name, for every bound", function()
  for _, case in ipairs(CASES) do
    local name, body, last, pred = case[1], case[2], case[3], case[4]
    local red = parse_sum(body, last)
    local out, trace = uop.rewrite(red, "pm_reduce_collapse")
    local fired = {}
    for _, rw in ipairs(trace.rewrites) do fired[rw.rule] = true end
    T.ok(fired[name], name .. " fires")
    for _, u in ipairs(out:toposort()) do T.ok(u:op() ~= "REDUCE" and u:op() ~= "RANGE", name .. ": no loop left") end
    for lo = -5, 15, 2 do
      for hi = -5, 15 do
        local want = pred and brute(pred, lo, hi)
          or brute(function(r) return not (r < lo) end, lo, hi) + brute(function(r) return r < hi end, lo, hi)
        T.eq(out:eval{lo = lo, hi = hi}, want, string.format("%s at lo=%d hi=%d", name, lo, hi))
      end
    end
  end
end)
