-- matmul3x3.lua - the classic: a 3x3 float32 matmul whose values are exactly
-- known, scheduled into one kernel, stepped through the 22 stages, stage
-- 15's index lowering shown as a diff, then run through the LLVM JIT and
-- validated against the naive reference; then the same with the output's
-- column axis UPCAST by 3 (vectorised).
--   build/uopdb samples/matmul3x3.lua      (or: make run SAMPLE=samples/matmul3x3.lua)

local A = Tensor.new({{1, 2, 3}, {4, 5, 6}, {7, 8, 9}}, "float32")
local B = Tensor.new({{10, 11, 12}, {13, 14, 15}, {16, 17, 18}}, "float32")
local C = A:matmul(B)

local p = uop.compile(C)
print(p)
p:print()

local k = p:kernel(1)
print("\n-- the kernel as the scheduler made it")
k:print()

print("\n-- the opts stage 7 applied by default, and why")
local _, why = k:opts()
print(why)

print("\n-- every stage")
print(k:stages())

print("\n-- stage 15 (lower index dtype): what it changed")
print(k:seek(15))
print(k:diff())

print("\n-- run through the JIT, validated")
local _, report = p:run{validate = true}
print(report.text)
print(C)   -- exactly [[84, 90, 96], [201, 216, 231], [318, 342, 366]]

print("\n-- again with UPCAST of output axis 1 by 3")
local C2 = A:matmul(B)
local p2 = uop.compile(C2)
local k2 = p2:kernel(1)
k2:opts{{"UPCAST", 1, 3}}
print(k2:seek(9))
print(k2:diff(8, 9))
local _, report2 = p2:run{validate = true}
print(report2.text)
print(C2)
