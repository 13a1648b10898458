/* dot.c - Graphviz DOT text for a UOp graph, and running the `dot`
 * program to turn it into SVG/PNG/...
 *
 * One rounded box per node, labelled
 *     OP
 *     arg (shortened)
 *     dtype (unless void)
 *     CONST<i> value   (one line per folded constant source i)
 *     %id
 * filled by op group.  Edges go from a source to its user; when the user has
 * more than one source, the edge is labelled with the source's index.
 * CONSTs without sources are folded into their users' labels unless
 * DotOpts.keep_consts is set. */
#include "dot.h"
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

enum { DOT_ARG_MAX = 40, DOT_DEFAULT_RADIUS = 2 };

static const char *group_fill(OpGroup g) {
    switch (g) {
    case OPG_DEFINE: return "#f2cb91";
    case OPG_META: return "#e8e8e8";
    case OPG_VECTOR: return "#d0e4ff";
    case OPG_MEMORY: return "#cef263";
    case OPG_ALU: return "#ffffc0";
    case OPG_CONTROL: return "#c8a0e0";
    case OPG_CONST: return "#e0e0e0";
    case OPG_SCHED: return "#b0bdff";
    case OPG_MOVEMENT: return "#d8f9e4";
    case OPG_REDUCE: return "#ff6b6b";
    default: return "#ffffff";
    }
}

/* a few ops stand out from their group, as in tinygrad's viz */
static const char *op_fill(Op op) {
    switch (op) {
    case OP_LOAD: return "#ffc0c0";
    case OP_STORE: return "#87ceeb";
    case OP_DEFINE_GLOBAL: return "#cb9037";
    case OP_SPECIAL: return "#c0c0ff";
    case OP_END: return "#a09890";
    default: return group_fill(op_group(op));
    }
}

/* text inside a DOT "..." string: quotes and backslashes escaped, newlines
 * as \n, other control characters as spaces */
static void put_escaped(StrBuf *sb, const char *s, size_t n) {
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch == '"' || ch == '\\') { sb_putc(sb, '\\'); sb_putc(sb, (char)ch); }
        else if (ch == '\n') sb_puts(sb, "\\n");
        else if (ch < 32 || ch == 127) sb_putc(sb, ' ');
        else sb_putc(sb, (char)ch);
    }
}

/* an arg in uopdb's spelling, cut to DOT_ARG_MAX characters */
static void put_short_arg(StrBuf *sb, const Arg *a) {
    StrBuf t;
    sb_init(&t);
    arg_format(&t, a);
    if (t.len > DOT_ARG_MAX) {
        put_escaped(sb, sb_str(&t), DOT_ARG_MAX - 3);
        sb_puts(sb, "...");
    } else put_escaped(sb, sb_str(&t), t.len);
    sb_free(&t);
}

static bool is_foldable(const UOp *u) {
    return (uop_op(u) == OP_CONST || uop_op(u) == OP_VCONST) && u->nsrc == 0;
}

static void put_label(StrBuf *sb, const UOp *u, bool fold) {
    sb_puts(sb, op_name(uop_op(u)));
    if (u->arg) {
        sb_puts(sb, "\\n");
        put_short_arg(sb, u->arg);
    }
    if (u->dtype->sk != SK_VOID || dt_is_ptr(u->dtype)) {
        StrBuf t;
        sb_init(&t);
        dt_format(&t, u->dtype);
        sb_puts(sb, "\\n");
        put_escaped(sb, sb_str(&t), t.len);
        sb_free(&t);
    }
    if (fold)
        for (int i = 0; i < u->nsrc; i++)
            if (is_foldable(u->src[i])) {
                sb_printf(sb, "\\n%s%d ", op_name(uop_op(u->src[i])), i);
                put_short_arg(sb, u->src[i]->arg);
            }
    if (u->tag) {
        sb_puts(sb, "\\ntag=");
        put_short_arg(sb, u->tag);
    }
    sb_printf(sb, "\\n%%%u", u->id);
}

