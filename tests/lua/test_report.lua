-- test_report.lua - p:report(file) writes one self-contained HTML page (every
-- stage of every kernel, the validation of a run, graphs, LLVM IR and
-- assembly) and p:export(file) the JSON trace; names from the program are
-- escaped in both, and an unwritable file is a one-line error.
-- (tests/report/run.sh validates the JSON against docs/trace.schema.json and
-- renders the page in a headless browser.)
local T = ...

local dir = os.getenv("TMPDIR") or "/tmp"
local function tmpfile(ext)
  local name = os.tmpname()
  os.remove(name)
  return name .. ext
end

local function read(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

local matmul3 = T.load("programs.lua").matmul3

local function conv2d()
  return Tensor.rand(1, 4, 8, 8):conv2d(Tensor.rand(8, 4, 3, 3), {padding = 1})
end

-- the page as a string, the file removed
local function report_of(p, opts)
  local path = tmpfile(".html")
  T.eq(p:report(path, opts), path, "report returns the file name")
  local html = read(path)
  os.remove(path)
  return html
end

local function export_of(p)
  local path = tmpfile(".json")
  T.eq(p:export(path), path, "export returns the file name")
  local json = read(path)
  os.remove(path)
  return json
end

local function html_escape(s)
  return (s:gsub("[&<>\"']", {["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;", ['"'] = "&quot;", ["'"] = "&#39;"}))
end

-- nothing the page loads from elsewhere
local function self_contained(html)
  for _, bad in ipairs{"http://", "https://", "src=", "<link", "@import", "url(", "<iframe", "<object", "<embed"} do
    T.ok(not html:lower():find(bad, 1, true), "the page has no " .. bad)
  end
end

local function every_stage(html, what)
  for _, st in ipairs(uop.stages()) do
    T.contains(html, html_escape(st.name), what .. ": stage " .. st.number)
    T.ok(html:find('id="k1-s' .. st.number .. '"', 1, true), what .. ": a section for stage " .. st.number)
  end
  T.ok(html:find('id="k1-s0"', 1, true), what .. ": a section for point 0")
end

T.test("the 3x3 matmul's report: every stage, validated, self-contained, graphs and LLVM", function()
  local p = uop.compile(matmul3())
  local html = report_of(p)
  T.ok(html:sub(1, 15) == "<!DOCTYPE html>", "an HTML page")
  T.ok(html:find("</html>\n$"), "the page is complete")
  every_stage(html, "matmul")
  T.contains(html, "validate: output0 float32 (3, 3, 1): 9 elements match the reference")
  T.contains(html, "every output matches the reference")
  self_contained(html)
  -- statuses and notes from the stage rows
  for _, st in ipairs(uop.stages()) do
    if st.note then T.contains(html, html_escape(st.note), "stage " .. st.number .. "'s note") end
  end
  T.contains(html, '<span class="badge na">n/a</span>')
  -- a diff with coloured lines, a listing, the rules with file:line, graphs as SVG travelling in scripts
  T.contains(html, '<span class="add">+%')
  T.contains(html, '<span class="del">-%')
  T.contains(html, "core/stages/index_dtype.c:")
  T.contains(html, '<script type="text/x-svg" id="svg-1-0"><svg')
  T.contains(html, '<script type="text/x-svg" id="svg-1-15"><svg')
  T.ok(not html:find('id="svg-1-16"', 1, true), "no graph for a stage that changed nothing")
  T.contains(html, "define void @r_3_3_3", "the LLVM IR")
  T.contains(html, "host assembly")
  T.ok(#html < 3 * 1024 * 1024, "a few MB at most: " .. #html)
  -- the program is untouched: its own run still validates
  local _, rep = p:run{validate = true, quiet = true}
  T.ok(rep.ok, rep.text)
end)

T.test("the conv2d report has every stage and stays small", function()
  local p = uop.compile(conv2d())
  local t0 = uop.clock()
  local html = report_of(p)
  local ms = uop.clock() - t0
  every_stage(html, "conv2d")
  T.contains(html, "validate: output0 float32 (1, 1, 8, 8, 8, 1, 1, 1): 512 elements match the reference")
  self_contained(html)
  T.ok(#html < 3 * 1024 * 1024, "a few MB at most: " .. #html)
  T.ok(ms < 20000, "written in " .. ms .. " ms")
end)

T.test("graphs above the size limit are drawn as the first STORE's neighbourhood, and can be left out", function()
  local p = uop.compile(conv2d())
  local html = report_of(p, {max_nodes = 20, radius = 2, run = false})
  T.contains(html, "more than this report draws: shown are the")
  T.contains(html, "STORE (the first STORE")
  T.contains(html, "The program was not run for this report.")
  local none = report_of(p, {graphs = false, run = false})
  T.ok(not none:find("<svg", 1, true), "no SVG when graphs = false")
  T.contains(none, "Graphs were left out of this report.")
  T.raises("report: unknown option 'colour'", function() p:report(tmpfile(".html"), {colour = true}) end)
end)

-- a rule whose name and file have HTML's and JSON's special characters in
-- them, planted in stage 15 where it breaks the index arithmetic
local ODD_NAME = "a<blink>&c \"q\" back\\slash \xc3\xa9"
local ODD_FILE = "<odd&file>.lua"
local function odd_rule()
  local chunk = assert(load([[
    local name = ...
    return uop.rules{ {name = name, pattern = "(MUL:int32 a b)", rewrite = function(m) return m.a + m.b end} }
  ]], "=" .. ODD_FILE))
  return chunk(ODD_NAME)
end

T.test("names and files are escaped in the page; a wrong result is reported", function()
  local p = uop.compile(matmul3(), {rules = {[15] = odd_rule()}})
  local html = report_of(p)
  T.contains(html, html_escape(ODD_NAME), "the rule name escaped")
  T.contains(html, html_escape(ODD_FILE) .. ":", "the file escaped")
  T.ok(not html:find(ODD_NAME, 1, true), "the rule name never raw")
  T.ok(not html:find(ODD_FILE, 1, true), "the file never raw")
  T.ok(not html:find("<blink>", 1, true), "no markup from a name")
  T.contains(html, "elements differ from the reference")
  T.contains(html, "outputs differ from the reference")
  self_contained(html)
end)

T.test("the report of a wrong program of several kernels names the first kernel wrong on its own", function()
  local x = Tensor.new({{1, 2, 3, 4, 5, 6, 7, 8}, {8, 7, 6, 5, 4, 3, 2, 1}, {0, 1, 0, 1, 0, 1, 0, 1}, {3, 3, 3, 3, 3, 3, 3, 3}},
                       "float32")
  local p = uop.compile(x:softmax())
  p:kernel(2):insert(15, uop.rules{ {name = "mul_to_add32", pattern = "(MUL:int32 a b)",
                                     rewrite = function(m) return m.a + m.b end} })
  local html = report_of(p)
  T.contains(html, "outputs differ from the reference")
  T.contains(html, "kernel 2 of 3 (r_4_8n1) is the first wrong one: given the reference of its inputs,")
end)

T.test("the JSON export: every stage, the rules and every rewrite, strings escaped", function()
  local p = uop.compile(matmul3(), {rules = {[15] = odd_rule()}})
  local json = export_of(p)
  T.ok(json:find('^{\n  "format": "uopdb%-trace",\n  "version": 1,'), json:sub(1, 80))
  local stages = 0
  for _ in json:gmatch('{"number": %d+, "name": ') do stages = stages + 1 end
  T.eq(stages, 22)
  for _, st in ipairs(uop.stages()) do T.contains(json, '"name": "' .. st.name .. '"') end
  -- quote and backslash escaped, < > & and UTF-8 as they are
  local escaped = 'a<blink>&c \\"q\\" back\\\\slash \xc3\xa9'
  T.contains(json, '{"rule": "' .. escaped .. '", "file": "' .. ODD_FILE .. '", "line": 2, "count": ')
  T.contains(json, '"before": {"id": ')
  T.contains(json, '"op": "MUL"}, "after": {"id": ')
  T.contains(json, '"inserted": "')
  T.ok(not json:find("[\1-\9\11-\31]"), "no raw control characters")
end)

T.test("a pipeline that stops: the stage's error, the stages not run, no run", function()
  local A = Tensor.new({{1, 2}, {3, 4}}, "float32")
  local boom = uop.rules{ {name = "boom", pattern = "(MUL:int32 a b)", rewrite = function() error("boom here") end} }
  local p = uop.compile(A:matmul(A), {rules = {[15] = boom}})
  local html = report_of(p)
  every_stage(html, "stopped")
  T.contains(html, "stage 15 (lower index dtype): rule &quot;boom&quot;")
  T.contains(html, "This stage did not run: the pipeline stopped before it.")
  T.contains(html, "Not compiled: the pipeline stopped before its last stage")
  T.contains(html, "The run failed: no output to validate.")
  local json = export_of(p)
  T.contains(json, '"error": "stage 15 (lower index dtype): rule \\"boom\\"')
  T.contains(json, '{"number": 16, "name": "post-index symbolic"')
  T.ok(json:find('"number": 16, [^\n]*\n%s*"ran": false'), "stage 16 did not run")
end)

T.test("an unwritable file is a one-line error", function()
  local p = uop.compile(matmul3())
  local msg = T.err(function() p:report(dir .. "/no-such-dir/x/report.html", {run = false, graphs = false}) end)
  T.contains(msg, "report: cannot write " .. dir .. "/no-such-dir/x/report.html: ")
  T.ok(not msg:find("\n"), "one line: " .. msg)
  msg = T.err(function() p:export(dir .. "/no-such-dir/x/trace.json") end)
  T.contains(msg, "export: cannot write ")
  T.ok(not msg:find("\n"), "one line: " .. msg)
  T.raises("bad argument #1 to 'report'", function() p:report() end)
end)

T.test("a kernel compiled with native transcendentals says so in the page and the export", function()
  local x = Tensor.new({0.5, 1.5, 2.5}, "float32"):exp()
  for _, case in ipairs{{nil, "pm_decomp + pm_render"}, {"native", "pm_decomp_native + pm_render"}} do
    local p = uop.compile(x, {transcendentals = case[1]})
    T.contains(export_of(p), '"runs": "' .. case[2], tostring(case[1]))
    T.contains(report_of(p), "runs " .. case[2], tostring(case[1]))
  end
end)
