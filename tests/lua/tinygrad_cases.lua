-- tinygrad_cases.lua - the cases of tests/golden/tinygrad_op_cases.txt for
-- the tests that run them (test_tinygrad_values.lua, test_case_asts.lua): the
-- file's lines, a line's columns, the inputs its spec column describes (the
-- same elements scripts/capture_tinygrad_values.py gives tinygrad) and the
-- results of its Lua column; and opts written as tinygrad's captures write
-- them (test_heuristic_opts.lua too).
--   local C = T.load("tinygrad_cases.lua")
local C = {}
local d = uop.dtypes

-- the inputs' element formulas (see the cases file's header)
local KINDS = {
  f = {d.float32, function(r) return (r - 9) / 4 end},
  p = {d.float32, function(r) return (r + 1) / 4 end},
  u = {d.float32, function(r) return (r - 9) / 10 end},
  h = {d.float16, function(r) return (r - 9) / 4 end},
  i = {d.int32, function(r) return r - 9 end},
  l = {d.int64, function(r) return r - 9 end},
  n = {d.int32, function(r) return r end},
  c = {d.uint8, function(r) return r end},
  b = {d.bool, function(r) return r % 3 == 0 end},
}


function C.split(line)
  local parts = {}
  for part in (line .. "|"):gmatch("(.-)|") do parts[#parts + 1] = part:match("^%s*(.-)%s*$") end
  return parts
end

function C.read_lines(path)
  local f = assert(io.open(path))
  local lines = {}
  for line in f:lines() do
    if line:match("%S") and not line:match("^#") then lines[#lines + 1] = line end
  end
  f:close()
  return lines
end

function C.make_input(spec, k)
  local kind, shape_text = spec:match("^(%w+):(%w+)$")
  local shape = {}
  if shape_text ~= "s" then
    for n in shape_text:gmatch("%d+") do shape[#shape + 1] = tonumber(n) end
  end
  local count = 1
  for _, n in ipairs(shape) do count = count * n end
  local dtype, value
  local bound = kind:match("^j(%d+)$")
  if bound then
    dtype, value = d.int32, function(r) return r % tonumber(bound) end
  else
    dtype, value = KINDS[kind][1], KINDS[kind][2]
  end
  local vals = {}
  for e = 0, count - 1 do vals[e + 1] = value((7 * e + 5 * k + 3) % 19) end
  if #shape == 0 then return Tensor.new(vals[1], {dtype = dtype}) end
  return Tensor.new(vals, {dtype = dtype}):reshape(table.unpack(shape))
end

-- the case's results: a Tensor, several, or a list of them (as split gives)
function C.results(lua, inputs)
  local env = setmetatable({Tensor = Tensor, d = d, uop = uop}, {__index = _G})
  local names = {"x", "y", "z", "w"}
  local k = 0
  for spec in inputs:gmatch("%S+") do
    env[names[k + 1]] = C.make_input(spec, k)
    k = k + 1
  end
  local chunk = assert(load("return " .. lua, "=case", "t", env))
  local out = table.pack(chunk())
  if out.n == 1 and type(out[1]) == "table" and getmetatable(out[1]) ~= Tensor then return out[1] end
  return out
end

-- opts {{op, axis, amount}, ...} as "OP:axis:amount,..." ("-" for none)
function C.show_opts(opts)
  local parts = {}
  for _, o in ipairs(opts) do parts[#parts + 1] = string.format("%s:%d:%d", o[1], o[2], o[3]) end
  return #parts > 0 and table.concat(parts, ",") or "-"
end

return C