void uop_dot_nodes(StrBuf *sb, const UOp *const *nodes, size_t n, const DotOpts *opts, DotColorFn color, void *ud) {
    bool fold = !(opts && opts->keep_consts);
    /* membership by id */
    uint32_t max_id = 0;
    for (size_t i = 0; i < n; i++)
        if (nodes[i]->id > max_id) max_id = nodes[i]->id;
    unsigned char *in = calloc((size_t)max_id + 1, 1);
    if (!in) { sb->oom = true; return; }
    for (size_t i = 0; i < n; i++) in[nodes[i]->id] = 1;
    /* a folded const stays a node when nothing in the set uses it (a lone root) */
    unsigned char *used = calloc((size_t)max_id + 1, 1);
    if (!used) { free(in); sb->oom = true; return; }
    for (size_t i = 0; i < n; i++)
        for (int k = 0; k < nodes[i]->nsrc; k++)
            if (nodes[i]->src[k]->id <= max_id) used[nodes[i]->src[k]->id] = 1;

    sb_puts(sb, "digraph uops {\n");
    if (opts && opts->title) {
        sb_puts(sb, "  graph [labelloc=t, fontname=\"Helvetica\", label=\"");
        put_escaped(sb, opts->title, strlen(opts->title));
        sb_puts(sb, "\"];\n");
    }
    sb_puts(sb, "  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", fontsize=10];\n");
    sb_puts(sb, "  edge [fontname=\"Helvetica\", fontsize=8, color=\"#606060\"];\n");
    for (size_t i = 0; i < n; i++) {
        const UOp *u = nodes[i];
        if (fold && is_foldable(u) && used[u->id]) continue;
        const char *fill = color ? color(u, ud) : NULL;
        sb_printf(sb, "  n%u [label=\"", u->id);
        put_label(sb, u, fold);
        sb_printf(sb, "\", fillcolor=\"%s\"];\n", fill ? fill : op_fill(uop_op(u)));
    }
    for (size_t i = 0; i < n; i++) {
        const UOp *u = nodes[i];
        if (fold && is_foldable(u) && used[u->id]) continue;
        for (int k = 0; k < u->nsrc; k++) {
            const UOp *s = u->src[k];
            if (s->id > max_id || !in[s->id] || (fold && is_foldable(s))) continue;
            sb_printf(sb, "  n%u -> n%u", s->id, u->id);
            const char *ec = color ? color(u, ud) : NULL;
            if (u->nsrc > 1 && ec) sb_printf(sb, " [label=\"%d\", color=\"%s\"]", k, ec);
            else if (u->nsrc > 1) sb_printf(sb, " [label=\"%d\"]", k);
            else if (ec) sb_printf(sb, " [color=\"%s\"]", ec);
            sb_puts(sb, ";\n");
        }
    }
    free(in);
    free(used);
}

/* the nodes within `radius` edges of focus, either direction; returns how
 * many nodes of the graph were left out, or -1 if focus is not in it */
static long cut_to_focus(const UOp **order, size_t *n, const UOp *focus, int radius) {
    uint32_t max_id = order[*n - 1]->id; /* the root has the largest id */
    int *dist = malloc(((size_t)max_id + 1) * sizeof *dist);
    size_t *users_start = calloc((size_t)max_id + 2, sizeof *users_start);
    const UOp **users = NULL;
    const UOp **queue = malloc(*n * sizeof *queue);
    long cut = -1;
    if (!dist || !users_start || !queue) goto out;
    for (size_t i = 0; i <= max_id; i++) dist[i] = -2; /* -2: not in the graph */
    for (size_t i = 0; i < *n; i++) dist[order[i]->id] = -1;
    if (focus->id > max_id || dist[focus->id] == -2) goto out;
    /* users of each node, as a compressed list */
    size_t edges = 0;
    for (size_t i = 0; i < *n; i++)
        for (int k = 0; k < order[i]->nsrc; k++) { users_start[order[i]->src[k]->id + 1]++; edges++; }
    for (size_t i = 1; i <= (size_t)max_id + 1; i++) users_start[i] += users_start[i - 1];
    users = malloc((edges ? edges : 1) * sizeof *users);
    size_t *fill = calloc((size_t)max_id + 1, sizeof *fill);
    if (!users || !fill) { free(fill); goto out; }
    for (size_t i = 0; i < *n; i++)
        for (int k = 0; k < order[i]->nsrc; k++) {
            uint32_t s = order[i]->src[k]->id;
            users[users_start[s] + fill[s]++] = order[i];
        }
    free(fill);
    size_t head = 0, tail = 0;
    dist[focus->id] = 0;
    queue[tail++] = focus;
    while (head < tail) {
        const UOp *u = queue[head++];
        if (dist[u->id] >= radius) continue;
        for (int k = 0; k < u->nsrc; k++)
            if (dist[u->src[k]->id] == -1) { dist[u->src[k]->id] = dist[u->id] + 1; queue[tail++] = u->src[k]; }
        for (size_t e = users_start[u->id]; e < users_start[u->id + 1]; e++)
            if (dist[users[e]->id] == -1) { dist[users[e]->id] = dist[u->id] + 1; queue[tail++] = users[e]; }
    }
    size_t kept = 0;
    for (size_t i = 0; i < *n; i++)
        if (dist[order[i]->id] >= 0) order[kept++] = order[i];
    cut = (long)(*n - kept);
    *n = kept;
out:
    free(dist);
    free(users_start);
    free(users);
    free(queue);
    return cut;
}

