/* eval.h - running Lua code for the REPL and the command line: protected
 * calls that keep a traceback, Ctrl-C interrupting the running code, errors
 * reported to stderr in one line (the whole traceback with -v or on
 * :trace), results shown through output.h (colour, pager). */
#ifndef UOPDB_REPL_EVAL_H
#define UOPDB_REPL_EVAL_H
#include <lua.h>
#include <stdbool.h>

/* -v: every error is reported with its traceback. */
void eval_set_verbose(bool on);
/* Calls the function below narg arguments on the stack (like lua_pcall)
 * with a message handler that keeps the traceback for the report; Ctrl-C
 * during the call raises "interrupted!" in the running Lua code. */
int eval_docall(lua_State *L, int narg, int nres);
/* If status is an error: prints the message on top to stderr (one line
 * unless verbose), remembers it with its traceback for :trace, pops it. */
int eval_report(lua_State *L, int status);
/* Pushes the last error reported with its traceback; false (nothing
 * pushed) if there was none. */
bool eval_push_last_error(lua_State *L);
/* Shows the values above index base, tab-separated (tables as format.h
 * says, text objects by their kind), then pops them. */
void eval_print_values(lua_State *L, int base);
/* Runs code (a colon command) and shows what it returns, one value per
 * line, after anything it wrote to stdout, as one output (paged when
 * long); returns the status, reported. */
int eval_command(lua_State *L, const char *code, const char *chunkname);
/* Loads and runs a file (a script or :load); returns the status, reported. */
int eval_file(lua_State *L, const char *path);
/* Loads and runs a string (-e); returns the status, reported. */
int eval_string(lua_State *L, const char *code, const char *chunkname);

#endif
