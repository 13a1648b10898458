-- test_tensor_errors.lua - every Tensor function and method called with bad
-- arguments fails with one line at the caller's line that names what was
-- wrong: never an internal "attempt to ..." of the front end, never a line
-- inside uopdb/tensor*.lua, never a tensor's printed elements.
local T = ...
local HERE = "test_tensor_errors.lua:"

local names = {}
for k, v in pairs(Tensor) do
  if type(k) == "string" and type(v) == "function" and not k:find("^__") then names[#names + 1] = k end
end
table.sort(names)

-- a few bad argument lists: missing, wrong types, odd numbers, a Tensor
-- where a number belongs, nested tables
local bad_args = {
  {n = 0}, {nil, n = 1}, {"x", n = 1}, {{}, n = 1}, {1.5, n = 1}, {-1, n = 1}, {true, n = 1},
  {Tensor.ones(2), n = 1}, {{1, "a"}, n = 1}, {nil, nil, 3, n = 3}, {2, "x", n = 2}, {{{}}, n = 1},
  {0 / 0, n = 1}, {print, n = 1},
  -- bad options, odd dtypes and shapes, extreme numbers
  {{dtype = 5}, n = 1}, {{dtype = "nope"}, n = 1}, {0, {keepdim = "x"}, n = 2}, {1, {stride = 0}, n = 2},
  {Tensor.ones(3, 2), n = 1}, {Tensor.new({true, false}), n = 1}, {math.huge, n = 1}, {math.mininteger, n = 1},
  {1, 2, 3, 4, 5, 6, 7, 8, n = 8}, {{{1, 2}, {3}}, n = 1},
}

-- every message of a failed call must be one clear line at the caller
local function check(label, ok, msg)
  if ok then return 0 end
  msg = tostring(msg)
  T.ok(not msg:find("attempt to", 1, true), label .. ": an internal Lua error: " .. msg)
  T.ok(not msg:find("uopdb/tensor", 1, true), label .. ": points inside the front end: " .. msg)
  T.ok(not msg:find("\n", 1, true), label .. ": more than one line: " .. msg)
  T.ok(msg:find(HERE, 1, true) == 1 or msg:find("/" .. HERE, 1, true), label .. ": not at the caller's line: " .. msg)
  return 1
end

T.test("every Tensor function with bad arguments: one line at the caller's, no internal error", function()
  local failed = 0
  for _, name in ipairs(names) do
    for i, args in ipairs(bad_args) do
      local fn = Tensor[name]
      -- as a method of a 2x3 tensor, and as a plain function
      local ok, msg = pcall(function() return fn(Tensor.ones(2, 3), table.unpack(args, 1, args.n)) end)
      failed = failed + check(string.format("t:%s(args %d)", name, i), ok, msg)
      ok, msg = pcall(function() return fn(table.unpack(args, 1, args.n)) end)
      failed = failed + check(string.format("Tensor.%s(args %d)", name, i), ok, msg)
    end
  end
  -- most of these calls are errors: the loop saw them
  T.ok(failed > #names * 4, "calls that failed: " .. failed)
end)

T.test("an internal error names the Tensor function called and its arguments", function()
  -- conv2d without a weight: the message names conv2d, its arguments and the missing one
  local msg = T.err(function() return Tensor.ones(1, 1, 4, 4):conv2d() end)
  T.contains(msg, "Tensor.conv2d: an argument is missing or of the wrong type")
  T.contains(msg, "('weight')")
  T.contains(msg, "called with Tensor(1, 1, 4, 4) float32")
  -- a method called without its tensor
  T.contains(T.err(function() return Tensor.abs() end), "Tensor.abs: needs a Tensor to work on, got nil (call it as t:abs(...))")
  -- a Tensor where a dimension belongs is shown by its shape, not its elements
  T.contains(T.err(Tensor.empty, 2, Tensor.ones(2, 3)), "empty: dimension 1 of the shape is Tensor(2, 3) float32, not an integer")
  -- an error raised in a function another one calls names the one called first
  T.contains(T.err(Tensor.arange, 2^40), "Tensor.arange: reshape: ")
  -- an error the front end raises itself passes unchanged
  T.contains(T.err(function() local r = Tensor.ones(2):reshape(3); return r end), HERE)
end)
