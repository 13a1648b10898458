# capture_tinygrad_gpu.py - records what tinygrad v0.12.0 makes of a few
# kernels for a GPU target with given opts, into tests/golden/tinygrad_gpu.txt
# (read by tests/lua/test_gpu.lua).  No GPU is needed: the program is only
# linearized and rendered, for a renderer with local memory whose limits are
# the generic GPU's of uopdb (those of tinygrad's CUDA renderer).
#
# Run by hand, from the repository root, with tinygrad v0.12.0 importable:
#   PYTHONPATH=/path/to/tinygrad python3 scripts/capture_tinygrad_gpu.py > tests/golden/tinygrad_gpu.txt
#
# Output: one line per kernel, "<case> <kernel index> <opts> <specials>
# <locals> <barriers>": opts "OP:axis:amount" joined by commas ("-" for
# none), specials "name=size" sorted by name and joined by commas,
# locals the sizes of the DEFINE_LOCALs joined by commas ("-" for none),
# barriers how many BARRIERs the program has.
from tinygrad import Tensor
from tinygrad.codegen import get_program
from tinygrad.codegen.opt import Opt, OptOps
from tinygrad.uop.ops import Ops
from tinygrad.renderer.cstyle import OpenCLRenderer

class GenericGPU(OpenCLRenderer):
  global_max = (2147483647, 65535, 65535)
  local_max = (1024, 1024, 64)
  shared_max = 49152

def r(*shape):
  n = 1
  for s in shape: n *= s
  return (Tensor.arange(n) % 7).float().reshape(*shape).contiguous().realize()

O = OptOps
def cases():
  yield "matmul16", lambda: r(16, 16) @ r(16, 16), [[Opt(O.LOCAL, 0, 4), Opt(O.GROUP, 0, 8)]]
  yield "matmul8", lambda: r(8, 8) @ r(8, 8), [[Opt(O.LOCAL, 0, 4), Opt(O.GROUP, 0, 4)]]
  yield "matmul_locals", lambda: r(16, 16) @ r(16, 16), [[Opt(O.LOCAL, 0, 4), Opt(O.LOCAL, 1, 4), Opt(O.UNROLL, 0, 4)]]
  yield "sum_grouptop", lambda: r(8, 64).sum(1), [[Opt(O.GROUPTOP, 0, 16)]]
  yield "sum_all", lambda: r(256).sum(), [[Opt(O.GROUP, 0, 16)]]
  yield "softmax", lambda: r(4, 32).softmax(), [[Opt(O.GROUPTOP, 0, 8)], [Opt(O.GROUP, 0, 8)], [Opt(O.LOCAL, 0, 2)]]
  yield "nolocals", lambda: r(8, 8) @ r(8, 8), [[Opt(O.NOLOCALS)]]
  yield "swap", lambda: r(4, 8).permute(1, 0).contiguous(), [[Opt(O.SWAP, 0, 1)]]
  yield "padto", lambda: r(6, 6) @ r(6, 6), [[Opt(O.PADTO, 0, 8), Opt(O.LOCAL, 0, 4)]]

ren = GenericGPU()
print("# tinygrad v0.12.0, an OpenCL renderer with CUDA's limits")
for name, make, opts in cases():
  items = [si for si in make().schedule() if si.ast.op is Ops.SINK]
  for i, si in enumerate(items):
    o = opts[i] if i < len(opts) else []
    p = get_program(si.ast, ren, o)
    text = ",".join(f"{x.op.name}:{x.axis if x.axis is not None else 0}:{x.arg if x.arg is not None else 0}" for x in o) or "-"
    specials = ",".join(sorted(f"{u.arg}={u.src[0].arg}" for u in p.uops if u.op is Ops.SPECIAL))
    locs = ",".join(str(u.dtype.size) for u in p.uops if u.op is Ops.DEFINE_LOCAL) or "-"
    bars = sum(1 for u in p.uops if u.op is Ops.BARRIER)
    print(f"{name} {i} {text} {specials or '-'} {locs} {bars}")
