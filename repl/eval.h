/* eval.h - running Lua code for the REPL and the command line: protected
 * calls with a traceback, Ctrl-C interrupting the running code, errors
 * reported to stderr, results printed. */
#ifndef UOPDB_REPL_EVAL_H
#define UOPDB_REPL_EVAL_H
#include <lua.h>
#include <stdbool.h>

/* Calls the function below narg arguments on the stack (like lua_pcall)
 * with a message handler that adds a traceback; Ctrl-C during the call
 * raises "interrupted!" in the running Lua code. */
int eval_docall(lua_State *L, int narg, int nres);
/* If status is an error: prints the message on top to stderr, pops it. */
int eval_report(lua_State *L, int status);
/* Prints the values above index base (tables shallowly), then pops them. */
void eval_print_values(lua_State *L, int base);
/* Loads and runs a file (a script or :load); returns the status, reported. */
int eval_file(lua_State *L, const char *path);
/* Loads and runs a string (-e); returns the status, reported. */
int eval_string(lua_State *L, const char *code, const char *chunkname);

#endif
