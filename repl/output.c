/* output.c - colour, cutting and paging of the REPL's output, see output.h. */
#include "output.h"
#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define SGR_RESET "\033[0m"
#define SGR_BOLD "\033[1m"
#define SGR_DIM "\033[2m"
#define SGR_RED "\033[31m"
#define SGR_GREEN "\033[32m"
#define SGR_YELLOW "\033[33m"
#define SGR_CYAN "\033[36m"

#define MIN_TABLE_WIDTH 100
#define DEFAULT_PAGER "less -R"

static struct {
    bool init;
    ColorMode color;
    bool pager;
    bool interactive;
    bool out_tty, err_tty;
    bool env_allows; /* NO_COLOR unset and TERM not "dumb" */
} cfg;

static void init(void) {
    if (cfg.init) return;
    cfg.init = true;
    cfg.pager = true;
    cfg.out_tty = isatty(STDOUT_FILENO);
    cfg.err_tty = isatty(STDERR_FILENO);
    const char *term = getenv("TERM");
    cfg.env_allows = getenv("NO_COLOR") == NULL && !(term && strcmp(term, "dumb") == 0);
}

void output_configure(ColorMode color, bool pager) {
    init();
    cfg.color = color;
    cfg.pager = pager;
}

bool output_parse_color(const char *when, ColorMode *mode) {
    if (!strcmp(when, "auto")) *mode = COLOR_AUTO;
    else if (!strcmp(when, "never")) *mode = COLOR_NEVER;
    else if (!strcmp(when, "always")) *mode = COLOR_ALWAYS;
    else return false;
    return true;
}

void output_set_interactive(bool on) {
    init();
    cfg.interactive = on;
}

static bool color_for(bool tty) {
    init();
    if (cfg.color == COLOR_ALWAYS) return true;
    if (cfg.color == COLOR_NEVER) return false;
    return tty && cfg.env_allows;
}

bool output_color_stdout(void) {
    init();
    return color_for(cfg.out_tty);
}

bool output_color_stderr(void) {
    init();
    return color_for(cfg.err_tty);
}

/* the terminal's size (stdout), false if it is not a terminal or unknown */
static bool term_size(int *rows, int *cols) {
    struct winsize ws;
    if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) != 0 || ws.ws_row == 0 || ws.ws_col == 0) return false;
    *rows = ws.ws_row;
    *cols = ws.ws_col;
    return true;
}

/* ---- cutting long lines ---- */

/* length of the escape sequence at s ("\033[...m"), 0 if none */
static size_t escape_len(const char *s, size_t n) {
    if (n < 2 || s[0] != '\033' || s[1] != '[') return 0;
    size_t i = 2;
    while (i < n && !((unsigned char)s[i] >= 0x40 && (unsigned char)s[i] <= 0x7e)) i++;
    return i < n ? i + 1 : n;
}

/* columns the line takes on a terminal: code points, tabs to the next
 * multiple of 8, escape sequences none */
static size_t visible_width(const char *s, size_t n) {
    size_t w = 0;
    for (size_t i = 0; i < n;) {
        size_t e = escape_len(s + i, n - i);
        if (e) { i += e; continue; }
        unsigned char c = (unsigned char)s[i++];
        if (c == '\t') w = (w / 8 + 1) * 8;
        else if ((c & 0xc0) != 0x80) w++;
    }
    return w;
}

/* appends the line cut to width columns: width-1 of its code points and
 * "..." (one character) if it is longer */
static void put_cut(StrBuf *out, const char *s, size_t n, size_t width) {
    if (width < 2 || visible_width(s, n) <= width) {
        sb_putn(out, s, n);
        return;
    }
    size_t w = 0, i = 0;
    while (i < n) {
        unsigned char c = (unsigned char)s[i];
        size_t step = 1;
        while (i + step < n && ((unsigned char)s[i + step] & 0xc0) == 0x80) step++;
        size_t cw = c == '\t' ? (w / 8 + 1) * 8 - w : 1;
        if (w + cw > width - 1) break;
        w += cw;
        i += step;
    }
    sb_putn(out, s, i);
    sb_puts(out, "\xe2\x80\xa6"); /* U+2026 */
}

/* ---- colour ---- */

static void put_colored(StrBuf *out, const char *sgr, const char *s, size_t n) {
    sb_puts(out, sgr);
    sb_putn(out, s, n);
    sb_puts(out, SGR_RESET);
}

static bool starts(const char *s, size_t n, const char *prefix) {
    size_t p = strlen(prefix);
    return n >= p && memcmp(s, prefix, p) == 0;
}

