/* complete.h - tab completion of Lua names: globals ("pri" -> "print"),
 * table fields ("uop.co" -> "uop.const") and methods through the value's
 * metatable ("u:li" -> "u:listing"). */
#ifndef UOPDB_REPL_COMPLETE_H
#define UOPDB_REPL_COMPLETE_H
#include <lua.h>
#include <stddef.h>

/* The sorted completions of word; *out is a malloc'd array of malloc'd
 * strings (free with complete_free).  Returns the count (0 on none). */
size_t complete_word(lua_State *L, const char *word, char ***out);
void complete_free(char **list, size_t n);

#endif
