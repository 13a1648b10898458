/* lua_compile.h - what the Program and Kernel bindings share
 * (lua_program.c, lua_kernel.c): the Program userdata, the lookups of a
 * live program or kernel, option readers and text helpers. */
#ifndef UOPDB_LUA_COMPILE_H
#define UOPDB_LUA_COMPILE_H
#include <stdbool.h>
#include "lua_internal.h"
#include "../core/debug/bisect.h"
#include "../core/debug/kernel_check.h"
#include "../core/sched/schedule.h"

#define PROGRAM_MT "uopdb.Program"
#define KERNEL_MT "uopdb.Kernel"
#define CURRENT_KEY "uopdb.current_kernel"

typedef struct LProgram {
    Schedule *s;
    KernelPipeline **kps;
    int nk;
    const UOp *sink;
    bool ran;       /* run once: its kernels' JIT memory was told to Lua's collector */
} LProgram;

typedef struct LKernel {
    int index; /* 0-based; the program is the userdata's user value */
} LKernel;

/* the program at idx, erroring if it was freed */
LProgram *program_alive(lua_State *L, int idx);
/* the kernel at idx and its program (pushes nothing) */
KernelPipeline *check_kernel(lua_State *L, int idx, LProgram **prog_out);
/* argument idx as a point of the kernel: nil the current one, an integer a
 * stage (*rewrite -1), a string "N.R" the point after rewrite R of stage N;
 * raises for anything else */
void luop_point_arg(lua_State *L, int idx, KernelPipeline *kp, int *stage, long *rewrite);
/* the kernel at kernel_idx becomes uop.current() */
void set_current(lua_State *L, int kernel_idx);
/* pushes kernel i of the program at prog_idx as a Kernel userdata */
void push_kernel(lua_State *L, int prog_idx, int i);
/* reads a list of opts {{"UPCAST", axis, amount}, ...} (at most 32) */
int parse_opts(lua_State *L, int idx, KernelOpt *out);
/* pushes {{"UPCAST", axis, amount}, ...} */
void push_opts_table(lua_State *L, const KernelOpt *o, int n);
/* raises "<what>: msg"; when msg names an INDEX node ("INDEX %41 ..."),
 * a second line renders it, so an out-of-bounds access reads as code */
int error_with_node(lua_State *L, const char *what, const char *msg);
/* raises "<what>: unknown option 'x' (known: a, b)" for a key of the
 * options table at t that is not in known (NULL-terminated) */
void check_option_keys(lua_State *L, int t, const char *what, const char *const *known);
/* the boolean option `name` at idx ("<what>: <name> must be true or false,
 * got ..." otherwise); nil gives dflt */
int check_flag(lua_State *L, int idx, const char *what, const char *name, int dflt);
/* option t[k] of an options table (or the default when t is not a table) */
double opt_number(lua_State *L, int t, const char *k, double dflt);
bool opt_bool(lua_State *L, int t, const char *k);
/* prints s with a final newline (for the methods whose job is to print) */
void print_text(const char *s);
/* Text objects: the table on top gets fields text and kind ("diff",
 * "stages", "llvm", ...) and prints as its text (the REPL colours it by
 * kind on a terminal); push_text makes a new one. */
#define TEXT_MT "uopdb.Text"
void set_text(lua_State *L, const char *kind, const char *text);
void push_text(lua_State *L, const char *kind, const char *text);
/* pushes a node as a verdict shows it: "%12 = ADD int32 (%3, %9)   -- (r0+3)",
 * its listing line with its expression rendered when that is short */
void push_node_line(lua_State *L, const UOp *u);
/* appends indent and the node's line as push_node_line makes it (no newline) */
void add_node_line(lua_State *L, StrBuf *sb, const char *indent, const UOp *u);
/* sets field k of the table on top to the node (nothing for NULL) */
void set_node_field(lua_State *L, const char *k, const UOp *u);
/* a pipeline point as the debugger names it: "15.7", "15.0" (the stage's
 * input), or "15" for the whole stage (r < 0) */
void point_text(char *buf, size_t len, int stage, long r);
/* appends where a pattern failed: "5 fails on %314: wants the value 5, it is 3" */
void add_pattern_miss(StrBuf *sb, const PatternMiss *m);
/* whether s is a node id as typed, 331 or "%331" (at most 10 digits); *id set */
bool node_id_text(const char *s, lua_Integer *id);
/* the node argument at idx: a UOp, its id or "%ID" (raises "<what>: ..."
 * for anything else or an id with no node) */
const UOp *check_node_arg(lua_State *L, int idx, const char *what);
/* counts a failed validation (a script that had one exits non-zero) */
#define FAILED_KEY "uopdb.failed_validations"
void count_failed_validation(lua_State *L);

/* the Kernel methods (lua_kernel.c) */
extern const luaL_Reg luop_kernel_methods[];
int luop_kernel_tostring(lua_State *L);
/* k:verify([n | "all"]) (lua_verify.c) */
int luop_kernel_verify(lua_State *L);
/* k:origin(node [, {steps = N}]) (lua_origin.c) */
int luop_kernel_origin(lua_State *L);
/* k:find(pattern [, {limit = N}]) (lua_find.c) */
int luop_kernel_find(lua_State *L);
/* k:why(rule, node [, {stage = N}]) (lua_why.c) */
int luop_kernel_why(lua_State *L);
int luop_kernel_eq(lua_State *L);
/* beam search (lua_beam.c): k:beam, and uop.compile's beam options from
 * its options table at t, run on every kernel of p */
int luop_kernel_beam(lua_State *L);
void luop_compile_beam(lua_State *L, int t, LProgram *p);

#endif
