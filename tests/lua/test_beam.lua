-- test_beam.lua - k:beam(N) and uop.compile's {beam = N}: the opts found are
-- from tinygrad v0.12.0's action space and stage 7 accepts them, the kernel
-- with them gives exactly the product plain Lua loops compute, the reason
-- k:opts() gives is the search, a second search is answered by the disk
-- cache without timing anything, a corrupt cache entry is ignored, a budget
-- stops the search early, and bad arguments are one-line errors.
local T = ...
local Tensor = uop.Tensor

-- a cache directory of the test's own, removed at the end of the file
local cache_dir = os.tmpname()
os.remove(cache_dir)
cache_dir = cache_dir .. "_beam"

-- the v0.12.0 actions a CPU search may use: op -> {amounts, number of axes}
local ACTIONS = {
  UPCAST = {amounts = {0, 2, 3, 4, 5, 7}, axes = 8},
  UNROLL = {amounts = {0, 4, 7}, axes = 5},
  THREAD = {amounts = {2, 3, 4, 5, 8, 12, 16, 24, 32, 64}, axes = 3},
}
local function is_action(o)
  local a = ACTIONS[o[1]]
  if not a or o[2] < 0 or o[2] >= a.axes then return false end
  for _, n in ipairs(a.amounts) do if n == o[3] then return true end end
  return false
end

-- small integer-valued matrices, so every sum is exact in float32
local function matrix(n, m, seed)
  local rows = {}
  for i = 1, n do
    rows[i] = {}
    for j = 1, m do rows[i][j] = ((i * 7 + j * 3 + seed) % 11) - 5 end
  end
  return rows
end

local function lua_matmul(a, b)
  local c = {}
  for i = 1, #a do
    c[i] = {}
    for j = 1, #b[1] do
      local s = 0
      for k = 1, #b do s = s + a[i][k] * b[k][j] end
      c[i][j] = s
    end
  end
  return c
end

local function same_opts(a, b)
  if #a ~= #b then return false end
  for i = 1, #a do
    for j = 1, 3 do if a[i][j] ~= b[i][j] then return false end end
  end
  return true
end

