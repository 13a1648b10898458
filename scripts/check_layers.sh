#!/usr/bin/env bash
# check_layers.sh [ROOT] - fails on an #include "..." that goes against the layer order.
# Scans every file under core/, viz/, scripting/ and repl/ of ROOT (default: the
# repository) and prints "FILE:LINE: <from-layer> includes <to-layer> (<header>)"
# for each include of a layer the table below does not allow; exits 1 if any.
set -euo pipefail

# A layer may include itself and the layers listed after it, nothing else.
# Order: repl -> scripting -> {viz, core/debug} -> {core/stages, core/backend}
#        -> core/sched -> core/sym -> core/rewrite -> core/ir -> core/util
ALLOWED='
repl         scripting core/util
scripting    viz core/debug core/stages core/backend core/sched core/sym core/rewrite core/ir core/util
viz          core/stages core/backend core/sched core/sym core/rewrite core/ir core/util
core/debug   core/stages core/backend core/sched core/sym core/rewrite core/ir core/util
core/stages  core/sched core/sym core/rewrite core/ir core/util
core/backend core/sched core/sym core/rewrite core/ir core/util
core/sched   core/sym core/rewrite core/ir core/util
core/sym     core/rewrite core/ir core/util
core/rewrite core/ir core/util
core/ir      core/util
core/util
'

cd "${1:-$(dirname "$0")/..}"
dirs=()
for d in core viz scripting repl; do [ -d "$d" ] && dirs+=("$d"); done
[ ${#dirs[@]} -gt 0 ] || { echo "check_layers: no core/, viz/, scripting/ or repl/ in $PWD" >&2; exit 2; }
mapfile -t sources < <(find "${dirs[@]}" -type f -name '*.[ch]' | sort)

# awk reads the list of every file first (to resolve includes as the compiler
# does: next to the including file, else from the root, -I.), then the sources
find "${dirs[@]}" -type f | awk -v table="$ALLOWED" '
function norm(p,   n, a, s, k, i, out) { # a/./b/../c -> a/c; "" if it leaves the root
    n = split(p, a, "/"); k = 0
    for (i = 1; i <= n; i++) {
        if (a[i] == "" || a[i] == ".") continue
        if (a[i] == "..") { if (k == 0) return ""; k-- } else s[++k] = a[i]
    }
    out = s[1]; for (i = 2; i <= k; i++) out = out "/" s[i]
    return out
}
function layer(p,   a) { # core/<dir>, viz, scripting or repl; "" for anything else
    split(p, a, "/")
    if (a[1] == "core" && p ~ /^core\/[^\/]+\//) return "core/" a[2]
    if (a[1] == "viz" || a[1] == "scripting" || a[1] == "repl") return a[1]
    return ""
}
BEGIN {
    n = split(table, rows, "\n")
    for (i = 1; i <= n; i++) {
        m = split(rows[i], w, " ")
        for (j = 1; j <= m; j++) ok[w[1] SUBSEP w[j]] = 1
    }
}
FILENAME == "-" { exists[$0] = 1; next }
/^[ \t]*#[ \t]*include[ \t]*"/ {
    split($0, q, "\"")
    dir = FILENAME; sub(/\/[^\/]*$/, "", dir)
    near = norm(dir "/" q[2]); root = norm(q[2])
    if (near in exists) to = layer(near)
    else to = (root in exists) || q[2] !~ /^\./ ? layer(root) : layer(near)
    from = layer(FILENAME)
    if (to != "" && from != "" && !((from SUBSEP to) in ok)) {
        printf "%s:%d: %s includes %s (%s)\n", FILENAME, FNR, from, to, q[2]
        bad = 1
    }
}
END { exit bad }
' - "${sources[@]}"
