/* commands.c - the colon commands of the REPL.  A command on the current
 * kernel is Lua code that returns what to show (text objects, shown by
 * their kind through output.h, paged when long). */
#include "commands.h"
#include "complete.h"
#include "eval.h"
#include "output.h"
#include "suggest.h"
#include "../core/util/name_distance.h"
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../core/util/strbuf.h"
#include "../scripting/uopdb_lua.h"

static const char help_text[] =
    "Type Lua; the value of an expression is printed.  Unfinished input continues\n"
    "on the next line (prompt \"   ...> \"; Ctrl-C drops it).  Tab completes names,\n"
    "fields, methods, commands and their arguments.  The prompt names the current\n"
    "kernel and its point: \"uopdb r_3_3_3@15> \" (stage 15), \"r_3_3_3@15.3\" (after\n"
    "rewrite 3 of stage 15).  Errors show one line; :trace shows the last one's\n"
    "stack traceback (uopdb -v shows them always).\n"
    "\n"
    "Commands (:help CMD explains one, with examples).  A unique prefix will do\n"
    "(:bis is :bisect), and :p :n :s :b :c are :print :next :step :break :continue.\n"
    "  :help [CMD]        this text, or what CMD does\n"
    "  :load FILE         run a Lua file in this session\n"
    "  :complete TEXT     list the completions of TEXT\n"
    "  :trace             the last error again, with its stack traceback\n"
    "  :quit, :q          leave (Ctrl-D too)\n"
    "\n"
    "On the current kernel (the last one compiled, picked or stepped):\n"
    "  :kernel [N|NAME]   the kernels of its program; :kernel N picks kernel N,\n"
    "                     :kernel NAME the one of that name (as scheduled, or\n"
    "                     tinygrad's with its opts)\n"
    "  :stages            the 22 stages: nodes before/after, rewrites, ms, changed\n"
    "  :step  :back       the next / previous stage     :goto N    stage N (0..22)\n"
    "  :next  :prev       the next / previous rewrite   :goto N.R  after rewrite R\n"
    "  :break rule NAME | op OP | node ID   stop at rewrites that match;\n"
    "                     :breaks lists them, :delete N removes one, :continue\n"
    "                     runs to the next hit and shows its diff\n"
    "  :print             the IR at the current stage   :diff [A B]  stage A vs B\n"
    "  :rules [N]         which rules fired in stage N  :dot [FILE]  svg/png/dot\n"
    "  :rewrites [N]      every rewrite of stage N in order: rule, before -> after\n"
    "  :llvm  :asm        LLVM IR before/after -O2, host assembly\n"
    "  :run               run the kernel's program, validated against the reference\n"
    "  :check [N]         run the kernel at stage N on real data, compare with the\n"
    "                     reference\n"
    "  :bisect            the first wrong stage, then the rewrite in it that broke\n"
    "                     the kernel\n"
    "  :origin ID         where node ID came from: the rewrites that made it, back\n"
    "                     to stage 0\n"
    "  :find PATTERN      the nodes that match a pattern (or the closest miss)\n"
    "  :why [RULE] ID     why rule RULE does or does not rewrite node ID: where its\n"
    "                     pattern fails, or what it gives (no RULE: every rule that\n"
    "                     could match)\n"
    "  :verify [N|all]    check point N (or every point) against tinygrad's spec\n"
    "  :report FILE       the whole program as one HTML page (stages, diffs, rules,\n"
    "                     graphs)\n"
    "  :beam N            search its opts by timing candidates (beam width N), keep\n"
    "                     the best\n"
    "\n"
    "The uop module (also require \"uopdb\"):\n"
    "  uop.var(name, lo, hi)    uop.const(dtype, v)    uop.range(n, axis_id, type)\n"
    "  uop.new(op, dtype, srcs, arg)    uop.node(id)    uop.sink(...)\n"
    "  uop.dtypes.<name>  uop.ops.<NAME>  uop.axis.<NAME>  uop.None  uop.Invalid\n"
    "  uop.parse(listing)    uop.from_tinygrad(text)    uop.find(root, pred)\n"
    "  uop.dot(u [, {file=, focus=, radius=}])    uop.diff(a, b)\n"
    "  uop.rules{ {name=, pattern=, rewrite=, when=}, ... }\n"
    "  uop.rewrite(root, rules [, opts])\n"
    "UOp methods: + - * / // % and u:lt u:gt u:le u:ge u:eq u:ne u:max u:min\n"
    "  u:where u:cast u:op u:dtype u:src u:arg u:id u:vmin u:vmax u:eval{x=1}\n"
    "  u:render u:listing u:to_tinygrad u:graph_size u:toposort\n"
    "Tensors and kernels:\n"
    "  t = Tensor.new{{1,2},{3,4}}   Tensor.ones(3, 3)   t:sum(1)   a:matmul(b)\n"
    "  t:realize()   grads = loss:gradient(x, w)   -- as tinygrad's\n"
    "  x:requires_grad_()   loss:backward()   x.grad\n"
    "  p = uop.compile(t)   p:kernels()   p:steps()   p:print()\n"
    "  p:run{validate=true}\n"
    "  p:outputs()   -- what each output buffer holds: t, or the work under t's\n"
    "                -- movement ops, SHRINKed to index 0 on the axes it does not\n"
    "                -- use (stored once)\n"
    "  k = p:kernel(1)   k:stages()   k:seek(15)   k:step()   k:back()   k:print()\n"
    "  k:diff(14, 15)   k:rules(4)   k:dot(\"k.svg\")   k:llvm()   k:asm()\n"
    "  k:check(n)   k:bisect()   k:origin(node)   k:why(rule, node)   k:why(node)\n"
    "  k:find(pattern)   uop.match(u, pattern)\n"
    "  opts: {\"UPCAST\", axis, n} {\"UNROLL\", reduce_axis, n} {\"THREAD\", axis, cores}\n"
    "  k:opts{{\"UPCAST\", 1, 3}}   k:opts{}   -- opts by hand, or none\n"
    "  k:opts()   k:heuristic()   -- tinygrad's hand-coded CPU opts (the default)\n"
    "  k:beam(4)   uop.compile(t, {beam = 4, beam_budget = 30})   -- opts by timing\n"
    "  uop.compile(t, {opts = \"none\"})   -- no opts in any kernel\n";

