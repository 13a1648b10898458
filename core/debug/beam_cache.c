/* beam_cache.c - the disk cache of beam search results (see beam_cache.h).
 * An entry file reads:
 *
 *   uopdb beam cache 1
 *   key 3f0c...            the key it was written for (also its file name)
 *   ms 0.8125              the time of the opts when found
 *   opt UPCAST 1 4         the opts, in order (none: no opt lines)
 *   opt UNROLL 0 4
 *   end
 *
 * Anything else (a missing "end", an unknown line, a number out of range)
 * makes the entry a miss. */
#include "beam_cache.h"
#include "../backend/backend.h"
#include "../util/strbuf.h"
#include "../util/u64map.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CACHE_MAGIC "uopdb beam cache 1"
#define CACHE_MAX_BYTES 4096

bool beam_cache_dir(char *out, size_t len) {
    const char *d = getenv("UOPDB_CACHE_DIR");
    int n;
    if (d && *d) n = snprintf(out, len, "%s", d);
    else if ((d = getenv("XDG_CACHE_HOME")) && *d) n = snprintf(out, len, "%s/uopdb", d);
    else if ((d = getenv("HOME")) && *d) n = snprintf(out, len, "%s/.cache/uopdb", d);
    else return false;
    return n > 0 && (size_t)n < len;
}

/* Two 64-bit FNV-1a hashes with different offset bases, the second over a
 * rotated state, so the 128 bits are not one hash printed twice. */
static void hash128(const char *s, size_t n, uint64_t h[2]) {
    uint64_t a = 0xcbf29ce484222325ull, b = 0x84222325cbf29ce4ull;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        a = (a ^ c) * 0x100000001b3ull;
        b = ((b << 5 | b >> 59) ^ c) * 0x100000001b3ull;
    }
    h[0] = a, h[1] = b;
}

/* The AST as text that does not depend on node ids: one line per node in
 * toposort order, its sources named by their line numbers. */
static bool canonical_text(const UOp *ast, StrBuf *sb) {
    size_t n;
    const UOp **order = uop_toposort(ast, &n);
    if (!order) return false;
    U64Map pos = {0};
    bool ok = true;
    for (size_t i = 0; i < n && ok; i++) {
        const UOp *u = order[i];
        ok = u64map_put(&pos, u->id, (const void *)(uintptr_t)(i + 1));
        sb_printf(sb, "%s ", op_name(uop_op(u)));
        dt_format(sb, u->dtype);
        sb_puts(sb, " (");
        for (int k = 0; k < u->nsrc; k++)
            sb_printf(sb, "%s%zu", k ? "," : "", (size_t)(uintptr_t)u64map_get(&pos, u->src[k]->id) - 1);
        sb_puts(sb, ") ");
        arg_format(sb, u->arg);
        if (u->tag) {
            sb_puts(sb, " tag=");
            arg_format(sb, u->tag);
        }
        sb_putc(sb, '\n');
    }
    u64map_free(&pos);
    free(order);
    return ok && !sb->oom;
}

bool beam_cache_key(const UOp *ast, int width, int threads, bool native_transcendentals,
                    char key[BEAM_CACHE_KEY_LEN + 1]) {
    StrBuf sb;
    sb_init(&sb);
    sb_printf(&sb, "%s\nwidth %d\nthreads %d\ntranscendentals %s\ncpu %s\nfeatures %s\ntriple %s\n", CACHE_MAGIC, width,
              threads, native_transcendentals ? "native" : "decomposed", backend_host_cpu(), backend_host_features(),
              backend_host_triple());
    bool ok = canonical_text(ast, &sb);
    if (ok) {
        uint64_t h[2];
        hash128(sb_str(&sb), sb.len, h);
        snprintf(key, BEAM_CACHE_KEY_LEN + 1, "%016llx%016llx", (unsigned long long)h[0], (unsigned long long)h[1]);
    }
    sb_free(&sb);
    return ok;
}

