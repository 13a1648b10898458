-- test_case_asts.lua - the kernels uopdb schedules for the cases of
-- tests/golden/tinygrad_op_cases.txt against tinygrad v0.12.0's for the
-- same cases (tests/golden/tinygrad_case_asts.txt, written by
-- scripts/capture_tinygrad_case_asts.py).  A result's kernels match when
-- there are as many and each equals tinygrad's up to range numbering.
-- Every result is compared and the count printed; the test requires at
-- least MATCHED of them to match, so a change that loses one fails (raise
-- MATCHED when more match).  On the results that match, the opts uopdb's
-- heuristic chooses for each kernel (without threads) are compared with
-- tinygrad's (tests/golden/tinygrad_case_opts.txt, written by
-- scripts/capture_tinygrad_case_opts.py), at least OPTS_MATCHED of them.
-- UOPDB_CASE_ASTS=1 prints each result that does not match and why.
local T = ...
local C = T.load("tinygrad_cases.lua")
local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "."
local golden = here .. "/../golden/"
local MATCHED = 309
local OPTS_MATCHED = 309

-- tinygrad's kernels by result name: a list of AST texts, or {error = type}
local function read_golden()
  local by_name, cur, ast = {}, nil, nil
  local function close_ast()
    if ast then cur[#cur + 1] = table.concat(ast, "\n") end
    ast = nil
  end
  for line in io.lines(golden .. "tinygrad_case_asts.txt") do
    local name, rest = line:match("^## (%S+) (.*)$")
    if name then
      close_ast()
      cur = {}
      by_name[name] = cur
      cur.error = rest:match("^error (%S+)")
      cur.want = tonumber(rest:match("^(%d+) kernel"))
    elseif cur and line:match("^UOp%(Ops%.SINK") then
      close_ast()
      ast = {line}
    elseif ast then
      ast[#ast + 1] = line
    end
  end
  close_ast()
  return by_name
end

-- tinygrad's heuristic opts by result name: a list, per kernel, of "OP:axis:amount,..." or "-"
local function read_golden_opts()
  local by_name = {}
  for line in io.lines(golden .. "tinygrad_case_opts.txt") do
    if not line:match("^#") then
      local words = {}
      for w in line:gmatch("%S+") do words[#words + 1] = w end
      by_name[table.remove(words, 1)] = words
    end
  end
  return by_name
end

-- nil when t's kernels are tinygrad's (asts), else why not; the program too
local function differs(t, asts)
  if t:numel() == 0 then
    if #asts == 0 then return nil end
    return "no elements: uopdb schedules no kernel, tinygrad " .. #asts
  end
  local ok, p = pcall(uop.compile, t, {select = false})
  if not ok then return "uop.compile: " .. tostring(p) end
  local got = p:kernels()
  if #got ~= #asts then return string.format("%d kernels, tinygrad %d", #got, #asts) end
  for i = 1, #asts do
    local want = uop.from_tinygrad(asts[i])
    if not uop.same_up_to_ranges(got[i]:root(0), want) then return string.format("kernel %d differs", i) end
  end
  return nil, p
end

-- nil when p's kernels get tinygrad's heuristic opts (want), else why not
local function opts_differ(p, want)
  if not want then return "no opts captured" end
  local kernels = p and p:kernels() or {}
  if #kernels ~= #want then return string.format("opts of %d kernels, tinygrad %d", #kernels, #want) end
  for i, k in ipairs(kernels) do
    local got = C.show_opts(select(2, k:heuristic(0)))
    if got ~= want[i] then return string.format("kernel %d opts %s, tinygrad %s", i, got, want[i]) end
  end
end

T.test("kernel ASTs of the op cases: at least " .. MATCHED .. " equal tinygrad's, and " .. OPTS_MATCHED ..
       " get its heuristic opts", function()
  local golden_asts, golden_opts = read_golden(), read_golden_opts()
  local matched, total, opts_matched, report = 0, 0, 0, os.getenv("UOPDB_CASE_ASTS") == "1"
  for _, line in ipairs(C.read_lines(golden .. "tinygrad_op_cases.txt")) do
    local name, inputs, _, lua = table.unpack(C.split(line))
    local single = golden_asts[name]
    if not (single and single.error) then
      local ok, outs = pcall(C.results, lua, inputs)
      for i = 1, ok and (outs.n or #outs) or 0 do
        local label = single and name or name .. "#" .. i
        local want = golden_asts[label]
        if want and not want.error and (not single or i == 1) then
          total = total + 1
          local why, p = differs(outs[i], want)
          if why then
            if report then print(label .. ": " .. why) end
          else
            matched = matched + 1
            local owhy = opts_differ(p, golden_opts[label])
            if owhy then
              if report then print(label .. ": " .. owhy) end
            else
              opts_matched = opts_matched + 1
            end
          end
        end
      end
    end
  end
  print(string.format("kernel ASTs equal tinygrad's for %d of %d op case results, and so do the heuristic opts of %d",
                      matched, total, opts_matched))
  T.ok(total > 300, "at least 300 results compared, got " .. total)
  T.ok(matched >= MATCHED, string.format("%d match, at least %d did", matched, MATCHED))
  T.ok(opts_matched >= OPTS_MATCHED, string.format("opts of %d match, at least %d did", opts_matched, OPTS_MATCHED))
end)
