-- tensor_einsum.lua - Tensor.einsum(formula, a, b, ... [, {dtype =}]):
-- Einstein summation as tinygrad builds it.  "..." becomes letters unused
-- in the formula; a letter repeated in one input takes that diagonal; each
-- input is permuted to alphabetical order, reshaped and expanded to every
-- letter's axis, all are multiplied, the letters not in the output are
-- summed, and the rest permuted to the output's order.  Without "->" the
-- output is the letters used once, sorted.  Also x:rearrange(formula),
-- einops' formula of axis names: unflatten, permute, flatten.
local uop, shared = ...
local Tensor = uop.Tensor
local fail = shared.fail
local to_dtype = shared.to_dtype

local function count(s, c)
  local n = 0
  for i = 1, #s do if s:sub(i, i) == c then n = n + 1 end end
  return n
end

local function is_letter(c) return c:match("^%a$") ~= nil end

local function sorted_chars(s)
  local t = {}
  for i = 1, #s do t[i] = s:sub(i, i) end
  table.sort(t)
  return t
end

local function split_commas(s)
  local r = {}
  for part in (s .. ","):gmatch("([^,]*),") do r[#r + 1] = part end
  return r
end

-- the formula with "..." written out as letters
local function expand_ellipsis(formula, xs)
  local ell = {}
  for c in ("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"):gmatch(".") do
    if not formula:find(c, 1, true) then ell[#ell + 1] = c end
  end
  ell = table.concat(ell)
  local lhs = formula:match("^(.-)%->") or formula
  local inputs = split_commas(lhs)
  local ell_n, most = {}, 0
  for i, s in ipairs(inputs) do
    ell_n[i] = 0
    if s:find("...", 1, true) and xs[i] then ell_n[i] = math.max(0, #xs[i]._shape - #s + 3) end
    most = math.max(most, ell_n[i])
  end
  for i, s in ipairs(inputs) do
    inputs[i] = s:gsub("%.%.%.", (ell:sub(most - ell_n[i] + 1, most):gsub("%%", "%%%%")))
  end
  local auto = {}
  for _, c in ipairs(sorted_chars(lhs)) do
    if count(lhs, c) == 1 and is_letter(c) then auto[#auto + 1] = c end
  end
  local rhs = formula:match("%->(.*)$")
  if rhs then rhs = rhs:gsub("%.%.%.", (ell:sub(1, most):gsub("%%", "%%%%")))
  else rhs = ell:sub(1, most) .. table.concat(auto) end
  return table.concat(inputs, ",") .. "->" .. rhs
end

-- x with the axes of the repeated letter c of s reduced to their diagonal
local function take_diagonal(x, s, c)
  local j = s:find(c, 1, true)
  local k = s:find(c, j + 1, true)
  local n = x._shape[j]
  if x._shape[k] ~= n then
    fail("einsum: the letter '%s' repeated in one input has sizes %d and %d", c, n, x._shape[k])
  end
  if #x._shape > 2 then
    local perm = {}
    for d = 0, #x._shape - 1 do if d ~= j - 1 and d ~= k - 1 then perm[#perm + 1] = d end end
    perm[#perm + 1], perm[#perm + 2] = j - 1, k - 1
    local pads = {}
    for d = 1, #x._shape - 2 do pads[d] = {0, 0} end
    pads[#x._shape - 1] = {0, n}
    local spec = {}
    spec[#x._shape] = 0
    x = x:permute(perm):flatten(-2):pad(pads):unflatten(-1, {n, n + 1}):slice(spec)
  else
    x = x:diagonal()
  end
  -- the diagonal is the last axis now (tinygrad v0.12.0 keeps the letter at
  -- its first place instead, which transposes "iij->ij")
  return x, s:sub(1, j - 1) .. s:sub(j + 1, k - 1) .. s:sub(k + 1) .. c
end

function Tensor.einsum(formula, ...)
  if type(formula) ~= "string" then fail("einsum: the formula must be a string, got %s", type(formula)) end
  local xs, opts = shared.tensor_args("einsum", {dtype = true}, ...)
  formula = formula:gsub(" ", "")
  if formula:find("...", 1, true) then formula = expand_ellipsis(formula, xs) end
  local lhs, rhs = formula:match("^(.-)%->(.*)$")
  if not lhs then
    lhs = formula
    local once = {}
    for _, c in ipairs(sorted_chars(formula)) do
      if count(formula, c) == 1 and is_letter(c) then once[#once + 1] = c end
    end
    rhs = table.concat(once)
  end
  local inputs = split_commas(lhs)
  if #xs ~= #inputs then fail("einsum: the formula has %d operands, %d given", #inputs, #xs) end
  local sizes, letters = {}, {}
  for i, s in ipairs(inputs) do
    if not s:match("^%a*$") then fail("einsum: input '%s' is not made of letters", s) end
    local x = xs[i]
    if #s ~= #x._shape then
      fail("einsum: input '%s' names %d axes of a %d-D operand", s, #s, #x._shape)
    end
    local seen = {}
    for _, c in ipairs(sorted_chars(s)) do
      if not seen[c] then
        seen[c] = true
        while count(s, c) > 1 do x, s = take_diagonal(x, s, c) end
      end
    end
    inputs[i], xs[i] = s, x
    for p = 1, #s do
      local c, size = s:sub(p, p), x._shape[p]
      if sizes[c] == nil then
        sizes[c] = size
        letters[#letters + 1] = c
      elseif sizes[c] ~= size then
        fail("einsum: the letter '%s' has sizes %d and %d", c, sizes[c], size)
      end
    end
  end
  table.sort(letters)
  for p = 1, #rhs do
    local c = rhs:sub(p, p)
    if sizes[c] == nil then fail("einsum: the output letter '%s' is not in any input", c) end
    if count(rhs, c) > 1 then fail("einsum: the output letter '%s' appears more than once", c) end
  end
  local full, prod = {}, nil
  for k, c in ipairs(letters) do full[k] = sizes[c] end
  for i, s in ipairs(inputs) do
    local x = xs[i]
    if #s > 0 then
      local order, shape = {}, {}
      for k, c in ipairs(sorted_chars(s)) do order[k] = s:find(c, 1, true) - 1 end
      for k, c in ipairs(letters) do shape[k] = s:find(c, 1, true) and sizes[c] or 1 end
      x = x:permute(order):reshape(shape):expand(full)
    end
    prod = prod and prod:mul(x) or x
  end
  local axes = {}
  for k, c in ipairs(letters) do
    if not rhs:find(c, 1, true) then axes[#axes + 1] = k - 1 end
  end
  local summed = prod:sum(axes, {dtype = opts.dtype and to_dtype(opts.dtype)})
  -- the output axes are in sorted order; each goes where rhs puts it
  local sorted_rhs, rank = sorted_chars(rhs), {}
  for k, c in ipairs(sorted_rhs) do rank[c] = k - 1 end
  local order = {}
  for p = 1, #rhs do order[p] = rank[rhs:sub(p, p)] end
  return summed:permute(order)
end

-- ---------------------------------------------------------------- rearrange

-- one side of a rearrange formula: its axis names in order, "..." as one
-- name, and each parenthesised group as {first, last + 1} positions in
-- that list; a lone 1 is an empty group (a unit axis)
local function rearrange_side(what, side)
  local text = (" " .. side .. " "):gsub("…", "..."):gsub("%(", " ( "):gsub("%)", " ) ")
  local names, groups, open = {}, {}, nil
  for tok in text:gmatch("%S+") do
    if tok == "(" or tok == "1" then
      if open then fail("%s: a group inside a group", what) end
      open = #names + 1
      if tok == "1" then groups[#groups + 1], open = {open, open}, nil end
    elseif tok == ")" then
      if not open then fail("%s: ')' without '('", what) end
      groups[#groups + 1], open = {open, #names + 1}, nil
    else
      if tok ~= "..." and not (tok:match("^[%a_][%w_]*$") and not tok:match("^_") and not tok:match("_$")) then
        fail("%s: invalid axis name '%s'", what, tok)
      end
      names[#names + 1] = tok
    end
  end
  if open then fail("%s: '(' without ')'", what) end
  return names, groups
end

-- x:rearrange(formula [, sizes]): einops' rearrange, as tinygrad builds it:
-- "b (h w) c -> b h (w c)" unflattens the left side's groups (sizes names
-- the sizes of the new axes), permutes the names to the right side's
-- order and flattens its groups; "..." stands for the axes not named
function Tensor:rearrange(formula, sizes)
  local what = "rearrange"
  if type(formula) ~= "string" then fail("%s: the formula must be a string, got %s", what, type(formula)) end
  sizes = sizes or {}
  if type(sizes) ~= "table" or shared.is_tensor(sizes) then fail("%s: sizes must be a table of name = size, got %s", what, type(sizes)) end
  local arrow = formula:find("->", 1, true)
  if not arrow or formula:find("->", arrow + 2, true) then fail("%s: the formula needs exactly one '->', got '%s'", what, formula) end
  local lhs, unflats = rearrange_side(what, formula:sub(1, arrow - 1))
  local rhs, flats = rearrange_side(what, formula:sub(arrow + 2))
  local at_left = {}
  for i, name in ipairs(lhs) do
    if at_left[name] then fail("%s: axis %s appears twice on the left of '%s'", what, name, formula) end
    at_left[name] = i
  end
  local on_right = {}
  for _, name in ipairs(rhs) do
    if not at_left[name] or on_right[name] then fail("%s: the names of the two sides of '%s' differ", what, formula) end
    on_right[name] = true
  end
  if #rhs ~= #lhs then fail("%s: the names of the two sides of '%s' differ", what, formula) end
  for name, size in pairs(sizes) do
    if not at_left[name] then fail("%s: axis %s is not on the left of '%s'", what, shared.show(name), formula) end
    if math.type(size) ~= "integer" then fail("%s: the size of %s must be an integer, got %s", what, name, shared.show(size)) end
  end
  for _, g in ipairs(unflats) do
    for i = g[1], g[2] - 1 do if lhs[i] == "..." then fail("%s: '...' inside a group on the left of '%s'", what, formula) end end
  end
  -- "..." becomes one name per axis it stands for, and the groups after it move
  if at_left["..."] then
    local grouped = 0
    for _, g in ipairs(unflats) do grouped = grouped + g[2] - g[1] - 1 end
    local count = #self._shape - #lhs + 1 + grouped
    if count < 0 then fail("%s: '%s' names more axes than %s has", what, formula, shared.fmt_shape(self._shape)) end
    local function expand_side(names, groups)
      local at, out = nil, {}
      for i, name in ipairs(names) do
        if name == "..." then
          at = i
          for j = 0, count - 1 do out[#out + 1] = "..." .. j end
        else
          out[#out + 1] = name
        end
      end
      for _, g in ipairs(groups) do
        if g[1] > at then g[1] = g[1] + count - 1 end
        if g[2] > at then g[2] = g[2] + count - 1 end
      end
      return out
    end
    lhs, rhs = expand_side(lhs, unflats), expand_side(rhs, flats)
  end
  local t = self
  for _, g in ipairs(unflats) do
    local parts = {}
    for i = g[1], g[2] - 1 do parts[#parts + 1] = sizes[lhs[i]] or -1 end
    t = t:unflatten(g[1] - 1, parts)
  end
  if #t._shape ~= #lhs then
    fail("%s: '%s' names %d axes, %s has %d", what, formula, #lhs, shared.fmt_shape(self._shape), #self._shape)
  end
  for i, name in ipairs(lhs) do
    if sizes[name] and sizes[name] ~= t._shape[i] then
      fail("%s: axis %s has size %d, not %d", what, name, t._shape[i], sizes[name])
    end
  end
  local index = {}
  for i, name in ipairs(lhs) do index[name] = i - 1 end
  local order = {}
  for i, name in ipairs(rhs) do order[i] = index[name] end
  t = t:permute(order)
  for k = #flats, 1, -1 do
    local g = flats[k]
    if g[1] < g[2] then t = t:flatten(g[1] - 1, g[2] - 2) else t = t:unsqueeze(g[1] - 1) end
  end
  return t
end
