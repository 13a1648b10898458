-- test_case_asts.lua - the kernels uopdb schedules for the cases of
-- tests/golden/tinygrad_op_cases.txt against tinygrad v0.12.0's for the
-- same cases (tests/golden/tinygrad_case_asts.txt, written by
-- scripts/capture_tinygrad_case_asts.py).  A result's kernels match when
-- there are as many and each equals tinygrad's up to range numbering.
-- Every result is compared and the count printed; the test requires at
-- least MATCHED of them to match, so a change that loses one fails (raise
-- MATCHED when more match).  UOPDB_CASE_ASTS=1 prints each result that
-- does not match and why.
local T = ...
local C = T.load("tinygrad_cases.lua")
local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "."
local golden = here .. "/../golden/"
local MATCHED = 303

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

-- nil when t's kernels are tinygrad's (asts), else why not
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
end

T.test("kernel ASTs of the op cases: at least " .. MATCHED .. " equal tinygrad's", function()
  local golden_asts = read_golden()
  local matched, total, report = 0, 0, os.getenv("UOPDB_CASE_ASTS") == "1"
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
          local why = differs(outs[i], want)
          if why then
            if report then print(label .. ": " .. why) end
          else
            matched = matched + 1
          end
        end
      end
    end
  end
  print(string.format("kernel ASTs equal tinygrad's for %d of %d op case results", matched, total))
  T.ok(total > 300, "at least 300 results compared, got " .. total)
  T.ok(matched >= MATCHED, string.format("%d match, at least %d did", matched, MATCHED))
end)
