-- make_corpus.lua - regenerates the seed corpora of the parser harnesses
-- from the test suite:
--   build/uopdb tests/fuzz/make_corpus.lua
-- writes tests/fuzz/corpus/{listing,tinygrad_repr,rules,arg}/ (the old files
-- are removed first).  Sources: the kernel ASTs in tests/golden (as text, and
-- each kernel compiled and printed at every stage, as a listing and as a
-- tinygrad repr), the listings and rule patterns written in tests/lua and
-- tests/unit, the rule tables of core/ (their patterns and templates), and
-- every arg those listings and reprs hold.  Inputs larger than MAX_BYTES
-- are left out: they slow the fuzzer and add little.
local MAX_BYTES = 6000
local out_dir = "tests/fuzz/corpus"

local function lines_of(cmd)
  local t, p = {}, io.popen(cmd)
  for l in p:lines() do t[#t + 1] = l end
  p:close()
  return t
end

local function read(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

-- each corpus is a set of texts (deduplicated), written in a stable order
local corpora = {listing = {}, tinygrad_repr = {}, rules = {}, arg = {}}
local function add(name, text)
  if text and #text > 0 and #text <= MAX_BYTES then corpora[name][text] = true end
end

-- args of a listing (uopdb's spelling) and of a repr (Python's)
local function add_args(listing, repr)
  for line in (listing or ""):gmatch("[^\n]+") do
    local a = line:match(" arg=(.-) tag=") or line:match(" arg=(.*)$")
    add("arg", a)
    add("arg", line:match(" tag=(.*)$"))
  end
  for a in (repr or ""):gmatch("arg=(.-), src=") do add("arg", a) end
  for a in (repr or ""):gmatch("tag=(.-), src=") do add("arg", a) end
end

-- 1. the golden kernel ASTs, as text and compiled through every stage
local function each_repr(text, fn)
  -- a file holds one or more reprs, each starting at a line "UOp(" or "x:=UOp("
  local cur = nil
  for line in (text .. "\n"):gmatch("([^\n]*)\n") do
    if line:match("^UOp%(") then
      if cur then fn(table.concat(cur, "\n")) end
      cur = {line}
    elseif cur and line:match("^%s") then
      cur[#cur + 1] = line
    elseif cur then
      fn(table.concat(cur, "\n"))
      cur = nil
    end
  end
  if cur then fn(table.concat(cur, "\n")) end
end

for _, path in ipairs(lines_of("ls tests/golden/*.txt")) do
  each_repr(read(path), function(repr)
    add("tinygrad_repr", repr)
    add_args(nil, repr)
    local ok, ast = pcall(uop.from_tinygrad, repr)
    if not ok then return end
    add("listing", ast:listing())
    local okc, prog = pcall(uop.compile, ast, {select = false})
    if not okc then return end
    for ki = 1, #prog:kernels() do
      local k = prog:kernel(ki)
      for stage = 0, 22 do
        if pcall(k.seek, k, stage) then
          local root = k:root()
          local l = root:listing()
          add("listing", l)
          local okr, r = pcall(uop.to_tinygrad, root)
          if okr then add("tinygrad_repr", r) end
          add_args(l, okr and r or nil)
        end
      end
    end
  end)
end

-- 2. listings and patterns written in the tests
local test_files = lines_of("ls tests/lua/*.lua tests/unit/*.c tests/repl/*.txt 2>/dev/null")
for _, path in ipairs(test_files) do
  local src = read(path)
  for _, body in src:gmatch("%[(=*)%[\n?(.-)%]%1%]") do
    if body:match("^%s*%%%d+%s*=") then add("listing", body) add_args(body, nil) end
    if body:match("^%s*UOp%(") then add("tinygrad_repr", body) end
  end
  for pat, rest in src:gmatch('pattern%s*=%s*"([^"\n]*)"([^}\n]*)') do
    local tmpl = rest:match('rewrite%s*=%s*"([^"\n]*)"')
    add("rules", pat)
    if tmpl then add("rules", pat .. " => " .. tmpl) end
  end
end

-- 3. the rule tables of core/: RULE_FN("name", "pattern", fn), RULE_TMPL("name", "pattern", "template")
for _, path in ipairs(lines_of("ls core/*/*.c")) do
  local src = read(path)
  for pat in src:gmatch('RULE_FN%(%s*"[^"]*",%s*"([^"]*)"') do add("rules", pat) end
  for pat, tmpl in src:gmatch('RULE_TMPL%(%s*"[^"]*",%s*"([^"]*)",%s*"([^"]*)"') do
    add("rules", pat .. " => " .. tmpl)
  end
end

-- 4. a dictionary per harness (tests/fuzz/dict/<name>.dict): the words of
-- each language, op and dtype names from uop.ops and uop.dtypes
local words = {common = {}, listing = {}, tinygrad_repr = {}, rules = {}, arg = {}}
local function word(set, w) words[set][#words[set] + 1] = w end
local ops, dtypes, axes = {}, {}, {}
for name in pairs(uop.ops) do ops[#ops + 1] = name end
for name in pairs(uop.dtypes) do dtypes[#dtypes + 1] = name end
for name in pairs(uop.axis) do axes[#axes + 1] = name end
table.sort(ops) table.sort(dtypes) table.sort(axes)
for _, o in ipairs(ops) do
  word("listing", o) word("rules", o) word("tinygrad_repr", "Ops." .. o) word("arg", "Ops." .. o)
end
for _, d in ipairs(dtypes) do
  word("listing", d) word("rules", d) word("arg", d)
  word("tinygrad_repr", "dtypes." .. d) word("arg", "dtypes." .. d)
end
for _, a in ipairs(axes) do
  word("common", a) word("tinygrad_repr", "AxisType." .. a) word("arg", "AxisType." .. a)
end
for _, w in ipairs{".ptr(", ".vec(", "local", "reg", "Invalid", "None", "True", "False", "true", "false",
  "inf", "-inf", "nan", "(", ")", ",", "'", "\"", "1e308", "-9223372036854775808", "18446744073709551616"} do
  word("common", w)
end
for _, w in ipairs{"%0", " = ", "arg=", "tag=", "#"} do word("listing", w) end
for _, w in ipairs{"UOp(", "arg=None", "src=(", "tag=", ":=", "x1", ")),", "AddrSpace.LOCAL", "AddrSpace.REG"} do
  word("tinygrad_repr", w)
end
for _, w in ipairs{"=>", "{", "}", "[", "]", "_", "...", "*", "@", "?", ":", "ints", "sints", "uints", "floats",
  "Unary", "Binary", "Ternary", "ALU", "Commutative", "Associative", "Idempotent", "Comparison", "Movement",
  "Buffer", "Defines", "Irreducible", "UnsafePad", "Elementwise", "arg="} do
  word("rules", w)
end
os.execute("mkdir -p tests/fuzz/dict")
for _, name in ipairs{"listing", "tinygrad_repr", "rules", "arg"} do
  local f = assert(io.open("tests/fuzz/dict/" .. name .. ".dict", "wb"))
  f:write("# words of the " .. name .. " harness's input language (made by make_corpus.lua)\n")
  for _, set in ipairs{words.common, words[name]} do
    for _, w in ipairs(set) do f:write(string.format("%q\n", w)) end
  end
  f:close()
end

-- write: corpus/<name>/<name>_<n>, in sorted order so reruns give the same names
local total = {}
for name, set in pairs(corpora) do
  local dir = out_dir .. "/" .. name
  os.execute("rm -rf '" .. dir .. "' && mkdir -p '" .. dir .. "'")
  local texts = {}
  for t in pairs(set) do texts[#texts + 1] = t end
  table.sort(texts)
  for i, t in ipairs(texts) do
    local f = assert(io.open(string.format("%s/%s_%04d", dir, name, i), "wb"))
    f:write(t)
    f:close()
  end
  total[#total + 1] = string.format("%s %d", name, #texts)
end
table.sort(total)
print("corpus: " .. table.concat(total, ", "))
