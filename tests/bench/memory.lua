-- memory.lua - the bounded-memory rows of `make bench`: the resident size of
-- a session after it built and dropped 50M UOps, and after it compiled, ran
-- and dropped 10,000 small programs (each of its own), as rows of the table
-- bench.c prints.  Compaction happens by itself (scripting/lua_memory.c).
--   build/uopdb tests/bench/memory.lua [programs] [uops]

local programs = tonumber(arg and arg[1]) or 10000
local uops = tonumber(arg and arg[2]) or 50000000

local function row(what, value, unit, note)
  print(string.format("| %-44s | %14.2f | %-12s | %-34s |", what, value, unit, note or ""))
end

local function rss_mb()
  local f = assert(io.open("/proc/self/statm"))
  local _, resident = f:read("n", "n")
  f:close()
  return resident * 4096 / 2^20
end

-- the JIT and the Tensor front end are warm before the first figure
uop.compile(Tensor.new({1, 2}, "float32") + 1, {select = false}):run()
local start = rss_mb()
local peak = start

-- x * 3 + i: two new nodes and a new constant each
local t0 = uop.clock()
local x = uop.var("x", 0, 9)
for i = 1, uops // 2 do
  local _ = x * 3 + i
  if i % 1000000 == 0 then peak = math.max(peak, rss_mb()) end
end
local m = uop.memory()
row("RSS after " .. uops // 1000000 .. "M UOps built and dropped", rss_mb(), "MB",
    string.format("start %.0f, peak %.0f, %d compactions", start, peak, m.compactions))
row("UOps built and dropped per second", uops / (uop.clock() - t0) * 1e3 / 1e6, "M UOps/s",
    string.format("%d live nodes after", m.nodes))

local c0 = m.compactions
t0 = uop.clock()
for i = 1, programs do
  local a = Tensor.new({1, 2, 3, 4}, "float32")
  local p = uop.compile((a * (i % 997) + i):sum(), {select = false})
  p:run()
  if i % 100 == 0 then peak = math.max(peak, rss_mb()) end
end
m = uop.memory()
row("RSS after " .. programs .. " programs run and dropped", rss_mb(), "MB",
    string.format("peak %.0f, %d compactions", peak, m.compactions - c0))
row("programs compiled and run per second", programs / (uop.clock() - t0) * 1e3, "programs/s",
    string.format("%d live nodes after", m.nodes))
