-- tensor_format.lua - a tensor's values as numpy prints an array (str() of
-- np.array with numpy's default print options: 75 columns, summaries of
-- arrays over 1000 elements with 3 items at each end, floats with at most 8
-- fractional digits), so a tensor here prints as tinygrad's t.numpy() does.
--
-- Floats follow numpy's FloatingFormat: each value is the shortest decimal
-- that reads back as it in its dtype (rounded back by dt:round, as a CAST
-- rounds), cut to 8 fractional digits; all are
-- aligned at the point and padded on the right; the array switches to
-- scientific notation, every mantissa with the same number of digits, when
-- a nonzero magnitude is 1e8 or more, below 1e-4, or the largest is over
-- 1000 times the smallest.  nan and inf are right-aligned in the field.

local uop, shared = ...
local Tensor = uop.Tensor
local info, to_dtype = shared.info, shared.to_dtype

local LINE_WIDTH = 75
local THRESHOLD = 1000
local EDGE_ITEMS = 3
local PRECISION = 8

-- v (finite) as "%.Ne" with the fewest digits that read back as v in its
-- dtype, then, given cap, at most cap digits after the mantissa's point
local function shortest_sci(v, dt, cap)
  local s
  for p = 0, 16 do
    s = string.format("%." .. p .. "e", v)
    if dt:round(tonumber(s)) == v then break end
  end
  local frac = s:match("^-?%d%.?(%d*)e")
  if cap and #frac > cap then s = string.format("%." .. cap .. "e", v) end
  return s
end

