/* input.h - where the REPL's lines come from: libedit (prompt, history in
 * ~/.uopdb_history or $UOPDB_HISTORY, tab completion) on a terminal, plain
 * reads with no prompts when stdin is a pipe or a file. */
#ifndef UOPDB_REPL_INPUT_H
#define UOPDB_REPL_INPUT_H
#include <lua.h>
#include <stdbool.h>

typedef struct LineInput LineInput;

/* interactive: use libedit (stdin is a terminal) */
LineInput *input_open(lua_State *L, bool interactive);
/* The next line without its newline (malloc'd, free it), NULL at EOF. */
char *input_read(LineInput *in, const char *prompt);
void input_add_history(LineInput *in, const char *entry);
bool input_interactive(const LineInput *in);
/* Saves the history (interactive only) and frees. */
void input_close(LineInput *in);

#endif
