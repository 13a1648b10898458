#!/usr/bin/env python3
"""Capture tinygrad's scheduled kernel ASTs as golden files.

Run by hand against a tinygrad v0.12.0 checkout (tinygrad itself needs only
python3); the output directory is an argument:

    PYTHONPATH=/path/to/tinygrad python3 scripts/capture_tinygrad_asts.py tests/golden

For each program below it writes tests/golden/ast_<name>.txt: the AST of every
kernel of the program's schedule, in schedule order, as tinygrad prints a UOp
(its pretty repr, which uop.from_tinygrad reads back). A program with several
kernels gets one block per kernel, each block preceded by a line
"# kernel <i> of <n>". These are the ASTs the scheduler hands to codegen:
no codegen stage and no optimisation has run on them.

Inputs are data buffers realized before the program is scheduled, so the
schedule holds only the program's own kernels, not the copies of its inputs.
tests/lua/test_golden_asts.lua builds the same programs with the same shapes,
data and dtypes through uopdb's Tensor API and compares its kernels with these
files up to the numbering of ranges.
"""
import os
import sys

from tinygrad import Tensor, dtypes


def data(shape, start=1.0, dtype=dtypes.float32):
    """a realized buffer of the given shape holding start, start+1, ... in order"""
    n = 1
    for s in shape: n *= s
    vals = [start + i for i in range(n)]
    if dtypes.is_int(dtype): vals = [int(v) for v in vals]
    return Tensor(vals, dtype=dtype).reshape(*shape).realize()


def prog_matmul():
    return data((3, 3)) @ data((3, 3), start=10.0)


def prog_matmul16():
    return data((16, 16)) @ data((16, 16), start=-100.0)


def prog_conv2d():
    return data((1, 2, 5, 5)).conv2d(data((3, 2, 3, 3), start=-20.0))


def prog_softmax():
    return data((4, 8)).softmax()


def prog_mean():
    return data((3, 5)).mean()


def prog_mean_axis():
    return data((3, 5)).mean(1)


def prog_cumsum():
    return data((8,)).cumsum()


def prog_pad_flip():
    return data((3, 4)).pad(((1, 1), (2, 0))).flip(1) * 2


def prog_int():
    a = data((2, 4), start=-3, dtype=dtypes.int32)
    b = data((2, 4), start=5, dtype=dtypes.int32)
    picked = (a < b).where(a * 3, b - 1)
    return picked + (a == 2).cast(dtypes.int32) + (a > 0).int() * b


def prog_exp_sigmoid():
    x = data((4, 4), start=-8.0)
    return x.exp() + x.sigmoid()


def prog_log_softmax():
    return data((2, 5)).log_softmax()


def prog_sum_permute():
    return data((2, 3, 4)).sum(2).permute(1, 0) * 2


def prog_sum_pad():
    return data((3, 4)).sum(1).pad(((1, 1),)) + 1


def prog_where_bool():
    x = data((2, 3))
    return (x > 3).where(x, data((2, 3), start=5.0) * 0.5)


def prog_int_div():
    return data((6,), start=-3, dtype=dtypes.int32) // 2 + data((6,), start=1, dtype=dtypes.int32) % 3


def prog_arange_sum():
    return (Tensor.arange(8) + data((8,))).sum()


def prog_shared_broadcast():
    s = data((3, 4)).sum(1)
    return s.reshape(3, 1).expand(3, 4) + s.reshape(1, 3).expand(4, 3).T


def prog_matmul_T():
    return (data((2, 3)) @ data((3, 4), start=-5.0)).T


def prog_sum_flip():
    return data((3, 4)).sum(1).flip(0)


def prog_softmax_slice():
    return data((4, 6)).softmax()[1:3, ::2]


def prog_grad_softmax():
    x = data((4, 8))
    return (x.softmax() * data((4, 8), start=-10.0)).sum().gradient(x)[0]


def prog_grad_relu_matmul():
    w = data((3, 4), start=-5.0)
    return (data((2, 3)) @ w).relu().sum().gradient(w)[0]


def prog_grad_matmul_left():
    x = data((2, 3))
    return (x @ data((3, 4), start=-5.0)).relu().sum().gradient(x)[0]


def prog_grad_conv2d():
    x = data((1, 2, 5, 5))
    return (x.conv2d(data((3, 2, 3, 3), start=-20.0)) * data((1, 3, 3, 3), start=-13.0)).sum().gradient(x)[0]


def prog_grad_layernorm():
    x = data((2, 4))
    return (x.layernorm() * data((2, 4), start=-3.0)).sum().gradient(x)[0]


def prog_crossover():
    """the bitonic sort's crossover: a stored tensor read through a cat of
    flipped halves, inside another"""
    x = (data((2, 2, 2, 2)) * 2).contiguous()
    blue, green = x.split(1, 2)
    y = blue.cat(green.flip((-1, -2)), dim=2)
    blue, green = y.split(1, 1)
    return blue.cat(green.flip((-1, -2, -3)), dim=1)


def prog_topk():
    return data((2, 5), start=-2.0).topk(2)[0]


PROGRAMS = {
    "matmul": prog_matmul,
    "matmul16": prog_matmul16,
    "conv2d": prog_conv2d,
    "softmax": prog_softmax,
    "mean": prog_mean,
    "mean_axis": prog_mean_axis,
    "cumsum": prog_cumsum,
    "pad_flip": prog_pad_flip,
    "int": prog_int,
    "exp_sigmoid": prog_exp_sigmoid,
    "log_softmax": prog_log_softmax,
    "sum_permute": prog_sum_permute,
    "sum_pad": prog_sum_pad,
    "where_bool": prog_where_bool,
    "int_div": prog_int_div,
    "arange_sum": prog_arange_sum,
    "shared_broadcast": prog_shared_broadcast,
    "matmul_T": prog_matmul_T,
    "sum_flip": prog_sum_flip,
    "softmax_slice": prog_softmax_slice,
    "grad_softmax": prog_grad_softmax,
    "grad_relu_matmul": prog_grad_relu_matmul,
    "grad_matmul_left": prog_grad_matmul_left,
    "grad_conv2d": prog_grad_conv2d,
    "grad_layernorm": prog_grad_layernorm,
    "crossover": prog_crossover,
    "topk": prog_topk,
}


def main(argv):
    if len(argv) != 2:
        print(f"usage: PYTHONPATH=/path/to/tinygrad python3 {argv[0]} OUTDIR", file=sys.stderr)
        return 2
    outdir = argv[1]
    os.makedirs(outdir, exist_ok=True)
    for name, build in PROGRAMS.items():
        schedule = build().schedule()
        blocks = []
        for i, item in enumerate(schedule):
            blocks.append(f"# kernel {i + 1} of {len(schedule)}\n{item.ast}\n")
        path = os.path.join(outdir, f"ast_{name}.txt")
        with open(path, "w") as f: f.write("".join(blocks))
        print(f"{path}: {len(schedule)} kernel(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
