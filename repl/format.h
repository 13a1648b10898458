/* format.h - how the REPL shows a value: tostring for most values, tables
 * as {1, 2, key = value, sub = {x = 1}}, nested to four levels and at most
 * 200 entries in all (then {...} or ...), strings inside tables quoted,
 * keys sorted so the output is the same every time; a table wider than 100
 * columns shows an entry to a line, indented (list items fill lines). */
#ifndef UOPDB_REPL_FORMAT_H
#define UOPDB_REPL_FORMAT_H
#include <lua.h>

/* Pushes the text for the value at idx (may call __tostring; may raise). */
void format_value(lua_State *L, int idx);
/* Pushes the text the REPL shows for the value at idx: a text object
 * (inspection results: diffs, stage tables, checks...) as its text without
 * the final newline, coloured and cut by its kind on a terminal (see
 * output.h); anything else as format_value. */
void format_display(lua_State *L, int idx);

#endif
