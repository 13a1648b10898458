#!/bin/sh
# embed.sh IN OUT SYMBOL - writes a C file defining SYMBOL (bytes of IN,
# NUL-terminated) and SYMBOL_len, so Lua sources ship inside the binary.
set -eu
in=$1 out=$2 sym=$3
{
    echo "/* generated from $in by scripts/embed.sh; do not edit */"
    echo "#include <stddef.h>"
    echo "const char ${sym}[] = {"
    od -An -v -tx1 "$in" | sed 's/ *\([0-9a-f][0-9a-f]\)/0x\1,/g'
    echo "0x00};"
    echo "const size_t ${sym}_len = sizeof ${sym} - 1;"
} > "$out.tmp"
mv "$out.tmp" "$out"
