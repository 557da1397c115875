/* tree_context.h — a lone file's context: its module name and the PyLayers of the sibling
 * modules its imports reach, found as tree mode finds them (tree.h's phases), so that a file
 * run alone is read as in its tree. The caller owns the context and releases it. */
#ifndef P2S_TREE_CONTEXT_H
#define P2S_TREE_CONTEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <tree_sitter/api.h>

#include "cli.h"
#include "externals.h"
#include "nameset.h"
#include "project.h"
#include "rules.h"
#include "source.h"

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

#endif
