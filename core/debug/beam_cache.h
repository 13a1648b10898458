/* beam_cache.h - the disk cache of beam search results, so a second search
 * of the same kernel on the same machine is instant.  An entry is one small
 * text file named by a 128-bit hash of its key: the kernel's AST as
 * scheduled (a canonical text: nodes in toposort order, sources by
 * position, so node ids do not matter), the beam width, the cores THREAD
 * may use, the transcendental mode and the CPU (LLVM's host CPU name and
 * features).  The directory is $UOPDB_CACHE_DIR, else $XDG_CACHE_HOME/uopdb,
 * else ~/.cache/uopdb.  An entry that cannot be read or parsed is a miss,
 * never an error: the cache only saves time, since the opts it gives are
 * applied and checked by stage 7 like any others. */
#ifndef UOPDB_BEAM_CACHE_H
#define UOPDB_BEAM_CACHE_H
#include <stdbool.h>
#include <stddef.h>
#include "../stages/stages.h"

#define BEAM_CACHE_KEY_LEN 32   /* hex digits */

/* The cache directory (not created); false when no environment variable
 * names one (no HOME either) or it does not fit. */
bool beam_cache_dir(char *out, size_t len);

/* The key of a search: BEAM_CACHE_KEY_LEN hex digits and a NUL into key.
 * False when out of memory. */
bool beam_cache_key(const UOp *ast, int width, int threads, bool native_transcendentals,
                    char key[BEAM_CACHE_KEY_LEN + 1]);

/* The path of the entry for key in dir. */
void beam_cache_path(const char *dir, const char *key, char *out, size_t len);

/* Reads the entry for key: its opts (at most max) and the time found.
 * False on a miss or an entry that is unreadable, malformed or for
 * another key. */
bool beam_cache_load(const char *dir, const char *key, KernelOpt *opts, int max, int *nopts, double *ms);

/* Writes the entry (the directory made if missing; the file written whole
 * under a temporary name, then renamed).  False + err when it cannot be. */
bool beam_cache_store(const char *dir, const char *key, const KernelOpt *opts, int nopts, double ms, char *err,
                      size_t errlen);

#endif
