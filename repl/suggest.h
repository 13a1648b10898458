/* suggest.h - "did you mean": the names closest to a mistyped one, for an
 * unknown colon command and for a method a value does not have. */
#ifndef UOPDB_REPL_SUGGEST_H
#define UOPDB_REPL_SUGGEST_H
#include <lua.h>

/* The most edits a name may be from what was typed to be offered for it:
 * half the typed length, at most 2. */
int suggest_limit(const char *typed);

/* When the error message on top of L's stack is Lua's "attempt to call a
 * nil value (method 'X')" and code calls X on a name (v:X(...), a.b:X(...))
 * whose value has methods close to X, appends them: "...: did you mean
 * v:reshape?".  Leaves any other message as it is. */
void suggest_method(lua_State *L, const char *code);

#endif
