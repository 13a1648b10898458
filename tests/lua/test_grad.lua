-- test_grad.lua - gradients (Tensor.gradient, requires_grad_, backward):
-- values worked out here by hand or in plain Lua, each through
-- uop.reference and through the JIT with validation; the options, the
-- errors and backward's accumulation.  tinygrad v0.12.0's own values for
-- more programs are in tests/golden/tinygrad_op_cases.txt (grad_*).
local T = ...
local Tensor = uop.Tensor

local N = T.load("nested.lua")
local map = N.map

-- t's values through the reference and through the JIT, validated; exact
-- comparisons are strict (ints stay ints, -0.0 is not 0.0)
local function both(t, want, tol, what) return N.both(t, want, tol, what, true) end

local A = {{1, 2, 3}, {4, 5, 6}, {7, 8, 9}}
local B = {{10, 11, 12}, {13, 14, 15}, {16, 17, 18}}

T.test("gradient of a 3x3 matmul's sum: row sums of B for A, column sums of A for B, exactly", function()
  local a, b = Tensor(A, "float32"), Tensor(B, "float32")
  local ga, gb = table.unpack(a:matmul(b):sum():gradient(a, b))
  -- d/dA[i][k] = sum_j B[k][j]; d/dB[k][j] = sum_i A[i][k]
  both(ga, {{33, 42, 51}, {33, 42, 51}, {33, 42, 51}}, 0, "dA")
  both(gb, {{12, 12, 12}, {15, 15, 15}, {18, 18, 18}}, 0, "dB")
  T.eq(#ga:shape(), 2)
  T.eq(tostring(ga:dtype()), "float32")
end)

T.test("gradient of a weighted matmul: W times B transposed", function()
  local a, b, w = Tensor(A, "float32"), Tensor(B, "float32"), Tensor{{1, 0, -1}, {2, 1, 0}, {0, 0, 3}}
  local ga = (a:matmul(b) * w):sum():gradient(a)[1]
  local want = {}
  for i = 1, 3 do
    want[i] = {}
    for k = 1, 3 do
      local s = 0
      for j = 1, 3 do s = s + ({{1, 0, -1}, {2, 1, 0}, {0, 0, 3}})[i][j] * B[k][j] end
      want[i][k] = s
    end
  end
  both(ga, want, 0, "dA")
end)

T.test("elementwise chain rule: exp, log, sqrt, sin, reciprocal, pow, polynomials", function()
  local xs = {0.5, 1.25, 2.0, 3.5}
  local x = Tensor(xs)
  local cases = {
    {"exp", x:exp(), math.exp},
    {"log", x:log(), function(v) return 1 / v end},
    {"sqrt", x:sqrt(), function(v) return 0.5 / math.sqrt(v) end},
    {"sin", x:sin(), math.cos},
    {"reciprocal", x:reciprocal(), function(v) return -1 / (v * v) end},
    {"x^3", x ^ 3, function(v) return 3 * v * v end},
    {"x*x+2x", x * x + x * 2, function(v) return 2 * v + 2 end},
    {"sigmoid", x:sigmoid(), function(v) local s = 1 / (1 + math.exp(-v)) return s * (1 - s) end},
  }
  for _, c in ipairs(cases) do
    local name, y, dy = c[1], c[2], c[3]
    both(y:sum():gradient(x)[1], map(xs, dy), 1e-5, name)
  end
end)

T.test("max splits its gradient between ties; relu and where pass it through their mask", function()
  local x = Tensor{1.0, 3.0, 3.0, -2.0}
  both(x:max():gradient(x)[1], {0, 0.5, 0.5, 0}, 0, "max")
  local y = Tensor{2.0, 3.0, 1.0, -2.0}
  local gx, gy = table.unpack(x:maximum(y):sum():gradient(x, y))
  both(gx, {0, 0.5, 1, 0.5}, 0, "maximum x")
  both(gy, {1, 0.5, 0, 0.5}, 0, "maximum y")
  both(x:relu():sum():gradient(x)[1], {1, 1, 1, 0}, 0, "relu")
  local gw = x:gt(2):where(x * 3, y):sum():gradient(x, y)
  both(gw[1], {0, 3, 3, 0}, 0, "where x")
  both(gw[2], {1, 0, 0, 1}, 0, "where y")
end)

T.test("movement ops hand the gradient back to the elements they moved", function()
  local x = Tensor{{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}}
  local w6 = Tensor{{1, 2}, {3, 4}, {5, 6}}
  -- reshape to 3x2, times w: each element's weight
  both((x:reshape(3, 2) * w6):sum():gradient(x)[1], {{1, 2, 3}, {4, 5, 6}}, 0, "reshape")
  -- transpose: x[i][j] meets w6[j][i]
  both((x:transpose() * w6):sum():gradient(x)[1], {{1, 3, 5}, {2, 4, 6}}, 0, "permute")
  -- flip the columns: x[i][j] meets w[i][2-j]
  local w23 = Tensor{{1, 2, 3}, {4, 5, 6}}
  both((x:flip(1) * w23):sum():gradient(x)[1], {{3, 2, 1}, {6, 5, 4}}, 0, "flip")
  -- pad one column in front: x[i][j] meets w[i][j+1]
  both((x:pad{nil, {1, 0}} * Tensor{{9, 1, 2, 3}, {9, 4, 5, 6}}):sum():gradient(x)[1],
    {{1, 2, 3}, {4, 5, 6}}, 0, "pad")
  -- shrink to the middle column: only it gets the gradient
  both((x:shrink{nil, {1, 2}} * 7):sum():gradient(x)[1], {{0, 7, 0}, {0, 7, 0}}, 0, "shrink")
  -- expand a column over 3: the gradients of the copies add up
  local c = Tensor{{1.0}, {2.0}}
  both((c:expand(2, 3) * w23):sum():gradient(c)[1], {{6}, {15}}, 0, "expand")
end)

T.test("reductions: sum broadcasts back, mean divides, prod divides the product by each element", function()
  local x = Tensor{{1.0, 2.0}, {4.0, 8.0}}
  both((x:sum(1) * Tensor{1, 10}):sum():gradient(x)[1], {{1, 1}, {10, 10}}, 0, "sum")
  both(x:mean():gradient(x)[1], {{0.25, 0.25}, {0.25, 0.25}}, 0, "mean")
  both(x:prod(1):sum():gradient(x)[1], {{2, 1}, {8, 4}}, 0, "prod")
end)

T.test("a value used twice adds up its gradients; detach stops it", function()
  local x = Tensor{1.0, -2.0, 3.0}
  both((x * x + x):sum():gradient(x)[1], {3, -3, 7}, 0, "x*x + x")
  both((x * x:detach()):sum():gradient(x)[1], {1, -2, 3}, 0, "x * detach(x)")
end)

T.test("gradient options: the gradient of each element, materialize_grads", function()
  local x, g = Tensor{1.0, 2.0, 3.0}, Tensor{1.0, 0.5, -1.0}
  both((x * x):gradient(x, {gradient = g})[1], {2, 2, -6}, 0, "given gradient")
  local y = Tensor{4.0, 5.0}
  both(x:sum():gradient(y, {materialize_grads = true})[1], {0, 0}, 0, "materialized")
  local s = x:sum()
  both(s:gradient(s)[1], 1, 0, "of itself")
end)

T.test("gradient errors say what is wrong", function()
  local x, y = Tensor{1.0, 2.0}, Tensor{3.0, 4.0}
  T.raises("is not in the graph of", function() return x:sum():gradient(y) end)
  T.raises("only float Tensors have a gradient", function()
    local i = Tensor({1, 2}, "int32")
    return i:sum():gradient(i)
  end)
  T.raises("is not a scalar", function() return x:exp():gradient(x) end)
  T.raises("unknown option 'foo'", function() return x:sum():gradient(x, {foo = 1}) end)
  T.raises("needs a target Tensor", function() return x:sum():gradient() end)
  T.raises("target 1 is 3, not a Tensor", function() return x:sum():gradient(3) end)
  T.raises("no gradient for TRUNC", function() return x:floor():sum():gradient(x) end)
  T.raises("does not match", function() return (x * x):gradient(x, {gradient = Tensor{1.0}}) end)
end)

T.test("backward: marked tensors get .grad, which adds up over calls; others get none", function()
  local x = Tensor{1.0, 2.0, 3.0}:requires_grad_()
  local y = Tensor{4.0, 5.0, 6.0}
  local z = Tensor{1.0, 1.0, 1.0}:requires_grad_(false)
  T.eq((x * y * z):sum():backward():shape()[1], nil, "backward returns the scalar")
  both(x.grad, {4, 5, 6}, 0, "x.grad")
  T.eq(y.grad, nil, "y is not marked")
  T.eq(z.grad, nil, "z is unmarked")
  x:sum():backward()
  both(x.grad, {5, 6, 7}, 0, "x.grad after a second backward")
  local w = Tensor{1.0, 2.0}:requires_grad_()
  w:exp():backward{gradient = Tensor{1.0, 0.0}}
  both(w.grad, {math.exp(1), 0}, 1e-6, "backward with a gradient")
  T.raises("backward: the gradient must be a Tensor", function() return w:sum():backward(3) end)
  T.raises("backward: Tensor(2,) float32 is not a scalar", function() return w:exp():backward() end)
end)

T.test("Tensor.new takes requires_grad as tinygrad's Tensor does", function()
  local x = Tensor.new({1.0, 2.0}, {requires_grad = true})
  local y = Tensor.new({3.0, 4.0}, {dtype = "float32", requires_grad = false})
  T.eq(x.requires_grad, true)
  T.eq(y.requires_grad, false)
  ;(x * y):sum():backward()
  both(x.grad, {3, 4}, 0, "x.grad")
  T.eq(y.grad, nil, "y.grad")
  T.raises("unknown option 'requires'", function() return Tensor.new({1.0}, {requires = true}) end)
end)

T.test("requires_grad_ on a constant makes it unique: equal constants keep their own gradients", function()
  local a = Tensor.new(2.0):requires_grad_()
  local b = Tensor.new(2.0)
  T.ok(a.uop ~= b.uop, "the marked constant is a node of its own")
  ;(a * 3 + b * 5):backward()
  both(a.grad, 3, 0, "a.grad")
  T.eq(b.grad, nil, "b is not marked")
end)

T.test("uop._shapes gives every node's shape by id, and the toposort, in one walk", function()
  local x = Tensor{{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}}
  local s = x:sum(1)
  local shapes, order = uop._shapes(s.uop)
  local topo = s.uop:toposort()
  T.eq(#order, #topo, "toposort length")
  for i = 1, #topo do T.eq(order[i], topo[i], "toposort node " .. i) end
  T.eq(table.concat(shapes[s.uop:id()], ","), "2")
  T.eq(table.concat(shapes[x.uop:id()], ","), "2,3")
  local device
  for _, u in ipairs(s.uop:toposort()) do if u:op() == "DEVICE" then device = u end end
  if device then T.eq(shapes[device:id()], false, "a DEVICE has no shape") end
end)

T.test("the gradient of a maximum with its own flip keeps tinygrad's two WHEREs: tensor nodes stay apart until rangeify's symbolic pass is done", function()
  -- x:maximum(x:flip(1)) takes its gradient twice, once through the flip;
  -- both conditions rangeify to x[2-j] < x[j].  tinygrad tags each tensor
  -- node for that pass, so the sum of the two WHEREs is not merged into one
  -- WHERE (2 for the ties' side); the tags are gone from the kernel
  local x = Tensor.new({{1.0, 2.0, 1.0}, {3.0, 3.0, 0.5}}, "float32")
  local g = x:maximum(x:flip(1)):sum():gradient(x)[1]
  local ast = uop.compile(g, {select = false}):kernel(1):root(0)
  local wheres_of_one, tagged = 0, 0
  for _, u in ipairs(ast:toposort()) do
    if u:op() == "WHERE" and u:src()[2]:op() == "CONST" and u:src()[2]:arg() == 1.0 then wheres_of_one = wheres_of_one + 1 end
    if u:tag() ~= nil then tagged = tagged + 1 end
  end
  T.eq(wheres_of_one, 2, "two WHEREs with 1.0 on the winning side")
  T.eq(tagged, 0, "no tag left in the kernel")
  -- row 1 is its own flip: every element ties, 0.5 + 0.5; row 2 against
  -- its flip {0.5, 3, 3}: 3 wins directly and through the flip (1 + 1),
  -- the middle 3 ties both ways (0.5 + 0.5), 0.5 loses both
  both(g, {{1.0, 1.0, 1.0}, {2.0, 1.0, 0.0}}, 0, "values")
end)
