# capture_tinygrad_opts.py - records the opts tinygrad v0.12.0's hand-coded
# heuristic chooses on the CPU (LLVM) for a few kernels, into
# tests/golden/tinygrad_opts.txt (read by tests/lua/test_heuristic_opts.lua).
#
# Run by hand, from the repository root, with tinygrad v0.12.0 importable:
#   (CPU=1 CPU_LLVM=1 PYTHONPATH=/path/to/tinygrad python3 scripts/capture_tinygrad_opts.py
#    CPU=1 CPU_LLVM=0 CPU_COUNT=8 PYTHONPATH=/path/to/tinygrad python3 scripts/capture_tinygrad_opts.py
#   ) > tests/golden/tinygrad_opts.txt
# The LLVM renderer has no threads (no THREAD opt); the C renderer splits
# over CPU_COUNT cores, fixed here to 8 (tinygrad reads it from the machine
# otherwise), so both runs are deterministic.
#
# Output: one line per kernel, "<threads> <case> <kernel index> <opts> <name>",
# threads being 0 without threads, opts "OP:axis:amount" joined by commas,
# or "-" when none was chosen, name the kernel's function name with those
# opts (tinygrad appends n1, n2, ... to a name the process gave before).
from tinygrad import Tensor, Device
from tinygrad.codegen import get_program

def cases():
  yield "matmul512", lambda: Tensor.ones(512, 512).contiguous().realize() @ Tensor.ones(512, 512).contiguous().realize()
  yield "matmul64", lambda: Tensor.ones(64, 64).contiguous().realize() @ Tensor.ones(64, 64).contiguous().realize()
  yield "conv2d", lambda: Tensor.ones(1, 32, 56, 56).contiguous().realize().conv2d(
      Tensor.ones(64, 32, 3, 3).contiguous().realize(), padding=1)
  yield "softmax", lambda: Tensor.ones(64, 4096).contiguous().realize().softmax()
  yield "sum1m", lambda: Tensor.ones(1 << 20).contiguous().realize().sum()
  yield "add1m", lambda: Tensor.ones(1 << 20).contiguous().realize() + Tensor.ones(1 << 20).contiguous().realize()
  yield "small", lambda: Tensor.ones(4, 4).contiguous().realize() * 2 + 1
  # small kernels that reach the other branches (masked upcasts, whole unrolls, second unroll)
  def r(*shape): return Tensor.ones(*shape).contiguous().realize()
  yield "mean", lambda: r(3, 5).mean()
  yield "cumsum", lambda: r(8).cumsum()
  yield "pad_flip", lambda: r(3, 4).pad(((1, 1), (2, 0))).flip(1) * 2
  yield "conv_small", lambda: r(1, 2, 5, 5).conv2d(r(3, 2, 3, 3))
  yield "conv_pad_small", lambda: r(2, 3, 7, 7).conv2d(r(4, 3, 3, 3), padding=1)
  yield "matmul16", lambda: r(16, 16) @ r(16, 16)
  yield "sum_axis", lambda: r(100, 37).sum(1)
  yield "max_axis0", lambda: r(33, 65).max(0)
  yield "permute", lambda: r(4, 3, 3).permute(2, 0, 1).contiguous()
  yield "softmax_small", lambda: r(6, 6).softmax()
  yield "exp_sum", lambda: r(7, 1000).exp().sum(1)
  yield "expand_add", lambda: r(3, 2, 1).expand(3, 2, 5) + r(3, 2, 5)
  yield "stack", lambda: Tensor.stack(r(4, 4), r(4, 4), r(4, 4)) * 2
  # a split output axis ((4, 3, 6, 4) read as 288): its parts share the first id
  yield "cumsum_split", lambda: ((Tensor.arange(288).reshape(4, 3, 6, 4) % 3) == 0).cumsum(2).reshape(1, 288).sign()

renderer = Device[Device.DEFAULT].renderer
threads = renderer.global_max[0] if renderer.has_threads and renderer.global_max else 0
print(f"# tinygrad v0.12.0 hand_coded_optimizations, {type(renderer).__name__}, threads {threads}")
for name, make in cases():
  items = [si for si in make().schedule() if si.ast.op.name == "SINK"]
  for i, si in enumerate(items):
    prg = get_program(si.ast, renderer)
    text = ",".join(f"{o.op.name}:{o.axis}:{o.arg}" for o in prg.applied_opts or ()) or "-"
    print(f"{threads} {name} {i} {text} {prg.function_name}")
