#!/usr/bin/env bash
# run.sh UOPDB - runs each sample in samples/ as `make run SAMPLE=...` does
# (stdin not a terminal, so no REPL follows) and checks that it ends well and
# prints what it is there to show; ends with "samples: N passed, M failed".
set -u
UOPDB=${1:-build/uopdb}
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); printf 'FAIL %s\n' "$1"; [ -n "${2:-}" ] && printf '%s\n' "$2" | head -20; }
expect_has() { # name needle text
    if [[ "$3" == *"$2"* ]]; then ok; else bad "$1" "expected to contain: $2"; fi
}
run_sample() { # file: sets out and rc
    out=$("$UOPDB" "$1" </dev/null 2>&1)
    rc=$?
}

run_sample samples/quickstart.lua
if [ $rc -eq 0 ]; then ok; else bad "quickstart: exit $rc" "$out"; fi
expect_has "quickstart: the round trip" "round trip:  parse(listing) returns the same node" "$out"
expect_has "quickstart: the rule that fired" "rule add_zero" "$out"

run_sample samples/matmul3x3.lua
if [ $rc -eq 0 ]; then ok; else bad "matmul3x3: exit $rc" "$out"; fi
# 1..9 times 10..18: known exactly
expect_has "matmul3x3: the product" $'[[ 84.  90.  96.]\n [201. 216. 231.]\n [318. 342. 366.]]' "$out"
expect_has "matmul3x3: the opts and why" "UNROLL axis 0 whole (3)" "$out"
expect_has "matmul3x3: every stage" "stages of r_3_3_3" "$out"
expect_has "matmul3x3: the diff of stage 15" "+++ stage 15" "$out"
expect_has "matmul3x3: validated" "elements match the reference" "$out"

printf 'samples: %d passed, %d failed\n' "$pass" "$fail"
[ "$fail" -eq 0 ]
