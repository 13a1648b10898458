#!/usr/bin/env python3
"""Captures tinygrad v0.12.0's linearized program of one kernel for the CPU LLVM
renderer (stage 18's decompositions included) into tests/golden/, for
tests/lua/test_transcendental.lua to compare uopdb's program with.

Run by hand from the repository root, with tinygrad v0.12.0 importable:

    PYTHONPATH=/path/to/tinygrad python3 scripts/capture_tinygrad_stage18.py

It writes tests/golden/tinygrad_exp_sigmoid_linear.txt: the kernel of
`x.exp() + x.sigmoid()` on a float32 tensor of 16, scheduled by tinygrad and
lowered without opts (the test compiles it with opts = "none") by LLVMRenderer.  One line
per instruction: op, dtype, arg, and the positions (from 0) of its sources,
separated by tabs; dtypes in uopdb's spelling (float32, int32, float32.ptr(16)),
float args as Python's shortest round-trip repr, range args as "axis TYPE"."""
import os
from tinygrad import Tensor, dtypes
from tinygrad.dtype import PtrDType
from tinygrad.renderer.llvmir import LLVMRenderer
from tinygrad.codegen import get_program
from tinygrad.uop.ops import Ops, graph_rewrite
from tinygrad.codegen import pm_mops, pm_syntactic_sugar
from tinygrad.codegen.simplify import pm_load_collapse

NAMES = {"float": "float32", "double": "float64", "half": "float16", "int": "int32", "uint": "uint32",
         "long": "int64", "ulong": "uint64", "char": "int8", "uchar": "uint8", "short": "int16",
         "ushort": "uint16", "bool": "bool", "bfloat16": "bfloat16", "void": "void"}

def dtype_name(dt) -> str:
  if isinstance(dt, PtrDType): return f"{dtype_name(dt.base)}.ptr({dt.size})"
  name = NAMES[dt.scalar().name]
  return f"{name}.vec({dt.count})" if dt.count > 1 else name

def arg_text(u) -> str:
  if u.op is Ops.SINK or u.arg is None: return "-"
  if u.op is Ops.RANGE: return f"{u.arg[0]} {u.arg[-1].name}"
  if isinstance(u.arg, bool): return "true" if u.arg else "false"
  return repr(u.arg)

def capture(out_path: str) -> None:
  x = Tensor.empty(16, dtype=dtypes.float32)
  y = x.exp() + x.sigmoid()
  ast = [s.ast for s in y.schedule() if s.ast.op is Ops.SINK][-1]
  prg = get_program(ast, LLVMRenderer(), opts=[])
  pos = {u: i for i, u in enumerate(prg.uops)}
  with open(out_path, "w") as f:
    for u in prg.uops:
      f.write("\t".join([u.op.name, dtype_name(u.dtype), arg_text(u), " ".join(str(pos[s]) for s in u.src)]) + "\n")
  print(f"{out_path}: {len(prg.uops)} instructions")

def capture_load_collapse(before_path: str, after_path: str) -> None:
  x = Tensor.empty(8, dtype=dtypes.float32)
  idx = Tensor.empty(4, dtype=dtypes.int32)
  y = (Tensor.arange(8).reshape(1, 8) == idx.reshape(4, 1)).where(x.reshape(1, 8), 0).sum(1)
  ast = [s.ast for s in y.schedule() if s.ast.op is Ops.SINK][-1]
  after = graph_rewrite(graph_rewrite(ast, pm_mops+pm_syntactic_sugar, bottom_up=True), pm_load_collapse)
  for path, u in ((before_path, ast), (after_path, after)):
    with open(path, "w") as f: f.write(str(u) + "\n")
    print(path)

if __name__ == "__main__":
  golden = os.path.join(os.path.dirname(__file__), "..", "tests", "golden")
  capture(os.path.join(golden, "tinygrad_exp_sigmoid_linear.txt"))
  capture_load_collapse(os.path.join(golden, "tinygrad_load_collapse_before.txt"),
                        os.path.join(golden, "tinygrad_load_collapse_after.txt"))
