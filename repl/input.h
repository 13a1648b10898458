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
/* The next line without its newline (malloc'd, free it), NULL at EOF.
 * Ctrl-C at the prompt drops what was typed: with cancelled NULL the
 * prompt is shown again, else *cancelled is set and NULL returned (a
 * continuation line: the whole unfinished input is dropped). */
char *input_read(LineInput *in, const char *prompt, bool *cancelled);
void input_add_history(LineInput *in, const char *entry);
bool input_interactive(const LineInput *in);
/* Saves the history (interactive only) and frees. */
void input_close(LineInput *in);

#endif
