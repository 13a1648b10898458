/* commands.h - the REPL's colon commands (:help, :load FILE, :quit, ...). */
#ifndef UOPDB_REPL_COMMANDS_H
#define UOPDB_REPL_COMMANDS_H
#include <lua.h>
#include <stdbool.h>

typedef enum CommandResult { CMD_CONTINUE, CMD_QUIT } CommandResult;

/* Runs the command line (starting with ':').  Unknown commands print a
 * message to stderr and continue. */
CommandResult command_run(lua_State *L, const char *line);
/* Whether the line (after leading blanks) is a colon command. */
bool command_is(const char *line);

#endif