static void color_diff_line(StrBuf *out, const char *s, size_t n) {
    if (starts(s, n, "+++") || starts(s, n, "---")) put_colored(out, SGR_BOLD, s, n);
    else if (starts(s, n, "@@")) put_colored(out, SGR_CYAN, s, n);
    else if (starts(s, n, "+")) put_colored(out, SGR_GREEN, s, n);
    else if (starts(s, n, "-")) put_colored(out, SGR_RED, s, n);
    else sb_putn(out, s, n);
}

/* a row of k:stages(): "> 15  name ..." or "   3  name ..." */
static bool stage_row(const char *s, size_t n) {
    if (n < 4 || (s[0] != ' ' && s[0] != '>') || s[1] != ' ') return false;
    return isdigit((unsigned char)s[3]) && (s[2] == ' ' || isdigit((unsigned char)s[2]));
}

static const char *memfind(const char *s, size_t n, const char *needle) {
    size_t m = strlen(needle);
    for (size_t i = 0; i + m <= n; i++)
        if (memcmp(s + i, needle, m) == 0) return s + i;
    return NULL;
}

/* the status column of a stage row: the first status word on the line
 * (the note after it may repeat one) */
static void color_stage_line(StrBuf *out, const char *s, size_t n) {
    static const struct { const char *word, *sgr; } statuses[] = {
        {" not written", SGR_DIM}, {" written", SGR_GREEN}, {" partial", SGR_YELLOW}, {" n/a", SGR_DIM}};
    const char *best = NULL;
    size_t best_i = 0;
    if (stage_row(s, n))
        for (size_t i = 0; i < sizeof statuses / sizeof statuses[0]; i++) {
            const char *at = memfind(s, n, statuses[i].word);
            if (at && (!best || at < best)) { best = at; best_i = i; }
        }
    if (!best) {
        sb_putn(out, s, n);
        return;
    }
    size_t pre = (size_t)(best - s) + 1, wl = strlen(statuses[best_i].word) - 1;
    sb_putn(out, s, pre);
    put_colored(out, statuses[best_i].sgr, s + pre, wl);
    sb_putn(out, s + pre + wl, n - pre - wl);
}

static bool word_char(char c) { return isalnum((unsigned char)c) || c == '_'; }

/* verdicts of checks, validations and bisections */
typedef struct VerdictWord {
    const char *word, *sgr;
} VerdictWord;

/* s with each of the words (whole words) in its colour */
static void color_words(StrBuf *out, const char *s, size_t n, const VerdictWord *verdicts, size_t nverdicts) {
    size_t i = 0, from = 0;
    while (i < n) {
        bool hit = false;
        if (i == 0 || !word_char(s[i - 1]))
            for (size_t v = 0; v < nverdicts; v++) {
                size_t m = strlen(verdicts[v].word);
                if (i + m <= n && memcmp(s + i, verdicts[v].word, m) == 0 && (i + m == n || !word_char(s[i + m]))) {
                    sb_putn(out, s + from, i - from);
                    put_colored(out, verdicts[v].sgr, s + i, m);
                    i += m;
                    from = i;
                    hit = true;
                    break;
                }
            }
        if (!hit) i++;
    }
    sb_putn(out, s + from, n - from);
}

static void color_verdict_line(StrBuf *out, const char *s, size_t n) {
    static const VerdictWord verdicts[] = {
        {"first wrong", SGR_RED}, {"DIFFERS", SGR_RED}, {"differ", SGR_RED}, {"is wrong", SGR_RED},
        {"fails", SGR_RED},       {"FAILS", SGR_RED},
        {"matches", SGR_GREEN},   {"match", SGR_GREEN}, {"is right", SGR_GREEN}};
    color_words(out, s, n, verdicts, sizeof verdicts / sizeof verdicts[0]);
}

/* k:verify's verdicts */
static void color_verify_line(StrBuf *out, const char *s, size_t n) {
    static const VerdictWord verdicts[] = {{"breaks it", SGR_RED},        {"breaks its spec", SGR_RED},
                                           {"broken", SGR_RED},           {"ok", SGR_GREEN},
                                           {"meet their spec", SGR_GREEN}};
    color_words(out, s, n, verdicts, sizeof verdicts / sizeof verdicts[0]);
}

/* k:origin's steps: the point in cyan, the rule's name in yellow */
static void color_origin_line(StrBuf *out, const char *s, size_t n) {
    if (!starts(s, n, "  at ")) {
        sb_putn(out, s, n);
        return;
    }
    size_t p = 5, e = p;
    while (e < n && s[e] != ' ') e++;
    sb_putn(out, s, p);
    put_colored(out, SGR_CYAN, s + p, e - p);
    const char *rule = memfind(s + e, n - e, "rule ");
    if (!rule) {
        sb_putn(out, s + e, n - e);
        return;
    }
    size_t r = (size_t)(rule - s) + 5, re = r;
    while (re < n && s[re] != ' ') re++;
    sb_putn(out, s + e, r - e);
    put_colored(out, SGR_YELLOW, s + r, re - r);
    sb_putn(out, s + re, n - re);
}