void uop_dot(StrBuf *sb, const UOp *root, const DotOpts *opts) {
    if (!root) return;
    size_t n;
    const UOp **order = uop_toposort(root, &n);
    if (!order) { sb->oom = true; return; }
    long cut = 0;
    if (opts && opts->focus) cut = cut_to_focus(order, &n, opts->focus, opts->radius > 0 ? opts->radius : DOT_DEFAULT_RADIUS);
    uop_dot_nodes(sb, order, n, opts, NULL, NULL);
    if (opts && opts->focus) {
        if (cut < 0) sb_printf(sb, "  cut [shape=note, label=\"node %%%u is not in this graph\"];\n", opts->focus->id);
        else if (cut > 0)
            sb_printf(sb, "  cut [shape=note, label=\"%ld node%s more than %d edges from %%%u not shown\"];\n", cut,
                      cut == 1 ? "" : "s", opts->radius > 0 ? opts->radius : DOT_DEFAULT_RADIUS, opts->focus->id);
    }
    sb_puts(sb, "}\n");
    free(order);
}

/* ---- running dot ---- */

static const char *const allowed_formats[] = {"svg", "png", "pdf", "dot", "json", "plain", NULL};

/* starts argv with stdout to out_fd and stderr to err_fd; false with errno
 * set when it could not start */
static bool spawn_program(char *const argv[], int out_fd, int err_fd, pid_t *pid) {
    posix_spawn_file_actions_t fa;
    if (posix_spawn_file_actions_init(&fa) != 0) return false;
    posix_spawn_file_actions_adddup2(&fa, out_fd, STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&fa, err_fd, STDERR_FILENO);
    int rc = posix_spawnp(pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) { errno = rc; return false; }
    return true;
}