/* what :help CMD says; the order is the overview's */
static const CommandInfo commands[] = {
    {"help", "h", ARGS_COMMAND, ":help | :help CMD",
     "Without CMD: the commands, the uop module and the methods of tensors and\n"
     "kernels.  With CMD: what that command does, with examples.",
     ":help           -- everything, briefly\n"
     ":help goto      -- what :goto does", NULL},
    {"load", NULL, ARGS_FILE, ":load FILE",
     "Runs a Lua file in this session: its globals stay defined afterwards.",
     ":load samples/matmul3x3.lua", NULL},
    {"complete", NULL, ARGS_TEXT, ":complete TEXT",
     "Lists what Tab would offer at the end of TEXT, one per line.",
     ":complete uop.co       -- uop.compile, uop.const, ...\n"
     ":complete k:se         -- k:seek, k:select\n"
     ":complete :break op AD -- ADD", NULL},
    {"trace", NULL, ARGS_NONE, ":trace",
     "Shows the last error again with its stack traceback.  Errors are shown as\n"
     "one line (\"stdin:1: message\"); uopdb -v shows every traceback.",
     "error(\"boom\")  -- stdin:1: boom\n"
     ":trace         -- stdin:1: boom, then stack traceback: ...", NULL},
    {"quit", "q", ARGS_NONE, ":quit | :q",
     "Leaves uopdb, as Ctrl-D does (:exit too).",
     ":q", NULL},
    {"kernel", NULL, ARGS_KERNEL, ":kernel | :kernel N | :kernel NAME",
     "Without N: the kernels of the current kernel's program, the current one\n"
     "marked with >, each with tinygrad's name for it once its opts are applied\n"
     "where that differs.  With N: kernel N of that program becomes the current\n"
     "kernel, the one the other commands act on\n"
     "(uop.current():program():kernel(N):select()).  With NAME: the kernel of that\n"
     "name as scheduled, or with its opts as tinygrad's DEBUG=2 prints it.",
     ":kernel        -- > 1  Kernel r_4_4 at stage 0 ...\n"
     ":kernel 2      -- the second kernel (e.g. of a softmax) becomes current\n"
     ":kernel r_128_128_4_4_128_4  -- the kernel tinygrad names so", NULL},
    {"stages", NULL, ARGS_NONE, ":stages",
     "The 22 stages of the current kernel: nodes before and after, rewrites, time,\n"
     "whether it changed the kernel, and whether the stage is written; > marks\n"
     "the current stage, + a stage that also runs rules k:insert put in (named\n"
     "below the table).  Runs every stage that has not run yet.",
     ":stages",
     "return k:stages()"},
    {"step", "s", ARGS_NONE, ":step | :s",
     "Moves the current kernel to the next stage and says what it did.",
     ":step",
     "return k:step()"},
    {"back", NULL, ARGS_NONE, ":back",
     "Moves the current kernel back to the previous stage (from a rewrite point:\n"
     "to the stage before it).",
     ":back",
     "return k:back()"},
    {"goto", NULL, ARGS_STAGE, ":goto N | :goto N.R",
     "Moves the current kernel to stage N (0 is the kernel as scheduled, 22 the\n"
     "last stage), or to the rewrite point N.R: right after rewrite R of stage N\n"
     "(N.0 is the kernel before stage N's first rewrite).  Stages run as needed.",
     ":goto 15       -- stage 15 (lower index dtype)\n"
     ":goto 15.3     -- after the third rewrite of stage 15\n"
     ":goto 0        -- back to the kernel as scheduled", NULL},
    {"next", "n", ARGS_NONE, ":next | :n",
     "Moves to the next single rewrite, across stage boundaries.",
     ":goto 15.0\n"
     ":next          -- now at 15.1: right after the first rewrite", NULL},
    {"prev", NULL, ARGS_NONE, ":prev",
     "Moves to the previous single rewrite, across stage boundaries.",
     ":prev", NULL},
    {"break", "b", ARGS_BREAK, ":break rule NAME | :break op OP | :break node ID  (:b for short)",
     "Sets a breakpoint on the current kernel: a rewrite by the rule NAME, a\n"
     "rewrite of or to a node with op OP, or one with node ID among its sources.\n"
     ":continue then runs to the next rewrite that hits one.",
     ":break rule mul_to_add\n"
     ":break op ADD\n"
     ":break node 173      -- or %173", NULL},
    {"breaks", NULL, ARGS_NONE, ":breaks",
     "Lists the breakpoints of the current kernel with their numbers.",
     ":breaks", NULL},
    {"delete", NULL, ARGS_NONE, ":delete N",
     "Deletes breakpoint N (see :breaks).",
     ":delete 1", NULL},
    {"continue", "c", ARGS_NONE, ":continue | :c",
     "Runs from the current point to the next rewrite that hits a breakpoint,\n"
     "stops right after it and shows what it changed.",
     ":break rule mul_to_add\n"
     ":goto 0\n"
     ":continue", NULL},
    {"print", "p", ARGS_NONE, ":print | :p",
     "The IR of the current kernel at its current point, as a listing.",
     ":print",
     "k:print()"},
    {"diff", NULL, ARGS_STAGES, ":diff | :diff B | :diff A B",
     "What changed: without arguments the current point against the point before\n"
     "it; with B, stage B against the stage before it; with A and B, point A\n"
     "against point B, each a stage or a rewrite point N.R.  Nodes keep their\n"
     "ids, so only what changed differs.",
     ":diff          -- what the current stage (or rewrite) changed\n"
     ":diff 15       -- stage 14 vs stage 15\n"
     ":diff 4 16     -- stage 4 vs stage 16\n"
     ":diff 15.3 15.7  -- what rewrites 4 to 7 of stage 15 changed",
     "return k:diff(%s)"},
    {"rules", NULL, ARGS_STAGE, ":rules | :rules N",
     "Which rules fired in stage N (default: the current stage), how often, and\n"
     "where each is written; rules put into the stage with k:insert that never\n"
     "fired are listed with 0.",
     ":rules 15",
     "return k:rules(%s)"},
    {"rewrites", NULL, ARGS_STAGE, ":rewrites | :rewrites N",
     "Every rewrite of stage N (default: the current stage) in order: its number\n"
     "(for :goto N.R), the rule, and the nodes before and after.",
     ":rewrites 15\n"
     ":goto 15.6     -- stand right after rewrite 6",
     "return k:rewrites(%s)"},
    {"dot", NULL, ARGS_FILE, ":dot | :dot FILE",
     "The current point as a Graphviz graph: DOT text, or written to FILE (.svg,\n"
     ".png and .pdf need Graphviz's dot program; .dot is the text).",
     ":dot\n"
     ":dot kernel.svg",
     "local f = %s; return k:dot(f)"},
    {"llvm", NULL, ARGS_NONE, ":llvm",
     "The kernel's LLVM IR before and after -O2.",
     ":llvm",
     "return k:llvm()"},
    {"asm", NULL, ARGS_NONE, ":asm",
     "The kernel's host assembly (from Lua, k:asm{target = \"ptx\"} gives PTX for\n"
     "a GPU).",
     ":asm",
     "return k:asm()"},
    {"run", NULL, ARGS_NONE, ":run",
     "Runs the current kernel's program through the JIT (the gpu target's in the\n"
     "GPU emulator) and validates every output against the reference. When an\n"
     "output differs in a program of several kernels, it names the first kernel\n"
     "that is wrong on its own (run on the reference of its inputs): the one to\n"
     ":bisect.",
     ":run",
     "local _, rep = k:program():run{validate = true}; return rep"},
    {"check", NULL, ARGS_POINT, ":check | :check N | :check N.R",
     "Runs the kernel as it is at stage N (default: the current stage) on real\n"
     "data and compares its output with the reference. A large kernel runs\n"
     "compiled with bounds checks; k:check(N, {executor = \"interpreter\"})\n"
     "interprets it instead. The report's executor and work fields say which\n"
     "ran and how many node evaluations the run was estimated at.",
     ":check 4\n"
     ":check 15.7     -- right after rewrite 7 of stage 15\n"
     ":check 22",
     "return k:check(%s)"},
    {"verify", NULL, ARGS_STAGE_OR_ALL, ":verify | :verify N | :verify N.R | :verify all",
     "Checks the kernel at point N (default: the current point) against the spec\n"
     "of that point, tinygrad's checks of what each op's sources and dtypes may\n"
     "be: the kernel spec at 0, the codegen spec between the stages (no index\n"
     "dtype from 16), the program spec on the linear program (21, 22).  With all,\n"
     "checks every point and names the first stage whose output breaks its spec,\n"
     "with the rule and the node.  A rewrite point N.R inside a stage is checked\n"
     "too, and said to be inside it: a stage may break the spec there for a while.",
     ":verify\n"
     ":verify 14\n"
     ":verify 15.7   -- inside stage 15: does the stage's output meet it too?\n"
     ":verify all    -- the first stage that breaks the spec, if any",
     "return k:verify(%s)"},
    {"report", NULL, ARGS_FILE, ":report FILE",
     "Writes the current kernel's program as one self-contained HTML page: its\n"
     "kernels, every stage with its listing, diff, rules and graph, the LLVM IR\n"
     "and assembly, and the validation (p:report(FILE)).",
     ":report out.html",
     "local f = %s; if not f then error(':report needs a file name, e.g. :report out.html', 0) end; "
                   "return 'wrote ' .. k:program():report(f)"},
    {"bisect", NULL, ARGS_NONE, ":bisect",
     "Checks the kernel at its stages on real data to find the first wrong stage,\n"
     "then the single rewrite in it after which the output is wrong: its rule,\n"
     "where the rule is written, and the nodes before and after. The points of a\n"
     "large kernel run compiled with bounds checks; k:bisect{executor =\n"
     "\"interpreter\"} interprets them instead.",
     ":bisect\n"
     ":goto 15.6     -- stand right after the culprit\n"
     ":diff          -- exactly what it changed",
     "return (select(3, k:bisect()))"},
    {"origin", NULL, ARGS_NODE, ":origin ID",
     "Where node ID of the graph at the current point came from, latest first:\n"
     "the rewrite after which it is first in the graph (found by bisecting the\n"
     "stage's rewrites), whether that rule made it, made it inside its result,\n"
     "or rebuilt it because a rewrite below it changed a source, then the same\n"
     "for the node it came from, back to the kernel as scheduled or to a stage\n"
     "that is not a rewrite (apply opts).\n"
     "From Lua: k:origin(node [, {steps = N}]).",
     ":origin 331\n"
     ":origin %331   -- the same\n"
     ":goto 15.8     -- stand right after the rewrite that made it",
     NULL},
    {"find", NULL, ARGS_TEXT, ":find PATTERN",
     "The nodes of the graph at the current point that match PATTERN, written in\n"
     "the rule language of uop.rules (captures, op sets, dtypes, constants), each\n"
     "with what its captures bound.  When no node matches, the node the match got\n"
     "furthest on and where it failed: the sub-pattern, the node, what differs.\n"
     "From Lua: k:find(pattern [, {limit = N}]); uop.match(u, pattern) for one\n"
     "node.",
     ":find (IDIV x 4)            -- every division by 4\n"
     ":find (LOAD (INDEX buf i))  -- every load, with its buffer and index\n"
     ":find (ADD x 0)             -- an identity left unsimplified?",
     NULL},
    {"why", NULL, ARGS_RULE_NODE, ":why RULE ID | :why ID",
     "Why rule RULE does or does not rewrite node ID of the graph at the current\n"
     "point.  The rule is tried on the node inside the stage that runs it (the\n"
     "current stage when it does, else the next one, else the last before), where\n"
     "that stage's pass stands at the current point, with the context the stage\n"
     "gives its rules.  It says where the pattern fails to match (the sub-pattern,\n"
     "the node it fails on and what differs), or that the rule declines the match,\n"
     "or what it rewrites the node into; then what the stage itself did to the\n"
     "node (which rule rewrote it, where).  Without RULE: every rule of the stage\n"
     "whose pattern can match the node's op, one line each, in the order the stage\n"
     "offers them the node.\n"
     "From Lua: k:why(rule, node [, {stage = N}]), k:why(node).",
     ":why mul_to_add 329         -- does the planted rule rewrite %329?\n"
     ":why lower_binary %317      -- where lower_binary's pattern fails on %317\n"
     ":why 317                    -- what each rule that could rewrite %317 says\n"
     ":goto 15.7                  -- then :why again: the pass as it stood there",
     NULL},
    {"beam", NULL, ARGS_NUMBER, ":beam N",
     "Searches the current kernel's opts with a beam of width N (tinygrad's\n"
     "BEAM=N): each candidate is compiled and timed through the JIT, the fastest\n"
     "are kept round after round, and the kernel gets the best (k:opts() then\n"
     "says why).\n"
     "On a terminal a line shows the progress; Ctrl-C stops the search and keeps\n"
     "the best found so far.  Results are cached on disk ($UOPDB_CACHE_DIR, else\n"
     "~/.cache/uopdb), so a second search of the same kernel is instant.\n"
     "From Lua: k:beam(N, {budget = SECONDS, cache = false}).",
     ":beam 4\n"
     ":run           -- the kernel with the opts found, validated",
     "return k:beam(%s)"},
};

