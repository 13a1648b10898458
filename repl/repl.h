/* repl.h - the read-eval-print loop. */
#ifndef UOPDB_REPL_REPL_H
#define UOPDB_REPL_REPL_H
#include <lua.h>

/* Runs the loop on stdin until EOF or :quit (libedit on a terminal, plain
 * line reads otherwise).  Errors are reported and the session goes on. */
void repl_run(lua_State *L);

#endif
