#!/usr/bin/env python3
"""Capture the opts tinygrad v0.12.0's hand-coded heuristic chooses for each
kernel of every case of tests/golden/tinygrad_op_cases.txt, with its LLVM
renderer (no threads).

Run by hand against a tinygrad v0.12.0 checkout (tinygrad needs only python3):

    CPU=1 CPU_LLVM=1 PYTHONPATH=/path/to/tinygrad python3 scripts/capture_tinygrad_case_opts.py \\
        tests/golden/tinygrad_op_cases.txt > tests/golden/tinygrad_case_opts.txt

The inputs and results are those of capture_tinygrad_case_asts.py.  For each
result (name, or name#1, name#2, ... for several) it writes one line

    <name> <opts of kernel 1> <opts of kernel 2> ...

each kernel's opts "OP:axis:amount" joined by commas, "-" when none; a case
whose Python raises is left out.  tests/lua/test_case_asts.lua compares them
with uopdb's heuristic on the results whose kernels equal tinygrad's.
"""
import os
import sys

from tinygrad import Device
from tinygrad.codegen import get_program

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from capture_tinygrad_values import case_results, read_cases  # noqa: E402  (the same cases and inputs)


def opts_text(ast, renderer):
    opts = get_program(ast, renderer).applied_opts or ()
    return ",".join(f"{o.op.name}:{o.axis}:{o.arg}" for o in opts) or "-"


def case_lines(name, inputs, python, renderer):
    try:
        return [" ".join([label] + [opts_text(item.ast, renderer) for item in t.schedule() if item.ast.op.name == "SINK"])
                for label, t in case_results(name, inputs, python)]
    except Exception:  # tinygrad refuses the case
        return []


def main():
    renderer = Device[Device.DEFAULT].renderer
    print("# tinygrad_case_opts.txt - tinygrad v0.12.0's heuristic opts (" + type(renderer).__name__ + ", no threads)")
    print("# for the kernels of tinygrad_op_cases.txt; written by scripts/capture_tinygrad_case_opts.py")
    for name, inputs, python in read_cases(sys.argv[1]):
        for line in case_lines(name, inputs, python, renderer):
            print(line, flush=True)


if __name__ == "__main__":
    main()
