#!/usr/bin/env bash
# update_docs.sh [BUILD_DIR] - rewrites the generated stage table in
# docs/ARCHITECTURE.md (between its two markers) from the rows the pipeline
# runs, printed by scripts/stage_table.lua.
set -euo pipefail
build=${1:-build}
doc=docs/ARCHITECTURE.md
table=$(mktemp)
trap 'rm -f "$table"' EXIT
"$build/uopdb" scripts/stage_table.lua >"$table"
awk -v table="$table" '
    /<!-- stage table: begin/ { print; while ((getline line < table) > 0) print line; skip = 1; next }
    /<!-- stage table: end/ { skip = 0 }
    !skip { print }' "$doc" >"$doc.new"
mv "$doc.new" "$doc"