/* k:why's verdicts: no match in red, declined in yellow, a rewrite in green */
static void color_why_line(StrBuf *out, const char *s, size_t n) {
    static const VerdictWord no_match[] = {{"no match", SGR_RED}}, declined[] = {{"declined", SGR_YELLOW}},
                             rewrites[] = {{"rewrites", SGR_GREEN}}, matches[] = {{"matches", SGR_GREEN}};
    if (starts(s, n, "  no match")) color_words(out, s, n, no_match, 1);
    else if (starts(s, n, "  declined")) color_words(out, s, n, declined, 1);
    else if (starts(s, n, "  rewrites")) color_words(out, s, n, rewrites, 1);
    else if (starts(s, n, "  the pattern")) color_words(out, s, n, matches, 1);
    else sb_putn(out, s, n);
}

typedef void (*LineColor)(StrBuf *, const char *, size_t);

void output_decorate(StrBuf *out, const char *kind, const char *text, size_t len) {
    init();
    if (!kind) {
        sb_putn(out, text, len);
        return;
    }
    bool table = !strcmp(kind, "stages") || !strcmp(kind, "rules") || !strcmp(kind, "rewrites");
    size_t width = 0;
    if (table && cfg.out_tty) {
        int rows, cols;
        width = term_size(&rows, &cols) ? (size_t)cols : MIN_TABLE_WIDTH;
        if (width < MIN_TABLE_WIDTH) width = MIN_TABLE_WIDTH;
    }
    LineColor color = NULL;
    if (output_color_stdout()) {
        if (!strcmp(kind, "diff")) color = color_diff_line;
        else if (!strcmp(kind, "stages")) color = color_stage_line;
        else if (!strcmp(kind, "check") || !strcmp(kind, "validate") || !strcmp(kind, "bisect")) color = color_verdict_line;
        else if (!strcmp(kind, "verify")) color = color_verify_line;
        else if (!strcmp(kind, "origin")) color = color_origin_line;
        else if (!strcmp(kind, "why")) color = color_why_line;
    }
    if (!width && !color) {
        sb_putn(out, text, len);
        return;
    }
    StrBuf line;
    sb_init(&line);
    for (size_t i = 0; i < len;) {
        const char *nl = memchr(text + i, '\n', len - i);
        size_t n = nl ? (size_t)(nl - (text + i)) : len - i;
        sb_clear(&line);
        if (width) put_cut(&line, text + i, n, width);
        else sb_putn(&line, text + i, n);
        if (color) color(out, line.data ? line.data : "", line.len);
        else sb_putn(out, line.data ? line.data : "", line.len);
        if (nl) sb_putc(out, '\n');
        i += n + (nl ? 1 : 0);
    }
    sb_free(&line);
}

/* ---- paging ---- */

/* the terminal rows the text takes at this width */
static size_t text_rows(const char *s, size_t n, size_t cols) {
    size_t rows = 0;
    for (size_t i = 0; i < n;) {
        const char *nl = memchr(s + i, '\n', n - i);
        size_t m = nl ? (size_t)(nl - (s + i)) : n - i;
        size_t w = visible_width(s + i, m);
        rows += w == 0 ? 1 : (w + cols - 1) / cols;
        i += m + 1;
    }
    return rows;
}

/* whether the first word of the command is a program that can run */
static bool program_exists(const char *cmd) {
    while (isspace((unsigned char)*cmd)) cmd++;
    size_t n = 0;
    while (cmd[n] && !isspace((unsigned char)cmd[n])) n++;
    if (n == 0) return false;
    char *word = strndup(cmd, n);
    if (!word) return false;
    bool ok = false;
    if (strchr(word, '=')) ok = true; /* VAR=value cmd: let the shell see */
    else if (strchr(word, '/')) ok = access(word, X_OK) == 0;
    else {
        const char *path = getenv("PATH");
        if (!path) path = "/usr/bin:/bin";
        StrBuf p;
        sb_init(&p);
        while (!ok) {
            const char *colon = strchr(path, ':');
            size_t dl = colon ? (size_t)(colon - path) : strlen(path);
            sb_clear(&p);
            if (dl) sb_putn(&p, path, dl);
            else sb_putc(&p, '.');
            sb_putc(&p, '/');
            sb_puts(&p, word);
            ok = !p.oom && access(sb_str(&p), X_OK) == 0;
            if (!colon) break;
            path = colon + 1;
        }
        sb_free(&p);
    }
    free(word);
    return ok;
}

