# capture_tinygrad_split.py - records how tinygrad v0.12.0's scheduler splits
# large reductions in two (split_reduceop), as the buffer sizes each kernel
# of the schedule touches, into tests/golden/split_reduce.txt (read by
# tests/lua/test_split_reduce.lua).
#
# Run by hand, from the repository root, with tinygrad v0.12.0 importable:
#   CPU=1 CPU_LLVM=1 PYTHONPATH=/path/to/tinygrad python3 scripts/capture_tinygrad_split.py \
#     > tests/golden/split_reduce.txt
# Only schedules are made; no buffer is allocated.
#
# Output: one line per case, "<case> <kernel>|<kernel>...", each kernel the
# element counts of its buffers (output first) joined by commas.
from tinygrad import Tensor

def cases():
  e = Tensor.empty
  yield "sum1m", lambda: e(1 << 20).sum()
  yield "sum2p23", lambda: e(1 << 23).sum()
  yield "rows", lambda: e(64, 65536).sum(1)
  yield "cols", lambda: e(65536, 64).sum(0)
  yield "max3d", lambda: e(8, 4096, 16).max((1, 2))
  yield "prime", lambda: e(32771 * 8).sum()
  yield "odd", lambda: e(3 * 5 * 7 * 11 * 13 * 17).sum()
  yield "below", lambda: e(16384).sum()
  yield "edge", lambda: e(32768).sum()
  yield "permuted", lambda: e(1024, 1024).permute(1, 0).sum(1)
  yield "broadcast", lambda: e(1).expand(1 << 20).sum()
  yield "broadcast_inner", lambda: e(256, 1).expand(256, 4096).sum()
  yield "mean", lambda: e(1 << 20).mean()

print("# tinygrad v0.12.0 split_reduceop: buffer sizes of each kernel, output first")
for name, make in cases():
  kernels = [",".join(str(b.size) for b in si.bufs) for si in make().schedule()]
  print(name, "|".join(kernels))
