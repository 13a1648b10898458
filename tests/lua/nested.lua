-- nested.lua - nested Lua tables as tensors for the Tensor tests: build one
-- from a function of its indices, map over or flatten its leaves, print it, and
-- compare two deeply (exact, or within a relative tolerance); check a
-- tensor's values through the reference and the JIT against one.
--   local N = T.load("nested.lua")
local N = {}

-- a nested table of shape s with f(i1, i2, ...) (0-based indices)
function N.build(s, f, dim, idx)
  dim, idx = dim or 1, idx or {}
  if dim > #s then return f(table.unpack(idx)) end
  local r = {}
  for i = 0, s[dim] - 1 do
    idx[dim] = i
    r[i + 1] = N.build(s, f, dim + 1, idx)
  end
  idx[dim] = nil
  return r
end

-- f applied to every leaf
function N.map(v, f)
  if type(v) ~= "table" then return f(v) end
  local r = {}
  for i = 1, #v do r[i] = N.map(v[i], f) end
  return r
end

-- the leaves in row-major order, as a flat list (a scalar gives {v})
function N.flat(v, out)
  out = out or {}
  if type(v) ~= "table" then out[#out + 1] = v return out end
  for i = 1, #v do N.flat(v[i], out) end
  return out
end

function N.show(v)
  if type(v) ~= "table" then return tostring(v) end
  local parts = {}
  for i = 1, #v do parts[i] = N.show(v[i]) end
  return "{" .. table.concat(parts, ", ") .. "}"
end

-- deep comparison; NaN matches NaN. Without tol numbers are equal; with
-- strict they must also be of one Lua number type and -0.0 is not 0.0.
-- With tol the difference is relative past 1. Returns ok, message.
function N.same(got, want, tol, strict, path)
  path = path or ""
  if type(want) == "table" then
    if type(got) ~= "table" or #got ~= #want then
      return false, string.format("at %s: expected %s, got %s", path, N.show(want), N.show(got))
    end
    for i = 1, #want do
      local ok, msg = N.same(got[i], want[i], tol, strict, path .. "[" .. i .. "]")
      if not ok then return false, msg end
    end
    return true
  end
  if type(want) == "number" and type(got) == "number" then
    if want ~= want then
      if got ~= got then return true end
    elseif tol then
      if want == got or math.abs(got - want) <= tol * math.max(1, math.abs(want)) then return true end
    elseif got == want and (not strict or (math.type(got) == math.type(want) and 1 / got == 1 / want)) then
      return true
    end
  elseif got == want then
    return true
  end
  return false, string.format("at %s: expected %s, got %s", path, tostring(want), tostring(got))
end

-- t's values as its program computes them through the JIT (nested lists, or
-- a number for a scalar), and the validation report of that run; when the
-- program stores the work under t's movement ops, t is read through them
function N.jit(t)
  local p = uop.compile(t)
  local outs, rep = p:run{validate = true, quiet = true}
  return N.output_values(t, p, outs), rep
end

-- the values of tensor t, output j (default 1) of program p whose run gave
-- outs: its buffer as it is, or read through t's movement ops when the
-- program stored the work under them or stored it once along the axes it
-- does not use (p:outputs() names what each buffer holds)
function N.output_values(t, p, outs, j)
  j = j or 1
  local held = p:outputs()[j]
  if held ~= t.uop then return uop.reference(uop.Tensor._view_of(t.uop, held, outs[j])) end
  local s = t:shape()
  return #s == 0 and uop.buffer_values(outs[j])[1] or uop.buffer_values(outs[j], s)
end

-- t's values through uop.reference and through the JIT (its program run
-- with validation), each compared with want (N.same); a failure is an
-- error at the caller's line, or level frames above it
function N.both(t, want, tol, what, strict, level)
  local at = (level or 1) + 2 -- above check and N.both
  local label = what and what .. " " or ""
  local function check(got, how)
    local ok, msg = N.same(got, want, tol, strict)
    if not ok then error(label .. how .. ": " .. msg, at) end
  end
  check(uop.reference(t), "reference")
  if t:numel() == 0 then return end
  local got, rep = N.jit(t)
  if not rep.ok then error(label .. "validation: " .. rep.text, at - 1) end
  check(got, "JIT")
end

return N
