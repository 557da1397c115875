/* walk.h — the one walk of a source tree, for tree mode and the language server's workspace
 * index: which files below a root are the project's, in one sorted order. The caller owns the
 * entries and releases them with p2s_walk_release. */
#ifndef P2S_WALK_H
#define P2S_WALK_H

#include <stdbool.h>
#include <sys/stat.h>

#include "array.h"
#include "glob.h"

/* One file the walk found: rel below the root; error set when it could not be read (a
 * directory, a stat), the entry then naming what failed. */
typedef struct {
    char *rel;
    off_t size;
    bool python;
    char *error;
} P2sWalkEntry;

typedef Array(P2sWalkEntry) P2sWalkEntries;

/* The one walk policy of tree mode and the language server's index: sorted per directory;
 * `.git` and `__pycache__` directories, `*.pyc`, paths matching excludes (globs on the path
 * below root, or on the name for a glob without `/`) and what `.gitignore` files ignore are
 * skipped; a symlinked file is read through, a symlinked directory not followed (loops);
 * skip_dir (may be NULL) is not entered (the output directory inside the tree). */
void p2s_walk(const char *root, const P2sStringList *excludes, const struct stat *skip_dir, P2sWalkEntries *out);
void p2s_walk_release(P2sWalkEntries *entries);

/* Whether the walk skips rel (below the root; ignore may be NULL): exported so that the files a
 * lone file's context reaches outside any walk are excluded as the walk would exclude them. */
bool p2s_walk_excluded(const P2sStringList *excludes, const P2sIgnoreRules *ignore, const char *rel, bool is_dir);

/* `a/b`, or the one of them that is not empty (caller frees): exported because tree mode names
 * the walk's files below its source and output roots as the walk names them below its root. */
char *p2s_walk_join(const char *a, const char *b);

#endif
