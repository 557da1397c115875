/* tree.h — tree mode: SRC_DIR -o OUT_DIR. Walks the tree (.gitignore and --exclude respected,
 * symlinked directories not followed), transpiles every .py with cross-module resolution, copies
 * other files, writes only outputs that change, on -j worker threads with output identical to
 * -j1, and optionally a depfile. */
#ifndef P2S_TREE_H
#define P2S_TREE_H

#include <sys/stat.h>
#include <tree_sitter/api.h>

#include "cli.h"
#include "externals.h"
#include "nameset.h"
#include "project.h"
#include "report.h"
#include "rules.h"
#include "source.h"

/* Returns the exit code (cli.h). Diagnostics of every file go to report, in path order.
 * project (may be NULL) names the modules below its import roots. */
int p2s_tree_run(const P2sOptions *opts, const P2sRules *rules, const P2sProject *project, P2sReport *report);

/* What a lone file (or standard input standing in for path) needs of its project: its module
 * name, and the PyLayers of the sibling modules its imports reach, transitively, as tree mode
 * would find them (read for resolution and checks, never written or reported). */
typedef struct {
    char *module;
    bool is_package;
    char *crawl_root;           /* the directory above the file's topmost package; may be NULL */
    char *own_package;          /* the file's top package; NULL for a top-level module */
    P2sExternals external;      /* as P2sModule.external; empty until p2s_tree_context */
    size_t siblings;            /* modules read besides the file */
} P2sTreeContext;

/* Places path in its project: module name and package root, nothing read. */
void p2s_tree_context_place(const P2sProject *project, const char *path, P2sTreeContext *out);
/* Whether a name the file missed (its findings' misses) reaches a sibling module's file; when
 * none does, the file's findings are already final (one parse). */
bool p2s_tree_context_reaches(const P2sOptions *opts, const P2sProject *project, const P2sTreeContext *ctx,
                              const P2sNameSet *misses);
/* Reads the siblings reached from src (standing for path, placed in ctx) and fills
 * ctx->external as tree mode's phases leave it. tree (may be NULL) is src's, parsed already
 * (with this tool's rewrites undone, if src had them: src is then the undone text): the run
 * copies it instead of parsing src again. Only names the run reads of a reached module are
 * followed further (its re-exports of names nothing reads are not). */
void p2s_tree_context(const P2sOptions *opts, const P2sRules *rules, const P2sProject *project, const char *path,
                      const P2sSource *src, const TSTree *tree, P2sTreeContext *ctx);
void p2s_tree_context_release(P2sTreeContext *self);

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
void p2s_tree_walk(const char *root, const P2sStringList *excludes, const struct stat *skip_dir, P2sWalkEntries *out);
void p2s_tree_walk_release(P2sWalkEntries *entries);

#endif
