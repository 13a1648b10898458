#!/usr/bin/env python3
"""capture_float_to_int.py - prints what tinygrad v0.12.0's CPU LLVM backend
gives for float32 values cast to each integer dtype, out-of-range values and
NaN included, for the float-to-int test of tests/lua/test_semantics.lua,
which keeps these lists as its expected values.

Run from a tinygrad v0.12.0 checkout on an x86-64 machine:
  CPU=1 CPU_LLVM=1 PYTHONPATH=<tinygrad> python3 scripts/capture_float_to_int.py

LLVM's fptosi/fptoui of an out-of-range value is poison; these are what the
x86-64 code LLVM makes of it gives (cvttss2si's 0x80000000, then wrapped;
AVX-512's all ones for the unsigned 32- and 64-bit conversions)."""
import math
from tinygrad import Tensor, dtypes
from tinygrad.device import Device

X = [math.nan, math.inf, -math.inf, 3e9, -3e9, 2.7, -2.7, 1e20, 150.0, -150.0, -1.5, 255.9, -0.5]
print("device", Device.DEFAULT, type(Device[Device.DEFAULT].renderer).__name__)
for name in ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"]:
  print(name, "= {" + ", ".join(str(v) for v in Tensor(X, dtype=dtypes.float32).cast(getattr(dtypes, name)).tolist()) + "}")
