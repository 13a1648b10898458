-- test_split_reduce.lua - a large reduction is split in two kernels as
-- tinygrad v0.12.0 splits it (split_reduceop). The kernels of each program
-- below, as the buffer sizes each touches (output first), must be those
-- tinygrad schedules, read from tests/golden/split_reduce.txt
-- (scripts/capture_tinygrad_split.py); and split sums must still be right.
local T = ...
local Tensor = uop.Tensor

local e = Tensor.empty
local CASES = {
  sum1m = function() return e(1 << 20):sum() end,
  sum2p23 = function() return e(1 << 23):sum() end,
  rows = function() return e(64, 65536):sum(1) end,
  cols = function() return e(65536, 64):sum(0) end,
  max3d = function() return e(8, 4096, 16):max{1, 2} end,
  prime = function() return e(32771 * 8):sum() end,
  odd = function() return e(3 * 5 * 7 * 11 * 13 * 17):sum() end,
  below = function() return e(16384):sum() end,
  edge = function() return e(32768):sum() end,
  permuted = function() return e(1024, 1024):permute(1, 0):sum(1) end,
  broadcast = function() return e(1):expand(1 << 20):sum() end,
  broadcast_inner = function() return e(256, 1):expand(256, 4096):sum() end,
  mean = function() return e(1 << 20):mean() end,
}

local function golden()
  local want, order = {}, {}
  for line in io.lines("tests/golden/split_reduce.txt") do
    if not line:match("^#") then
      local name, kernels = line:match("^(%S+) (%S+)$")
      assert(name, "bad golden line: " .. line)
      want[name] = kernels
      order[#order + 1] = name
    end
  end
  return want, order
end

-- "256,1048576|1,256" from the program's text: the sizes of the buffers
-- each kernel names, in the kernel's argument order
local function kernel_sizes(p)
  local text = p:text()
  local size = {}
  for name, n in text:gmatch("(%w+) %w+%[(%d+)%]") do size[name] = n end
  local kernels = {}
  for args in text:gmatch("\n  [%w_]+%(([^)]*)%)") do
    local sizes = {}
    for b in args:gmatch("[%w]+") do sizes[#sizes + 1] = assert(size[b], "no size for " .. b) end
    kernels[#kernels + 1] = table.concat(sizes, ",")
  end
  return table.concat(kernels, "|")
end

local WANT, ORDER = golden()
T.test("every golden case has a program", function()
  T.eq(#ORDER, 13, "golden cases")
  for _, name in ipairs(ORDER) do T.ok(CASES[name], "program for " .. name) end
end)

for _, name in ipairs(ORDER) do
  T.test("reductions of " .. name .. " split as tinygrad splits them", function()
    local p = uop.compile(CASES[name](), {select = false})
    T.eq(kernel_sizes(p), WANT[name], name)
  end)
end

-- 2^20 values 0..2^20-1 (mod 1024, so every partial sum is exact in float32)
T.test("a split sum and max are exact", function()
  local n = 1 << 20
  local vals = {}
  local total, top = 0, -1
  for i = 1, n do
    local v = (i * 7919) % 1024
    vals[i] = v
    total = total + v
    if v > top then top = v end
  end
  local x = Tensor.new(vals, "float32")
  local s = x:sum()
  T.eq(#uop.compile(s):kernels(), 2, "sum kernels")
  T.eq(s:item(), total, "sum")
  T.eq(x:max():item(), top, "max")
  -- through the JIT against the reference
  local outs, rep = uop.compile(s):run{validate = true, quiet = true}
  T.ok(rep.ok, "validation: " .. tostring(rep.text))
  T.eq(uop.buffer_values(outs[1], s:shape()), total, "JIT sum")
end)