/* the exit status of a started program, or -1 with errno set */
static int wait_program(pid_t pid) {
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return -1;
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

/* runs argv with stdout and stderr to the file err_fd; returns the exit
 * status, or -1 with errno set when it could not start */
static int run_program(char *const argv[], int err_fd) {
    pid_t pid;
    if (!spawn_program(argv, err_fd, err_fd, &pid)) return -1;
    return wait_program(pid);
}

static int make_temp(char *path, size_t n, const char *what) {
    const char *dir = getenv("TMPDIR");
    if (!dir || !*dir) dir = "/tmp";
    snprintf(path, n, "%s/uopdb-%s-XXXXXX", dir, what);
    return mkstemp(path);
}

bool dot_available(void) {
    int null_fd = open("/dev/null", O_WRONLY);
    if (null_fd < 0) return false;
    char *argv[] = {"dot", "-V", NULL};
    int rc = run_program(argv, null_fd);
    close(null_fd);
    return rc == 0;
}

static bool write_all(int fd, const char *s, size_t n) {
    while (n) {
        ssize_t w = write(fd, s, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        s += w;
        n -= (size_t)w;
    }
    return true;
}

/* s on one line for a message: newlines, tabs and other control bytes as
 * escapes, cut to fit n bytes with "..." */
static void escape_line(char *dst, size_t n, const char *s) {
    size_t o = 0;
    if (!n) return;
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        char esc[8] = {(char)ch, 0};
        if (ch == '\n') strcpy(esc, "\\n");
        else if (ch == '\t') strcpy(esc, "\\t");
        else if (ch == '\r') strcpy(esc, "\\r");
        else if (ch < 0x20 || ch == 0x7f) snprintf(esc, sizeof esc, "\\%d", ch);
        size_t k = strlen(esc);
        if (o + k + 4 > n) {
            if (o + 4 <= n) memcpy(dst + o, "...", 3), o += 3;
            break;
        }
        memcpy(dst + o, esc, k);
        o += k;
    }
    dst[o] = 0;
}

bool dot_render(const char *dot_text, const char *format, const char *out_path, char *err, size_t errlen) {
    if (err && errlen) err[0] = 0;
#define FAIL(...) do { if (err && errlen) snprintf(err, errlen, __VA_ARGS__); goto out; } while (0)
    bool ok = false;
    char in_path[512] = "", log_path[512] = "";
    int in_fd = -1, log_fd = -1;
    bool known = false;
    for (int i = 0; format && allowed_formats[i]; i++) known |= strcmp(format, allowed_formats[i]) == 0;
    char shown[64];
    escape_line(shown, sizeof shown, format ? format : "");
    if (!known) FAIL("unknown output format '%s' (use svg, png, pdf, dot, json or plain)", shown);
    if (!dot_text) FAIL("no DOT text to render");
    if (!out_path || !*out_path) FAIL("no output file given");
    if ((in_fd = make_temp(in_path, sizeof in_path, "graph")) < 0) FAIL("cannot create a temporary file: %s", strerror(errno));
    if (!write_all(in_fd, dot_text, strlen(dot_text))) FAIL("cannot write %s: %s", in_path, strerror(errno));
    close(in_fd);
    in_fd = -1;
    if ((log_fd = make_temp(log_path, sizeof log_path, "dotlog")) < 0) FAIL("cannot create a temporary file: %s", strerror(errno));
    char fmt_flag[16];
    snprintf(fmt_flag, sizeof fmt_flag, "-T%s", format);
    /* a name starting with '-' would be read as an option: "./-name" is the same file */
    char *safe_out = malloc(strlen(out_path) + 3);
    if (!safe_out) FAIL("out of memory");
    snprintf(safe_out, strlen(out_path) + 3, "%s%s", out_path[0] == '-' ? "./" : "", out_path);
    char *argv[] = {"dot", fmt_flag, "-o", safe_out, in_path, NULL};
    int rc = run_program(argv, log_fd);
    free(safe_out);
    if (rc < 0 && errno == ENOENT) FAIL("the Graphviz 'dot' program is not installed (apt-get install graphviz)");
    if (rc < 0) FAIL("cannot run dot: %s", strerror(errno));
    if (rc != 0) {
        char msg[400] = "";
        ssize_t got = pread(log_fd, msg, sizeof msg - 1, 0);
        msg[got > 0 ? got : 0] = 0;
        size_t len = strlen(msg);
        while (len && (msg[len - 1] == '\n' || msg[len - 1] == ' ')) msg[--len] = 0;
        char shown_path[200], shown_msg[400];
        escape_line(shown_path, sizeof shown_path, out_path);
        escape_line(shown_msg, sizeof shown_msg, msg);
        FAIL("dot failed (exit status %d) writing %s%s%s", rc, shown_path, len ? ": " : "", shown_msg);
    }
    ok = true;
out:
    if (in_fd >= 0) close(in_fd);
    if (log_fd >= 0) close(log_fd);
    if (in_path[0]) unlink(in_path);
    if (log_path[0]) unlink(log_path);
    return ok;
#undef FAIL
}

/* ---- SVG text for embedding: many dot programs at once ---- */

typedef struct SvgRun {
    pid_t pid;
    int out_fd, log_fd;
    char in_path[512], out_path[512], log_path[512];
} SvgRun;

/* the whole of a file open at fd, NUL-terminated (malloc'd); NULL on failure */
static char *read_fd(int fd, size_t *len) {
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_size < 0) return NULL;
    size_t n = (size_t)st.st_size;
    char *buf = malloc(n + 1);
    if (!buf) return NULL;
    size_t got = 0;
    while (got < n) {
        ssize_t r = pread(fd, buf + got, n - got, (off_t)got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        got += (size_t)r;
    }
    buf[got] = 0;
    if (len) *len = got;
    return buf;
}

static void svg_run_cleanup(SvgRun *r) {
    if (r->out_fd >= 0) close(r->out_fd);
    if (r->log_fd >= 0) close(r->log_fd);
    r->out_fd = r->log_fd = -1;
    if (r->in_path[0]) unlink(r->in_path);
    if (r->out_path[0]) unlink(r->out_path);
    if (r->log_path[0]) unlink(r->log_path);
    r->in_path[0] = r->out_path[0] = r->log_path[0] = 0;
}

/* starts dot on job's text: 1, or 0 with job->err set, or -1 when dot is
 * not installed */
static int svg_start(DotSvgJob *job, SvgRun *r) {
    memset(r, 0, sizeof *r);
    r->out_fd = r->log_fd = -1;
    int in_fd = -1;
    if (!job->dot_text) {
        snprintf(job->err, sizeof job->err, "no DOT text to render");
        return 0;
    }
    if ((in_fd = make_temp(r->in_path, sizeof r->in_path, "graph")) < 0 ||
        (r->out_fd = make_temp(r->out_path, sizeof r->out_path, "svg")) < 0 ||
        (r->log_fd = make_temp(r->log_path, sizeof r->log_path, "dotlog")) < 0) {
        snprintf(job->err, sizeof job->err, "cannot create a temporary file: %s", strerror(errno));
        goto fail;
    }
    if (!write_all(in_fd, job->dot_text, strlen(job->dot_text))) {
        snprintf(job->err, sizeof job->err, "cannot write a temporary file: %s", strerror(errno));
        goto fail;
    }
    close(in_fd);
    in_fd = -1;
    char *argv[] = {"dot", "-Tsvg", r->in_path, NULL};
    if (!spawn_program(argv, r->out_fd, r->log_fd, &r->pid)) {
        int e = errno;
        if (e == ENOENT) snprintf(job->err, sizeof job->err, "the Graphviz 'dot' program is not installed (apt-get install graphviz)");
        else snprintf(job->err, sizeof job->err, "cannot run dot: %s", strerror(e));
        svg_run_cleanup(r);
        return e == ENOENT ? -1 : 0;
    }
    return 1;
fail:
    if (in_fd >= 0) close(in_fd);
    svg_run_cleanup(r);
    return 0;
}

static void svg_finish(DotSvgJob *job, SvgRun *r) {
    int rc = wait_program(r->pid);
    if (rc < 0) snprintf(job->err, sizeof job->err, "cannot wait for dot: %s", strerror(errno));
    else if (rc != 0) {
        char *msg = read_fd(r->log_fd, NULL);
        size_t len = msg ? strlen(msg) : 0;
        while (len && (msg[len - 1] == '\n' || msg[len - 1] == ' ')) msg[--len] = 0;
        char shown_msg[200];
        escape_line(shown_msg, sizeof shown_msg, len ? msg : "");
        snprintf(job->err, sizeof job->err, "dot failed (exit status %d)%s%s", rc, len ? ": " : "", shown_msg);
        free(msg);
    } else if (!(job->svg = read_fd(r->out_fd, NULL)))
        snprintf(job->err, sizeof job->err, "cannot read the SVG dot wrote: %s", strerror(errno));
    svg_run_cleanup(r);
}

bool dot_render_svg_batch(DotSvgJob *jobs, size_t n, int parallel) {
    for (size_t i = 0; i < n; i++) jobs[i].svg = NULL, jobs[i].err[0] = 0;
    if (parallel <= 0) {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        parallel = cores < 1 ? 1 : cores > 8 ? 8 : (int)cores;
    }
    SvgRun *runs = calloc((size_t)parallel, sizeof *runs);
    size_t *which = calloc((size_t)parallel, sizeof *which);
    if (!runs || !which) {
        free(runs);
        free(which);
        for (size_t i = 0; i < n; i++) snprintf(jobs[i].err, sizeof jobs[i].err, "out of memory");
        return true;
    }
    /* a ring of running programs, finished oldest first */
    size_t next = 0, head = 0, running = 0;
    bool missing = false;
    while ((next < n && !missing) || running) {
        if (next < n && !missing && running < (size_t)parallel) {
            size_t slot = (head + running) % (size_t)parallel;
            int started = svg_start(&jobs[next], &runs[slot]);
            if (started > 0) {
                which[slot] = next;
                running++;
            } else if (started < 0) missing = true;
            next++;
            continue;
        }
        svg_finish(&jobs[which[head]], &runs[head]);
        head = (head + 1) % (size_t)parallel;
        running--;
    }
    free(runs);
    free(which);
    if (missing)
        for (size_t i = 0; i < n; i++) {
            free(jobs[i].svg);
            jobs[i].svg = NULL;
            snprintf(jobs[i].err, sizeof jobs[i].err, "the Graphviz 'dot' program is not installed (apt-get install graphviz)");
        }
    return !missing;
}
