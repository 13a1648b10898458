-- test_heuristic_opts.lua - k:heuristic() and uop.compile's {opts = "heuristic"}
-- choose the opts tinygrad v0.12.0's hand_coded_optimizations chooses on the
-- CPU. The expected opts are in tests/golden/tinygrad_opts.txt, captured by
-- scripts/capture_tinygrad_opts.py from tinygrad itself: once with its LLVM
-- renderer (no threads: k:heuristic(0)) and once with its C renderer and
-- CPU_COUNT=8 (k:heuristic(8)). Axis numbers are the same in both: on the
-- CPU all output ranges are LOOP ranges, which tinygrad puts first, so its
-- UPCAST/THREAD axis (a position among all ranges) is the position among
-- the output ranges that stage 7 counts; UNROLL counts reduce ranges in both.
local T = ...
local Tensor = uop.Tensor

local CASES = T.load("heuristic_cases.lua")
local ORDER = {"matmul512", "matmul64", "conv2d", "softmax", "sum1m", "add1m", "small", "mean", "cumsum",
               "pad_flip", "conv_small", "conv_pad_small", "matmul16", "sum_axis", "max_axis0", "permute",
               "softmax_small", "exp_sum", "expand_add", "stack", "cumsum_split"}

-- Known differences (none now), each checked so that it is noticed when it
-- goes away: name = {kernels = uopdb's kernel count, opts = {[threads] =
-- the opts compared instead}, why = "..."}.
local KNOWN = {}

