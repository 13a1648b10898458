/* main.c - the uopdb program: the REPL, or a script, or -e code.
 *
 *   uopdb                     REPL (libedit on a terminal; line by line from a pipe)
 *   uopdb FILE.lua [args]     run a script (arg table as in lua5.4)
 *   uopdb -e CODE ...         run code (repeatable), -i to stay in the REPL after
 *
 * A script or -e error exits with status 1, and so does a script in which a
 * validation failed; REPL errors are reported in one line (-v: with the
 * traceback) and the session goes on. */
#include "eval.h"
#include "output.h"
#include "repl.h"
#include "../scripting/uopdb_lua.h"
#include <lauxlib.h>
#include <lualib.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define VERSION "0.1.0"

static void usage(FILE *f, const char *prog) {
    fprintf(f,
            "usage: %s [options] [script [args]]\n"
            "  -e CODE     run CODE (may be repeated)\n"
            "  -i          enter the REPL after running the script or -e code\n"
            "  -v, --verbose  report errors with their stack traceback (else :trace does)\n"
            "  --color=WHEN   colour output: auto (on a terminal, unless NO_COLOR is set),\n"
            "                 always or never\n"
            "  --no-pager  never send long output through $PAGER (default less -R)\n"
            "  --version   print the version\n"
            "  --help      this text\n"
            "  --          stop handling options\n"
            "With no script and no -e, starts the REPL (Lua with the global `uop`).\n",
            prog);
}

typedef struct Args {
    int script;       /* index in argv of the script, 0 if none */
    bool interactive; /* -i */
    bool has_e;
    bool verbose;     /* -v */
    bool no_pager;    /* --no-pager */
    ColorMode color;  /* --color=WHEN */
} Args;

/* Checks the options; returns false (message printed) on a bad one. */
static bool parse_args(int argc, char **argv, Args *a, int *exit_code) {
    memset(a, 0, sizeof *a);
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        if (strcmp(s, "--help") == 0 || strcmp(s, "-h") == 0) { usage(stdout, argv[0]); *exit_code = 0; return false; }
        if (strcmp(s, "--version") == 0) { printf("uopdb " VERSION "\n"); *exit_code = 0; return false; }
        if (strcmp(s, "-i") == 0) { a->interactive = true; continue; }
        if (strcmp(s, "-v") == 0 || strcmp(s, "--verbose") == 0) { a->verbose = true; continue; }
        if (strcmp(s, "--no-pager") == 0) { a->no_pager = true; continue; }
        if (strncmp(s, "--color", 7) == 0 && (s[7] == '=' || s[7] == 0)) {
            const char *when = s[7] ? s + 8 : "always";
            if (!output_parse_color(when, &a->color)) {
                fprintf(stderr, "uopdb: --color takes never, always or auto, not '%s'\n", when);
                *exit_code = 1;
                return false;
            }
            continue;
        }
        if (strcmp(s, "-e") == 0) {
            if (i + 1 >= argc) { fprintf(stderr, "uopdb: -e needs code\n"); usage(stderr, argv[0]); *exit_code = 1; return false; }
            a->has_e = true;
            i++;
            continue;
        }
        if (strcmp(s, "--") == 0) { if (i + 1 < argc) a->script = i + 1; return true; }
        if (s[0] == '-' && s[1]) { fprintf(stderr, "uopdb: unknown option '%s'\n", s); usage(stderr, argv[0]); *exit_code = 1; return false; }
        a->script = i;
        return true;
    }
    return true;
}

/* arg[0] = script, arg[1..] = its args, arg[-k] = the program and options */
static void set_arg_table(lua_State *L, int argc, char **argv, int script) {
    int at = script ? script : argc;
    lua_createtable(L, argc - at, at + 1);
    for (int i = 0; i < argc; i++) {
        lua_pushstring(L, argv[i]);
        lua_rawseti(L, -2, i - (script ? script : 0));
    }
    lua_setglobal(L, "arg");
}

static int run_e(lua_State *L, int argc, char **argv, int stop) {
    for (int i = 1; i < stop; i++) {
        if (strcmp(argv[i], "-e") == 0 && i + 1 < stop) {
            if (eval_string(L, argv[++i], "=(command line)") != LUA_OK) return 1;
        }
    }
    (void)argc;
    return 0;
}

static int run_script(lua_State *L, int argc, char **argv, int script) {
    int status = luaL_loadfile(L, argv[script]);
    int n = 0;
    if (status == LUA_OK) {
        for (int i = script + 1; i < argc; i++, n++) {
            luaL_checkstack(L, 1, "too many script arguments");
            lua_pushstring(L, argv[i]);
        }
        status = eval_docall(L, n, 0);
    }
    fflush(stdout);
    return eval_report(L, status) == LUA_OK ? 0 : 1;
}

/* a run without the REPL fails when a validation failed in it */
static int failed_validations(lua_State *L) {
    int n = uopdb_lua_failed_validations(L);
    if (n > 0) {
        char msg[96];
        int len = snprintf(msg, sizeof msg, "uopdb: %d validation%s failed", n, n == 1 ? "" : "s");
        output_error(msg, (size_t)len);
    }
    return n > 0;
}

/* everything that may raise runs in protected mode */
typedef struct Run { int argc; char **argv; Args a; int code; } Run;

static int pmain(lua_State *L) {
    Run *r = lua_touserdata(L, 1);
    luaL_openlibs(L);
    uopdb_lua_open(L);
    set_arg_table(L, r->argc, r->argv, r->a.script);
    int stop = r->a.script ? r->a.script : r->argc;
    if (run_e(L, r->argc, r->argv, stop) != 0) { r->code = 1; return 0; }
    if (r->a.script && run_script(L, r->argc, r->argv, r->a.script) != 0) { r->code = 1; return 0; }
    if (r->a.interactive || (!r->a.script && !r->a.has_e)) repl_run(L);
    else if (failed_validations(L)) { r->code = 1; return 0; }
    r->code = 0;
    return 0;
}

int main(int argc, char **argv) {
    Run r = {.argc = argc, .argv = argv, .code = 1};
    int code;
    if (!parse_args(argc, argv, &r.a, &code)) return code;
    output_configure(r.a.color, !r.a.no_pager);
    eval_set_verbose(r.a.verbose);
    lua_State *L = luaL_newstate();
    if (!L) {
        fprintf(stderr, "uopdb: cannot create the Lua state (out of memory)\n");
        return 1;
    }
    lua_pushcfunction(L, pmain);
    lua_pushlightuserdata(L, &r);
    if (lua_pcall(L, 1, 0, 0) != LUA_OK) {
        const char *msg = lua_tostring(L, -1);
        fprintf(stderr, "uopdb: %s\n", msg ? msg : "(error object is not a string)");
        r.code = 1;
    }
    fflush(stdout);
    lua_close(L);
    return r.code;
}
