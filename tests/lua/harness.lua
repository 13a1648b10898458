-- harness.lua - a tiny test harness for the Lua tests.
--   local T = dofile("tests/lua/harness.lua")
--   T.test("name", function() T.eq(got, want) end)
-- Failures are printed with the test name; T.summary() gives the counts.
local T = { passed = 0, failed = 0, current_file = "?" }

-- the folder this file is in: T.load("nested.lua") runs a helper module there
local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "."
function T.load(name) return dofile(here .. "/" .. name) end

uop = uop or require("uopdb")

local function show(v)
  if type(v) == "string" then return string.format("%q", v) end
  return tostring(v)
end

-- fails the running test with msg, blaming the caller's caller line
local function fail(msg, level)
  error(msg, (level or 2) + 1)
end

function T.eq(got, want, what)
  if got ~= want then
    fail(string.format("%sexpected %s, got %s", what and (what .. ": ") or "", show(want), show(got)), 2)
  end
end

function T.ok(cond, what)
  if not cond then fail((what or "condition") .. " is false", 2) end
end

-- the error message of fn(...), failing if it does not raise
function T.err(fn, ...)
  local ok, msg = pcall(fn, ...)
  if ok then fail("expected an error, got none", 2) end
  return tostring(msg)
end

-- fn(...) must raise an error containing want (plain text)
function T.raises(want, fn, ...)
  local ok, msg = pcall(fn, ...)
  if ok then fail("expected an error containing " .. show(want) .. ", got none", 2) end
  if not tostring(msg):find(want, 1, true) then
    fail("expected an error containing " .. show(want) .. ", got " .. show(tostring(msg)), 2)
  end
end

-- every line of text that contains needle (plain)
function T.contains(text, needle, what)
  if type(text) ~= "string" or not text:find(needle, 1, true) then
    fail(string.format("%sexpected text containing %s, got %s", what and (what .. ": ") or "", show(needle), show(text)), 2)
  end
end

function T.test(name, fn)
  local ok, msg = xpcall(fn, debug.traceback)
  if ok then
    T.passed = T.passed + 1
  else
    T.failed = T.failed + 1
    io.stderr:write(string.format("FAIL %s: %s\n  %s\n", T.current_file, name, tostring(msg):gsub("\n", "\n  ")))
  end
end

function T.summary(label)
  return string.format("%s: %d passed, %d failed", label or "lua", T.passed, T.failed)
end

return T
