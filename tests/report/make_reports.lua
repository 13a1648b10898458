-- make_reports.lua DIR - writes what tests/report/run.sh checks: the 3x3
-- matmul (samples/matmul3x3.lua's A = 1..9, B = 10..18, float32) and a conv2d,
-- each as DIR/NAME.html (p:report) and DIR/NAME.json (p:export), the stage
-- names one per line in DIR/stages.txt, and "NAME BYTES MS" lines in
-- DIR/sizes.txt (the page's size and the time to write it).
local dir = assert(arg[1], "usage: make_reports.lua DIR")

local A = Tensor.new({{1, 2, 3}, {4, 5, 6}, {7, 8, 9}}, "float32")
local B = Tensor.new({{10, 11, 12}, {13, 14, 15}, {16, 17, 18}}, "float32")
local programs = {
  {"matmul", uop.compile(A:matmul(B))},
  {"conv2d", uop.compile(Tensor.rand(1, 4, 8, 8):conv2d(Tensor.rand(8, 4, 3, 3), {padding = 1}))},
}

local sizes = assert(io.open(dir .. "/sizes.txt", "w"))
for _, np in ipairs(programs) do
  local name, p = np[1], np[2]
  local t0 = uop.clock()
  local html = p:report(dir .. "/" .. name .. ".html")
  local ms = uop.clock() - t0
  p:export(dir .. "/" .. name .. ".json")
  local f = assert(io.open(html, "rb"))
  sizes:write(string.format("%s %d %.0f\n", name, f:seek("end"), ms))
  f:close()
end
sizes:close()

local names = assert(io.open(dir .. "/stages.txt", "w"))
for _, st in ipairs(uop.stages()) do names:write(st.name, "\n") end
names:close()
