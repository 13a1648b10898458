#!/usr/bin/env bash
# deps.sh - installs the Debian packages uopdb needs, only those missing.
# Quiet and fast when everything is present; called by `make run` and `make test`.
set -euo pipefail
# clang and libclang-rt-14-dev (libclang_rt.fuzzer): the libFuzzer harnesses of tests/fuzz
pkgs=(build-essential pkg-config llvm-19-dev liblua5.4-dev lua5.4 libedit-dev graphviz libcmocka-dev chromium python3 less
      clang libclang-rt-14-dev)
missing=()
for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "deps: installing ${missing[*]}" >&2
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq >/dev/null
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "deps: done" >&2
