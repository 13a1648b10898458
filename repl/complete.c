/* complete.c - completion candidates, see complete.h.  Lua names are
 * found by raw lookups only, so completing them never runs user code (no
 * __index functions); the rule names after ":break rule" come from the
 * current kernel's rewrites. */
#include "complete.h"
#include "commands.h"
#include <ctype.h>
#include <dirent.h>
#include <lauxlib.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../core/util/strbuf.h"
#include "../scripting/uopdb_lua.h"


static const char *const keywords[] = {
    "and", "break", "do", "else", "elseif", "end", "false", "for", "function", "goto", "if", "in",
    "local", "nil", "not", "or", "repeat", "return", "then", "true", "until", "while", NULL};

static bool is_identifier(const char *s, size_t n) {
    if (n == 0 || !(isalpha((unsigned char)s[0]) || s[0] == '_')) return false;
    for (size_t i = 1; i < n; i++)
        if (!(isalnum((unsigned char)s[i]) || s[i] == '_')) return false;
    return true;
}

/* adds prefix..key for each identifier key of the table at t that starts
 * with partial (into the set at out) */
static void add_keys(lua_State *L, int t, const char *prefix, const char *partial, int out, bool only_functions) {
    size_t plen = strlen(partial);
    lua_pushnil(L);
    while (lua_next(L, t)) {
        if (lua_type(L, -2) == LUA_TSTRING && (!only_functions || lua_isfunction(L, -1))) {
            size_t klen;
            const char *k = lua_tolstring(L, -2, &klen);
            if (is_identifier(k, klen) && klen >= plen && strncmp(k, partial, plen) == 0) {
                lua_pushfstring(L, "%s%s", prefix, k);
                lua_pushboolean(L, 1);
                lua_rawset(L, out);
            }
        }
        lua_pop(L, 1);
    }
}

/* the metatable's __index of the value at idx, if a table (pushed); when
 * __index is a function (a Tensor's, which also takes Tensor keys), the
 * metatable itself, where such a class keeps its methods; else nothing */
static bool push_index_table(lua_State *L, int idx) {
    if (!lua_getmetatable(L, idx)) return false;
    lua_pushliteral(L, "__index");
    lua_rawget(L, -2);
    if (lua_istable(L, -1)) {
        lua_remove(L, -2);
        return true;
    }
    if (lua_isfunction(L, -1)) {
        lua_pop(L, 1);
        return true;
    }
    lua_pop(L, 2);
    return false;
}

/* field k of the value on top, by raw lookups; replaces it (nil if none) */
static void raw_field(lua_State *L, const char *k, size_t n) {
    int v = lua_gettop(L);
    if (lua_istable(L, v)) {
        lua_pushlstring(L, k, n);
        if (lua_rawget(L, v) != LUA_TNIL) { lua_replace(L, v); return; }
        lua_pop(L, 1);
    }
    if (push_index_table(L, v)) {
        lua_pushlstring(L, k, n);
        lua_rawget(L, -2);
        lua_remove(L, -2);
        lua_replace(L, v);
        return;
    }
    lua_pushnil(L);
    lua_replace(L, v);
}

/* A list of completions being built: strings, kept unique. */
typedef struct Matches {
    char **items;
    size_t n, cap;
    bool oom;
} Matches;

static void matches_add(Matches *m, const char *s, size_t len) {
    if (m->oom) return;
    if (m->n == m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 32;
        char **items = realloc(m->items, cap * sizeof *items);
        if (!items) { m->oom = true; return; }
        m->items = items;
        m->cap = cap;
    }
    char *copy = malloc(len + 1);
    if (!copy) { m->oom = true; return; }
    memcpy(copy, s, len);
    copy[len] = 0;
    m->items[m->n++] = copy;
}

