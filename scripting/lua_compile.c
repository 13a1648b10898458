/* lua_compile.c - placeholder for uop.compile. */
#include "lua_internal.h"
void luop_open_compile(lua_State *L) { (void)L; }
