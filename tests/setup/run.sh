#!/usr/bin/env bash
# run.sh [MAKEFILE] - the README's commands on a machine without the packages:
# with llvm-config-19 and pkg-config off PATH, `make run`, `make test` and
# `make all` must run the deps step before anything reads those tools.
# The deps step is a fake that records itself and puts logging shims of the
# two tools on PATH; cc is a fake that records its flags and fails, so no
# real build happens.  Prints "setup: N passed, M failed".
set -u
cd "$(dirname "$0")/../.." || exit 1
makefile=$(realpath "${1:-Makefile}")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
llvm_config=$(command -v llvm-config-19 || true)
pkg_config=$(command -v pkg-config || true)

# bin/: every tool on PATH but the two, as symlinks
mkdir -p "$tmp/bin"
IFS=: read -ra dirs <<<"$PATH"
for d in "${dirs[@]}"; do
    for f in "$d"/*; do
        n=${f##*/}
        case $n in llvm-config-19 | pkg-config) continue ;; esac
        [ -x "$f" ] && [ ! -e "$tmp/bin/$n" ] && ln -s "$f" "$tmp/bin/$n"
    done
done

# shims/NAME: records NAME in the log, then runs the real tool
mkdir -p "$tmp/shims"
shim() { # NAME REAL
    [ -n "$2" ] || return 0
    printf '#!/bin/sh\necho %s >>"%s/log"\nexec %s "$@"\n' "$1" "$tmp" "$2" >"$tmp/shims/$1"
    chmod +x "$tmp/shims/$1"
}
shim llvm-config-19 "$llvm_config"
shim pkg-config "$pkg_config"
# the fake deps steps: one "installs" the two tools, one does nothing, one fails
printf '#!/bin/sh\necho deps >>"%s/log"\ncp %s/shims/* %s/bin/\n' "$tmp" "$tmp" "$tmp" >"$tmp/deps-ok"
printf '#!/bin/sh\necho deps >>"%s/log"\n' "$tmp" >"$tmp/deps-noop"
printf '#!/bin/sh\necho deps >>"%s/log"\nexit 1\n' "$tmp" >"$tmp/deps-fail"
printf '#!/bin/sh\necho "cc $*" >>"%s/log"\nexit 1\n' "$tmp" >"$tmp/cc"
chmod +x "$tmp"/deps-* "$tmp/cc"

# mk DEPS TARGET: a clean make of TARGET into an empty build dir; sets log, err
mk() {
    rm -f "$tmp/log" "$tmp/bin/llvm-config-19" "$tmp/bin/pkg-config"
    rm -rf "$tmp/build"
    touch "$tmp/log"
    env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL PATH="$tmp/bin" \
        make -f "$makefile" --no-print-directory "$2" BUILD="$tmp/build" CC="$tmp/cc" \
        DEPS_SCRIPT="$tmp/$1" >/dev/null 2>"$tmp/err"
    log=$(cat "$tmp/log")
    err=$(cat "$tmp/err")
}

check() { # name condition-result
    if [ "$2" -eq 0 ]; then pass=$((pass + 1)); else
        fail=$((fail + 1))
        printf 'FAIL %s\n--- log:\n%s\n--- stderr:\n%s\n' "$1" "$log" "$err"
    fi
}

# deps first, then llvm-config-19, then a compile with LLVM's include path
for target in run test all; do
    mk deps-ok "$target"
    first=$(head -n 1 <<<"$log")
    ccline=$(grep -m 1 '^cc ' <<<"$log")
    ok=1
    if [ "$first" = deps ] && [ -n "$ccline" ] &&
        ! grep -qE 'not found|No such file|-M or -MM' <<<"$err" &&
        grep -qF -- "-I$("$llvm_config" --includedir)" <<<"$ccline" &&
        sed -n '/^llvm-config-19$/,$p' <<<"$log" | grep -q '^cc '; then ok=0; fi
    check "make $target: deps, then llvm-config-19, then cc" $ok
done

# a deps step that fails stops make before any compile
mk deps-fail all
ok=1
[ "$log" = deps ] && ! grep -qE 'not found|-M or -MM' <<<"$err" && ok=0
check "make all: a failed deps step stops before any compile" $ok

# a deps step that leaves llvm-config-19 missing: one clear line, no compile
mk deps-noop all
ok=1
[ "$log" = deps ] && [ "$(grep -c . <<<"$err")" -eq 1 ] && grep -q 'run .make deps.' <<<"$err" && ok=0
check "make all: without llvm-config-19, one line saying make deps" $ok

echo "setup: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
