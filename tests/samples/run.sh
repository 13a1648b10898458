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

run_sample samples/gpu_matmul.lua
if [ $rc -eq 0 ]; then ok; else bad "gpu_matmul: exit $rc" "$out"; fi
# A[i][j] = 8i + j: row 0 of A @ A is 1120 + 28j, row 7 13664 + 476j
expect_has "gpu_matmul: the product's first row" "[[ 1120.  1148.  1176.  1204.  1232.  1260.  1288.  1316.]" "$out"
expect_has "gpu_matmul: the product's last row" " [13664. 14140. 14616. 15092. 15568. 16044. 16520. 16996.]]" "$out"
expect_has "gpu_matmul: the opts" 'opts {{"LOCAL", 0, 4}, {"GROUP", 0, 4}}' "$out"
expect_has "gpu_matmul: all 22 stages" "  22  cleanup IF/ENDIF" "$out"
expect_has "gpu_matmul: the local BUFFERIZE of stage 9" 'arg=(4, "local")' "$out"
expect_has "gpu_matmul: stage 10's barrier" "BARRIER" "$out"
expect_has "gpu_matmul: stage 12's work items" 'arg="lidx1"' "$out"
expect_has "gpu_matmul: checked at stage 22" "at stage 22 (cleanup IF/ENDIF): output0 float32 (8, 8, 1): 64 elements match" "$out"
expect_has "gpu_matmul: validated exactly" "validate: output0 float32 (8, 8, 1): 64 elements match the reference (max abs diff 0;" "$out"

printf 'samples: %d passed, %d failed\n' "$pass" "$fail"
[ "$fail" -eq 0 ]
