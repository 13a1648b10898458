/* commands.h - the REPL's colon commands (:help, :load FILE, :goto N, ...). */
#ifndef UOPDB_REPL_COMMANDS_H
#define UOPDB_REPL_COMMANDS_H
#include <lua.h>
#include <stdbool.h>
#include <stddef.h>

typedef enum CommandResult { CMD_CONTINUE, CMD_QUIT } CommandResult;

/* What a command's arguments are, for completion. */
typedef enum CommandArgs {
    ARGS_NONE,
    ARGS_STAGE,   /* one stage number */
    ARGS_POINT,   /* one point: a stage number or N.R (after rewrite R of stage N) */
    ARGS_STAGE_OR_ALL, /* one point or the word "all" */
    ARGS_STAGES,  /* up to two points */
    ARGS_BREAK,   /* rule NAME | op OP | node ID */
    ARGS_FILE,    /* a file name */
    ARGS_COMMAND, /* a command name */
    ARGS_KERNEL,  /* a kernel number of the current program */
    ARGS_TEXT,    /* anything */
    ARGS_NUMBER,  /* one integer that is not a stage (a beam width) */
    ARGS_NODE,    /* one node id, 331 or %331 */
    ARGS_RULE_NODE, /* a rule name, then a node id (or a node id alone) */
} CommandArgs;

typedef struct CommandInfo {
    const char *name;     /* "goto" */
    const char *alias;    /* another name ("q" for quit), or NULL */
    CommandArgs args;
    const char *usage;    /* ":goto N | :goto N.R" */
    const char *about;    /* what it does, lines of text */
    const char *examples; /* lines "COMMAND  -- what it does" */
    /* for a command on the current kernel: the Lua it runs with k bound to
     * the kernel and its arguments in place of %s (integers for ARGS_STAGE,
     * integers or strings "N.R" for the points, a file name string or nil
     * for ARGS_FILE); NULL for
     * the commands handled in C */
    const char *call;
} CommandInfo;

/* Every command, in the order :help lists them. */
const CommandInfo *command_list(size_t *n);

/* The command a typed name stands for: its name, its alias (":p"), or a
 * prefix of one name only (":bis" is :bisect).  NULL when there is none or
 * the prefix is ambiguous; then why (when not NULL) gets one line saying
 * so, with the candidates or the closest names. */
const CommandInfo *command_find(const char *name, size_t len, char *why, size_t whylen);

/* Runs the command line (starting with ':').  Unknown commands print a
 * message to stderr and continue. */
CommandResult command_run(lua_State *L, const char *line);
/* Whether the line (after leading blanks) is a colon command. */
bool command_is(const char *line);

#endif