-- the integer and fraction digits of finite v, positional: the shortest
-- that read back as v, trailing zeros trimmed, then, given cap, at most cap
-- fraction digits
local function positional_parts(v, dt, cap)
  local s = shortest_sci(v, dt)
  local sign, lead, rest, e = s:match("^(-?)(%d)%.?(%d*)e([-+]%d+)$")
  local digits, exp = lead .. rest, tonumber(e)
  local int, frac
  if exp >= 0 then
    digits = digits .. string.rep("0", exp + 1 - #digits)
    int, frac = digits:sub(1, exp + 1), digits:sub(exp + 2)
  else
    int, frac = "0", string.rep("0", -exp - 1) .. digits
  end
  frac = frac:gsub("0+$", "")
  if cap and #frac > cap then
    int, frac = string.format("%." .. cap .. "f", math.abs(v)):match("^(%d+)%.(%d*)$")
    frac = frac:gsub("0+$", "")
  end
  return sign .. int, frac
end

-- a function that formats one value of `values` (the elements shown) for a
-- float dtype, every result of the same width
local function float_formatter(values, dt)
  local finite, nonzero_min, nonzero_max, neg_inf = {}, nil, nil, false
  local nonfinite = false
  for _, v in ipairs(values) do
    if v == v and v ~= math.huge and v ~= -math.huge then
      finite[#finite + 1] = v
      local a = math.abs(v)
      if a ~= 0 then
        nonzero_min = nonzero_min and math.min(nonzero_min, a) or a
        nonzero_max = nonzero_max and math.max(nonzero_max, a) or a
      end
    else
      nonfinite, neg_inf = true, neg_inf or v == -math.huge
    end
  end
  local exp_format = nonzero_max ~= nil and
      (nonzero_max >= 1e8 or nonzero_min < 1e-4 or nonzero_max / nonzero_min > 1000)
  local pad_left, pad_right = 0, 0
  local precision, exp_size = 0, 0
  if exp_format then
    for _, v in ipairs(finite) do
      local int, frac, e = shortest_sci(v, dt, PRECISION):match("^(-?%d)%.?(%d*)e[-+](%d+)$")
      pad_left, precision, exp_size = math.max(pad_left, #int), math.max(precision, #frac), math.max(exp_size, #e)
    end
    pad_right = exp_size + 2 + precision
  else
    for _, v in ipairs(finite) do
      local int, frac = positional_parts(v, dt, PRECISION)
      pad_left, pad_right = math.max(pad_left, #int), math.max(pad_right, #frac)
    end
  end
  -- room for nan and inf, right-aligned over the point and the fraction
  if nonfinite then
    pad_left = math.max(pad_left, 3 - (pad_right + 1), 3 + (neg_inf and 1 or 0) - (pad_right + 1))
  end
  local width = pad_left + pad_right + 1
  return function(v)
    local s
    if v ~= v or v == math.huge or v == -math.huge then
      local word = v ~= v and "nan" or v > 0 and "inf" or "-inf"
      s = string.rep(" ", width - #word) .. word
    elseif exp_format then
      local int, frac, e = shortest_sci(v, dt, PRECISION):match("^(-?%d)%.?(%d*)(e[-+]%d+)$")
      local esign, edigits = e:match("^e([-+])(%d+)$")
      s = string.rep(" ", pad_left - #int) .. int .. "." .. frac .. string.rep("0", precision - #frac) ..
          "e" .. esign .. string.rep("0", exp_size - #edigits) .. edigits
    else
      local int, frac = positional_parts(v, dt, PRECISION)
      s = string.rep(" ", pad_left - #int) .. int .. "." .. frac .. string.rep(" ", pad_right - #frac)
    end
    return s
  end
end

-- a 0-d tensor's value as numpy's str() of a scalar: a float with all the
-- digits that read back as it, positional from 1e-4 to 1e16 ("3.0"),
-- else in e-notation with no trailing zeros ("1e+16")
local function scalar_str(v, kind, dt)
  if kind == "bool" then return v and "True" or "False" end
  if kind ~= "float" then return nil end
  if v ~= v then return "nan" end
  if v == math.huge or v == -math.huge then return v > 0 and "inf" or "-inf" end
  local a = math.abs(v)
  if a == 0 or (a >= 1e-4 and a < 1e16) then
    local int, frac = positional_parts(v, dt)
    return int .. "." .. (frac == "" and "0" or frac)
  end
  local mant, e = shortest_sci(v, dt):match("^(-?[%d.]+)(e[-+]%d+)$")
  return (mant:gsub("%.?0*$", "")) .. e
end

-- a function that formats one value for an int or bool dtype, right-aligned
local function plain_formatter(values, kind, name)
  local function word(v)
    if kind == "bool" then return v and "True" or "False" end
    if name == "uint64" and v < 0 then
      -- Lua integers are signed: a uint64 of 2^63 or more holds v + 2^64
      local q = (v >> 1) // 5
      return string.format("%d%d", q, v - q * 10)
    end
    return string.format("%d", v)
  end
  local width = 0
  for _, v in ipairs(values) do width = math.max(width, #word(v)) end
  return function(v)
    local w = word(v)
    return string.rep(" ", width - #w) .. w
  end
end

-- values (nested lists of shape) as numpy's str() of the array
local function format_values(values, shape, dt)
  dt = to_dtype(dt)
  local kind, name = info(dt).kind, info(dt).name
  if #shape == 0 then return scalar_str(values, kind, dt) or plain_formatter({values}, kind, name)(values) end
  local total = 1
  for _, d in ipairs(shape) do total = total * d end
  local summarise = total > THRESHOLD
  local function items_of(n)
    local items = {}
    for i = 1, n do
      if summarise and n > 2 * EDGE_ITEMS and i == EDGE_ITEMS + 1 then items[#items + 1] = 0 end
      if not summarise or n <= 2 * EDGE_ITEMS or i <= EDGE_ITEMS or i > n - EDGE_ITEMS then
        items[#items + 1] = i
      end
    end
    return items
  end
  -- the elements shown decide the format, as numpy formats a summary
  local shown = {}
  local function collect(a, dim)
    for _, i in ipairs(items_of(#a)) do
      if i > 0 then
        if dim == #shape then shown[#shown + 1] = a[i] else collect(a[i], dim + 1) end
      end
    end
  end
  collect(values, 1)
  local cell = kind == "float" and float_formatter(shown, dt) or plain_formatter(shown, kind, name)
  -- numpy's _formatArray: a row's elements fill lines of `width`, each
  -- nested level one character narrower and indented one more (hanging); a
  -- line breaks before the element that would pass the width less the
  -- closing bracket, unless the line holds no element yet
  local function render(a, dim, hanging, width)
    local items, out = items_of(#a), {}
    if dim == #shape then
      local line = hanging
      for j, i in ipairs(items) do
        local word = i == 0 and "..." or cell(a[i])
        if #line + #word > width - 1 and #line > #hanging then
          out[#out + 1] = line:gsub("%s+$", "") .. "\n"
          line = hanging
        end
        line = line .. word .. (j < #items and " " or "")
      end
      out[#out + 1] = line
    else
      local sep = string.rep("\n", #shape - dim)
      for j, i in ipairs(items) do
        local nested = i == 0 and "..." or render(a[i], dim + 1, hanging .. " ", width - 1)
        out[#out + 1] = hanging .. nested .. (j < #items and sep or "")
      end
    end
    return "[" .. table.concat(out):sub(#hanging + 1) .. "]"
  end
  return render(values, 1, " ", LINE_WIDTH)
end

Tensor.format_values = format_values
