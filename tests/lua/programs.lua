-- programs.lua - the small programs several Lua tests start from, built the
-- same way everywhere:
--   local P = T.load("programs.lua")
local P = {}

-- the 3x3 matmul's inputs: A = 1..9, B = 10..18 (float32), whose product is
-- known exactly: {{84, 90, 96}, {201, 216, 231}, {318, 342, 366}}
function P.matmul3_inputs()
  local A = Tensor.new({{1, 2, 3}, {4, 5, 6}, {7, 8, 9}}, "float32")
  local B = Tensor.new({{10, 11, 12}, {13, 14, 15}, {16, 17, 18}}, "float32")
  return A, B
end

function P.matmul3()
  local A, B = P.matmul3_inputs()
  return A:matmul(B)
end

return P
