#!/usr/bin/env bash
# run.sh - the layer check (scripts/check_layers.sh): first proves on a small
# made-up tree that it passes allowed includes and reports upward ones, in
# both spellings, then runs it on this repository.
# Prints "layers: N passed, M failed".
set -u
cd "$(dirname "$0")/../.." || exit 1
check=$PWD/scripts/check_layers.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0

result() { # name 0|1 output
    if [ "$2" -eq 0 ]; then pass=$((pass + 1)); else
        fail=$((fail + 1))
        printf 'FAIL %s\n%s\n' "$1" "$3"
    fi
}

# a tree with one header per layer and only allowed includes
for d in core/util core/ir core/rewrite core/sym core/sched core/stages core/backend core/debug viz scripting repl; do
    mkdir -p "$tmp/$d"
    echo "/* ${d##*/}.h */" >"$tmp/$d/${d##*/}.h"
done
printf '#include "../util/util.h"\n#include "core/util/util.h"\n' >"$tmp/core/ir/ir.c"
printf '#include "../sched/sched.h"\n#include "../../core/sym/sym.h"\n' >"$tmp/core/stages/stages.c"
printf '#include "../stages/stages.h"\n#include "core/backend/backend.h"\n' >"$tmp/core/debug/debug.c"
printf '#include "../core/stages/stages.h"\n#include "viz.h"\n' >"$tmp/viz/viz.c"
printf '#include "../viz/viz.h"\n#include "core/debug/debug.h"\n' >"$tmp/scripting/scripting.c"
printf '#include "../scripting/scripting.h"\n#include "core/util/util.h"\n#include <stdio.h>\n' >"$tmp/repl/repl.c"
out=$("$check" "$tmp" 2>&1)
rc=$?
[ $rc -eq 0 ] && [ -z "$out" ]
result "allowed includes pass" $? "$out"

# expect NAME FILE INCLUDE LINE: FILE gains INCLUDE; the check fails with LINE
expect() {
    cp "$tmp/$2" "$tmp/saved"
    echo "#include \"$3\"" >>"$tmp/$2"
    out=$("$check" "$tmp" 2>&1)
    rc=$?
    mv "$tmp/saved" "$tmp/$2"
    [ $rc -ne 0 ] && [ "$out" = "$4" ]
    result "$1" $? "$out"
}
expect "up, relative" core/ir/ir.c "../sym/sym.h" "core/ir/ir.c:3: core/ir includes core/sym (../sym/sym.h)"
expect "up, from the root" core/ir/ir.c "viz/viz.h" "core/ir/ir.c:3: core/ir includes viz (viz/viz.h)"
expect "core to viz" core/stages/stages.c "../../viz/viz.h" "core/stages/stages.c:3: core/stages includes viz (../../viz/viz.h)"
expect "siblings" core/stages/stages.c "core/backend/backend.h" "core/stages/stages.c:3: core/stages includes core/backend (core/backend/backend.h)"
expect "viz to core/debug" viz/viz.c "../core/debug/debug.h" "viz/viz.c:3: viz includes core/debug (../core/debug/debug.h)"
expect "viz to scripting" viz/viz.c "scripting/scripting.h" "viz/viz.c:3: viz includes scripting (scripting/scripting.h)"
expect "repl past scripting" repl/repl.c "../core/ir/ir.h" "repl/repl.c:4: repl includes core/ir (../core/ir/ir.h)"

out=$("$check" 2>&1)
result "this repository" $? "$out"

echo "layers: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