local function cache_files()
  local files = {}
  local ls = io.popen('ls "' .. cache_dir .. '" 2>/dev/null')
  for name in ls:lines() do files[#files + 1] = cache_dir .. "/" .. name end
  ls:close()
  return files
end

T.test("k:beam finds opts of the action space that stage 7 accepts, and the kernel stays exact", function()
  local a, b = matrix(12, 8, 1), matrix(8, 16, 2)
  local C = Tensor.new(a, "float32"):matmul(Tensor.new(b, "float32"))
  local p = uop.compile(C)
  local k = p:kernel(1)
  local r = k:beam(2, {cache = false})
  T.eq(r.kind, "beam")
  T.ok(r.timed > 0 and r.timed <= r.candidates, "candidates were timed")
  T.ok(r.rounds >= 1, "at least one round")
  T.ok(r.ms > 0 and r.ms < math.huge, "the best time is a time")
  T.ok(r.before_ms and r.before_ms > 0, "the opts before were timed")
  T.eq(r.cache_hit, false)
  T.ok(#r.opts >= 1, "some opt helps a 12x16x8 matmul")
  for _, o in ipairs(r.opts) do T.ok(is_action(o), o[1] .. " " .. o[2] .. " " .. o[3] .. " is an action") end
  T.contains(tostring(r), "beam 2 r_12_16_8: ")
  -- the kernel has them now, and says why
  local opts, why = k:opts()
  T.ok(same_opts(opts, r.opts), "k:opts() gives the opts found")
  T.contains(tostring(why), "beam 2: ")
  T.ok(k:seek(22), "stage 7 accepts them and the kernel compiles")
  local _, rep = p:run{validate = true, quiet = true}
  T.ok(rep.ok, rep.text)
  local want = lua_matmul(a, b)
  local got = C:tolist()
  for i = 1, #want do
    for j = 1, #want[1] do T.eq(got[i][j], want[i][j], "C[" .. i .. "][" .. j .. "]") end
  end
end)

T.test("uop.compile(t, {beam = N}) searches every kernel", function()
  local x = Tensor.new(matrix(4, 32, 3), "float32")
  local p = uop.compile(x:softmax(1), {beam = 1, beam_cache = false, beam_budget = 20})
  T.ok(#p:kernels() >= 2, "softmax has several kernels")
  for i, k in ipairs(p:kernels()) do
    local _, why = k:opts()
    T.contains(tostring(why), "beam 1: ", "kernel " .. i)
  end
  local _, rep = p:run{validate = true, quiet = true}
  T.ok(rep.ok, rep.text)
  -- kernel_opts given by hand are kept
  local q = uop.compile(x:softmax(1), {beam = 1, beam_cache = false, kernel_opts = {[1] = {}}})
  local opts1, why1 = q:kernel(1):opts()
  T.eq(#opts1, 0)
  T.contains(tostring(why1), "no opts")
end)

T.test("a second search of the same kernel comes from the disk cache, timing nothing", function()
  local function kernel()
    local A = Tensor.new(matrix(8, 8, 4), "float32")
    return uop.compile(A:matmul(A)):kernel(1)
  end
  local first = kernel():beam(1, {cache = cache_dir})
  T.eq(first.cache_hit, false)
  T.eq(first.cache_written, true)
  T.ok(first.timed > 0)
  T.eq(#cache_files(), 1)
  -- the same kernel built again (other node ids), in another program
  local k = kernel()
  local second = k:beam(1, {cache = cache_dir})
  T.eq(second.cache_hit, true)
  T.eq(second.timed, 0)
  T.eq(second.candidates, 0)
  T.ok(same_opts(second.opts, first.opts), "the cached opts are the ones found")
  T.contains(tostring(second), "from the cache")
  local _, why = k:opts()
  T.contains(tostring(why), "(from the cache)")
  -- another width is another search
  local other = kernel():beam(2, {cache = cache_dir})
  T.eq(other.cache_hit, false)
  T.eq(#cache_files(), 2)
end)

T.test("a corrupt or unreadable cache entry is ignored and rewritten", function()
  local function kernel()
    local A = Tensor.new(matrix(8, 8, 5), "float32")
    return uop.compile(A:matmul(A) + 1):kernel(1)
  end
  local dir = cache_dir .. "/corrupt"
  local first = kernel():beam(1, {cache = dir})
  T.eq(first.cache_written, true)
  local ls = io.popen('ls "' .. dir .. '"')
  local file = dir .. "/" .. ls:read("l")
  ls:close()
  local f = io.open(file, "rb")
  local good = f:read("a")
  f:close()
  local bad_entries = {
    "garbage\n\0\1\2",
    good:gsub("end\n$", ""),                         -- cut short
    good:gsub("opt (%u+) (%d+)", "opt %1 -1%2", 1),  -- a negative axis
    good:gsub("key %x+", "key 0123"),                -- another key
    good:gsub("opt UPCAST", "opt LOCAL"),            -- an opt the CPU has not
    "",
  }
  for i, text in ipairs(bad_entries) do
    f = io.open(file, "wb")
    f:write(text)
    f:close()
    local r = kernel():beam(1, {cache = dir})
    if text ~= good then
      T.eq(r.cache_hit, false, "entry " .. i)
      T.ok(r.timed > 0, "entry " .. i .. " searched again")
      T.eq(r.cache_written, true, "entry " .. i .. " rewritten")
    end
  end
  -- a directory where the entry should be: unreadable, and not writable either
  os.remove(file)
  os.execute('mkdir -p "' .. file .. '"')
  local r = kernel():beam(1, {cache = dir})
  T.eq(r.cache_hit, false)
  T.eq(r.cache_written, false)
  T.contains(tostring(r), "cache: not written")
end)

T.test("a budget stops the search early, keeping the best found", function()
  local A = Tensor.new(matrix(32, 32, 6), "float32")
  local full = uop.compile(A:matmul(A)):kernel(1):beam(2, {cache = false})
  T.eq(full.budget_spent, false)
  local k = uop.compile(A:matmul(A)):kernel(1)
  local r = k:beam(2, {cache = cache_dir, budget = 0.05})
  T.eq(r.budget_spent, true)
  T.ok(r.timed < full.timed, string.format("%d candidates timed within the budget, %d without", r.timed, full.timed))
  T.eq(r.cache_written, false)
  T.contains(tostring(r), "budget spent")
  local _, rep = k:program():run{validate = true, quiet = true}
  T.ok(rep.ok, rep.text)
end)

T.test("bad arguments are one-line errors", function()
  local A = Tensor.new(matrix(4, 4, 7), "float32")
  local k = uop.compile(A:matmul(A)):kernel(1)
  local function one_line(want, fn)
    T.raises(want, fn)
    local msg = T.err(fn)
    T.ok(not msg:find("\n"), "one line: " .. msg)
  end
  one_line("beam: the beam width must be an integer from 1 to 64, got 0", function() k:beam(0) end)
  one_line("beam: the beam width must be an integer from 1 to 64, got x", function() k:beam("x") end)
  one_line("beam: the beam width must be an integer from 1 to 64, got nothing", function() k:beam() end)
  one_line("beam: the beam width must be an integer from 1 to 64, got 2.5", function() k:beam(2.5) end)
  one_line("beam: the budget must be a number of seconds above 0, got -1", function() k:beam(2, {budget = -1}) end)
  one_line("beam: unknown option 'bogus'", function() k:beam(2, {bogus = 1}) end)
  one_line("beam: cache must be true, false or a directory name", function() k:beam(2, {cache = 3}) end)
  one_line("uop.compile: beam: the beam width must be an integer from 1 to 64, got 65",
           function() uop.compile(A + 1, {beam = 65}) end)
  one_line("uop.compile: beam_budget, beam_cache and beam_progress need beam = N",
           function() uop.compile(A + 1, {beam_budget = 1}) end)
  -- the gpu target's kernels have no host code to time
  one_line("beam: the gpu target's kernels run in the emulator, which cannot time candidates",
           function() uop.compile(A + 1, {target = "gpu"}):kernel(1):beam(2) end)
  one_line("uop.compile: beam, kernel 1", function() uop.compile(A + 1, {target = "gpu", beam = 2}) end)
end)

os.execute('rm -rf "' .. cache_dir .. '"')
