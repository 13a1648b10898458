/* commands.c - the colon commands of the REPL. */
#include "commands.h"
#include "complete.h"
#include "eval.h"
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../core/util/strbuf.h"
#include "../scripting/uopdb_lua.h"

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
    "On the current kernel (the last one compiled, picked or stepped):\n"
    "  :stages            the 22 stages: nodes before/after, rewrites, ms, changed\n"
    "  :step  :back       the next / previous stage      :goto N   stage N (0..22)\n"
    "  :next  :prev       the next / previous rewrite    :goto N.R after rewrite R of stage N\n"
    "  :break rule NAME | op OP | node ID   stop at rewrites that match; :breaks lists them,\n"
    "  :delete N removes one, :continue runs to the next hit and shows its diff\n"
    "  :print             the IR at the current stage    :diff [A B]  stage A vs B\n"
    "  :rules [N]         which rules fired in stage N   :dot [FILE]  DOT (svg/png/dot)\n"
    "  :rewrites [N]      every rewrite of stage N, in order: rule, nodes before -> after\n"
    "  :llvm  :asm        LLVM IR before/after -O2, host assembly\n"
    "  :run               run the kernel's program, validated against the reference\n"
    "  :check [N]         run the kernel at stage N on real data, compare with the reference\n"
    "  :bisect            the first wrong stage, then the rewrite in it that broke the kernel\n"
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
    "  u:graph_size u:toposort\n"
    "Tensors and kernels:\n"
    "  t = Tensor.new{{1,2},{3,4}}   Tensor.ones(3, 3)   t:sum(1)   a:matmul(b)   t:realize()\n"
    "  p = uop.compile(t)   p:kernels()   p:steps()   p:print()   p:run{validate=true}\n"
    "  k = p:kernel(1)   k:stages()   k:seek(15)   k:step()   k:back()   k:print()   k:diff(14, 15)\n"
    "  k:rules(4)   k:dot(\"k.svg\")   k:opts{{\"UPCAST\", 1, 3}}   k:llvm()   k:asm()   k:check(n)   k:bisect()\n"
    "  opts: {\"UPCAST\", axis, n} {\"UNROLL\", reduce_axis, n} {\"THREAD\", axis, cores}\n";

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

/* true if s is empty or one or two integers */
static bool int_args(const char *s, int max) {
    int n = 0;
    while (*s) {
        while (*s == ' ' || *s == '\t') s++;
        if (!*s) break;
        if (*s == '-') s++;
        if (!isdigit((unsigned char)*s)) return false;
        while (isdigit((unsigned char)*s)) s++;
        if (*s && *s != ' ' && *s != '\t') return false;
        n++;
    }
    return n <= max;
}

/* Runs a kernel command as Lua on uop.current(); false if name is not one. */
static bool kernel_command(lua_State *L, const char *name, const char *rest) {
    static const struct {
        const char *name, *call;
        int nargs; /* integer arguments allowed; -1: one optional file name */
    } cmds[] = {
        {"stages", "print(k:stages())", 0},
        {"step", "print(k:step())", 0},
        {"back", "print(k:back())", 0},
        {"print", "k:print()", 0},
        {"diff", "print(k:diff(%s))", 2},
        {"rules", "print(k:rules(%s))", 1},
        {"dot", "local f = %s; print(k:dot(f))", -1},
        {"llvm", "print(k:llvm())", 0},
        {"asm", "print(k:asm())", 0},
        {"check", "print(k:check(%s))", 1},
        {"rewrites", "print(k:rewrites(%s))", 1},
        {"bisect", "print(select(3, k:bisect()))", 0},
        {"run", "local _, rep = k:program():run{validate = true}; print(rep)", 0},
    };
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        if (strcmp(name, cmds[i].name)) continue;
        StrBuf args;
        sb_init(&args);
        if (cmds[i].nargs == -1) {
            if (*rest) {
                /* any file name, as a Lua string of decimal escapes */
                sb_putc(&args, '"');
                for (const unsigned char *p = (const unsigned char *)rest; *p; p++) {
                    if (isalnum(*p) || strchr("/._- ", *p)) sb_putc(&args, (char)*p);
                    else sb_printf(&args, "\\%03u", *p);
                }
                sb_putc(&args, '"');
            } else {
                sb_puts(&args, "nil");
            }
        } else if (!int_args(rest, cmds[i].nargs)) {
            fprintf(stderr, ":%s takes %s\n", name,
                    cmds[i].nargs == 0 ? "no arguments" : cmds[i].nargs == 1 ? "one stage number" : "two stage numbers");
            sb_free(&args);
            return true;
        } else {
            /* "14 15" -> "14, 15" */
            bool in_num = false;
            for (const char *p = rest; *p; p++) {
                if (*p == ' ' || *p == '\t') {
                    in_num = false;
                    continue;
                }
                if (!in_num && sb_str(&args)[0]) sb_puts(&args, ", ");
                sb_putc(&args, *p);
                in_num = true;
            }
        }
        StrBuf code;
        sb_init(&code);
        sb_puts(&code, "local k = uop.current()\n"
                       "if not k then io.stderr:write(\"no current kernel: compile a tensor first, e.g. p = uop.compile(t)\\n\") return end\n");
        sb_printf(&code, cmds[i].call, sb_str(&args));
        eval_string(L, sb_str(&code), "=:command");
        sb_free(&code);
        sb_free(&args);
        return true;
    }
    return false;
}