-- golden[threads][case][kernel] = {{op, axis, amount}, ...}; names[threads][case][kernel]
-- = the kernel's name with those opts, without the n1, n2, ... tinygrad appends to a name
-- the process gave before; RAW_NAMES the same with them, as tinygrad printed them
local NAMES, RAW_NAMES = {}, {}
local function read_golden()
  local golden = {}
  local f = assert(io.open("tests/golden/tinygrad_opts.txt"))
  for line in f:lines() do
    if not line:match("^#") then
      local th, name, ki, text, kname = line:match("^(%d+) (%S+) (%d+) (%S+) (%S+)$")
      assert(th, "bad golden line: " .. line)
      local n = tonumber(th)
      NAMES[n] = NAMES[n] or {}
      NAMES[n][name] = NAMES[n][name] or {}
      NAMES[n][name][tonumber(ki) + 1] = kname:gsub("n%d+$", "")
      RAW_NAMES[name] = RAW_NAMES[name] or {}
      RAW_NAMES[name][n] = RAW_NAMES[name][n] or {}
      RAW_NAMES[name][n][tonumber(ki) + 1] = kname
      local opts = {}
      if text ~= "-" then
        for op, axis, amount in text:gmatch("(%u+):(%d+):(%d+)") do
          opts[#opts + 1] = {op, tonumber(axis), tonumber(amount)}
        end
      end
      th = tonumber(th)
      golden[th] = golden[th] or {}
      golden[th][name] = golden[th][name] or {}
      golden[th][name][tonumber(ki) + 1] = opts
    end
  end
  f:close()
  return golden
end

local show = T.load("tinygrad_cases.lua").show_opts

local GOLDEN = read_golden()

for _, threads in ipairs{0, 8} do
  for _, name in ipairs(ORDER) do
    T.test(string.format("heuristic opts of %s with %d threads are tinygrad's", name, threads), function()
      local want = GOLDEN[threads][name]
      T.ok(want and #want > 0, "golden kernels for " .. name)
      local p = uop.compile(CASES[name](), {select = false})
      local known = KNOWN[name]
      if known then
        -- the difference is still there (else this entry must go)
        T.ok(#p:kernels() == known.kernels and #want ~= known.kernels,
             string.format("known difference for %s (%s): uopdb %d kernel(s), tinygrad %d",
                           name, known.why, #p:kernels(), #want))
        print(string.format("  known difference %s: %s; tinygrad chose %s", name, known.why,
                            (function() local t = {} for i, w in ipairs(want) do t[i] = show(w) end
                              return table.concat(t, " | ") end)()))
        want = {known.opts[threads]}
      end
      T.eq(#p:kernels(), #want, name .. ": kernels")
      for i = 1, #want do
        local text, opts = p:kernel(i):heuristic(threads)
        T.eq(show(opts), show(want[i]), string.format("%s kernel %d (%d threads):\n%s", name, i, threads,
                                                       tostring(text)))
        -- with tinygrad's opts the kernel has tinygrad's name
        local k = p:kernel(i)
        k:opts(want[i])
        T.eq(select(2, k:name()), NAMES[threads][name][i], string.format("%s kernel %d's name with its opts", name, i))
      end
    end)
  end
end

T.test("the name with the opts heads k:stages(), ends k:opts()'s text and names the LLVM function", function()
  local p = uop.compile(CASES.matmul512(), {select = false, kernel_opts = {GOLDEN[0].matmul512[1]}})
  local k = p:kernel(1)
  local want = NAMES[0].matmul512[1]
  T.eq(want, "r_128_128_4_4_128_4")
  T.eq(k:name(), "r_512_512_512")
  T.contains(tostring(k:stages()), "stages of r_512_512_512 (r_128_128_4_4_128_4 with its opts)")
  T.contains(tostring(select(2, k:opts())), "the kernel's name with them: r_128_128_4_4_128_4\n")
  T.contains(tostring(k:llvm("before")), "define void @r_128_128_4_4_128_4(")
  -- other opts, another name: the one kept with the old opts is forgotten
  k:opts{{"UPCAST", 0, 4}}
  T.eq(select(2, k:name()), "r_128_512_4_512")
  T.contains(tostring(k:llvm("before")), "define void @r_128_512_4_512(")
  -- no opts: the name as scheduled, and the table's head says nothing more
  k:opts{}
  T.eq(select(2, k:name()), "r_512_512_512")
  T.contains(tostring(k:stages()), "stages of r_512_512_512\n")
end)

T.test("p:kernel(name) finds a kernel by its name as scheduled or as tinygrad names it with its opts; p:names() and p:text() show both", function()
  -- softmax: tinygrad names its two reductions r_64_1024_4 and r_64_1024_4n1
  local p = uop.compile(CASES.softmax(), {select = false, kernel_opts = GOLDEN[0].softmax})
  T.eq(table.concat(RAW_NAMES.softmax[0], " "), "r_64_1024_4 r_64_1024_4n1 E_64_1024_4")
  for i, name in ipairs(RAW_NAMES.softmax[0]) do
    T.eq(p:kernel(name), p:kernel(i), name)
    T.eq(p:kernel((p:kernel(i):name())), p:kernel(i), "kernel " .. i .. " by its name as scheduled")
  end
  -- p:names(): both names of each kernel, numbered as tinygrad printed them
  local names = p:names()
  T.eq(#names, 3)
  for i, n in ipairs(names) do
    T.eq(n.with_opts, RAW_NAMES.softmax[0][i], "kernel " .. i .. "'s name with its opts")
    T.eq(n.scheduled, (p:kernel(i):name()), "kernel " .. i .. "'s name as scheduled")
  end
  T.raises("2 kernels are named r_64_1024_4 with their opts, so none is r_64_1024_4n2",
           function() p:kernel("r_64_1024_4n2") end)
  T.raises("no kernel named 'r_8_8' in this program", function() p:kernel("r_8_8") end)
  local text = p:text()
  T.contains(text, "(tmp0, input0)  # r_64_1024_4 with its opts\n")
  T.contains(text, "(tmp1, input0, tmp0)  # r_64_1024_4n1 with its opts\n")
  T.contains(text, "  # E_64_1024_4 with its opts\n")
  -- a kernel whose opts leave its name as scheduled says nothing more (the
  -- second reduction is r_64_4096n1 both ways)
  local q = uop.compile(CASES.softmax(), {select = false, opts = "none"})
  T.ok(not q:text():find("with its opts", 1, true), q:text())
end)

T.test("k:heuristic gives a reason line per decision", function()
  local p = uop.compile(CASES.matmul64(), {opts = "none", select = false})
  local text, opts = p:kernel(1):heuristic(8)
  text = tostring(text)
  T.contains(text, 'opts {{"UPCAST", 1, 4}, {"UPCAST", 0, 4}, {"UNROLL", 0, 4}, {"THREAD", 0, 2}}')
  T.contains(text, "GROUPTOP: skipped")
  T.contains(text, "UPCAST axis 1 by 4: buffer 1 has stride 0")
  T.contains(text, "UPCAST axis 0 by 4: buffer 2 has stride 0")
  T.contains(text, "UNROLL axis 0 by 4")
  T.contains(text, "THREAD axis 0 by 2")
  T.eq(#opts, 4)
  -- nothing was applied
  T.eq(#p:kernel(1):opts(), 0)
  T.raises("heuristic: threads", function() p:kernel(1):heuristic(-1) end)
end)

T.test("opts = \"heuristic\" applies them to every kernel and the kernels still validate", function()
  for _, name in ipairs(ORDER) do
    local p = uop.compile(CASES[name](), {opts = "heuristic", select = false})
    for i = 1, #p:kernels() do
      local _, want = p:kernel(i):heuristic()
      T.eq(show(p:kernel(i):opts()), show(want), name .. " kernel " .. i)
    end
    local _, rep = p:run{validate = true, quiet = true}
    T.ok(rep.ok, name .. ": " .. rep.text)
    T.eq(rep.mismatches, 0, name)
  end
end)

T.test("opts = \"heuristic\" is the default; opts = \"none\" or k:opts{} turns them off; kernel_opts replaces them; bad values fail", function()
  -- small (4x4 * 2 + 1): 16 elements, nothing broadcast or reduced, so only
  -- "the last output axis by 4" applies (tinygrad: UPCAST:0:4, tests/golden/tinygrad_opts.txt)
  local p = uop.compile(CASES.small(), {select = false})
  local k = p:kernel(1)
  local opts, why = k:opts()
  T.eq(show(opts), "UPCAST:0:4")
  T.contains(tostring(why), "UPCAST axis 0 by 4: nothing is upcast yet")
  T.contains(tostring(why), "GROUPTOP: skipped")
  local _, rep = p:run{validate = true, quiet = true}
  T.ok(rep.ok, rep.text)
  -- k:opts{} turns them off for that kernel; the reasons go with them
  k:opts{}
  opts, why = k:opts()
  T.eq(#opts, 0)
  T.contains(tostring(why), "no opts")
  T.eq(#k:listing(7):gsub("[^\n]", ""), #k:listing(6):gsub("[^\n]", ""))
  -- hand opts replace them and say so
  k:opts{{"UPCAST", 0, 2}}
  opts, why = k:opts()
  T.eq(show(opts), "UPCAST:0:2")
  T.contains(tostring(why), "given by hand")
  p = uop.compile(CASES.small(), {opts = "none", select = false})
  T.eq(#p:kernel(1):opts(), 0)
  p = uop.compile(CASES.small(), {kernel_opts = {[1] = {{"UPCAST", 0, 2}}}, select = false})
  T.eq(show(p:kernel(1):opts()), "UPCAST:0:2")
  p = uop.compile(CASES.small(), {opts = "heuristic", kernel_opts = {[1] = {{"UPCAST", 0, 2}}}, select = false})
  T.eq(show(p:kernel(1):opts()), "UPCAST:0:2")
  T.raises('opts must be "heuristic" or "none"', function() uop.compile(CASES.small(), {opts = "beam"}) end)
  -- no options at all (this one selects the kernel)
  T.eq(show(uop.compile(CASES.small()):kernel(1):opts()), "UPCAST:0:4")
end)

T.test("a kernel AST given to uop.compile gets the heuristic opts by default too", function()
  local p = uop.compile(CASES.matmul64(), {opts = "none", select = false})
  local _, want = p:kernel(1):heuristic()
  local q = uop.compile(p:kernel(1):root(0), {select = false})
  T.eq(show(q:kernel(1):opts()), show(want))
  T.eq(show(uop.compile(p:kernel(1):root(0)):kernel(1):opts()), show(want))
  q = uop.compile(p:kernel(1):root(0), {opts = "none", select = false})
  T.eq(#q:kernel(1):opts(), 0)
end)

T.test("a kernel the heuristic cannot handle compiles without opts, and k:opts() says why", function()
  -- 71 buffers read by one kernel: more than the heuristic looks at
  local acc = Tensor.rand(4):realize()
  for _ = 1, 70 do acc = acc + Tensor.rand(4):realize() end
  local p = uop.compile(acc, {select = false})
  local opts, why = p:kernel(1):opts()
  T.eq(#opts, 0)
  T.contains(tostring(why), "no opts: the heuristic failed: kernel too large to look at")
  local _, rep = p:run{validate = true, quiet = true}
  T.ok(rep.ok, rep.text)
end)

T.test("a range split in two keeps its own identity: a padded axis upcasts as in tinygrad", function()
  -- the padded rows of a 5x6 -> 7x6 pad are stored by a second range of the
  -- same axis, whose ids share the first; tinygrad v0.12.0 chooses UPCAST:1:4
  local v = Tensor.new({{1, 2, 3, 4, 5, 6}, {1, 2, 3, 4, 5, 6}, {1, 2, 3, 4, 5, 6}, {1, 2, 3, 4, 5, 6},
                        {1, 2, 3, 4, 5, 6}}, "float32")
  local p = uop.compile(v:pad{{0, 2}, {0, 0}}:div(0.5):gt(1.5), {select = false})
  T.eq(show(p:kernel(1):opts()), "UPCAST:1:4")
  local _, rep = p:run{validate = true, quiet = true}
  T.ok(rep.ok, rep.text)
end)
