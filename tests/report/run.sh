#!/usr/bin/env bash
# run.sh [BUILD_DIR] - the session report and the JSON export end to end:
#   - the 3x3 matmul and a conv2d written as reports and exports (make_reports.lua)
#   - both exports valid against docs/trace.schema.json (validate_json.py, no
#     pip packages), and broken documents refused by the same check
#   - without Graphviz's dot on PATH the page says so instead of failing
#   - the pages rendered by headless Chromium: the DOM has every stage name
#     and the validation line; a screenshot is a PNG of some size
# Chromium missing (scripts/deps.sh not run) is a failure, not a skip.
# Prints "report: N passed, M failed".
set -u
build=${1:-build}
cd "$(dirname "$0")/../.." || exit 1
root=$PWD
uopdb=$root/$build/uopdb
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0

result() { # name status detail
    if [ "$2" -eq 0 ]; then pass=$((pass + 1)); else
        fail=$((fail + 1))
        printf 'FAIL %s\n%s\n' "$1" "$3"
    fi
}

"$uopdb" tests/report/make_reports.lua "$tmp" >"$tmp/make.log" 2>&1
result "uopdb writes the reports and exports" $? "$(cat "$tmp/make.log")"
[ -f "$tmp/sizes.txt" ] && sed 's/^/  written: /; s/$/ (name, bytes, ms)/' "$tmp/sizes.txt"

# ---- the JSON export against its schema ----
schema=docs/trace.schema.json
validate() { python3 tests/report/validate_json.py "$@"; }
out=$(validate "$schema" "$tmp/matmul.json" "$tmp/conv2d.json" 2>&1)
result "the exports validate against $schema" $? "$out"

# broken copies of the matmul export: each must be refused (exit 1)
broken() { # name python-statement-on-d
    python3 - "$tmp/matmul.json" "$tmp/broken.json" "$2" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
exec(sys.argv[3])
json.dump(d, open(sys.argv[2], "w"))
EOF
    out=$(validate "$schema" "$tmp/broken.json" 2>&1)
    [ $? -eq 1 ] && grep -q "broken.json: #" <<<"$out"
    result "a broken document is refused: $1" $? "$out"
}
broken "a required property missing" "del d['kernels'][0]['stages'][3]['rewrites']"
broken "a wrong type" "d['kernels'][0]['stages'][14]['trace'][0]['before']['id'] = '12'"
broken "a value outside the enum" "d['kernels'][0]['stages'][1]['status'] = 'done'"
broken "a property not in the schema" "d['program']['buffers'][0]['colour'] = 'red'"
broken "null where a string must be" "d['kernels'][0]['name'] = None"
broken "a boolean for an integer" "d['program']['generations'] = True"
printf '{"format": "uopdb-trace", "version": 1, ' >"$tmp/cut.json"
out=$(validate "$schema" "$tmp/cut.json" 2>&1)
[ $? -eq 1 ]
result "a document that is not JSON is refused" $? "$out"
sed 's/"type": "object",/"type": "object", "minProperties": 1,/' "$schema" >"$tmp/schema.json"
out=$(validate "$tmp/schema.json" "$tmp/matmul.json" 2>&1)
[ $? -eq 2 ] && grep -q "minProperties" <<<"$out"
result "a schema keyword the checker does not know is refused" $? "$out"

# ---- no dot on PATH: the page says so ----
mkdir -p "$tmp/empty"
out=$(PATH="$tmp/empty" "$uopdb" -e "
local A = Tensor.new({{1, 2}, {3, 4}}, 'float32')
uop.compile(A:matmul(A)):report('$tmp/nodot.html')" 2>&1)
rc=$?
[ $rc -eq 0 ] && grep -q "The Graphviz 'dot' program is not installed" "$tmp/nodot.html" &&
    ! grep -q "<svg" "$tmp/nodot.html" && grep -q "match the reference" "$tmp/nodot.html"
result "without dot the report is written and says so" $? "$out"

# ---- headless Chromium ----
chrome=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$chrome" ]; then
    echo "chromium is not installed (scripts/deps.sh installs it): the browser checks cannot run"
    fail=$((fail + 1))
else
    for name in matmul conv2d; do
        page="file://$tmp/$name.html"
        flags=(--headless --no-sandbox --disable-gpu --user-data-dir="$tmp/profile-$name" --hide-scrollbars)
        timeout 120 "$chrome" "${flags[@]}" --dump-dom "$page" >"$tmp/$name.dom" 2>"$tmp/$name.chrome.log"
        rc=$?
        missing=""
        while IFS= read -r st; do
            esc=$(sed 's/&/\&amp;/g; s/</\&lt;/g; s/>/\&gt;/g' <<<"$st")
            grep -qF -- "$esc" "$tmp/$name.dom" || missing="$missing [$st]"
        done <"$tmp/stages.txt"
        [ $rc -eq 0 ] && [ -z "$missing" ] && [ "$(wc -l <"$tmp/stages.txt")" -eq 22 ]
        result "$name: the rendered DOM has every stage name" $? "rc $rc, missing:$missing $(tail -n 5 "$tmp/$name.chrome.log")"
        grep -qE "validate: output0 float32 \([0-9, ]+\): [0-9]+ elements match the reference" "$tmp/$name.dom"
        result "$name: the rendered DOM has the validation line" $? "$(grep -o 'validate:[^<]*' "$tmp/$name.dom" | head -3)"
        timeout 120 "$chrome" "${flags[@]}" --screenshot="$tmp/$name.png" --window-size=1280,2000 "$page" \
            >"$tmp/$name.shot.log" 2>&1
        rc=$?
        size=$(stat -c %s "$tmp/$name.png" 2>/dev/null || echo 0)
        sig=$(head -c 8 "$tmp/$name.png" 2>/dev/null | od -An -tx1 | tr -d ' \n')
        [ $rc -eq 0 ] && [ "$size" -gt 40000 ] && [ "$sig" = "89504e470d0a1a0a" ]
        result "$name: a screenshot of the page (PNG, $size bytes)" $? "rc $rc, signature $sig, $(tail -n 5 "$tmp/$name.shot.log")"
        [ -n "${UOPDB_REPORT_KEEP:-}" ] && cp "$tmp/$name.html" "$tmp/$name.png" "$UOPDB_REPORT_KEEP/" 2>/dev/null
    done
fi

echo "report: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