const CommandInfo *command_list(size_t *n) {
    *n = sizeof commands / sizeof commands[0];
    return commands;
}

/* appends ":NAME" to a list "A, B or C" being written into sb */
static void list_name(StrBuf *sb, const char *name, size_t index, size_t count) {
    if (index) sb_puts(sb, index + 1 == count ? " or " : ", ");
    sb_printf(sb, ":%s", name);
}

const CommandInfo *command_find(const char *name, size_t len, char *why, size_t whylen) {
    size_t n = sizeof commands / sizeof commands[0];
    char typed[64];
    if (why && whylen) why[0] = 0;
    if (len >= sizeof typed) len = sizeof typed - 1;
    memcpy(typed, name, len);
    typed[len] = 0;
    if (!strcmp(typed, "exit")) strcpy(typed, "quit");
    for (size_t i = 0; i < n; i++)
        if (!strcmp(commands[i].name, typed) || (commands[i].alias && !strcmp(commands[i].alias, typed)))
            return &commands[i];
    /* a prefix of one name only */
    size_t matches = 0;
    const CommandInfo *found = NULL;
    for (size_t i = 0; i < n && len; i++)
        if (!strncmp(commands[i].name, typed, len)) {
            matches++;
            found = &commands[i];
        }
    if (matches == 1) return found;
    if (!why || !whylen) return NULL;
    StrBuf sb;
    sb_init(&sb);
    if (!len) {
        sb_puts(&sb, "':' starts a command: a name follows it, e.g. :help");
    } else if (matches > 1) {
        sb_printf(&sb, "ambiguous command ':%s': ", typed);
        size_t k = 0;
        for (size_t i = 0; i < n; i++)
            if (!strncmp(commands[i].name, typed, len)) list_name(&sb, commands[i].name, k++, matches);
    } else {
        /* the names closest to what was typed, when close enough to be a typo */
        int best = suggest_limit(typed) + 1;
        int dist[sizeof commands / sizeof commands[0]];
        for (size_t i = 0; i < n; i++) {
            dist[i] = name_distance(typed, commands[i].name);
            if (dist[i] < best) best = dist[i];
        }
        size_t close = 0;
        for (size_t i = 0; i < n; i++) close += dist[i] == best;
        sb_printf(&sb, "unknown command ':%s'", typed);
        if (close) {
            sb_puts(&sb, ": did you mean ");
            size_t k = 0;
            for (size_t i = 0; i < n; i++)
                if (dist[i] == best) list_name(&sb, commands[i].name, k++, close);
            sb_puts(&sb, "? (:help lists them)");
        } else {
            sb_puts(&sb, " (type :help for the list)");
        }
    }
    snprintf(why, whylen, "%s", sb.oom ? "unknown command" : sb_str(&sb));
    sb_free(&sb);
    return NULL;
}

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

