-- test_compile.lua - programs and kernels from Lua: uop.compile schedules
-- without running, kernels step through the 22 stages, the IR, diffs, rules,
-- DOT, LLVM IR and assembly are there, opts change the kernel, and runs
-- through the JIT agree with the reference (exactly where values are exact).
local T = ...

local mat3 = T.load("programs.lua").matmul3_inputs
local WANT = {{84, 90, 96}, {201, 216, 231}, {318, 342, 366}}

local function same_nested(got, want, what)
  T.eq(#got, #want, what .. " rows")
  for i = 1, #want do
    for j = 1, #want[i] do T.eq(got[i][j], want[i][j], what .. string.format("[%d][%d]", i, j)) end
  end
end

T.test("compile schedules the 3x3 matmul into one kernel without running it", function()
  local A, B = mat3()
  local p = uop.compile(A:matmul(B))
  T.eq(#p:kernels(), 1)
  T.ok(tostring(p):find("Program: 1 kernel", 1, true), tostring(p))
  local k = p:kernel(1)
  T.eq(k:pos(), 0)
  T.ok(k:name():match("^r_"), "a reduce kernel is named r_...: " .. k:name())
  T.eq(uop.current(), k)
  T.ok(p:text():find("output0", 1, true), p:text())
end)

T.test("p:steps() lists the scheduler's steps, and each step's trace names its rewrites", function()
  local A, B = mat3()
  local p = uop.compile(A:matmul(B):transpose(), {select = false})
  local steps = p:steps()
  local names = {}
  for i, st in ipairs(steps) do
    names[i] = st.name
    T.eq(#st.trace, st.rewrites, st.name .. ": one trace entry per rewrite")
    for _, w in ipairs(st.trace) do
      T.ok(type(w.rule) == "string" and w.where:find(":%d+$") and w.before and w.after, st.name .. ": a whole entry")
    end
  end
  T.eq(table.concat(names, ","), "realize,rangeify,bufferize to store,split kernels,program")
  -- the realize step says which node became the output: the matmul's
  -- reduction under the RESHAPE and the PERMUTE
  local out
  for _, w in ipairs(steps[1].trace) do if w.rule == "realize_output" then out = w.after end end
  T.eq(out and out:op(), "REDUCE_AXIS")
  T.eq(out, p:outputs()[1])
  T.contains(tostring(steps), "rangeify")
end)

T.test("a kernel reads another's output at one index per dim until bufferize to store flattens it, as v0.12.0 does", function()
  -- the bitonic sort's crossover: a stored (2,2,2,2) tensor read through
  -- a cat of flipped halves inside another
  local vals = {}
  for i = 1, 16 do vals[i] = i end
  local x = (Tensor.new(vals, "float32"):reshape{2, 2, 2, 2} * 2):contiguous()
  local blue, green = table.unpack(x:split(1, 2))
  local y = blue:cat(green:flip(-1, -2), {dim = 2})
  blue, green = table.unpack(y:split(1, 1))
  local z = blue:cat(green:flip(-1, -2, -3), {dim = 1})
  local p = uop.compile(z, {select = false})
  local steps = p:steps()
  -- the number of indices of each read of a kernel's output after a step
  local function reads(root, of)
    local n = {}
    for _, u in ipairs(root:toposort()) do
      if u:op() == "INDEX" and u:src()[1]:op() == of then n[#n + 1] = #u:src() - 1 end
    end
    return table.concat(n, " ")
  end
  T.eq(steps[2].name, "rangeify")
  T.eq(reads(steps[2].after, "BUFFERIZE"), "4 4 4 4")
  T.eq(steps[3].name, "bufferize to store")
  T.eq(reads(steps[3].after, "BUFFERIZE"), "")
  T.eq(reads(steps[3].after, "AFTER"), "1 1 1 1")
  -- z[a][b][c][d] by hand: the second half along b reads y flipped on
  -- (b, c, d); y's second half along c reads x flipped on d
  local function xv(a, b, c, d) return 2 * (a * 8 + b * 4 + c * 2 + d + 1) end
  local function yv(a, b, c, d) if c == 0 then return xv(a, b, 0, d) end return xv(a, b, 1, 1 - d) end
  local want = {}
  for a = 0, 1 do for b = 0, 1 do for c = 0, 1 do for d = 0, 1 do
    want[#want + 1] = string.format("%g", b == 0 and yv(a, 0, c, d) or yv(a, 1, 1 - c, 1 - d))
  end end end end
  local outs, rep = p:run{validate = true, quiet = true}
  T.ok(rep.ok, rep.text)
  local got = {}
  for _, v in ipairs(uop.buffer_values(outs[1])) do got[#got + 1] = string.format("%g", v) end
  T.eq(table.concat(got, " "), table.concat(want, " "))
end)

T.test("the matmul runs exactly through the JIT and validates", function()
  local A, B = mat3()
  local C = A:matmul(B)
  local p = uop.compile(C)
  local outs, rep = p:run{validate = true, quiet = true}
  T.eq(#outs, 1)
  T.eq(outs[1]:op(), "BUFFER")
  T.ok(rep.ok, rep.text)
  T.eq(rep.mismatches, 0)
  T.ok(rep.text:find("9 elements match the reference", 1, true), rep.text)
  same_nested(C:tolist(), WANT, "realized C")
end)

T.test("a single element matches in the singular", function()
  local _, rep = uop.compile(Tensor.new({2}, "float32") * 3):run{validate = true, quiet = true}
  T.contains(rep.text, "(1,): 1 element matches the reference")
end)

T.test("stepping: seek, step, back, root, listing, diff, rules", function()
  local A, B = mat3()
  local k = uop.compile(A:matmul(B)):kernel(1)
  T.eq(k:root(0):op(), "SINK")
  k:seek(15)
  T.eq(k:pos(), 15)
  local at15 = k:root()
  k:back()
  T.eq(k:pos(), 14)
  k:step()
  T.eq(k:pos(), 15)
  T.eq(k:root(), at15, "the same node after back and step")
  local d = k:diff_text(14, 15)
  T.ok(d:find("int32", 1, true), "stage 15 lowers index to int32:\n" .. d)
  T.ok(not k:listing(15):find(" index ", 1, true), "no index dtype after stage 15")
  T.eq(k:root(21):op(), "LINEAR")
  T.raises("no stage 23", function() k:seek(23) end)
  T.raises("already at the start", function() k:seek(0); k:back() end)
end)

T.test("stages() gives 22 rows with nodes, rewrites and times", function()
  local A, B = mat3()
  local k = uop.compile(A:matmul(B)):kernel(1)
  local rows = k:stages{quiet = true}
  T.eq(#rows, 22)
  T.eq(rows[15].name, "lower index dtype")
  T.eq(rows[15].changed, true)
  T.ok(rows[21].nodes_after > 0)
  T.eq(rows[10].status, "written")
  T.eq(rows[12].status, "written")
  T.eq(rows[17].status, "n/a")
  -- a text object: it prints as the table of stages, and says what it is
  T.eq(rows.kind, "stages")
  for line in tostring(rows):gmatch("[^\n]+") do T.ok(#line <= 100, "the stage table fits 100 columns: " .. line) end
  T.ok(tostring(rows):find("* 17 n/a: the LLVM renderer has no pre-matcher", 1, true), "notes below the table")
  T.ok(tostring(rows):find("stages of r_3_3_3", 1, true) and tostring(rows):find("lower index dtype", 1, true),
       tostring(rows))
  local fired = k:rules(15, {quiet = true})
  local n = 0
  for _, c in pairs(fired) do if type(c) == "number" then n = n + c end end
  T.ok(n > 0, "rules fired in stage 15")
end)

T.test("opts: UPCAST by 3 changes the kernel and keeps the result exact", function()
  local A, B = mat3()
  local C = A:matmul(B)
  local p = uop.compile(C)
  local k = p:kernel(1)
  k:opts{{"UPCAST", 1, 3}}
  T.eq(#k:opts(), 1)
  T.ok(k:listing(7):find("UPCAST", 1, true), "stage 7 makes an UPCAST range")
  local _, rep = p:run{validate = true, quiet = true}
  T.ok(rep.ok, rep.text)
  T.raises("UPCAST", function() k:opts{{"UPCAST", 5, 3}} end)
  T.raises("unknown opt", function() k:opts{{"SIDEWAYS", 0, 2}} end)
end)

T.test("LLVM IR before and after optimisation, assembly, DOT", function()
  local A, B = mat3()
  local k = uop.compile(A:matmul(B)):kernel(1)
  -- inspection methods return text objects: print(k:llvm()) in a script shows what the REPL shows
  T.ok(tostring(k:llvm("before")):find("define", 1, true))
  T.ok(tostring(k:llvm("after")):find("define", 1, true))
  local both = k:llvm()
  T.eq(both.kind, "llvm")
  T.ok(both.text:find("LLVM IR as rendered", 1, true) and both.text:find("after default<O2>", 1, true))
  T.ok(#tostring(k:asm()) > 0)
  T.eq(k:asm().kind, "asm")
  T.ok(tostring(k:dot()):find("digraph", 1, true))
  T.eq(k:diff(14, 15).kind, "diff")
  T.eq(k:check(4).kind, "check")
  T.ok(tostring(k:check(4)):find("r_3_3_3 at stage 4 (initial symbolic): output0", 1, true))
end)

T.test("softmax is several kernels with tmp buffers and validates", function()
  local x = Tensor.new({{1, 2, 3, 4}, {2, 0, -1, 5}})
  local p = uop.compile(x:softmax(1))
  T.ok(#p:kernels() >= 2, "softmax needs more than one kernel")
  T.ok(p:text():find("tmp0", 1, true), p:text())
  local _, rep = p:run{validate = true, quiet = true}
  T.ok(rep.ok, rep.text)
end)

-- the REDUCEs of a kernel's root and the size of the buffer it stores to
local function reduces_and_store(k)
  local reduces, size = 0, nil
  for _, u in ipairs(k:root(0):toposort()) do
    if u:op() == "REDUCE" then reduces = reduces + 1 end
    if u:op() == "DEFINE_GLOBAL" and u:arg() == 0 then size = tonumber(tostring(u:dtype()):match("%((%d+)%)")) end
  end
  return reduces, size
end

T.test("a 0-d reduction read under a broadcast is reduced inside the loop that reads it, as tinygrad does", function()
  -- std's gradient: (x - mean) * (1 / (2 * std)) / 5, with the variance a 0-d
  -- sum; v0.12.0 gives it no buffer and sums it in the kernel of 6 elements
  local x = Tensor.new({{1.5, 2, 3}, {4, 5, 6}}, "float32")
  local p = uop.compile(x:std():gradient(x)[1], {select = false})
  T.eq(#p:kernels(), 4, "kernels")
  local reduces, size = reduces_and_store(p:kernel(2))
  T.eq(size, 6, "kernel 2 stores the 6 elements")
  T.eq(reduces, 1, "kernel 2 reduces the variance itself")
  local _, rep = p:run{validate = true, quiet = true}
  T.ok(rep.ok, rep.text)
  -- so x - x:mean() is one kernel, as tinygrad's schedule() gives, and a
  -- contiguous mean gets a kernel of its own
  local y = Tensor.new({{1, 2, 3, 4}, {5, 6, 7, 9}}, "float32")
  local centred = uop.compile(y - y:mean(), {select = false})
  T.eq(#centred:kernels(), 1, "x - x:mean(): kernels")
  local _, crep = centred:run{validate = true, quiet = true}
  T.ok(crep.ok, crep.text)
  T.eq(#uop.compile(y - y:mean():contiguous(), {select = false}):kernels(), 2, "with a contiguous mean: kernels")
end)

T.test("a node read by one consumer in its loop and by a sum two ops down gets a buffer", function()
  -- layernorm's gradient: the centred input's gradient is read by the output
  -- and, through a multiply, by a sum: v0.12.0's 6 kernels
  local x = Tensor.new({{1, 2, 4, 8}, {-1, 0, 3, 7}}, "float32")
  local t = (x:layernorm() * Tensor.arange(8):reshape(2, 4)):sum():gradient(x)[1]
  local p = uop.compile(t, {select = false})
  T.eq(#p:kernels(), 6, "kernels")
  local _, rep = p:run{validate = true, quiet = true}
  T.ok(rep.ok, rep.text)
end)

T.test("bad input gets clear errors", function()
  T.raises("a tensor, a UOp, or a list", function() uop.compile("x") end)
  T.raises("empty list", function() uop.compile({}) end)
  local A, B = mat3()
  local p = uop.compile(A + B)
  T.raises("no kernel 2", function() p:kernel(2) end)
end)

T.test("one program computes outputs of different shapes", function()
  local a = Tensor.new({{1, 2}, {3, 4}}, "float32")
  local p = uop.compile({a:sum(1), a * 2})
  T.eq(#p:kernels(), 2)
  local outs, rep = p:run{validate = true, quiet = true}
  T.eq(#outs, 2)
  T.ok(rep.ok, rep.text)
  local s = uop.buffer_values(outs[1])
  T.eq(s[1], 3.0)
  T.eq(s[2], 7.0)
end)

T.test("indices past the int32 range get int64 (IR only, nothing allocated)", function()
  -- 3e9 outputs: the store's loop runs past the int32 range (compiled, never run)
  local big = Tensor.zeros(3000000000) + 1
  local k = uop.compile(big, {opts = "none"}):kernel(1)
  local l15 = k:listing(15)
  T.ok(l15:find("RANGE%s+int64"), "the 3e9 loop counts in int64:\n" .. l15)
  local small = uop.compile(Tensor.zeros(1000) + 1, {opts = "none"}):kernel(1)
  T.ok(small:listing(15):find("RANGE%s+int32"), "a 1000 loop counts in int32")
  T.ok(not small:listing(15):find("int64", 1, true), "and nothing else is int64")
end)

T.test("time gives the best wall-clock ms of whole-program runs", function()
  local a = Tensor.new({1, 2, 3, 4}, "float32")
  local t = uop.compile(a * 2):time(2)
  T.ok(type(t) == "number" and t > 0 and t < 1000, "a small program runs in under a second: " .. tostring(t))
  T.raises("at least one run", function() uop.compile(a * 2):time(0) end)
end)

T.test("compile takes opts per kernel", function()
  local A = Tensor.new({{1, 2, 3}, {4, 5, 6}, {7, 8, 9}}, "float32")
  local p = uop.compile(A:matmul(A), {kernel_opts = {[1] = {{"UPCAST", 1, 3}}}})
  local k = p:kernel(1)
  T.eq(#k:opts(), 1)
  T.eq(k:opts()[1][1], "UPCAST")
  local _, rep = p:run{validate = true, quiet = true}
  T.ok(rep.ok, rep.text)
  T.raises("no kernel 2", function() uop.compile(A + 1, {kernel_opts = {[2] = {}}}) end)
  T.raises("unknown option", function() uop.compile(A + 1, {beem = 2}) end)
end)

T.test("the same tensor twice as outputs fills both", function()
  local v = Tensor.new({1, 2, 3}, "float32") + 1
  local outs, rep = uop.compile({v, v}):run{validate = true, quiet = true}
  T.ok(rep.ok, rep.text)
  T.eq(uop.buffer_values(outs[1])[3], 4.0)
  T.eq(uop.buffer_values(outs[2])[3], 4.0)
end)

T.test("THREAD splits a kernel over cores: core_id in stage 12, results exact", function()
  local A = Tensor.new({{1, 2, 3, 4}, {5, 6, 7, 8}, {9, 10, 11, 12}, {13, 14, 15, 16}}, "float32")
  local p = uop.compile(A:matmul(A), {kernel_opts = {[1] = {{"THREAD", 0, 2}, {"UPCAST", 1, 2}}}})
  local k = p:kernel(1)
  T.ok(k:listing(7):find("THREAD", 1, true), "stage 7 makes a THREAD range")
  T.ok(k:listing(12):find('SPECIAL%s+index%s+%(%%%d+%) arg="gidx0"'), "stage 12 makes it the core_id")
  T.ok(not k:listing(12):find("THREAD", 1, true), "no THREAD range is left as a loop")
  local outs, rep = p:run{validate = true, quiet = true}
  T.ok(rep.ok, rep.text)
  T.eq(uop.buffer_values(outs[1])[1], 90.0)
  T.eq(uop.buffer_values(outs[1])[16], 600.0)
  T.raises("already split over cores", function() k:opts{{"THREAD", 0, 2}, {"THREAD", 0, 2}} end)
  T.raises("does not divide", function() k:opts{{"THREAD", 0, 3}} end)
end)

T.test("errors name integers past int32 as given", function()
  local A = Tensor.new({1, 2, 3}, "float32")
  local p = uop.compile(A + 1)
  local k = p:kernel(1)
  T.raises("no stage 4294967299:", function() k:seek(2^32 + 3) end)
  T.raises("no stage 4294967299:", function() k:rules(2^32 + 3) end)
  T.raises("no kernel 8589934593:", function() p:kernel(2^33 + 1) end)
  T.raises("opt 1: amount 9999999999 is out of range (at most 2147483647)", function() k:opts{{"UPCAST", 0, 9999999999}} end)
  T.raises("unknown opt FOO (UPCAST, UNROLL, THREAD, LOCAL, GROUP, GROUPTOP, PADTO, SWAP or NOLOCALS)", function() k:opts{{"FOO", 0, 1}} end)
  T.raises("option atol: a number expected, got string", function() p:run{validate = true, atol = "x"} end)
end)

T.test("k:dot to an unwritable path says why", function()
  local k = uop.compile(Tensor.new({1, 2}, "float32") + 1):kernel(1)
  T.raises("cannot write /nonexistent-dir/k.dot: No such file or directory", function() k:dot("/nonexistent-dir/k.dot") end)
end)

T.test("kernel_opts of the wrong type say what was expected", function()
  local t = Tensor.new({1, 2, 3}, "float32") + 1
  T.raises("kernel_opts must be a table", function() uop.compile(t, {kernel_opts = 5}) end)
  T.raises("kernel_opts[1]: a list of opts expected, got number", function() uop.compile(t, {kernel_opts = {[1] = 7}}) end)
end)

T.test("check and bisect run a kernel at single stages against the reference", function()
  local A = Tensor.new({{1, 2, 3}, {4, 5, 6}, {7, 8, 9}}, "float32")
  local p = uop.compile(A:matmul(A))
  local k = p:kernel(1)
  local rep = k:check(4, {quiet = true})
  T.ok(rep.ok, rep.text)
  T.eq(rep.stage, 4)
  for n = 0, 22 do
    local r = k:check(n, {quiet = true})
    T.ok(r.ok, "stage " .. n .. ": " .. tostring(r.text))
  end
  -- bisection checks the last point first: a right final program needs no other
  local first, culprit, reports = k:bisect{quiet = true}
  T.eq(first, nil)
  T.eq(culprit, nil)
  T.ok(reports[23].ok and reports[1] == nil and reports[12] == nil, "point 22 alone checked")
  T.contains(tostring(reports), "; 1 of 23 points checked")
  -- all = true checks every point in order
  first, culprit, reports = k:bisect{quiet = true, all = true}
  T.eq(first, nil)
  for n = 0, 22 do T.ok(reports[n + 1] and reports[n + 1].ok, "stage " .. n .. " checked and right") end
end)

T.test("rewrites lists every rewrite of a stage in order, with its rule", function()
  local A = Tensor.new({{1, 2, 3}, {4, 5, 6}, {7, 8, 9}}, "float32")
  local k = uop.compile(A:matmul(A)):kernel(1)
  local rw = k:rewrites(15, {quiet = true})
  T.eq(#rw, k:stages{quiet = true}[15].rewrites)
  T.eq(rw[1].rule, "lower_const")
  T.ok(rw[1].where:find("index_dtype.c:", 1, true), rw[1].where)
  T.eq(rw[1].before:dtype(), uop.dtypes.index)
  T.eq(rw[1].after:op(), "CAST")
  T.raises("nothing was rewritten", function() k:rewrites(0) end)
end)

T.test("compile times and the clock", function()
  local A = Tensor.new({1, 2, 3, 4}, "float32")
  local k = uop.compile(A * 2):kernel(1)
  local t0 = uop.clock()
  local total, render, opt, jit = k:compile_ms()
  local t1 = uop.clock()
  T.ok(total > 0 and render >= 0 and opt >= 0 and jit >= 0, "times are measured")
  T.ok(math.abs(total - (render + opt + jit)) < 1e-6 * math.max(1, total) + 1e-9, "total is the sum of the parts")
  T.ok(t1 >= t0 and t1 - t0 >= total * 0.5, "the clock saw the compile happen")
end)
