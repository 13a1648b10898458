-- fuzz_pipeline.lua - the random end-to-end checker of the tensor pipeline,
-- by hand:
--   build/uopdb tests/fuzz/fuzz_pipeline.lua [N] [SEED] [--stop] [--points [--compiled]]
-- builds N random tensor programs (default 1000) from SEED (default 1),
-- compiles and runs each with validation, and prints every failure as a
-- shrunk Lua reproducer; --stop ends at the first failure.  The program being
-- run is kept in build/fuzz_pipeline_last.lua, so a crash leaves its
-- reproducer behind; --points also checks every kernel at every point (by
-- the interpreters, small as the programs are; with --compiled, compiled,
-- wherever the renderer takes the point's form).  Exits 1 when anything
-- failed.
local dir = (arg and arg[0] or ""):match("^(.*)/[^/]*$") or "."
local gen = dofile(dir .. "/pipeline_gen.lua")

local n, seed, stop = 1000, 1, false
local positional = {}
for _, a in ipairs(arg or {}) do
  if a == "--stop" then stop = true
  elseif a == "--points" then gen.check_points = true
  elseif a == "--compiled" then gen.check_executor = "compiled"
  else positional[#positional + 1] = a end
end
n = math.tointeger(tonumber(positional[1] or n)) or n
seed = math.tointeger(tonumber(positional[2] or seed)) or seed

local last_path = os.getenv("FUZZ_LAST") or "build/fuzz_pipeline_last.lua"
local function keep_last(code)
  local f = io.open(last_path, "w")
  if f then
    f:write(code)
    f:close()
  end
end

local t0 = os.clock()
local checked, failures = gen.run{
  count = n, seed = seed, before_run = keep_last, max_failures = stop and 1 or nil,
  report = function(text) print(text) io.stdout:flush() end,
  progress = math.max(1, n // 10),
  progress_fn = function(i, nf) print(string.format("  %d/%d programs, %d failed", i, n, nf)) io.stdout:flush() end,
}
print(string.format("%s: %d programs checked, %d failed, %.1f s (seed %d)", #failures == 0 and "ok" or "FAILED",
  checked, #failures, os.clock() - t0, seed))
os.exit(#failures == 0 and 0 or 1)