/* true if s is empty or up to max integers */
/* At most max integers; with points, N.R (a rewrite point) is one too. */
static bool int_args(const char *s, int max, bool points) {
    int n = 0;
    while (*s) {
        while (*s == ' ' || *s == '\t') s++;
        if (!*s) break;
        if (*s == '-') s++;
        if (!isdigit((unsigned char)*s)) return false;
        while (isdigit((unsigned char)*s)) s++;
        if (points && *s == '.' && isdigit((unsigned char)s[1]))
            for (s++; isdigit((unsigned char)*s); s++) {}
        if (*s && *s != ' ' && *s != '\t') return false;
        n++;
    }
    return n <= max;
}

#define NO_KERNEL \
    "local k = uop.current()\n" \
    "if not k then io.stderr:write(\"no current kernel: compile a tensor first, e.g. p = uop.compile(t)\\n\") return end\n"

/* Runs Lua code on uop.current() as k and shows what it returns. */
static void on_kernel(lua_State *L, const char *call) {
    StrBuf code;
    sb_init(&code);
    sb_puts(&code, NO_KERNEL);
    sb_puts(&code, call);
    eval_command(L, sb_str(&code), "=:command");
    sb_free(&code);
}

/* Runs a kernel command as Lua on uop.current(); false if name is not one. */
static bool kernel_command(lua_State *L, const char *name, const char *rest) {
    const CommandInfo *cmd = NULL;
    for (size_t i = 0; i < sizeof commands / sizeof commands[0] && !cmd; i++)
        if (commands[i].call && !strcmp(name, commands[i].name)) cmd = &commands[i];
    if (!cmd) return false;
    /* integer arguments allowed; -1: one optional file name */
    int nargs = cmd->args == ARGS_FILE     ? -1
                : cmd->args == ARGS_STAGES ? 2
                : cmd->args == ARGS_STAGE || cmd->args == ARGS_POINT || cmd->args == ARGS_NUMBER ||
                          cmd->args == ARGS_STAGE_OR_ALL ? 1
                                           : 0;
    /* the arguments that may be rewrite points N.R */
    bool takes_points = cmd->args == ARGS_POINT || cmd->args == ARGS_STAGES || cmd->args == ARGS_STAGE_OR_ALL;
    StrBuf args;
    sb_init(&args);
    if (cmd->args == ARGS_STAGE_OR_ALL && !strcmp(rest, "all")) {
        sb_puts(&args, "\"all\"");
    } else if (nargs == -1) {
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
    } else if (!int_args(rest, nargs, takes_points)) {
        fprintf(stderr, ":%s takes %s\n", name,
                nargs == 0                         ? "no arguments"
                : cmd->args == ARGS_STAGE_OR_ALL   ? "one point (a stage number or N.R) or all"
                : cmd->args == ARGS_NUMBER         ? "one number"
                : nargs == 1 && takes_points       ? "one point (a stage number or N.R)"
                : nargs == 1                       ? "one stage number"
                                                   : "two points (stage numbers, or N.R after rewrite R)");
        sb_free(&args);
        return true;
    } else {
        /* "14 15" -> "14, 15"; a rewrite point as a string: "15.3 15.4" -> "'15.3', '15.4'" */
        for (const char *p = rest; *p;) {
            if (*p == ' ' || *p == '\t') {
                p++;
                continue;
            }
            size_t len = strcspn(p, " \t");
            bool dotted = memchr(p, '.', len) != NULL;
            if (sb_str(&args)[0]) sb_puts(&args, ", ");
            sb_printf(&args, dotted ? "'%.*s'" : "%.*s", (int)len, p);
            p += len;
        }
    }
    StrBuf call;
    sb_init(&call);
    sb_printf(&call, cmd->call, sb_str(&args));
    on_kernel(L, sb_str(&call));
    sb_free(&call);
    sb_free(&args);
    return true;
}

