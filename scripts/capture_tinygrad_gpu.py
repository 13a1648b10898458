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
# <locals> <barriers> <name>": opts "OP:axis:amount" joined by commas ("-" for
# none), specials "name=size" sorted by name and joined by commas,
# locals the sizes of the DEFINE_LOCALs joined by commas ("-" for none),
# barriers how many BARRIERs the program has, name the kernel's function
# name (n1, n2, ... appended to a name the process gave before).  Then one
# line per kernel of the heuristic's cases, "heuristic <case> <kernel index>
# <opts>": the opts tinygrad's hand_coded_optimizations chooses for this
# renderer (the inputs are ones, as in scripts/capture_tinygrad_opts.py).
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
  # dims fitted to the limits: a 2048-long local split, five locals merged, a 280000 grid
  yield "split_local", lambda: r(4096) + 1, [[Opt(O.LOCAL, 0, 2048)]]
  yield "five_locals", lambda: r(4, 4, 4, 4, 4).permute(4, 3, 2, 1, 0).contiguous(), [[Opt(O.LOCAL, i, 2) for i in range(5)]]
  yield "big_grid", lambda: r(4, 70000) + 1, [[]]

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
    print(f"{name} {i} {text} {specials or '-'} {locs} {bars} {p.function_name}")

def ones(*shape): return Tensor.ones(*shape).contiguous().realize()
def heuristic_cases():
  yield "matmul512", lambda: ones(512, 512) @ ones(512, 512)
  yield "matmul64", lambda: ones(64, 64) @ ones(64, 64)
  yield "matvec", lambda: ones(1, 64) @ ones(64, 64)
  yield "conv2d", lambda: ones(1, 32, 56, 56).conv2d(ones(64, 32, 3, 3), padding=1)
  yield "softmax", lambda: ones(64, 4096).softmax()
  yield "sum1m", lambda: ones(1 << 20).sum()
  yield "add1m", lambda: ones(1 << 20) + ones(1 << 20)
  yield "small", lambda: ones(4, 4) * 2 + 1
  yield "mean", lambda: ones(3, 5).mean()
  yield "pad_flip", lambda: ones(3, 4).pad(((1, 1), (2, 0))).flip(1) * 2
  yield "conv_small", lambda: ones(1, 2, 5, 5).conv2d(ones(3, 2, 3, 3))
  yield "matmul16", lambda: ones(16, 16) @ ones(16, 16)
  yield "sum_axis", lambda: ones(100, 37).sum(1)
  yield "max_axis0", lambda: ones(33, 65).max(0)
  yield "permute", lambda: ones(4, 3, 3).permute(2, 0, 1).contiguous()
  yield "exp_sum", lambda: ones(7, 1000).exp().sum(1)
  yield "expand_add", lambda: ones(3, 2, 1).expand(3, 2, 5) + ones(3, 2, 5)

for name, make in heuristic_cases():
  items = [si for si in make().schedule() if si.ast.op is Ops.SINK]
  for i, si in enumerate(items):
    opts = get_program(si.ast, ren).applied_opts or ()
    text = ",".join(f"{o.op.name}:{o.axis}:{o.arg}" for o in opts) or "-"
    print(f"heuristic {name} {i} {text}")
