-- require_test.lua - the module loads into a stock lua5.4:
--   LUA_CPATH=build/?.so lua5.4 tests/lua/require_test.lua
-- Prints "require: ok" and exits 0, or names what failed and exits 1.
local ok, m = pcall(require, "uopdb")
if not ok then
  io.stderr:write("require: cannot load uopdb: " .. tostring(m) .. "\n")
  os.exit(1)
end

local failures = {}
local function check(cond, what) if not cond then failures[#failures + 1] = what end end

check(type(m) == "table", "require returns the module table")
check(rawequal(require("uopdb"), m), "a second require returns the same table")
check(uop == nil, "require does not set a global")
local x = m.var("x", 0, 10)
local e = (x * 4 + 3) // 2
check(e:vmin() == 1 and e:vmax() == 21, "bounds")
check(e:eval{x = 3} == 7, "eval")
check(rawequal(m.parse(e:listing()), e), "listing round trip")
local r, trace = m.rewrite(x + 0, m.rules{{name = "add0", pattern = "(ADD x (CONST 0))", rewrite = function(mm) return mm.x end}})
check(rawequal(r, x), "rewrite")
check(trace.rewrites[1].rule == "add0", "trace")
check(tostring(m.dtypes.float32:vec(4)) == "float32.vec(4)", "dtypes")
check(not pcall(m.new, "ADDD", m.dtypes.int32, {}), "errors are Lua errors")

if #failures > 0 then
  io.stderr:write("require: failed: " .. table.concat(failures, "; ") .. "\n")
  os.exit(1)
end
print("require: ok")
