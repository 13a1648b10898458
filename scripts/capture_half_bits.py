#!/usr/bin/env python3
"""capture_half_bits.py - prints the float16 results that tinygrad v0.12.0's
CPU LLVM backend gives for the inputs of tests/lua/test_semantics.lua, as
16-bit patterns, which that test keeps as its expected values.

Run from a tinygrad v0.12.0 checkout:
  CPU=1 CPU_LLVM=1 PYTHONPATH=<tinygrad> python3 scripts/capture_half_bits.py
(CPU_LLVM=1 picks the LLVM renderer; without it the CPU device uses clang,
whose __fp16 arithmetic is done in float and rounded only at the store.)

The inputs are half values built from small integers (k/64 etc.), so the Lua
test writes the same numbers exactly."""
import struct
from tinygrad import Tensor, dtypes
from tinygrad.device import Device

def bits(vals): return [struct.unpack('<H', struct.pack('<e', v))[0] for v in vals]
def show(name, t): print(f"{name} = {{" + ", ".join(f"0x{b:04x}" for b in bits(t.tolist())) + "}")

H = dtypes.half
# a*b+c: a and b with all 11 bits used, so a*b needs 22 bits, and c near -1,
# which cancels the leading bits (a rounding of a*b before the add shows)
A = [(1025 + 37 * i) / 1024 for i in range(16)]
B = [(1537 + 53 * i) / 1024 for i in range(16)]
C = [-(1 + i / 1024) for i in range(16)]
# a chain of adds: big + small terms, where a rounding between the adds shows
D = [1000 + 3 * i for i in range(16)]
E = [(2 * i + 1) / 16 for i in range(16)]
F = [(3 * i + 1) / 32 for i in range(16)]
# a sum of 64 halves
S = [(17 * i % 29) / 8 + 100 for i in range(64)]
# exp of halves
X = [(i - 32) / 8 for i in range(64)]

print("device", Device.DEFAULT, type(Device[Device.DEFAULT].renderer).__name__)
show("MULADD", Tensor(A, dtype=H) * Tensor(B, dtype=H) + Tensor(C, dtype=H))
show("ADDS", Tensor(D, dtype=H) + Tensor(E, dtype=H) + Tensor(F, dtype=H) + Tensor(E, dtype=H))
show("SUM", Tensor(S, dtype=H).sum().reshape(1))
show("EXP", Tensor(X, dtype=H).exp())
