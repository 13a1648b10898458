-- api_batch.lua - one batch of the Lua API fuzzer, run by fuzz_api.lua in a
-- process of its own:
--   uopdb api_batch.lua ROOT SEED CALLS LOG FINDINGS [plant]
-- Finds every function of uop, Tensor (functions, methods, operators), UOps
-- and every uopdb metatable (programs, kernels, rule sets, dtypes...: their
-- methods and metamethods, so new ones are covered without a list), then
-- makes CALLS random calls, seeded by SEED, with arguments from
-- api_values.lua; results join the pool the next calls take arguments from.
-- Each statement is appended to LOG before it runs (so a crash leaves the
-- call that crashed as the last line), as "n TAB function TAB arg TAB ...";
-- a finding (api_prelude.lua's judge) is appended to FINDINGS as
-- "n TAB function TAB why TAB message".  A call that needs more Lua
-- instructions than the budget is stopped and counted, not judged.
local root, seed, calls, log_path, findings_path = arg[1], tonumber(arg[2]), tonumber(arg[3]), arg[4], arg[5]
-- "plant" (the fuzzer's self-check): one more target, PLANTED (api_prelude.lua),
-- with a bug to find
local plant = arg[6] == "plant"
local fuzz_dir = root .. "/tests/fuzz"
dofile(fuzz_dir .. "/api_prelude.lua")
local V = dofile(fuzz_dir .. "/api_values.lua")

-- a small deterministic generator (xorshift64*), the same on every machine
local state = (seed * 2654435761 + 88172645463325252) & 0x7fffffffffffffff
if state == 0 then state = 1 end
local function rng(n)
  state = state ~ (state << 13)
  state = state ~ (state >> 7)
  state = state ~ (state << 17)
  return ((state >> 1) % n) + 1
end

-- strings and option names uopdb's own sources use: quoted words of the Lua
-- front end, fields read from option tables in Lua (opts.x, kw.x) and in C
-- (lua_getfield(L, i, "x"))
local function harvest()
  local strings, keys, seen_s, seen_k = {}, {}, {}, {}
  local p = io.popen("ls '" .. root .. "'/scripting/*.lua '" .. root .. "'/scripting/*.c 2>/dev/null")
  for path in p:lines() do
    local f = io.open(path)
    if f then
      local src = f:read("a")
      f:close()
      for w in src:gmatch('"([%w_%.]+)"') do
        if #w <= 24 and not seen_s[w] then seen_s[w] = true strings[#strings + 1] = w end
      end
      for w in src:gmatch("getfield%(L, %-?%d+, \"([%w_]+)\"") do
        if not seen_k[w] then seen_k[w] = true keys[#keys + 1] = w end
      end
      for w in src:gmatch("[%s%(,]opts%.([%a_][%w_]*)") do
        if not seen_k[w] then seen_k[w] = true keys[#keys + 1] = w end
      end
      for w in src:gmatch("[%s%(,]kw%.([%a_][%w_]*)") do
        if not seen_k[w] then seen_k[w] = true keys[#keys + 1] = w end
      end
    end
  end
  p:close()
  table.sort(strings)
  table.sort(keys)
  return strings, keys
end

-- every function reachable from the API: {label, expr (Lua source), fn, owner kind}
local function targets_of()
  local list, seen = {}, {}
  local function add(label, expr, fn, owner)
    if type(fn) ~= "function" or type(label) ~= "string" or seen[label] then return end
    seen[label] = true
    list[#list + 1] = {label = label, expr = expr, fn = fn, owner = owner}
  end
  local keywords = {}
  for w in ("and break do else elseif end false for function goto if in local nil not or repeat return then " ..
            "true until while"):gmatch("%a+") do keywords[w] = true end
  local function field(base, name) -- base.name, or base["name"] for a keyword or another string
    if name:find("^[%a_][%w_]*$") and not keywords[name] then return base .. "." .. name end
    return string.format("%s[%q]", base, name)
  end
  local function each(t, fn) -- string keys only
    for name, f in pairs(t) do if type(name) == "string" then fn(name, f) end end
  end
  each(uop, function(name, f) add("uop." .. name, field("uop", name), f) end)
  each(uop.methods, function(name, f) add("UOp:" .. name, field("uop.methods", name), f, "uopdb.UOp") end)
  each(Tensor, function(name, f) add("Tensor." .. name, field("Tensor", name), f, "Tensor") end)
  for mt_name, mt in pairs(MT) do
    if type(mt_name) == "string" and mt_name:find("^uopdb%.") and mt_name ~= "uopdb.module" and type(mt) == "table" then
      local base = string.format("MT[%q]", mt_name)
      each(mt, function(name, f) add(mt_name .. ":" .. name, field(base, name), f, mt_name) end)
      if type(rawget(mt, "__index")) == "table" then
        each(mt.__index, function(name, f) add(mt_name .. ":" .. name, field(base .. ".__index", name), f, mt_name) end)
      end
    end
  end
  if plant then
    load(PLANTED_SOURCE)()
    add("PLANTED", "PLANTED", PLANTED)
  end
  table.sort(list, function(a, b) return a.label < b.label end)
  return list
end

local extra_strings, option_keys = harvest()
local g = V.new(rng, extra_strings, option_keys)
local targets = targets_of()
local log = assert(io.open(log_path, "w"))
local findings = assert(io.open(findings_path, "w"))
local n, succeeded = 0, 0
local by_expr = {}
for _, t in ipairs(targets) do by_expr[t.expr] = t end

local function escape(s) return (tostring(s):gsub("\\", "\\\\"):gsub("\n", "\\n"):gsub("\t", "\\t"):gsub("\r", "\\r")) end

-- runs one statement: logs it, runs it, keeps the result, records a finding
local function run(expr, args)
  n = n + 1
  local stmt = string.format("v[%d] = CALL(%d, %s%s)", n, n, expr, #args > 0 and ", " .. table.concat(args, ", ") or "")
  log:write(n, "\t", expr, "\t", table.concat(args, "\t"), "\n")
  log:flush()
  local chunk = load(stmt, "=fuzz", "t")
  local before = #H.findings
  local t0 = os.clock()
  H.last_ok = false
  -- an argument expression may itself fail (an earlier result was nil): not judged
  if chunk then pcall(chunk) end
  local dt = os.clock() - t0
  local t = by_expr[expr]
  if t then
    t.total = (t.total or 0) + dt
    t.count = (t.count or 0) + 1
    if H.last_ok and H.last_n == n then
      t.good = t.good or {}
      if #t.good < 4 then t.good[#t.good + 1] = args else t.good[rng(#t.good)] = args end
    end
  end
  if H.last_ok and H.last_n == n then
    g.remember(n, v[n])
    succeeded = succeeded + 1
  end
  for i = before + 1, #H.findings do
    local f = H.findings[i]
    findings:write(f.n, "\t", expr, "\t", f.why, "\t", escape(f.err), "\n")
    findings:flush()
  end
  if H.last_why == "budget" then H.budget_hits = (H.budget_hits or 0) + 1 end
  H.last_why = nil
end

-- seeds: a few values of each kind to start from
local seeds = {
  {"Tensor.new", {"{{1, 2}, {3, 4}}"}},
  {"Tensor.new", {"{1.5, -2, 0.25, 8}"}},
  {"Tensor.new", {"{{1, 2, 3}, {4, 5, 6}}", "\"int32\""}},
  {"Tensor.new", {"{true, false, true}"}},
  {"Tensor.arange", {"6"}},
  {"Tensor.ones", {"2", "3"}},
  {"Tensor.rand", {"3", "2"}},
  {"uop.var", {"\"x\"", "0", "10"}},
  {"uop.parse", {V.string("%0 = DEFINE_VAR index arg=(\"x\", 0, 10)\n%1 = CONST index arg=4\n%2 = MUL index (%0, %1)")}},
  {"uop.compile", {"Tensor.matmul(v[1], v[1])", "{select = false}"}},
  {"MT[\"uopdb.Program\"].__index.kernel", {"v[10]", "1"}},
  {"uop.rules", {"{{name = \"add0\", pattern = \"(ADD x 0)\", rewrite = \"x\"}}"}},
  {"uop.compile", {"Tensor.sum(Tensor.exp(v[2]))", "{select = false}"}},
  {"MT[\"uopdb.Program\"].__index.kernel", {"v[13]", "1"}},
  {"uop.compile", {"Tensor.add(v[3], 1)", "{select = false}"}},
}
for _, s in ipairs(seeds) do run(s[1], s[2]) end

-- targets are drawn uniformly, except that those that compile, run or
-- render (by name) are drawn a quarter as often, so a batch spends its time
-- on many calls rather than a few big ones.  (By name, not by measured time:
-- the calls a seed makes must not depend on the machine's speed.)
local slow_names = {"compile", "run", "time", "report", "export", "dot", "bisect", "check", "realize", "tolist",
  "item", "tostring", "format_values", "llvm", "asm", "stages", "seek", "step", "next", "prev", "continue",
  "heuristic", "reference", "diff", "rules", "rewrites", "print", "kernel", "origin", "why"}
for _, t in ipairs(targets) do
  for _, w in ipairs(slow_names) do
    if t.label:lower():find(w, 1, true) then t.slow = true end
  end
end
-- the self-check draws the planted target often enough that a short run
-- reaches it whatever the number of other targets
local planted = by_expr["PLANTED"]
local function draw()
  if planted and rng(40) == 1 then return planted end
  local t = targets[rng(#targets)]
  if t.slow and rng(4) > 1 then t = targets[rng(#targets)] end
  return t
end

-- what the known hangs need avoided (api_known.lua's avoid fields), by target
local known = dofile(fuzz_dir .. "/api_known.lua")
for _, t in ipairs(targets) do
  for _, k in ipairs(known) do
    if k.avoid and (not k.fn or t.expr:find(k.fn)) then
      t.avoid = t.avoid or {}
      t.avoid[#t.avoid + 1] = k.avoid
    end
  end
end
do -- the functions a known crash has taken out
  local kept = {}
  for _, t in ipairs(targets) do
    local skip = false
    for _, a in ipairs(t.avoid or {}) do skip = skip or a.skip end
    if not skip then kept[#kept + 1] = t end
  end
  targets = kept
end
local function avoid(t, args)
  for _, a in ipairs(t.avoid or {}) do
    for i, src in ipairs(args) do
      if a.args and src:find(a.args) then args[i] = "{}" end
      local x = load("return " .. src, "=avoid", "t", {math = math})
      local ok, value = pcall(x or error)
      if a.big_numbers and ok and type(value) == "number" and not (value <= 1000) then args[i] = "3" end
    end
  end
end

for _ = 1, calls do
  local t = draw()
  local args
  if t.good and rng(10) <= 4 then
    -- a call like one that worked, one argument changed (or one more)
    local base = t.good[rng(#t.good)]
    args = {table.unpack(base)}
    local i = rng(#args + 1)
    if i <= #args or rng(3) == 1 then args[i] = g.arg() end
  else
    args = {}
    local count = rng(5) - 1
    for i = 1, count do args[i] = g.arg() end
    if t.owner and rng(10) <= 8 then args[1] = g.of_kind(t.owner) or args[1] or "nil" end
  end
  for i = 1, #args do if args[i] == nil then args[i] = "nil" end end
  if t.avoid then avoid(t, args) end
  run(t.expr, args)
end

log:close()
findings:close()
local stats = io.open(log_path .. ".stats", "w")
if stats then
  stats:write(string.format("calls %d\nok %d\nbudget %d\ntargets %d\n", n, succeeded, H.budget_hits or 0, #targets))
  local slow = {}
  for _, t in ipairs(targets) do if t.total then slow[#slow + 1] = t end end
  table.sort(slow, function(a, b) return a.total > b.total end)
  for i = 1, math.min(8, #slow) do
    stats:write(string.format("slowest %s %.3f s in %d calls\n", slow[i].label, slow[i].total, slow[i].count))
  end
  stats:close()
end
os.exit(0, true)
