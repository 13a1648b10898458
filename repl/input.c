/* input.c - line input for the REPL, see input.h. */
#include "input.h"
#include "complete.h"
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <editline/readline.h>

#define HISTORY_MAX 1000

struct LineInput {
    bool interactive;
    char *history_path;
};

/* libedit calls back without a context, so completion finds the state here */
static lua_State *completion_state;
static char **matches;
static size_t nmatches, next_match;
static const char *completion_line; /* the line up to the cursor */

static char *match_generator(const char *text, int state) {
    (void)text;
    if (state == 0) {
        complete_free(matches, nmatches);
        size_t start;
        nmatches = complete_line(completion_state, completion_line ? completion_line : text, &start, &matches);
        next_match = 0;
    }
    if (next_match >= nmatches) return NULL;
    return strdup(matches[next_match++]);
}

static char **attempt_completion(const char *text, int start, int end) {
    (void)start;
    rl_attempted_completion_over = 1; /* no file name completion */
    /* the context is the whole line before the cursor (":break op AD") */
    char *line = rl_line_buffer && end >= 0 ? strndup(rl_line_buffer, (size_t)end) : NULL;
    completion_line = line;
    char **list = rl_completion_matches(text, match_generator);
    /* a colon command or its argument, completed, is followed by a blank;
     * Lua names and directories are not (".field", "(...)", "dir/file") */
    const char *p = line ? line : "";
    while (*p == ' ' || *p == '\t') p++;
    size_t tl = strlen(text);
    rl_completion_append_character = *p == ':' && !(tl && text[tl - 1] == '/') && !(list && list[0] && list[1] == NULL &&
                                                         strlen(list[0]) && list[0][strlen(list[0]) - 1] == '/')
                                         ? ' '
                                         : '\0';
    completion_line = NULL;
    free(line);
    return list;
}

static char word_breaks[] = COMPLETE_WORD_BREAKS;

static char *history_file(void) {
    const char *env = getenv("UOPDB_HISTORY");
    if (env && *env) return strdup(env);
    const char *home = getenv("HOME");
    if (!home || !*home) return NULL;
    size_t n = strlen(home) + sizeof "/.uopdb_history";
    char *p = malloc(n);
    if (p) snprintf(p, n, "%s/.uopdb_history", home);
    return p;
}

LineInput *input_open(lua_State *L, bool interactive) {
    LineInput *in = calloc(1, sizeof *in);
    if (!in) return NULL;
    in->interactive = interactive;
    if (interactive) {
        completion_state = L;
        rl_readline_name = "uopdb";
        rl_attempted_completion_function = attempt_completion;
        rl_completer_word_break_characters = word_breaks;
        rl_basic_word_break_characters = word_breaks;
        rl_completion_append_character = '\0';
        using_history();
        stifle_history(HISTORY_MAX);
        in->history_path = history_file();
        if (in->history_path) read_history(in->history_path);
    }
    return in;
}

bool input_interactive(const LineInput *in) { return in->interactive; }

/* a whole line from a non-terminal stdin, any length */
static char *read_plain_line(void) {
    char *line = NULL;
    size_t cap = 0;
    ssize_t n = getline(&line, &cap, stdin);
    if (n < 0) { free(line); return NULL; }
    if (n > 0 && line[n - 1] == '\n') line[--n] = 0;
    if (n > 0 && line[n - 1] == '\r') line[--n] = 0;
    return line;
}

/* Ctrl-C at the prompt drops the line being typed instead of ending the
 * program (during evaluation eval.c interrupts the Lua code instead). */
static volatile sig_atomic_t prompt_interrupted;
static void on_prompt_sigint(int sig) {
    (void)sig;
    prompt_interrupted = 1;
}

char *input_read(LineInput *in, const char *prompt, bool *cancelled) {
    if (cancelled) *cancelled = false;
    if (!in->interactive) return read_plain_line();
    fflush(stdout);
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_prompt_sigint;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old);
    char *line;
    for (;;) {
        prompt_interrupted = 0;
        line = readline(prompt);
        if (line || !prompt_interrupted) break;
        fputs("^C\n", stdout);
        if (cancelled) {
            *cancelled = true;
            break;
        }
    }
    sigaction(SIGINT, &old, NULL);
    return line;
}

void input_add_history(LineInput *in, const char *entry) {
    if (!in->interactive || !entry || !*entry) return;
    add_history(entry);
}

void input_close(LineInput *in) {
    if (!in) return;
    if (in->interactive) {
        if (in->history_path) write_history(in->history_path);
        complete_free(matches, nmatches);
        matches = NULL;
        nmatches = 0;
        completion_state = NULL;
    }
    free(in->history_path);
    free(in);
}
