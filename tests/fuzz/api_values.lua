-- api_values.lua - the arguments of the Lua API fuzzer.  Every argument is
-- Lua source text (a literal, a helper of api_prelude.lua, or v[i], the
-- result of an earlier call), so a call sequence can be written out and run
-- again.  Values: results of earlier calls (the pool: tensors, UOps,
-- programs, kernels, rule sets, texts...), small and hostile numbers (NaN,
-- inf, 2^63, the integer limits), strings (names uopdb knows, NUL bytes,
-- huge ones), tables (data, shapes, option tables with the names uopdb reads,
-- deep, cyclic, lying), callbacks and wrong userdata.
local V = {}

-- a Lua literal for a number that reads back as the same value and subtype
function V.number(x)
  if math.type(x) == "integer" then
    if x == math.mininteger then return "math.mininteger" end
    return string.format("%d", x)
  end
  if x ~= x then return "(0/0)" end
  if x == math.huge then return "(1/0)" end
  if x == -math.huge then return "(-1/0)" end
  if x == 0 and 1 / x < 0 then return "(-0.0)" end
  local s = string.format("%.17g", x)
  if not s:find("[%.eEn]") then s = s .. ".0" end
  if x < 0 then s = "(" .. s .. ")" end
  return s
end

-- a Lua literal for a string, on one line (tabs and newlines escaped)
function V.string(s)
  if #s > 200 then return string.format("string.rep(%q, %d)", s:sub(1, 1), #s) end
  local q = string.format("%q", s)
  return (q:gsub("\\\n", "\\n"):gsub("\t", "\\t"):gsub("\r", "\\r"))
end

local small_ints = {0, 1, 2, 3, 4, 1, 2, 3, 2, 0, -1, -2, 5, 8}
local hostile_numbers = {
  "(0/0)", "(1/0)", "(-1/0)", "math.maxinteger", "math.mininteger", "2^63", "-(2^63)", "2^53 + 1",
  "1e300", "-1e300", "1e-310", "(-0.0)", "0.5", "-0.5", "2.5", "65536", "2^31", "-(2^31)", "2147483647",
  "4294967296", "100", "1000", "7", "0.1", "1e9", "-1e9", "3.0",
}
local hostile_tables = {
  "{}", "{{}}", "{{}, {}}", "H.deep(3)", "H.deep(300)", "H.deep(100000)", "H.wide(5000)", "H.cycle()",
  "H.recursive_index()", "H.raising_table()", "H.lying_length()", "H.sparse()", "{n = -1}",
  "{0}", "{-1}", "{0, 0}", "{1e9, 1e9}", "{2^63}", "{(0/0)}", "{math.maxinteger}", "{1, 2, 3, 4, 5, 6, 7, 8, 9}",
  "{{1, 2}, {3}}", "{{1, 2}, {3, 4}}", "{{{1}, {2}}, {{3}, {4}}}", "{1.5, -2, (0/0), (1/0)}", "{true, false}",
  "{\"a\", \"b\"}", "{x = 1}", "{[1] = 1, [3] = 3}", "{[0] = 1}", "{[-1] = 2}", "{[1.5] = 1}",
}
local hostile_others = {
  "nil", "true", "false", "H.raiser()", "H.returner(nil)", "H.returner(1)", "H.returner({})", "H.identity()",
  "print", "io.stdout", "coroutine.create(print)", "uop.None", "uop.Invalid", "uop.dtypes.float32",
  "uop.dtypes.void", "uop.dtypes.index", "uop.ops.ADD", "uop.axis.REDUCE", "uop", "Tensor",
}
local base_strings = {
  "", "x", "a\0b", "\0", "float32", "int32", "bool", "float16", "void", "index", "uint8", "float32.vec(4)",
  "ADD", "MUL", "RANGE", "SINK", "(ADD x 0)", "(ADD x (CONST 0))", "x", "none", "native", "gpu", "cpu",
  "sum", "max", "mean", "ij,jk->ik", "i,i->", "ii->i", "...", "%0 = CONST index arg=1",
  "%0 = DEFINE_VAR index arg=(\"x\", 0, 10)\n%1 = CONST index arg=4\n%2 = MUL index (%0, %1)",
  "UOp(Ops.CONST, dtypes.int, arg=3, src=())", "fuzz_out.html", "fuzz_out.json", "fuzz_out.svg",
  "fuzz_out.dot", "fuzz_out", "sym", "symbolic", "symbolic_simple", "reflect", "replicate", "constant",
  "circular", "floor", "trunc", "LOOP", "REDUCE", "UPCAST", "UNROLL", "THREAD",
}

