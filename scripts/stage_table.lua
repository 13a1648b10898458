-- stage_table.lua - prints the stage table of docs/ARCHITECTURE.md from the
-- rows the pipeline runs (uop.stages()), so the docs cannot drift from the
-- code.  build/uopdb scripts/stage_table.lua > table.md; `make docs` puts
-- it between the markers in docs/ARCHITECTURE.md, and the test suite checks
-- that what is there is what this prints.
local function cell(s) return (s or ""):gsub("|", "\\|") end

print("| # | stage | what it does | runs | context | status |")
print("|---|---|---|---|---|---|")
for _, st in ipairs(uop.stages()) do
  local runs = st.kind == "pass" and "nothing" or ("`" .. st.runs .. "`")
  local status = st.status
  if st.note then status = status .. ": " .. st.note end
  print(string.format("| %d | %s | %s | %s | %s | %s |", st.number, cell(st.name), cell(st.purpose), cell(runs),
                      cell(st.context and ("`" .. st.context .. "`") or ""), cell(status)))
end
