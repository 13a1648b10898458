/* complete.h - tab completion: Lua names (globals "pri" -> "print", table
 * fields "uop.co" -> "uop.const", methods through the value's metatable
 * "k:se" -> "k:seek", "k:select") and colon commands (":go" -> ":goto") with
 * their arguments (stage numbers, "rule"/"op"/"node" and the rule and op
 * names after :break, command names after :help, kernel numbers after
 * :kernel, file names after :load and :dot). */
#ifndef UOPDB_REPL_COMPLETE_H
#define UOPDB_REPL_COMPLETE_H
#include <lua.h>
#include <stddef.h>

/* The characters that end a word (libedit is given the same); '.' and ':'
 * are not among them, so "uop.co" and "k:se" are one word. */
#define COMPLETE_WORD_BREAKS " \t\n\"\\'`@$><=;|&{}()[],+-*/%^~#"

/* The sorted completions of word; *out is a malloc'd array of malloc'd
 * strings (free with complete_free).  Returns the count (0 on none). */
size_t complete_word(lua_State *L, const char *word, char ***out);
/* The completions of the last word of line (the text before the cursor),
 * in context: a colon command's name or arguments, else a Lua name.  Each
 * replaces the word, which starts at *word_start. */
size_t complete_line(lua_State *L, const char *line, size_t *word_start, char ***out);
void complete_free(char **list, size_t n);

#endif