static bool all_digits(const char *s) {
    if (!*s) return false;
    for (; *s; s++)
        if (!isdigit((unsigned char)*s)) return false;
    return true;
}

/* a kernel name: letters, digits and '_' (r_4_4, E_3n1) */
static bool is_kernel_name(const char *s) {
    if (!*s) return false;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '_') return false;
    return true;
}

/* :goto N[.R], :next, :prev, :break, :breaks, :delete N, :continue, :kernel [N|NAME], :origin ID,
 * :why [RULE] ID, :find PATTERN;
 * false if name is none of them */
static bool debug_command(lua_State *L, const char *name, const char *rest) {
    char call[768];
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
        /* more digits than an int holds: no such stage, or past the stage's rewrites (k:seek says how many) */
        for (char *z = stage; z[0] == '0' && z[1];) memmove(z, z + 1, strlen(z));
        for (char *z = rw; z[0] == '0' && z[1];) memmove(z, z + 1, strlen(z));
        if (strlen(stage) > 9) {
            fprintf(stderr, "no stage %s: stages are 0 (the kernel as scheduled) to %d\n", stage, uopdb_lua_stage_count());
            return true;
        }
        if (strlen(rw) > 9) strcpy(rw, "999999999");
        snprintf(call, sizeof call, dot ? "return k:seek(%s, %s)" : "return k:seek(%s)", stage, rw);
    } else if (!strcmp(name, "next") || !strcmp(name, "prev")) {
        if (*rest) {
            fprintf(stderr, ":%s takes no arguments\n", name);
            return true;
        }
        snprintf(call, sizeof call, "return k:%s()", name);
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
            snprintf(call, sizeof call, "return 'breakpoint ' .. k:breakpoint{node = %s}", arg[0] == '%' ? arg + 1 : arg);
        else
            snprintf(call, sizeof call,
                     "local id, note = k:breakpoint{%s = \"%s\"}\n"
                     "return 'breakpoint ' .. id .. (note and ('; ' .. note) or '')",
                     kind, arg);
    } else if (!strcmp(name, "origin")) {
        const char *id = rest[0] == '%' ? rest + 1 : rest;
        if (!*id || !all_digits(id) || strlen(id) > 10) {
            fprintf(stderr, ":origin takes a node id, e.g. :origin 331 or :origin %%331 (:print shows the ids)\n");
            return true;
        }
        snprintf(call, sizeof call, "return k:origin(%s)", id);
    } else if (!strcmp(name, "why")) {
        char rule[128] = "", id[32] = "", extra[8] = "";
        int got = sscanf(rest, "%127s %31s %7s", rule, id, extra);
        const char *digits = id[0] == '%' ? id + 1 : id;
        bool rule_ok = got >= 1;
        for (const char *c = rule; rule_ok && *c; c++)
            rule_ok = isalnum((unsigned char)*c) || *c == '_' || *c == '.' || *c == '-';
        /* one argument: a node id, every rule asked */
        const char *alone = rule[0] == '%' ? rule + 1 : rule;
        if (got == 1 && *alone && all_digits(alone) && strlen(alone) <= 10) {
            snprintf(call, sizeof call, "return k:why(%s)", alone);
        } else if (got != 2 || !rule_ok || !*digits || !all_digits(digits) || strlen(digits) > 10) {
            fprintf(stderr, ":why takes a rule name and a node id, or a node id alone, e.g. :why mul_to_add 329 or "
                            ":why 329 (:rules lists a stage's rules, :print the ids)\n");
            return true;
        } else {
            snprintf(call, sizeof call, "return k:why(\"%s\", %s)", rule, digits);
        }
    } else if (!strcmp(name, "find")) {
        if (!*rest) {
            fprintf(stderr, ":find takes a pattern of the rule language, e.g. :find (IDIV x 4)\n");
            return true;
        }
        /* the pattern as a Lua string: every byte that is not a letter or digit escaped */
        StrBuf sb;
        sb_init(&sb);
        sb_puts(&sb, "return k:find(\"");
        for (const unsigned char *c = (const unsigned char *)rest; *c; c++) {
            if (isalnum(*c)) sb_putc(&sb, (char)*c);
            else sb_printf(&sb, "\\%03u", *c);
        }
        sb_puts(&sb, "\")");
        on_kernel(L, sb_str(&sb));
        sb_free(&sb);
        return true;
    } else if (!strcmp(name, "breaks")) {
        snprintf(call, sizeof call, "return k:breakpoints()");
    } else if (!strcmp(name, "delete")) {
        if (!all_digits(rest) || strlen(rest) > 18) {
            fprintf(stderr, ":delete takes a breakpoint number (see :breaks)\n");
            return true;
        }
        snprintf(call, sizeof call, "return k:delete(%s) and 'deleted breakpoint %s' or 'no breakpoint %s'", rest, rest, rest);
    } else if (!strcmp(name, "continue")) {
        snprintf(call, sizeof call, "local at, why = k:continue()\nif at then return at, k:diff() else return why end");
    } else if (!strcmp(name, "kernel")) {
        bool number = all_digits(rest) && strlen(rest) <= 9, named = !all_digits(rest) && is_kernel_name(rest) && strlen(rest) <= 100;
        if (*rest && !number && !named) {
            fprintf(stderr, ":kernel takes a kernel number or name, e.g. :kernel 2 or :kernel r_4_4 (:kernel lists them)\n");
            return true;
        }
        if (number) snprintf(call, sizeof call, "return k:program():kernel(%s):select()", rest);
        else if (named) snprintf(call, sizeof call, "return k:program():kernel(\"%s\"):select()", rest);
        else
            snprintf(call, sizeof call,
                     "local lines, names = {}, k:program():names()\n"
                     "for i, kk in ipairs(k:program():kernels()) do\n"
                     "  local with = names[i].with_opts\n"
                     "  lines[i] = string.format('%%s %%d  %%s%%s', kk == k and '>' or ' ', i, tostring(kk),\n"
                     "    with and with ~= names[i].scheduled and '  # ' .. with .. ' with its opts' or '')\n"
                     "end\n"
                     "return table.concat(lines, '\\n')");
    } else {
        return false;
    }
    on_kernel(L, call);
    return true;
}

