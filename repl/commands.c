/* commands.c - the colon commands of the REPL. */
#include "commands.h"
#include "complete.h"
#include "eval.h"
#include <ctype.h>
#include <stdio.h>
#include <string.h>

static const char help_text[] =
    "Type Lua; the value of an expression is printed.  Unfinished input continues\n"
    "on the next line (prompt \"   ...> \").  Tab completes names, fields and methods.\n"
    "\n"
    "Commands:\n"
    "  :help              this text\n"
    "  :load FILE         run a Lua file in this session\n"
    "  :complete TEXT     list the completions of TEXT\n"
    "  :quit, :q          leave (Ctrl-D too)\n"
    "\n"
    "The uop module (also require \"uopdb\"):\n"
    "  uop.var(name, lo, hi)         uop.const(dtype, v)        uop.range(n, axis_id, axis_type)\n"
    "  uop.new(op, dtype, srcs, arg) uop.node(id)               uop.sink(...)\n"
    "  uop.dtypes.<name>  uop.ops.<NAME>  uop.axis.<NAME>  uop.None  uop.Invalid\n"
    "  uop.parse(listing)            uop.from_tinygrad(text)    uop.find(root, pred)\n"
    "  uop.dot(u [, {file=, focus=, radius=}])                  uop.diff(a, b)\n"
    "  uop.rules{ {name=, pattern=, rewrite=, when=}, ... }     uop.rewrite(root, rules [, opts])\n"
    "UOp methods: + - * / // % and u:lt u:gt u:le u:ge u:eq u:ne u:max u:min u:where u:cast\n"
    "  u:op u:dtype u:src u:arg u:id u:vmin u:vmax u:eval{x=1} u:render u:listing u:to_tinygrad\n"
    "  u:graph_size u:toposort\n";

bool command_is(const char *line) {
    while (*line == ' ' || *line == '\t') line++;
    return *line == ':';
}

/* trims the argument text in place */
static char *trim(char *s) {
    while (isspace((unsigned char)*s)) s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1])) s[--n] = 0;
    return s;
}

CommandResult command_run(lua_State *L, const char *line) {
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", line);
    char *p = trim(buf) + 1; /* after ':' */
    char *name = p;
    while (*p && !isspace((unsigned char)*p)) p++;
    char *rest = "";
    if (*p) { *p = 0; rest = trim(p + 1); }

    if (strcmp(name, "quit") == 0 || strcmp(name, "q") == 0 || strcmp(name, "exit") == 0) return CMD_QUIT;
    if (strcmp(name, "help") == 0 || strcmp(name, "h") == 0) {
        fputs(help_text, stdout);
    } else if (strcmp(name, "load") == 0) {
        if (!*rest) {
            fprintf(stderr, ":load needs a file name, e.g. :load samples/first.lua\n");
        } else {
            eval_file(L, rest);
        }
    } else if (strcmp(name, "complete") == 0) {
        char **list;
        size_t n = complete_word(L, rest, &list);
        for (size_t i = 0; i < n; i++) printf("%s\n", list[i]);
        complete_free(list, n);
    } else {
        fflush(stdout);
        fprintf(stderr, "unknown command ':%s' (type :help for the list)\n", name);
    }
    fflush(stdout);
    fflush(stderr);
    return CMD_CONTINUE;
}