-- V.new(rng, names): a generator.  rng(n) gives 1..n; names: extra strings
-- and option-table keys read from uopdb's sources (may be empty)
function V.new(rng, extra_strings, option_keys)
  local g = {pool = {}, by_kind = {}, rng = rng}
  local strings = {}
  for _, s in ipairs(base_strings) do strings[#strings + 1] = s end
  for _, s in ipairs(extra_strings or {}) do strings[#strings + 1] = s end
  local keys = option_keys or {}
  if #keys == 0 then keys = {"axis", "keepdim", "dtype", "opts", "validate", "file"} end

  local function pick(t) return t[rng(#t)] end
  g.pick = pick

  -- the kind of a value: its metatable's name, "Tensor", or its Lua type
  function g.kind(x)
    local mt = getmetatable(x)
    if mt == Tensor then return "Tensor" end
    if type(mt) == "table" and type(rawget(mt, "__name")) == "string" then return mt.__name end
    return type(x)
  end

  -- keeps a result for later calls (at most 40 of a kind, newest replacing
  -- a random old one); big tensors stay out so no call computes on them
  -- (above 4096 elements, or a dimension above 4096: an empty tensor of
  -- shape (1e9, 0) prints a billion rows)
  function g.remember(n, x)
    if x == nil then return end
    local kind = g.kind(x)
    if kind == "Tensor" then
      local ok, count = pcall(x.numel, x)
      if not ok or type(count) ~= "number" or count > 4096 then return end
      local ok_shape, shape = pcall(x.shape, x)
      if not ok_shape or type(shape) ~= "table" then return end
      for _, d in ipairs(shape) do if type(d) ~= "number" or d > 4096 then return end end
    elseif kind == "string" then
      if #x > 10000 or x:find("..", 1, true) or x:find("^/") then return end
    end
    local list = g.by_kind[kind]
    if not list then
      list = {}
      g.by_kind[kind] = list
      g.kinds = nil
    end
    local src = "v[" .. n .. "]"
    if #list < 40 then list[#list + 1] = src else list[rng(#list)] = src end
  end

  -- one argument of the given kind from the pool (nil if none)
  function g.of_kind(kind)
    local list = g.by_kind[kind]
    if list and #list > 0 then return pick(list) end
    return nil
  end

  local function any_pooled()
    if not g.kinds then
      g.kinds = {}
      for k in pairs(g.by_kind) do g.kinds[#g.kinds + 1] = k end
      table.sort(g.kinds)
    end
    if #g.kinds == 0 then return nil end
    return g.of_kind(pick(g.kinds))
  end

  local function number()
    local r = rng(10)
    if r <= 6 then return V.number(pick(small_ints)) end
    return pick(hostile_numbers)
  end

  local function str()
    local r = rng(20)
    if r == 1 then return string.format("string.rep(\"x\", %d)", pick{1000, 100000, 3000000}) end
    if r == 2 then return V.string(string.char(rng(256) - 1, rng(256) - 1, rng(256) - 1)) end
    return V.string(pick(strings))
  end

  local table_value
  -- a small array of numbers, nested 0-2 levels (tensor data, shapes)
  local function data(depth)
    local n = rng(4) - 1
    local items = {}
    for i = 1, n do
      if depth > 0 and rng(3) == 1 then items[i] = data(depth - 1) else items[i] = number() end
    end
    return "{" .. table.concat(items, ", ") .. "}"
  end
  -- an option table: names uopdb reads, random values
  local function options()
    local n = rng(3)
    local items = {}
    for i = 1, n do
      local k = pick(keys)
      local val
      local r = rng(6)
      if r == 1 then val = number()
      elseif r == 2 then val = str()
      elseif r == 3 then val = pick{"true", "false"}
      elseif r == 4 then val = data(1)
      elseif r == 5 then val = any_pooled() or "nil"
      else val = table_value(0) end
      items[i] = string.format("[%s] = %s", V.string(k), val)
    end
    return "{" .. table.concat(items, ", ") .. "}"
  end
  -- an array of pooled values and numbers
  local function mixed()
    local n = rng(4) - 1
    local items = {}
    for i = 1, n do items[i] = (rng(2) == 1 and any_pooled()) or number() end
    return "{" .. table.concat(items, ", ") .. "}"
  end
  table_value = function(depth)
    local r = rng(10)
    if r <= 3 then return data(2) end
    if r <= 5 and depth > 0 then return options() end
    if r <= 7 then return mixed() end
    return pick(hostile_tables)
  end

  -- one random argument
  function g.arg()
    local r = rng(100)
    if r <= 40 then return any_pooled() or number() end
    if r <= 62 then return number() end
    if r <= 74 then return str() end
    if r <= 90 then return table_value(1) end
    return pick(hostile_others)
  end

  return g
end

return V