/* :help CMD */
static void help_command(const char *name) {
    if (*name == ':') name++;
    char why[256];
    const CommandInfo *c = command_find(name, strlen(name), why, sizeof why);
    if (!c) {
        fprintf(stderr, "%s\n", why);
        return;
    }
    StrBuf sb;
    sb_init(&sb);
    sb_printf(&sb, "%s\n", c->usage);
    for (const char *p = c->about; *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        sb_puts(&sb, "  ");
        sb_putn(&sb, p, len);
        sb_putc(&sb, '\n');
        p += len + (nl ? 1 : 0);
    }
    sb_puts(&sb, "Examples:\n");
    for (const char *p = c->examples; *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        sb_puts(&sb, "  ");
        sb_putn(&sb, p, len);
        sb_putc(&sb, '\n');
        p += len + (nl ? 1 : 0);
    }
    output_emit(sb_str(&sb), sb.len);
    sb_free(&sb);
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
    char why[256];
    const CommandInfo *cmd = command_find(name, strlen(name), why, sizeof why);
    if (!cmd) {
        fflush(stdout);
        fprintf(stderr, "%s\n", why);
        free(buf);
        fflush(stderr);
        return CMD_CONTINUE;
    }
    name = (char *)cmd->name; /* the full name: ":p" runs :print */

    if (strcmp(name, "quit") == 0) {
        if (*rest) {
            fprintf(stderr, ":quit takes no arguments\n");
            free(buf);
            return CMD_CONTINUE;
        }
        free(buf);
        return CMD_QUIT;
    }
    if (strcmp(name, "help") == 0) {
        if (*rest) help_command(rest);
        else output_emit(help_text, sizeof help_text - 1);
    } else if (strcmp(name, "load") == 0) {
        if (!*rest) {
            fprintf(stderr, ":load needs a file name, e.g. :load samples/first.lua\n");
        } else {
            eval_file(L, rest);
        }
    } else if (strcmp(name, "complete") == 0) {
        /* the text as typed, trailing blanks included (":complete :break " lists rule, op, node) */
        const char *text = strstr(line, "complete") + strlen("complete");
        while (*text == ' ' || *text == '\t') text++;
        char **list;
        size_t start;
        size_t n = complete_line(L, text, &start, &list);
        StrBuf sb;
        sb_init(&sb);
        for (size_t i = 0; i < n; i++) sb_printf(&sb, "%s\n", list[i]);
        complete_free(list, n);
        if (sb.len) output_emit(sb.data, sb.len);
        sb_free(&sb);
    } else if (strcmp(name, "trace") == 0) {
        if (eval_push_last_error(L)) {
            size_t len;
            const char *t = lua_tolstring(L, -1, &len);
            StrBuf sb;
            sb_init(&sb);
            sb_putn(&sb, t, len);
            sb_putc(&sb, '\n');
            lua_pop(L, 1);
            output_emit(sb.data ? sb.data : "", sb.len);
            sb_free(&sb);
        } else {
            fprintf(stderr, "no error yet\n");
        }
    } else if (debug_command(L, name, rest)) {
        /* ran (or reported its error) */
    } else if (kernel_command(L, name, rest)) {
        /* ran (or reported its error) */
    }
    free(buf);
    fflush(stdout);
    fflush(stderr);
    return CMD_CONTINUE;
}
