-- api_known.lua - findings of the Lua API fuzzer that belong to other work
-- and are not fixed yet.  fuzz_api.lua counts a finding that matches an
-- entry (fn: a Lua pattern on the function called, why: the judge's reason,
-- message: a Lua pattern on the error message or crash signature; an absent
-- field matches anything) and does not fail on it.  Each entry cites its
-- finding with a short reproducer (run with build/uopdb -e '...').  Remove an
-- entry when its finding is fixed, and the fuzzer checks the fix.
return {
  {
    finding = "Tensor front end: a message that prints a Tensor argument spans several lines",
    area = "Tensor messages (hostile input)",
    repro = [=[print(pcall(Tensor.eye, Tensor.new({{1, 2, 3}, {4, 5, 6}})))  -- eye: sizes must be ..., got [[1 2 3]\n [4 5 6]] ...]=],
    fn = "^Tensor[%.%[]", why = "message of several lines",
  },
  {
    finding = "uop functions written in Lua (scripting/prelude.lua: sink, find, simplify, trace_lines) do not " ..
      "check their arguments: the error is positioned inside uopdb or is a bare Lua runtime error",
    area = "uop messages (hostile input)",
    repro = [[print(pcall(uop.sink, 5))  -- uopdb/prelude.lua:7: new: source 1 of SINK must be a UOp, got number
print(pcall(uop.find, 5, "(ADD x 0)"))  -- uopdb/prelude.lua:18: attempt to index a number value (local 'root')
print(pcall(uop.simplify, {}))  -- uopdb/prelude.lua:36: bad argument #1 to 'rewrite' (UOp expected, got table)
print(pcall(uop.trace_lines, {3}))  -- attempt to index a nil value]],
    fn = "^uop%.", message = "^uopdb/prelude%.lua:",
  },
  {
    finding = "uop.trace_lines on a table that is not a trace: a bare Lua runtime error",
    area = "uop messages (hostile input)",
    repro = [[print(pcall(uop.trace_lines, {3}))  -- attempt to index a nil value]],
    fn = "^uop%.trace_lines$", why = "Lua runtime error",
  },
  {
    finding = "a message that quotes a string argument holding newlines spans several lines",
    area = "messages (hostile input)",
    repro = [[print(pcall(uop.dtypes.float32.ptr, "a\nb"))  -- unknown dtype 'a\nb' on two lines]],
    why = "message of several lines", message = "'[^'\n]*\n",
  },
  {
    finding = "Tensor front end: a Lua runtime error without a position (split of a 0-d tensor)",
    area = "Tensor messages (hostile input)",
    repro = [[print(pcall(Tensor.split, Tensor.new({1, 2}):sum(), 5))  -- attempt to compare number with nil]],
    fn = "^Tensor[%.%[]", why = "Lua runtime error",
  },
  {
    finding = "k:dot(file) passes the name to the dot program as is: a name starting with '-' is read as an " ..
      "option, and dot's whole usage text becomes the error message (several lines)",
    area = "messages (hostile input)",
    repro = [[uop.compile(Tensor.new({1, 2}) + 1, {select = false}):kernel(1):dot(-2)  -- dot failed ... Usage: dot ...]],
    why = "message of several lines", message = "^dot failed",
  },
  {
    finding = "a Tensor op with uop.Invalid as its operand is accepted and fails only when compiled, inside " ..
      "uopdb (CONST: the Invalid marker has no value)",
    area = "Tensor messages (hostile input)",
    repro = [[print(pcall(function() return (Tensor.ones(2, 3) + uop.Invalid):tolist() end))]],
    message = "the Invalid marker has no value",
  },
  {
    finding = "p:export(name) and p:report(name) with a name that cannot be written quote the name as is: " ..
      "a name holding newlines gives a message of several lines",
    area = "messages (hostile input)",
    repro = [[local p = uop.compile(Tensor.new({1, 2}) + 1, {select = false})
print(pcall(p.export, p, string.rep("a\n", 200)))  -- export: cannot write a\na\n... (a name too long)]],
    why = "message of several lines", message = "cannot write ",
  },
  {
    finding = "Tensor front end: a wrong-typed self or argument fails inside scripting/tensor*.lua " ..
      "(a Lua runtime error, or a message positioned inside uopdb), also later, when such a tensor is used " ..
      "(Tensor.from_uop(t, \"REDUCE_AXIS\") makes a tensor whose uop is a string)",
    area = "Tensor messages (hostile input)",
    repro = [[print(pcall(Tensor.view))  -- uopdb/tensor_movement.lua:48: attempt to index a nil value (local 'self')
print(pcall(Tensor.add, 5, Tensor.new({1})))  -- uopdb/tensor_elementwise.lua:45: attempt to index a number value
print(pcall(Tensor.from_uop, setmetatable({}, {__name = "x"})))  -- uopdb/tensor_create.lua:43: bad argument #1 to 'shape']],
    why = "raised inside uopdb's Lua code", message = "^uopdb/tensor[%w_]*%.lua:",
  },
}
