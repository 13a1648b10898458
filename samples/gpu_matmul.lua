-- gpu_matmul.lua - an 8x8 float32 matmul compiled for the gpu target (a
-- generic GPU with workgroups, local memory and barriers), with LOCAL (4 rows
-- of the output per workgroup, one per work item) and GROUP (the 8-long
-- reduce split over 4 work items, which add their parts through local
-- memory): stepped through all 22 stages, the stages that make the GPU
-- program shown as diffs, then run in the GPU emulator and validated against
-- the reference.
--   build/uopdb samples/gpu_matmul.lua      (or: make run SAMPLE=samples/gpu_matmul.lua)

-- A[i][j] = 8i + j (0..63): C = A @ A is known exactly, row 0 is 1120 + 28j
local rows = {}
for i = 0, 7 do
  rows[i + 1] = {}
  for j = 0, 7 do rows[i + 1][j + 1] = 8 * i + j end
end
local A = Tensor.new(rows, "float32")
local C = A:matmul(A)

local p = uop.compile(C, {target = "gpu"})
local k = p:kernel(1)
print("-- the kernel as the scheduler made it")
k:print()

print("\n-- opts by hand: LOCAL of output axis 0 by 4, GROUP of the reduce axis by 4")
k:opts{{"LOCAL", 0, 4}, {"GROUP", 0, 4}}
print((select(2, k:opts())))

print("-- every stage")
print(k:stages())

print("\n-- stage 7 (apply opts): the output's LOOP ranges are GLOBAL, split into GLOBAL x LOCAL, and the")
print("-- reduce into REDUCE x GROUP_REDUCE")
k:seek(7)
print(k:diff())

print("\n-- stage 9 (expander): each work item's part of the reduce goes to a local BUFFERIZE; a final")
print("-- reduce over the 4 parts reads it")
k:seek(9)
print(k:diff())

print("\n-- stage 10 (add local buffers): the BUFFERIZE becomes DEFINE_LOCAL, a STORE and a BARRIER")
k:seek(10)
print(k:diff())

print("\n-- stage 12 (add GPU dims): GLOBAL ranges are workgroups gidx, LOCAL and GROUP_REDUCE work items")
print("-- lidx; the output is stored by the work item with lidx1 == 0 only")
k:seek(12)
print(k:diff())

print("\n-- stage 22: the linear program")
k:seek(22)
k:print()

print("\n-- checked at stages 9, 12 and 22 (from stage 12 on, in the GPU emulator)")
for _, n in ipairs{9, 12, 22} do print(k:check(n)) end

print("\n-- run in the GPU emulator, validated")
local _, report = p:run{validate = true}
print(report.text)
print(C)
