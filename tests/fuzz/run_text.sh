#!/usr/bin/env bash
# run_text.sh [--make] BUILD_DIR SECONDS [NAME...] - runs the libFuzzer harnesses of
# the text parsers (BUILD_DIR/fuzz_<name>, default: all four) for SECONDS
# each, seeded from tests/fuzz/corpus/<name> with tests/fuzz/dict/<name>.dict.
# New inputs go to BUILD_DIR/corpus/<name> (the seeds stay untouched; with
# --make to a scratch folder), a
# finding to BUILD_DIR/findings/<name>-crash-... with libFuzzer's report.
# FUZZ_SEED (default 1) seeds libFuzzer.  Prints per harness the inputs run
# and ends with "fuzz: N passed, M failed"; exits non-zero on a finding.
# --make builds them first (make fuzz-build; what make test does): without
# clang or libFuzzer that fails, and so does the run, with a line saying why.
set -u
scratch=""
if [ "${1:-}" = --make ]; then
    shift
    # a brief run starts from the seeds alone, each time the same way
    scratch=$(mktemp -d)
    trap 'rm -rf "$scratch"' EXIT
    if ! make --no-print-directory -j2 fuzz-build FUZZ_BUILD="$1" >"${TMPDIR:-/tmp}/uopdb-fuzz-build.$$" 2>&1; then
        tail -n 5 "${TMPDIR:-/tmp}/uopdb-fuzz-build.$$"
        rm -f "${TMPDIR:-/tmp}/uopdb-fuzz-build.$$"
        echo "the fuzz harnesses did not build: they need clang and libFuzzer (Debian's clang and libclang-rt-14-dev; make deps installs them)"
        echo "fuzz: 0 passed, 1 failed"
        exit 1
    fi
    rm -f "${TMPDIR:-/tmp}/uopdb-fuzz-build.$$"
fi
build=${1:?usage: run_text.sh BUILD_DIR SECONDS [NAME...]}
seconds=${2:?usage: run_text.sh BUILD_DIR SECONDS [NAME...]}
shift 2
names=("$@")
[ ${#names[@]} -eq 0 ] && names=(listing tinygrad_repr rules arg)
seed=${FUZZ_SEED:-1}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$build/findings"
passed=0 failed=0
for name in "${names[@]}"; do
    bin="$build/fuzz_$name"
    if [ ! -x "$bin" ]; then
        echo "fuzz_$name: not built ($bin missing: clang and libFuzzer come with \`make deps\`)"
        failed=$((failed + 1))
        continue
    fi
    work="${scratch:-$build/corpus}/$name"
    mkdir -p "$work"
    log="$build/findings/$name.log"
    "$bin" "$work" "$here/corpus/$name" -dict="$here/dict/$name.dict" -seed="$seed" \
        -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="$build/findings/$name-" >"$log" 2>&1
    rc=$?
    runs=$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$' | tail -n 1)
    if [ $rc -eq 0 ]; then
        echo "fuzz_$name: ${runs:-?} inputs in ${seconds} s, no finding"
        passed=$((passed + 1))
    else
        echo "fuzz_$name: FINDING (exit $rc) after ${runs:-?} inputs; log $log:"
        grep -E 'ERROR|fuzz property|SUMMARY|Test unit written|runtime error' "$log" | head -n 20
        failed=$((failed + 1))
    fi
done
echo "fuzz: $passed passed, $failed failed"
[ $failed -eq 0 ]
