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
    finding = "DType's __tostring on a value that is not a dtype crashes (scripting/lua_dtype.c dt_tostring " ..
      "passes NULL to dt_format; luop_check_dtype instead of luop_test_dtype would refuse it)",
    area = "Lua bindings (hostile input)",
    repro = [[getmetatable(uop.dtypes.float32).__tostring(5)  -- segmentation fault]],
    fn = "^MT%[\"uopdb%.DType\"%]%.__tostring$", why = "crash", avoid = {skip = true},
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
    finding = "Tensor.new of a table that holds itself never returns",
    area = "Tensor messages / limits (hostile input)",
    repro = [[local t = {1, 2}; t[3] = t; Tensor.new(t)  -- hangs]],
    fn = "^Tensor%.new$", why = "crash", message = "^timeout$", avoid = {args = "^H%.cycle%(%)$"},
  },
  {
    finding = "p:time(n) runs the program n times, however large n is (2^31: hours)",
    area = "work limits (hostile input)",
    repro = [[uop.compile(Tensor.new({1, 2}):exp(), {select = false}):time(2^31)  -- hangs]],
    fn = "^MT%[\"uopdb%.Program\"%]%.__index%.time$", why = "crash", message = "^timeout$",
    avoid = {big_numbers = true},
  },
  {
    finding = "k:dot(file) passes the name to the dot program as is: a name starting with '-' is read as an " ..
      "option, and dot's whole usage text becomes the error message (several lines)",
    area = "messages (hostile input)",
    repro = [[uop.compile(Tensor.new({1, 2}) + 1, {select = false}):kernel(1):dot(-2)  -- dot failed ... Usage: dot ...]],
    why = "message of several lines", message = "^dot failed",
  },
  {
    finding = "uop.buffer(dtype, n) allocates n elements however large n is (2^31 float32: 8 GiB, seconds)",
    area = "size caps (hostile input)",
    repro = [[uop.buffer(uop.dtypes.float32, 2^31)  -- 8 GiB]],
    fn = "^uop%.buffer$", why = "out of memory", avoid = {big_numbers = true},
  },
  {
    finding = "Tensor.new of a table nested 100000 deep needs memory growing with the square of the depth " ..
      "(24 GiB and 77 s before the machine killed it; under a 4 GiB limit: not enough memory)",
    area = "size caps (hostile input)",
    repro = [[local t = {}; for _ = 1, 100000 do t = {t} end; Tensor.new(t)]],
    fn = "^Tensor%.new$", why = "out of memory", avoid = {args = "^H%.deep%(100000%)$"},
  },
  {
    finding = "a Tensor op with uop.Invalid as its operand is accepted and fails only when compiled, inside " ..
      "uopdb (CONST: the Invalid marker has no value)",
    area = "Tensor messages (hostile input)",
    repro = [[print(pcall(function() return (Tensor.ones(2, 3) + uop.Invalid):tolist() end))]],
    message = "the Invalid marker has no value",
  },
  {
    finding = "an empty tensor with a huge dimension (shape (1e9, 0)) is printed and listed row by row: " ..
      "out of memory after a long time",
    area = "size caps (hostile input)",
    repro = [[print(pcall(tostring, Tensor.empty(1e9, 0)))  -- not enough memory]],
    fn = "^Tensor[%.%[]", why = "out of memory",
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