/* Runs the pager on the text; false if there is none to run (then
 * nothing was written). */
static bool page(const char *s, size_t n) {
    const char *pager = getenv("PAGER");
    if (!pager) pager = DEFAULT_PAGER;
    while (isspace((unsigned char)*pager)) pager++;
    if (!*pager || !strcmp(pager, "cat") || !program_exists(pager)) return false;
    /* the environment the pager gets, made before fork (the child only
     * calls what is safe after fork in a process that may have threads) */
    extern char **environ;
    size_t nenv = 0;
    while (environ[nenv]) nenv++;
    char **envp = malloc((nenv + 2) * sizeof *envp);
    if (!envp) return false;
    memcpy(envp, environ, nenv * sizeof *envp);
    if (!getenv("LESS")) envp[nenv++] = "LESS=FRXK"; /* like git: colour, quit on Ctrl-C, keep the text shown */
    envp[nenv] = NULL;
    char *const argv[] = {"sh", "-c", (char *)pager, NULL};
    int fds[2];
    if (pipe(fds) != 0) {
        free(envp);
        return false;
    }
    fflush(stdout);
    fflush(stderr);
    /* the pager owns the terminal until it exits: Ctrl-C is its to handle
     * (less -K leaves on it), and a pager that quits early is no error */
    struct sigaction ign, old_int, old_quit, old_pipe;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigemptyset(&ign.sa_mask);
    sigaction(SIGINT, &ign, &old_int);
    sigaction(SIGQUIT, &ign, &old_quit);
    sigaction(SIGPIPE, &ign, &old_pipe);
    pid_t pid = fork();
    if (pid == 0) {
        /* SIGINT and SIGQUIT stay ignored: the shell lives until the pager
         * has left the terminal (less sets its own handler and leaves on
         * Ctrl-C), so the prompt never comes back under a pager still
         * running */
        struct sigaction dfl;
        memset(&dfl, 0, sizeof dfl);
        dfl.sa_handler = SIG_DFL;
        sigemptyset(&dfl.sa_mask);
        sigaction(SIGPIPE, &dfl, NULL);
        dup2(fds[0], STDIN_FILENO);
        close(fds[0]);
        close(fds[1]);
        execve("/bin/sh", argv, envp);
        _exit(127);
    }
    free(envp);
    close(fds[0]);
    bool ok = pid > 0;
    if (ok) {
        for (size_t done = 0; done < n;) {
            ssize_t w = write(fds[1], s + done, n - done);
            if (w < 0 && errno == EINTR) continue;
            if (w <= 0) break; /* the pager left */
            done += (size_t)w;
        }
    }
    close(fds[1]);
    if (ok) {
        int status;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
    }
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGQUIT, &old_quit, NULL);
    sigaction(SIGPIPE, &old_pipe, NULL);
    return ok;
}

void output_emit(const char *text, size_t len) {
    init();
    if (cfg.pager && cfg.interactive && cfg.out_tty && isatty(STDIN_FILENO)) {
        int rows, cols;
        if (term_size(&rows, &cols) && text_rows(text, len, (size_t)cols) > (size_t)(rows > 1 ? rows - 1 : 1) &&
            page(text, len))
            return;
    }
    fwrite(text, 1, len, stdout);
    fflush(stdout);
}

void output_error(const char *msg, size_t len) {
    fflush(stdout);
    bool color = output_color_stderr();
    if (color) fputs(SGR_RED, stderr);
    fwrite(msg, 1, len, stderr);
    if (color) fputs(SGR_RESET, stderr);
    if (!len || msg[len - 1] != '\n') fputc('\n', stderr);
    fflush(stderr);
}

/* ---- capturing stdout ---- */

bool output_capture_begin(OutputCapture *c) {
    fflush(stdout);
    c->saved_fd = -1;
    c->tmp = tmpfile();
    if (!c->tmp) return false;
    c->saved_fd = dup(STDOUT_FILENO);
    if (c->saved_fd < 0 || dup2(fileno(c->tmp), STDOUT_FILENO) < 0) {
        if (c->saved_fd >= 0) close(c->saved_fd);
        fclose(c->tmp);
        c->tmp = NULL;
        return false;
    }
    return true;
}

void output_capture_end(OutputCapture *c, StrBuf *into) {
    if (!c->tmp) return;
    fflush(stdout);
    dup2(c->saved_fd, STDOUT_FILENO);
    close(c->saved_fd);
    rewind(c->tmp);
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, c->tmp)) > 0) sb_putn(into, buf, n);
    fclose(c->tmp);
    c->tmp = NULL;
}
