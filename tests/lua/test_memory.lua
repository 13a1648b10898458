-- test_memory.lua - bounded memory: the UOp context compacts from what Lua
-- still holds (uop.compact() and by itself at safe points), the host data of
-- buffers goes with their nodes, and what is still held survives intact.
-- Memory is read from /proc/self/statm (resident pages) and uop.memory();
-- the bounds are generous fixed numbers, far below what the same loops cost
-- when nothing is freed.
local T = ...
local d = uop.dtypes

-- resident MB, or nil where it says little: under AddressSanitizer, whose
-- quarantine keeps freed memory resident
local function rss_mb()
  if uop.memory().sanitizer then return nil end
  local f = io.open("/proc/self/statm")
  if not f then return nil end
  local _, resident = f:read("n", "n")
  f:close()
  return resident * 4096 / 2^20
end

local function flat_eq(got, want, what)
  T.eq(#got, #want, (what or "list") .. " length")
  for i = 1, #want do T.eq(got[i], want[i], (what or "list") .. " element " .. i) end
end

-- garbage: n distinct nodes (and n distinct constants) no one keeps
local function garbage(n)
  local x = uop.var("garbage", 0, 7)
  for i = 1, n do
    local _ = x * 3 + i
  end
end

T.test("uop.compact frees dropped UOps and keeps a UOp held in a variable intact", function()
  local kept = (uop.var("kept", 0, 10) * 3 + 1) // 2
  local id, text = kept:id(), tostring(kept)
  local listing = kept:listing()
  uop.compact()
  local before = uop.memory().nodes
  garbage(20000)
  T.ok(uop.memory().nodes >= before + 20000, "the garbage is there before the compaction")
  local freed = uop.compact()
  T.ok(freed.nodes >= 20000, "freed " .. freed.nodes .. " nodes")
  T.ok(uop.memory().nodes <= before, "live nodes back to " .. before .. ", got " .. uop.memory().nodes)
  T.eq(kept:id(), id)
  T.eq(tostring(kept), text)
  T.eq(kept:listing(), listing)
  T.ok(rawequal(uop.node(id), kept), "uop.node(id) is the same value")
  -- hash-consing still finds the kept nodes: building them again gives them back
  T.ok(rawequal((uop.var("kept", 0, 10) * 3 + 1) // 2, kept), "rebuilt to the same node")
  T.eq(kept:vmin(), 0); T.eq(kept:vmax(), 15)
  T.eq(kept:eval{kept = 5}, 8)
end)

T.test("ids are not reused: a node rebuilt after its compaction gets a new id", function()
  local x = uop.var("reuse", 0, 3)
  local old = (x + 12345):id()
  local ids = uop.memory().ids
  uop.compact()
  T.eq(uop.node(old), nil)
  local again = x + 12345
  T.ok(again:id() >= ids, "new id " .. again:id() .. " is above every id handed out before (" .. ids .. ")")
  T.eq(again:src()[2]:arg(), 12345)
end)

T.test("building and dropping 1.5M UOps stays bounded (compaction by itself)", function()
  uop.compact()
  local m0, rss0 = uop.memory(), rss_mb()
  garbage(1500000)
  local m = uop.memory()
  T.ok(m.compactions >= m0.compactions + 2, "compactions: " .. m.compactions - m0.compactions)
  -- an ADD and a CONST each, less constants other tests still hold
  T.ok(m.ids - m0.ids >= 2900000, "about 3M ids handed out: " .. (m.ids - m0.ids))
  -- the threshold is 2^18 live nodes, doubled after what survives
  T.ok(m.nodes < 600000, "live nodes " .. m.nodes)
  -- the context keeps what it once reserved (freed blocks are reused): its growth
  T.ok(m.context_bytes - m0.context_bytes < 64 * 2^20, "context grew by " .. (m.context_bytes - m0.context_bytes))
  if rss0 then T.ok(rss_mb() - rss0 < 150, "resident memory grew by " .. (rss_mb() - rss0) .. " MB") end
end)

T.test("host data of dropped buffers and of dropped run outputs is freed", function()
  uop.compact()
  local rss0 = rss_mb()
  local kept_in = Tensor.new({1, 2, 3}, "float32")
  local p = uop.compile(Tensor.empty(1000, 1000) + 1, {select = false, opts = "none"})
  local kept_out = p:run()[1]
  for _ = 1, 200 do
    local out = p:run()[1]  -- 4 MB each, dropped
    T.eq(out:op(), "BUFFER")
  end
  for _ = 1, 50 do
    local _ = uop.buffer(d.float32, 1000000)  -- 4 MB each, dropped
  end
  local m = uop.memory()
  T.ok(m.bytes_freed >= 100 * 4000000, "freed " .. m.bytes_freed .. " bytes of host data")
  T.ok(m.buffer_bytes < 200 * 2^20, "host data held: " .. m.buffer_bytes)
  if rss0 then T.ok(rss_mb() - rss0 < 300, "resident memory grew by " .. (rss_mb() - rss0) .. " MB") end
  -- what is still held keeps its data
  uop.compact()
  local vals = uop.buffer_values(kept_out)
  T.eq(#vals, 1000000); T.eq(vals[1], 1.0); T.eq(vals[1000000], 1.0)
  flat_eq(kept_in:tolist(), {1, 2, 3}, "kept tensor")
  flat_eq((kept_in * 2):tolist(), {2, 4, 6}, "computed from the kept tensor")
end)

T.test("a program survives a compaction: its kernel's points and its runs are the same", function()
  local A = Tensor.new({{1, 2}, {3, 4}}, "float32")
  local p = uop.compile(A:matmul(A), {select = false})
  local k = p:kernel(1)
  k:seek(22)
  local at = {}
  for n = 0, 22 do at[n] = k:listing(n) end
  local out1 = uop.buffer_values(p:run()[1])
  garbage(30000)
  local before = uop.memory().nodes
  uop.compact()
  T.ok(uop.memory().nodes < before, "garbage freed around the program")
  T.eq(k:pos(), 22)
  for n = 0, 22 do T.eq(k:listing(n), at[n], "listing of point " .. n) end
  T.ok(k:root() ~= nil, "the current point's root")
  flat_eq(uop.buffer_values(p:run()[1]), out1, "run after the compaction")
  flat_eq(out1, {7, 10, 15, 22}, "run before")
  k:seek(3)
  T.eq(k:pos(), 3)
  T.eq(k:listing(), at[3])
  T.contains(tostring(k:stages()), "initial symbolic", "the stage table")
  -- dropping the program lets its nodes go
  local live = uop.memory().nodes
  p, k = nil, nil
  uop.compact()
  T.ok(uop.memory().nodes < live, "the program's nodes freed: " .. live .. " -> " .. uop.memory().nodes)
  local again = A:matmul(A):tolist()
  flat_eq(again[1], {7, 10}); flat_eq(again[2], {15, 22})
end)

T.test("10,000 small programs compiled and dropped stay under a fixed memory", function()
  uop.compact()
  local rss0 = rss_mb()
  local m0 = uop.memory()
  for i = 1, 10000 do
    -- distinct constants: every program makes nodes of its own
    local a = Tensor.new({1, 2, 3, 4}, "float32")
    local p = uop.compile((a * (i % 997) + i):sum(), {select = false})
    if i % 10 == 0 then p:kernel(1):seek(22) end
    if i % 250 == 0 then T.eq(uop.buffer_values(p:run()[1])[1], 10 * (i % 997) + 4 * i) end
  end
  local m = uop.memory()
  T.ok(m.compactions > m0.compactions, "compacted by itself")
  T.ok(m.ids - m0.ids > 350000, "over 350k nodes made: " .. (m.ids - m0.ids))
  -- compactions start at 2^18 live nodes; what survives them is small
  T.ok(m.nodes < 300000, "live nodes " .. m.nodes)
  if rss0 then T.ok(rss_mb() - rss0 < 150, "resident memory grew by " .. (rss_mb() - rss0) .. " MB") end
end)

T.test("no compaction while a rewrite runs a Lua function", function()
  local x = uop.var("busy", 0, 9)
  local rules = uop.rules{{name = "compact_inside", pattern = "(ADD a b)", rewrite = function(m) uop.compact() end}}
  T.raises("uop.compact: not possible while a rewrite", function() uop.rewrite(x + 1, rules) end)
  -- building nodes inside a rule function is fine, and what it returns is used
  local made = uop.rules{{name = "build_inside", pattern = "(ADD a b)", rewrite = function(m)
    garbage(100)
    return m.a * 2
  end}}
  local r = uop.rewrite(x + 1, made)
  T.eq(tostring(r), tostring(x * 2))
end)

T.test("no compaction inside a finalizer", function()
  finalizer_message = nil
  setmetatable({}, {__gc = function()
    local ok, msg = pcall(uop.compact)
    finalizer_message = ok and "compacted" or msg
  end})
  collectgarbage()
  collectgarbage()
  T.contains(finalizer_message, "uop.compact: not possible while a rewrite, breakpoint or finalizer is running")
  finalizer_message = nil
end)