/* Runs Lua code on uop.current() as k. */
static void on_kernel(lua_State *L, const char *call) {
    StrBuf code;
    sb_init(&code);
    sb_puts(&code, "local k = uop.current()\n"
                   "if not k then io.stderr:write(\"no current kernel: compile a tensor first, e.g. p = uop.compile(t)\\n\") return end\n");
    sb_puts(&code, call);
    eval_string(L, sb_str(&code), "=:command");
    sb_free(&code);
}

static bool all_digits(const char *s) {
    if (!*s) return false;
    for (; *s; s++)
        if (!isdigit((unsigned char)*s)) return false;
    return true;
}

/* :goto N[.R], :next, :prev, :break, :breaks, :delete N, :continue; false if name is none of them */
static bool debug_command(lua_State *L, const char *name, const char *rest) {
    char call[512];
    if (!strcmp(name, "goto")) {
        char stage[32] = "", rw[32] = "";
        const char *dot = strchr(rest, '.');
        if (dot && (size_t)(dot - rest) < sizeof stage && strlen(dot + 1) < sizeof rw) {
            memcpy(stage, rest, (size_t)(dot - rest));
            strcpy(rw, dot + 1);
        } else if (strlen(rest) < sizeof stage) {
            strcpy(stage, rest);
        }
        if (!all_digits(stage) || (dot && !all_digits(rw))) {
            fprintf(stderr, ":goto takes a stage (0..%d) or a rewrite point STAGE.REWRITE, e.g. :goto 15.3\n",
                    uopdb_lua_stage_count());
            return true;
        }
        snprintf(call, sizeof call, dot ? "print(k:seek(%s, %s))" : "print(k:seek(%s))", stage, rw);
    } else if (!strcmp(name, "next") || !strcmp(name, "prev")) {
        if (*rest) {
            fprintf(stderr, ":%s takes no arguments\n", name);
            return true;
        }
        snprintf(call, sizeof call, "print(k:%s())", name);
    } else if (!strcmp(name, "break")) {
        char kind[16] = "", arg[256] = "";
        if (sscanf(rest, "%15s %255s", kind, arg) != 2 || (strcmp(kind, "rule") && strcmp(kind, "op") && strcmp(kind, "node")) ||
            (!strcmp(kind, "node") && !all_digits(arg[0] == '%' ? arg + 1 : arg))) {
            fprintf(stderr, ":break takes rule NAME, op OP or node ID, e.g. :break rule mul_to_add\n");
            return true;
        }
        for (const char *c = arg; *c; c++)
            if (!isalnum((unsigned char)*c) && *c != '_' && *c != '.' && *c != '%') {
                fprintf(stderr, ":break: '%s' is not a rule, op or node name\n", arg);
                return true;
            }
        if (!strcmp(kind, "node"))
            snprintf(call, sizeof call, "print('breakpoint ' .. k:breakpoint{node = %s})", arg[0] == '%' ? arg + 1 : arg);
        else snprintf(call, sizeof call, "print('breakpoint ' .. k:breakpoint{%s = \"%s\"})", kind, arg);
    } else if (!strcmp(name, "breaks")) {
        snprintf(call, sizeof call, "print(k:breakpoints())");
    } else if (!strcmp(name, "delete")) {
        if (!all_digits(rest)) {
            fprintf(stderr, ":delete takes a breakpoint number (see :breaks)\n");
            return true;
        }
        snprintf(call, sizeof call, "print(k:delete(%s) and 'deleted breakpoint %s' or 'no breakpoint %s')", rest, rest, rest);
    } else if (!strcmp(name, "continue") || !strcmp(name, "c")) {
        snprintf(call, sizeof call, "local at, why = k:continue()\nif at then print(at) k:diff() else print(why) end");
    } else {
        return false;
    }
    on_kernel(L, call);
    return true;
}

CommandResult command_run(lua_State *L, const char *line) {
    char *buf = strdup(line);
    if (!buf) {
        fprintf(stderr, "out of memory\n");
        return CMD_CONTINUE;
    }
    /* a trailing Lua-style comment is not an argument: ":goto 15  -- lower index dtype" */
    for (char *c = strstr(buf, "--"); c; c = strstr(c + 2, "--"))
        if (c == buf || isspace((unsigned char)c[-1])) {
            *c = 0;
            break;
        }
    char *p = trim(buf) + 1; /* after ':' */
    char *name = p;
    while (*p && !isspace((unsigned char)*p)) p++;
    char *rest = "";
    if (*p) { *p = 0; rest = trim(p + 1); }

    if (strcmp(name, "quit") == 0 || strcmp(name, "q") == 0 || strcmp(name, "exit") == 0) {
        free(buf);
        return CMD_QUIT;
    }
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
    } else if (debug_command(L, name, rest)) {
        /* ran (or reported its error) */
    } else if (kernel_command(L, name, rest)) {
        /* ran (or reported its error) */
    } else {
        fflush(stdout);
        fprintf(stderr, "unknown command ':%s' (type :help for the list)\n", name);
    }
    free(buf);
    fflush(stdout);
    fflush(stderr);
    return CMD_CONTINUE;
}
