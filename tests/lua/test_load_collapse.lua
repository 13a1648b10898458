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
