#!/usr/bin/env bash
# run_all.sh [BUILD_DIR] - runs every test suite (C unit tests, Lua tests,
# REPL tests, the samples, the parser and API fuzzers, the Makefile without the packages, the layer check, the
# report and export in a headless browser and against their schema, the
# stock-lua5.4 require test) and ends with one line
# "tests: N passed, M failed".  Exits non-zero if anything failed.
set -u
build=${1:-build}
# every stage's output is checked against the spec of its point as it runs
# (core/stages/spec_verify.h); UOPDB_VERIFY=0 turns it off
export UOPDB_VERIFY=${UOPDB_VERIFY:-1}
total_pass=0 total_fail=0
log=$(mktemp)
# beam searches keep their disk cache in a folder of this run's own
cache=$(mktemp -d)
export UOPDB_CACHE_DIR="$cache"
trap 'rm -f "$log"; rm -rf "$cache"' EXIT

count() { # suite-name passed failed
    printf '  %-22s %4d passed, %d failed\n' "$1" "$2" "$3"
    total_pass=$((total_pass + $2))
    total_fail=$((total_fail + $3))
}

echo "unit tests ($build)"
for t in "$build"/tests/test_*; do
    [ -x "$t" ] || continue
    "$t" >"$log" 2>&1
    rc=$?
    p=$(grep -oE '\[  PASSED  \] [0-9]+' "$log" | grep -oE '[0-9]+$' || true)
    f=$(grep -oE '\[  FAILED  \] [0-9]+ test' "$log" | grep -oE '[0-9]+' || true)
    p=${p:-0} f=${f:-0}
    # a sanitizer report or a crash after the tests passed still fails the suite
    if [ $rc -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
    if [ "$f" -ne 0 ]; then cat "$log"; fi
    count "$(basename "$t")" "$p" "$f"
done

run_counted() { # name command...: the command prints "<word>: N passed, M failed"
    local name=$1; shift
    "$@" >"$log" 2>&1
    local rc=$?
    local line
    line=$(grep -E '^[a-z]+: [0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
    local p f
    p=$(sed -E 's/^[a-z]+: ([0-9]+) passed.*/\1/' <<<"$line")
    f=$(sed -E 's/.* ([0-9]+) failed.*/\1/' <<<"$line")
    p=${p:-0} f=${f:-0}
    if [ -z "$line" ] || { [ $rc -ne 0 ] && [ "$f" -eq 0 ]; }; then f=$((f + 1)); fi
    if [ "$f" -ne 0 ]; then cat "$log"; fi
    count "$name" "$p" "$f"
}

echo "behaviour tests"
if [ -f tests/lua/run.lua ]; then run_counted "lua" "$build/uopdb" tests/lua/run.lua; fi
if [ -x tests/repl/run.sh ]; then run_counted "repl" tests/repl/run.sh "$build/uopdb"; fi
if [ -x tests/layers/run.sh ]; then run_counted "layers" tests/layers/run.sh; fi
if [ -x tests/setup/run.sh ]; then run_counted "setup (make, no deps)" tests/setup/run.sh; fi
if [ -x tests/docs/run.sh ]; then run_counted "docs (stage table)" tests/docs/run.sh "$build"; fi
if [ -x tests/samples/run.sh ]; then run_counted "samples" tests/samples/run.sh "$build/uopdb"; fi
if [ -f tests/readme/run.lua ]; then run_counted "readme walkthroughs" "$build/uopdb" tests/readme/run.lua "$build/uopdb"; fi
if [ -x tests/report/run.sh ]; then run_counted "report (html, json)" tests/report/run.sh "$build"; fi
# the parser harnesses briefly (3 s each, libFuzzer seed 1), built with clang
if [ -x tests/fuzz/run_text.sh ]; then run_counted "fuzz (text parsers)" tests/fuzz/run_text.sh --make build-fuzz 3; fi
# the Lua API fuzzer briefly (seed 1, 6000 calls) and its self-check
if [ -x tests/fuzz/run_api.sh ]; then run_counted "fuzz (Lua API)" tests/fuzz/run_api.sh "$build"; fi
if [ -f tests/lua/require_test.lua ]; then
    # one check: the module loads into a stock lua5.4 and works there; a
    # sanitized module needs the sanitizer runtimes preloaded into lua5.4
    preload=""
    for lib in libasan libubsan; do
        if ldd "$build/uopdb.so" 2>/dev/null | grep -q "$lib"; then
            preload="$preload $(${CC:-cc} -print-file-name=$lib.so)"
        fi
    done
    if env LD_PRELOAD="${preload# }" LUA_CPATH="$build/?.so" lua5.4 tests/lua/require_test.lua >"$log" 2>&1; then
        count "require (lua5.4)" 1 0
    else
        cat "$log"
        count "require (lua5.4)" 0 1
    fi
fi

echo "tests: $total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
