#!/usr/bin/env python3
"""Capture tinygrad v0.12.0's scheduled kernel ASTs for every case of
tests/golden/tinygrad_op_cases.txt.

Run by hand against a tinygrad v0.12.0 checkout (tinygrad needs only python3):

    PYTHONPATH=/path/to/tinygrad python3 scripts/capture_tinygrad_case_asts.py \\
        tests/golden/tinygrad_op_cases.txt > tests/golden/tinygrad_case_asts.txt

The inputs are the ones capture_tinygrad_values.py makes, realized before the
case is scheduled, so a schedule holds only the case's own kernels.  For each
result of a case (name, or name#1, name#2, ... for several) it writes

    ## <name> <n> kernel(s)

then each kernel's AST as tinygrad prints a UOp; a case whose Python raises
writes "## <name> error".  tests/lua/test_case_asts.lua compares them with the
kernels uopdb schedules for the case's Lua column.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from capture_tinygrad_values import case_results, read_cases  # noqa: E402  (the same cases and inputs)


def case_blocks(name, inputs, python):
    try:
        blocks = []
        for label, t in case_results(name, inputs, python):
            schedule = t.schedule()
            blocks.append(f"## {label} {len(schedule)} kernel(s)\n" + "".join(f"{item.ast}\n" for item in schedule))
        return blocks
    except Exception as e:  # tinygrad refuses the case
        return [f"## {name} error {type(e).__name__}\n"]


def main():
    print("# tinygrad_case_asts.txt - tinygrad v0.12.0's kernel ASTs for the cases of")
    print("# tinygrad_op_cases.txt; written by scripts/capture_tinygrad_case_asts.py")
    for name, inputs, python in read_cases(sys.argv[1]):
        for block in case_blocks(name, inputs, python):
            print(block, end="", flush=True)


if __name__ == "__main__":
    main()
