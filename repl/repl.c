/* repl.c - the read-eval-print loop: read a line, try it as an expression
 * ("return " .. line) so its values are printed, else as a statement; a
 * chunk that is not finished yet (its syntax error is at <eof>) continues on
 * the next line, as in lua5.4 (which also continues unfinished expressions).
 * The prompt names the current kernel and its point: "uopdb r_3_3_3@15> ". */
#include "repl.h"
#include "commands.h"
#include "eval.h"
#include "input.h"
#include "output.h"
#include "suggest.h"
#include "../scripting/uopdb_lua.h"
#include <lauxlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PROMPT "uopdb> "
#define PROMPT_AT "uopdb %s> "
#define PROMPT_MORE "   ...> "
#define CHUNKNAME "=stdin"
#define EOF_MARK "<eof>"

/* a syntax error at the end of the text: more input may complete it */
static bool incomplete(lua_State *L, int status) {
    if (status != LUA_ERRSYNTAX) return false;
    size_t len;
    const char *msg = lua_tolstring(L, -1, &len);
    size_t mlen = sizeof EOF_MARK - 1;
    return msg && len >= mlen && strcmp(msg + len - mlen, EOF_MARK) == 0;
}

/* appends "\n" + line to the heap string *buf */
static bool append_line(char **buf, const char *line) {
    size_t a = strlen(*buf), b = strlen(line);
    char *n = realloc(*buf, a + b + 2);
    if (!n) return false;
    n[a] = '\n';
    memcpy(n + a + 1, line, b + 1);
    *buf = n;
    return true;
}

/* Compiles text as "return " .. text, so that an expression's values are
 * printed; leaves the function or the error on the stack.  The expression
 * is compiled as the argument of a function that returns all its values,
 * not as a tail call: a function it calls then has the input's line above
 * it, and errors that name their caller's line (the Tensor functions')
 * say "stdin:1:" as they do for a statement. */
static int load_as_expression(lua_State *L, const char *text) {
    lua_pushfstring(L, "return %s", text);
    int status = luaL_loadbuffer(L, lua_tostring(L, -1), lua_rawlen(L, -1), CHUNKNAME);
    lua_remove(L, -2);
    if (status != LUA_OK) return status;
    /* the closing parenthesis on the text's last line, where Lua places
     * the code of the expression's last part; on a line of its own when
     * the text ends in a comment */
    static const char *const forms[] = {"return (function(...) return ... end)(%s)",
                                        "return (function(...) return ... end)(%s\n)"};
    for (int f = 0; f < 2; f++) {
        lua_pushfstring(L, forms[f], text);
        if (luaL_loadbuffer(L, lua_tostring(L, -1), lua_rawlen(L, -1), CHUNKNAME) == LUA_OK) {
            lua_remove(L, -2); /* the text */
            lua_remove(L, -2); /* the plain chunk */
            return status;
        }
        lua_pop(L, 2);
    }
    return status;
}

/* Compiles a chunk starting with first (takes it), as an expression if it
 * is one, else as statements; reads more lines while either reading is
 * unfinished ("1 +" continues as an expression, "function f()" as a
 * statement).  Leaves the function or the error on the stack and returns
 * the status; *text is the whole chunk (for history).  Ctrl-C at the
 * continuation prompt drops the chunk: *cancelled, nothing on the stack. */
static int load_chunk(lua_State *L, LineInput *in, char *first, char **text, bool *cancelled) {
    *text = first;
    *cancelled = false;
    for (;;) {
        int status = load_as_expression(L, *text);
        if (status == LUA_OK) return status;
        bool expr_unfinished = incomplete(L, status);
        lua_pop(L, 1);
        status = luaL_loadbuffer(L, *text, strlen(*text), CHUNKNAME);
        if (status == LUA_OK || !(expr_unfinished || incomplete(L, status))) return status;
        char *more = input_read(in, PROMPT_MORE, cancelled);
        if (*cancelled) {
            lua_pop(L, 1);
            return status;
        }
        if (!more) return status; /* EOF inside a chunk: report the error */
        lua_pop(L, 1);
        bool ok = append_line(text, more);
        free(more);
        if (!ok) {
            lua_pushliteral(L, "out of memory reading input");
            return LUA_ERRMEM;
        }
    }
}

void repl_run(lua_State *L) {
    bool tty = isatty(STDIN_FILENO);
    LineInput *in = input_open(L, tty);
    if (!in) {
        fprintf(stderr, "uopdb: out of memory\n");
        return;
    }
    output_set_interactive(tty);
    if (tty) printf("uopdb: the UOp debugger. uop.* builds graphs; :help lists commands; :quit.\n");
    for (;;) {
        char point[256], prompt[300];
        uopdb_lua_safe_point(L); /* nothing runs between two inputs: memory may be compacted */
        if (*uopdb_lua_current_point(L, point, sizeof point)) snprintf(prompt, sizeof prompt, PROMPT_AT, point);
        else snprintf(prompt, sizeof prompt, "%s", PROMPT);
        char *line = input_read(in, prompt, NULL);
        if (!line) break;
        if (command_is(line)) {
            input_add_history(in, line);
            CommandResult r = command_run(L, line);
            free(line);
            if (r == CMD_QUIT) break;
            continue;
        }
        char *text;
        int base = lua_gettop(L);
        bool cancelled;
        int status = load_chunk(L, in, line, &text, &cancelled);
        input_add_history(in, text);
        if (cancelled) {
            free(text);
            lua_settop(L, base);
            continue;
        }
        if (status == LUA_OK) status = eval_docall(L, 0, LUA_MULTRET);
        if (status == LUA_OK) {
            eval_print_values(L, base);
        } else {
            if (status == LUA_ERRRUN) suggest_method(L, text);
            eval_report(L, status);
        }
        free(text);
        lua_settop(L, base);
        fflush(stdout);
    }
    if (tty) putchar('\n');
    output_set_interactive(false);
    input_close(in);
}
