#!/usr/bin/env python3
"""Capture what tinygrad v0.12.0 computes for the forward cases of
tests/golden/tinygrad_op_cases.txt.

Run by hand against a tinygrad v0.12.0 checkout (tinygrad needs only python3):

    CPU=1 CPU_LLVM=1 PYTHONPATH=/path/to/tinygrad python3 \\
        scripts/capture_tinygrad_values.py tests/golden/tinygrad_op_cases.txt \\
        > tests/golden/tinygrad_op_values.txt

For each case it builds the inputs the cases file describes, evaluates the
case's Python column and writes one line per result:

    name | dtype | shape | values

dtype is tinygrad's name for it, shape is 2x3 (s for a scalar tensor), values
are the flat row-major elements (floats as repr of their float32 or float16
value, so they read back exactly; true/false; nan, inf, -inf).  A case whose
Python raises is written "name | error | <exception type>".  A case that gives
a tuple writes one line per element, named name#1, name#2, ...
tests/lua/test_tinygrad_values.lua runs the Lua column and compares.
"""
import math
import struct
import sys

from tinygrad import Tensor, dtypes

KINDS = {
    "f": (dtypes.float32, lambda r: (r - 9) / 4),
    "p": (dtypes.float32, lambda r: (r + 1) / 4),
    "u": (dtypes.float32, lambda r: (r - 9) / 10),
    "h": (dtypes.float16, lambda r: (r - 9) / 4),
    "i": (dtypes.int32, lambda r: r - 9),
    "l": (dtypes.int64, lambda r: r - 9),
    "n": (dtypes.int32, lambda r: r),
    "c": (dtypes.uint8, lambda r: r),
    "b": (dtypes.bool, lambda r: r % 3 == 0),
}


def make_input(spec, k):
    kind, shape_text = spec.split(":")
    shape = () if shape_text == "s" else tuple(int(n) for n in shape_text.split("x"))
    count = math.prod(shape)
    if kind.startswith("j"):
        bound = int(kind[1:])
        dtype, value = dtypes.int32, lambda r: r % bound
    else:
        dtype, value = KINDS[kind]
    vals = [value((7 * e + 5 * k + 3) % 19) for e in range(count)]
    if shape == ():
        return Tensor(vals[0], dtype=dtype)
    return Tensor(vals, dtype=dtype).reshape(shape)


def fmt_value(v, dtype):
    if isinstance(v, bool):
        return "true" if v else "false"
    if dtypes.is_float(dtype):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(float(v))
    return str(int(v))


def flat(v):
    if isinstance(v, list):
        out = []
        for item in v:
            out.extend(flat(item))
        return out
    return [v]


def result_line(name, t):
    shape = "x".join(str(n) for n in t.shape) if t.shape else "s"
    values = " ".join(fmt_value(v, t.dtype) for v in flat(t.tolist()))
    return f"{name} | {t.dtype.name} | {shape} | {values}"


def run_case(name, inputs, python):
    env = {"Tensor": Tensor, "dtypes": dtypes}
    for k, spec in enumerate(inputs.split()):
        env["xyzw"[k]] = make_input(spec, k)
    try:
        out = eval(python, env)
        if isinstance(out, (tuple, list)):
            return [result_line(f"{name}#{i + 1}", t) for i, t in enumerate(out)]
        return [result_line(name, out)]
    except Exception as e:  # the case records that tinygrad refuses it
        return [f"{name} | error | {type(e).__name__}"]


def case_results(name, inputs, python):
    """[(label, tensor)] of a case's results, its inputs realized first (so a
    schedule holds only the case's own kernels); the label is the name, or
    name#1, name#2, ... for several.  Raises what tinygrad raises."""
    env = {"Tensor": Tensor, "dtypes": dtypes}
    for k, spec in enumerate(inputs.split()):
        env["xyzw"[k]] = make_input(spec, k).realize()
    out = eval(python, env)
    results = list(out) if isinstance(out, (tuple, list)) else [out]
    return [(f"{name}#{i + 1}" if len(results) > 1 else name, t) for i, t in enumerate(results)]


def read_cases(path):
    """(name, inputs, python) of each case line of the cases file"""
    with open(path) as f:
        for line in f:
            if not line.strip() or line.startswith("#"):
                continue
            name, inputs, python, _lua = (part.strip() for part in line.split("|"))
            yield name, inputs, python


def main():
    print("# tinygrad_op_values.txt - what tinygrad v0.12.0 computes for the cases of")
    print("# tinygrad_op_cases.txt; written by scripts/capture_tinygrad_values.py")
    for name, inputs, python in read_cases(sys.argv[1]):
        for out in run_case(name, inputs, python):
            print(out, flush=True)


if __name__ == "__main__":
    main()