static int compare_strings(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* sorts and drops duplicates; hands the list over (count returned) */
static size_t matches_finish(Matches *m, char ***out) {
    if (m->oom) {
        complete_free(m->items, m->n);
        *out = NULL;
        return 0;
    }
    if (m->n > 1) qsort(m->items, m->n, sizeof *m->items, compare_strings);
    size_t k = 0;
    for (size_t i = 0; i < m->n; i++) {
        if (k && strcmp(m->items[k - 1], m->items[i]) == 0) free(m->items[i]);
        else m->items[k++] = m->items[i];
    }
    if (k == 0) {
        free(m->items);
        m->items = NULL;
    }
    *out = m->items;
    return k;
}

/* protected: (word) -> the set of completions {[string] = true} */
static int candidates(lua_State *L) {
    const char *word = luaL_checkstring(L, 1);
    lua_newtable(L); /* set of results */
    int out = lua_gettop(L);
    const char *sep = NULL;
    for (const char *p = word; *p; p++)
        if (*p == '.' || *p == ':') sep = p;
    if (!sep) {
        lua_pushglobaltable(L);
        add_keys(L, lua_gettop(L), "", word, out, false);
        lua_pop(L, 1);
        size_t n = strlen(word);
        for (int i = 0; keywords[i]; i++)
            if (strncmp(keywords[i], word, n) == 0) {
                lua_pushstring(L, keywords[i]);
                lua_pushboolean(L, 1);
                lua_rawset(L, out);
            }
    } else {
        /* walk the path before the last separator */
        lua_pushglobaltable(L);
        const char *seg = word;
        while (seg < sep) {
            const char *end = seg;
            while (end < sep && *end != '.' && *end != ':') end++;
            if (!is_identifier(seg, (size_t)(end - seg))) { lua_pushnil(L); lua_replace(L, -2); break; }
            raw_field(L, seg, (size_t)(end - seg));
            seg = end + 1;
        }
        int v = lua_gettop(L);
        lua_pushlstring(L, word, (size_t)(sep - word) + 1);
        const char *prefix = lua_tostring(L, -1);
        if (!lua_isnil(L, v)) {
            if (lua_istable(L, v)) add_keys(L, v, prefix, sep + 1, out, *sep == ':');
            if (push_index_table(L, v)) {
                add_keys(L, lua_gettop(L), prefix, sep + 1, out, *sep == ':');
                lua_pop(L, 1);
            }
        }
        lua_pop(L, 1);
    }
    lua_settop(L, out);
    return 1;
}

/* the string keys of the table on top added to m; pops it */
static void add_set(lua_State *L, Matches *m) {
    lua_pushnil(L);
    while (lua_next(L, -2)) {
        lua_pop(L, 1);
        if (lua_type(L, -1) == LUA_TSTRING) {
            size_t len;
            const char *s = lua_tolstring(L, -1, &len);
            matches_add(m, s, len);
        }
    }
    lua_pop(L, 1);
}

size_t complete_word(lua_State *L, const char *word, char ***out) {
    *out = NULL;
    int top = lua_gettop(L);
    if (!lua_checkstack(L, 8)) return 0;
    lua_pushcfunction(L, candidates);
    lua_pushstring(L, word);
    if (lua_pcall(L, 1, 1, 0) != LUA_OK) { lua_settop(L, top); return 0; }
    Matches m = {0};
    add_set(L, &m);
    lua_settop(L, top);
    return matches_finish(&m, out);
}

void complete_free(char **list, size_t n) {
    for (size_t i = 0; i < n; i++) free(list[i]);
    free(list);
}

/* ---- colon commands ---- */

/* names the debugger knows, by asking the module (a list of strings):
 * "ops" the op names, "rules" the rules of the current kernel (inserted,
 * and fired in any stage), "all_rules" every registered rule set's rules,
 * "kernels" the kernel numbers of the current kernel's program */
static const char names_chunk[] =
    "local what, nstages = ...\n"
    "local uop = package.loaded.uopdb\n"
    "local names, seen = {}, {}\n"
    "local function add(n) if type(n) == 'string' and not seen[n] then seen[n] = true names[#names + 1] = n end end\n"
    "if not uop then return names end\n"
    "if what == 'ops' then\n"
    "  for name in pairs(uop.ops) do add(name) end\n"
    "elseif what == 'rules' then\n"
    "  local k = uop.current()\n"
    "  if k then\n"
    "    for _, ins in ipairs(k:inserted()) do for _, n in ipairs(ins.names) do add(n) end end\n"
    "    for s = 1, nstages do\n"
    "      local ok, rw = pcall(k.rewrites, k, s)\n"
    "      if not ok then break end\n"
    "      for _, r in ipairs(rw) do add(r.rule) end\n"
    "    end\n"
    "  end\n"
    "elseif what == 'all_rules' then\n"
    "  for _, set in ipairs(uop.rulesets()) do\n"
    "    local ok, rs = pcall(uop.ruleset, set)\n"
    "    if ok then for _, n in ipairs(rs:names()) do add(n) end end\n"
    "  end\n"
    "elseif what == 'kernels' then\n"
    "  local k = uop.current()\n"
    "  if k then for i = 1, #k:program():kernels() do add(tostring(i)) end end\n"
    "end\n"
    "return names\n";

/* adds the names of that kind starting with prefix; how many matched */
static size_t add_names(lua_State *L, const char *what, const char *prefix, Matches *m) {
    int top = lua_gettop(L);
    size_t before = m->n, plen = strlen(prefix);
    if (!lua_checkstack(L, 8) || luaL_loadbuffer(L, names_chunk, sizeof names_chunk - 1, "=complete") != LUA_OK) {
        lua_settop(L, top);
        return 0;
    }
    lua_pushstring(L, what);
    lua_pushinteger(L, uopdb_lua_stage_count());
    if (lua_pcall(L, 2, 1, 0) == LUA_OK && lua_istable(L, -1)) {
        lua_Integer n = (lua_Integer)lua_rawlen(L, -1);
        for (lua_Integer i = 1; i <= n; i++) {
            lua_rawgeti(L, -1, i);
            size_t len;
            const char *s = lua_tolstring(L, -1, &len);
            if (s && len >= plen && strncmp(s, prefix, plen) == 0) matches_add(m, s, len);
            lua_pop(L, 1);
        }
    }
    lua_settop(L, top);
    return m->n - before;
}

/* file names: the entries of the directory in path (up to its last '/')
 * starting with what follows; each given from word on, the part of path
 * the completion replaces (a directory with a '/' after it) */
static void add_files(const char *path, const char *word, Matches *m) {
    const char *slash = strrchr(path, '/');
    StrBuf dir;
    sb_init(&dir);
    if (slash) sb_putn(&dir, path, (size_t)(slash - path) + 1);
    else sb_puts(&dir, "./");
    const char *base = slash ? slash + 1 : path;
    size_t blen = strlen(base), keep = strlen(base) - strlen(word); /* base = <kept>word */
    if (strlen(word) > blen) keep = 0;
    DIR *d = dir.oom ? NULL : opendir(sb_str(&dir));
    if (d) {
        struct dirent *e;
        StrBuf full, name;
        sb_init(&full);
        sb_init(&name);
        while ((e = readdir(d))) {
            if (strncmp(e->d_name, base, blen) != 0) continue;
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
            if (e->d_name[0] == '.' && base[0] != '.') continue;
            sb_clear(&full);
            sb_puts(&full, sb_str(&dir));
            sb_puts(&full, e->d_name);
            DIR *sub = full.oom ? NULL : opendir(sb_str(&full));
            sb_clear(&name);
            sb_puts(&name, e->d_name + keep);
            if (sub) {
                closedir(sub);
                sb_putc(&name, '/');
            }
            if (!name.oom) matches_add(m, name.data, name.len);
        }
        closedir(d);
        sb_free(&full);
        sb_free(&name);
    }
    sb_free(&dir);
}

static void add_prefixed(Matches *m, const char *s, const char *prefix, const char *word) {
    size_t wl = strlen(word);
    char buf[64];
    int n = snprintf(buf, sizeof buf, "%s%s", prefix, s);
    if (n > 0 && (size_t)n < sizeof buf && strncmp(buf, word, wl) == 0) matches_add(m, buf, (size_t)n);
}

/* the arguments of a colon command: line is the text after ':', the word
 * being completed starts at word (inside line) */
static void complete_command_args(lua_State *L, const char *line, const char *word, Matches *m) {
    const char *p = line;
    while (*p && !isspace((unsigned char)*p)) p++;
    const CommandInfo *cmd = command_find(line, (size_t)(p - line), NULL, 0);
    if (!cmd) return;
    /* the whole arguments before the word: how many, and the first */
    const char *args = p;
    while (args < word && isspace((unsigned char)*args)) args++;
    int nprev = 0;
    char first[16] = "";
    for (const char *q = args; q < word;) {
        while (q < word && isspace((unsigned char)*q)) q++;
        if (q >= word) break;
        const char *e = q;
        while (e < word && !isspace((unsigned char)*e)) e++;
        if (e == word) break; /* the word itself (after a break character) */
        if (nprev == 0 && (size_t)(e - q) < sizeof first) {
            memcpy(first, q, (size_t)(e - q));
            first[e - q] = 0;
        }
        nprev++;
        q = e;
    }
    size_t ncmds;
    const CommandInfo *cmds = command_list(&ncmds);
    char num[16];
    switch (cmd->args) {
    case ARGS_STAGE:
    case ARGS_POINT:
    case ARGS_STAGES:
        if (nprev < (cmd->args == ARGS_STAGES ? 2 : 1))
            for (int i = 0; i <= uopdb_lua_stage_count(); i++) {
                snprintf(num, sizeof num, "%d", i);
                add_prefixed(m, num, "", word);
            }
        break;
    case ARGS_STAGE_OR_ALL:
        if (nprev == 0) {
            add_prefixed(m, "all", "", word);
            for (int i = 0; i <= uopdb_lua_stage_count(); i++) {
                snprintf(num, sizeof num, "%d", i);
                add_prefixed(m, num, "", word);
            }
        }
        break;
    case ARGS_BREAK:
        if (nprev == 0) {
            static const char *const kinds[] = {"rule", "op", "node"};
            for (size_t i = 0; i < 3; i++) add_prefixed(m, kinds[i], "", word);
        } else if (nprev == 1 && !strcmp(first, "op")) {
            add_names(L, "ops", word, m);
        } else if (nprev == 1 && !strcmp(first, "rule")) {
            if (!add_names(L, "rules", word, m)) add_names(L, "all_rules", word, m);
        }
        break;
    case ARGS_RULE_NODE:
        /* any rule: the one asked about is often one that did not fire */
        if (nprev == 0) {
            add_names(L, "rules", word, m);
            add_names(L, "all_rules", word, m);
        }
        break;
    case ARGS_COMMAND:
        if (nprev == 0)
            for (size_t i = 0; i < ncmds; i++) add_prefixed(m, cmds[i].name, "", word);
        break;
    case ARGS_KERNEL:
        if (nprev == 0) add_names(L, "kernels", word, m);
        break;
    case ARGS_FILE:
        add_files(args, word, m);
        break;
    default:
        break;
    }
}

size_t complete_line(lua_State *L, const char *line, size_t *word_start, char ***out) {
    size_t len = strlen(line), ws = len;
    while (ws > 0 && !strchr(COMPLETE_WORD_BREAKS, line[ws - 1])) ws--;
    *word_start = ws;
    *out = NULL;
    const char *word = line + ws;
    const char *p = line;
    while (*p == ' ' || *p == '\t') p++;
    if (*p != ':') return complete_word(L, word, out);
    Matches m = {0};
    if (word == p) { /* the command's name */
        size_t ncmds;
        const CommandInfo *cmds = command_list(&ncmds);
        for (size_t i = 0; i < ncmds; i++) add_prefixed(&m, cmds[i].name, ":", word);
    } else {
        complete_command_args(L, p + 1, word, &m);
    }
    return matches_finish(&m, out);
}
