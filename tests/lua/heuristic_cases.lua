-- heuristic_cases.lua - the programs whose kernels' heuristic opts are
-- compared with tinygrad's (scripts/capture_tinygrad_opts.py and
-- capture_tinygrad_gpu.py build the same ones), by name; shared by
-- test_heuristic_opts.lua (cpu) and test_gpu.lua (gpu).
--   local CASES = T.load("heuristic_cases.lua")
local Tensor = uop.Tensor

-- realized inputs (random, so that validation compares real sums); the
-- kernels are those of the capture script, which realizes ones
local function input(...) return Tensor.rand(...):contiguous():realize() end

local CASES = {
  matvec = function() return input(1, 64):matmul(input(64, 64)) end,
  matmul512 = function() return input(512, 512):matmul(input(512, 512)) end,
  matmul64 = function() return input(64, 64):matmul(input(64, 64)) end,
  conv2d = function() return input(1, 32, 56, 56):conv2d(input(64, 32, 3, 3), {padding = 1}) end,
  softmax = function() return input(64, 4096):softmax() end,
  sum1m = function() return input(1 << 20):sum() end,
  add1m = function() return input(1 << 20) + input(1 << 20) end,
  small = function() return input(4, 4) * 2 + 1 end,
  mean = function() return input(3, 5):mean() end,
  cumsum = function() return input(8):cumsum() end,
  pad_flip = function() return input(3, 4):pad{{1, 1}, {2, 0}}:flip(1) * 2 end,
  conv_small = function() return input(1, 2, 5, 5):conv2d(input(3, 2, 3, 3)) end,
  conv_pad_small = function() return input(2, 3, 7, 7):conv2d(input(4, 3, 3, 3), {padding = 1}) end,
  matmul16 = function() return input(16, 16):matmul(input(16, 16)) end,
  sum_axis = function() return input(100, 37):sum(1) end,
  max_axis0 = function() return input(33, 65):max(0) end,
  permute = function() return input(4, 3, 3):permute(2, 0, 1):contiguous() end,
  softmax_small = function() return input(6, 6):softmax() end,
  exp_sum = function() return input(7, 1000):exp():sum(1) end,
  expand_add = function() return input(3, 2, 1):expand(3, 2, 5) + input(3, 2, 5) end,
  stack = function() return Tensor.stack({input(4, 4), input(4, 4), input(4, 4)}) * 2 end,
  -- (4, 3, 6, 4) read as 288: split into ranges whose ids share the first
  cumsum_split = function()
    return (Tensor.arange(288):reshape(4, 3, 6, 4) % 3):eq(0):cumsum(2):reshape{1, 288}:sign()
  end,
}
return CASES
