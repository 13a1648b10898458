#!/usr/bin/env bash
# tests/docs/run.sh BUILD_DIR - the stage table in docs/ARCHITECTURE.md is
# the one the pipeline's rows print (scripts/stage_table.lua); `make docs`
# regenerates it.  Also checks that the comparison fails on a changed row.
set -u
build=${1:-build}
pass=0 fail=0
result() { # name ok detail
    if [ "$2" -eq 0 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $1"; echo "$3"; fi
}
section() { awk '/<!-- stage table: end/ { on = 0 } on { print } /<!-- stage table: begin/ { on = 1 }' "$1"; }

want=$("$build/uopdb" scripts/stage_table.lua 2>&1)
got=$(section docs/ARCHITECTURE.md)
[ "$(grep -c '^| [0-9]' <<<"$want")" -eq 22 ]
result "the rows print 22 stages" $? "$want"
[ "$want" = "$got" ]
result "docs/ARCHITECTURE.md has the table the rows print (run make docs)" $? "$(diff <(echo "$want") <(echo "$got"))"
# the check can fail: a doc whose table names another rule set
tmp=$(mktemp)
sed 's/pm_lower_index_dtype + load_store_indexing/pm_lower_index_dtype/' docs/ARCHITECTURE.md >"$tmp"
[ "$want" != "$(section "$tmp")" ]
result "a drifted table is caught" $? ""
rm -f "$tmp"
echo "docs: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
