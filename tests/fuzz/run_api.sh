#!/usr/bin/env bash
# run_api.sh BUILD_DIR - the Lua API fuzzer briefly, for make test: a fixed
# seed and number of calls with BUILD_DIR/uopdb, which must end without a
# new finding, and the self-check: with a planted bug (--plant) the fuzzer
# must report it, shrink it to one call, and the snippet it writes must show
# the bug when run.  Prints "fuzz: N passed, M failed".
set -u
build=${1:?usage: run_api.sh BUILD_DIR}
calls=${FUZZ_API_CALLS:-6000}
out="$build/fuzz-api-test"
pass=0 fail=0
rm -rf "$out"

if "$build/uopdb" tests/fuzz/fuzz_api.lua --uopdb "$build/uopdb" --calls "$calls" --seed 1 --out "$out/run" >"$out.log" 2>&1; then
    pass=$((pass + 1))
    grep '^fuzz-api:' "$out.log"
else
    fail=$((fail + 1))
    echo "FAIL the API fuzzer, seed 1, $calls calls:"
    cat "$out.log"
fi

"$build/uopdb" tests/fuzz/fuzz_api.lua --uopdb "$build/uopdb" --calls 4000 --seed 1 --plant --out "$out/plant" >"$out.log" 2>&1
k=$(sed -n 's/^FINDING \([0-9]*\): PLANTED: Lua runtime error$/\1/p' "$out.log" | head -n 1)
snippet="$out/plant/finding-${k:-0}.lua"
calls_in_snippet=$(grep -c '^v\[' "$snippet" 2>/dev/null)
shown=$("$build/uopdb" "$snippet" 2>&1)
if [ -n "$k" ] && [ "${calls_in_snippet:-0}" -eq 1 ] && grep -q "attempt to index a nil value (local 't')" <<<"$shown"; then
    pass=$((pass + 1))
else
    fail=$((fail + 1))
    echo "FAIL the self-check: the planted bug was not found, shrunk to one call and shown by its snippet"
    cat "$out.log"
    [ -f "$snippet" ] && grep '^v\[' "$snippet"
    echo "$shown"
fi
rm -f "$out.log"
echo "fuzz: $pass passed, $fail failed"
[ $fail -eq 0 ]
