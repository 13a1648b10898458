-- test_dtype.lua - uop.dtypes and dtype values.
local T = ...
local d = uop.dtypes

T.test("every scalar name and alias is there", function()
  for _, name in ipairs({"void", "index", "bool", "int8", "uint8", "int16", "uint16", "int32", "uint32",
                         "int64", "uint64", "float16", "bfloat16", "float32", "float64",
                         "int", "float", "half", "double", "long", "uchar"}) do
    T.ok(d[name] ~= nil, "uop.dtypes." .. name)
  end
end)

T.test("dt:round gives the nearest value a float dtype holds, as a CAST rounds", function()
  local d = uop.dtypes
  T.eq(d.float16:round(0.1), 0.0999755859375)        -- 1638 * 2^-14
  T.eq(d.float16:round(6e-8), 2 ^ -24)               -- the smallest subnormal
  T.eq(d.bfloat16:round(1 / 3), 0.333984375)
  T.eq(d.float32:round(0.1), string.unpack("f", string.pack("f", 0.1)))
  T.eq(d.float64:round(0.1), 0.1)
  T.raises("round: int32 is not a float dtype", function() return d.int32:round(1) end)
end)

T.test("aliases are the same value", function()
  T.ok(rawequal(d.float, d.float32), "float is float32")
  T.ok(rawequal(d.int, d.int32), "int is int32")
  T.eq(tostring(d.half), "float16")
end)

T.test("tostring uses uopdb's spelling", function()
  T.eq(tostring(d.float32), "float32")
  T.eq(tostring(d.float32:vec(4)), "float32.vec(4)")
  T.eq(tostring(d.float32:ptr(16)), "float32.ptr(16)")
  T.eq(tostring(d.float32:ptr(16, "local")), "float32.ptr(16, local)")
  T.eq(d.float32:ptr(9):tinygrad(), "dtypes.float.ptr(9)")
end)

T.test("vec, scalar, count, base and equality", function()
  local v = d.float32:vec(4)
  T.eq(v:count(), 4)
  T.ok(v:scalar() == d.float32, "scalar of vec")
  T.ok(rawequal(v, d.float:vec(4)), "interned: one value per dtype")
  T.ok(d.int32 ~= d.int64, "different dtypes differ")
  T.eq(d.float32:ptr(16):base(), d.float32)
  T.eq(d.float32:vec(4):itemsize(), 16)
  T.ok(d.float32:is_float() and not d.float32:is_int(), "float32 is a float")
  T.ok(d.index:is_int(), "index is an int")
end)

T.test("bad input is an error, not a crash", function()
  T.raises("unknown address space 'shared'", function() return d.float32:ptr(4, "shared") end)
  T.raises("out of range", function() return d.float32:vec(0) end)
  T.raises("unknown dtype 'flot'", uop.const, "flot", 1)
  T.raises("dtype expected", uop.const, 42, 1)
end)

T.test("dtype names are accepted where a dtype is expected", function()
  T.eq(uop.const("int32", 3):dtype(), d.int32)
  T.eq(uop.const("float32.vec(2)", 1.0):dtype(), d.float32:vec(2))
end)