void beam_cache_path(const char *dir, const char *key, char *out, size_t len) {
    snprintf(out, len, "%s/beam-%s.txt", dir, key);
}

/* the next line of *p (without its newline) into line; false at the end or
 * for a line too long */
static bool next_line(const char **p, char *line, size_t len) {
    if (!**p) return false;
    const char *e = strchr(*p, '\n');
    size_t n = e ? (size_t)(e - *p) : strlen(*p);
    if (n >= len) return false;
    memcpy(line, *p, n);
    line[n] = 0;
    *p += n + (e ? 1 : 0);
    return true;
}

static bool parse_entry(const char *text, const char *key, KernelOpt *opts, int max, int *nopts, double *ms) {
    const char *p = text;
    char line[128], word[16];
    if (!next_line(&p, line, sizeof line) || strcmp(line, CACHE_MAGIC)) return false;
    if (!next_line(&p, line, sizeof line) || strncmp(line, "key ", 4) || strcmp(line + 4, key)) return false;
    char tail;
    if (!next_line(&p, line, sizeof line) || sscanf(line, "ms %lf %c", ms, &tail) != 1 || !isfinite(*ms) || *ms < 0)
        return false;
    int n = 0;
    while (next_line(&p, line, sizeof line)) {
        if (!strcmp(line, "end")) {
            *nopts = n;
            return *p == 0;
        }
        int axis, amount;
        if (sscanf(line, "opt %15s %d %d %c", word, &axis, &amount, &tail) != 3 || n >= max) return false;
        if (!opt_op_from_name(word, &opts[n].op) || axis < 0 || amount < 0) return false;
        opts[n].axis = axis, opts[n].amount = amount;
        n++;
    }
    return false; /* no "end": a file cut short */
}

bool beam_cache_load(const char *dir, const char *key, KernelOpt *opts, int max, int *nopts, double *ms) {
    char path[4096];
    beam_cache_path(dir, key, path, sizeof path);
    FILE *f = fopen(path, "rb");
    if (!f) return false;
    char text[CACHE_MAX_BYTES + 1];
    size_t n = fread(text, 1, CACHE_MAX_BYTES + 1, f);
    bool read_ok = !ferror(f) && n <= CACHE_MAX_BYTES;
    fclose(f);
    if (!read_ok || memchr(text, 0, n)) return false;
    text[n] = 0;
    return parse_entry(text, key, opts, max, nopts, ms);
}

/* mkdir -p */
static bool make_dirs(const char *dir, char *err, size_t errlen) {
    char path[4096];
    if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path) {
        snprintf(err, errlen, "cache directory name too long");
        return false;
    }
    for (char *s = path + 1;; s++) {
        if (*s != '/' && *s) continue;
        char c = *s;
        *s = 0;
        if (mkdir(path, 0755) && errno != EEXIST) {
            snprintf(err, errlen, "cannot make the cache directory %s: %s", path, strerror(errno));
            return false;
        }
        if (!c) break;
        *s = c;
    }
    return true;
}

bool beam_cache_store(const char *dir, const char *key, const KernelOpt *opts, int nopts, double ms, char *err,
                      size_t errlen) {
    if (!make_dirs(dir, err, errlen)) return false;
    char path[4096], tmp[4200];
    beam_cache_path(dir, key, path, sizeof path);
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        snprintf(err, errlen, "cannot write %s: %s", tmp, strerror(errno));
        return false;
    }
    fprintf(f, "%s\nkey %s\nms %.17g\n", CACHE_MAGIC, key, ms);
    for (int i = 0; i < nopts; i++) fprintf(f, "opt %s %d %d\n", opt_op_name(opts[i].op), opts[i].axis, opts[i].amount);
    fprintf(f, "end\n");
    bool ok = !ferror(f);
    ok = fclose(f) == 0 && ok;
    if (!ok || rename(tmp, path)) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
        remove(tmp);
        return false;
    }
    return true;
}
