/* transpile.h — the pipeline for one source held in memory:
 * validate -> parse -> find -> check -> plan -> emit -> verify. No I/O; diagnostics go to the
 * unit's sink. Tree mode runs the steps separately: every file is parsed and found first, then
 * found again with what the other modules export, then finished. */
#ifndef P2S_TRANSPILE_H
#define P2S_TRANSPILE_H

#include <stdbool.h>
#include <tree_sitter/api.h>

#include "diag.h"
#include "find.h"
#include "rules.h"
#include "source.h"
#include "strbuf.h"
#include "untranspile.h"

typedef enum {
    P2S_TRANSPILE_OK,
    P2S_TRANSPILE_INPUT_ERROR,     /* encoding or syntax errors: nothing produced */
    P2S_TRANSPILE_CONTRACT_ERROR,  /* contract errors: the output is produced, the classes and
                                      sites at fault left as written; the run exits 1 */
    P2S_TRANSPILE_INTERNAL_ERROR,  /* the output failed verification: nothing produced */
} P2sTranspileStatus;

/* OK and CONTRACT_ERROR produce an output. */
static inline bool p2s_transpile_made_output(P2sTranspileStatus status)
{
    return status == P2S_TRANSPILE_OK || status == P2S_TRANSPILE_CONTRACT_ERROR;
}

/* One source on its way through the pipeline. Owns everything but src (and input). */
typedef struct {
    const P2sSource *src;       /* what the pipeline works on: the input, or `undone` */
    bool regenerate;            /* a file ending in the marker: undo this tool's rewrites and
                                   transpile what is left (untranspile.h), so the output follows
                                   the classes as they are now; else it passes through */
    const P2sSource *input;     /* when undone: the file as given, which diagnostics refer to */
    P2sSource undone;
    P2sUndoEdits undo;
    size_t mapped_diags;        /* diagnostics before this one are in the input's offsets */
    TSTree *tree;               /* NULL until parsed, or when the input was rejected */
    P2sFindings found;
    P2sDiagSink sink;
    P2sStrbuf out;              /* the output once finished */
    bool changed;               /* out differs from the input */
    bool lint_only;             /* finish checks and plans but makes no output (no emit, no
                                   verify): the language server's diagnostics on each change */
    bool drop_tree_when_verified;  /* finish frees the tree once the user's code in the output is
                                   verified, before the generated tail is parsed, so a big file's
                                   two trees are never alive at once; the findings stay, but
                                   their nodes must not be read again. For callers that read
                                   neither afterwards */
} P2sUnit;

void p2s_unit_init(P2sUnit *self, const P2sSource *src);
/* The unit (it holds the undone text and may point at it) and its input were moved, as an
 * array of them grows: points it at itself again and at src, the input where it now is. */
void p2s_unit_moved(P2sUnit *self, const P2sSource *src);
/* Validates and parses. Returns OK or INPUT_ERROR (diagnostics in the sink). */
P2sTranspileStatus p2s_unit_parse(P2sUnit *self);
/* The same, reusing old (NULL: from scratch), a tree of an earlier text already told of the
 * edits (ts_tree_edit), so only what changed is parsed again (the language server). When keep
 * is not NULL it receives a copy of the new tree, also when it has syntax errors (NULL when
 * the source was rejected before parsing): the caller's, for the next reparse. */
P2sTranspileStatus p2s_unit_reparse(P2sUnit *self, const TSTree *old, TSTree **keep);
/* (Re)finds PyLayers; module may be NULL (a lone file). */
void p2s_unit_find(P2sUnit *self, const P2sRules *rules, const P2sModule *module);
/* Frees the tree and findings but keeps the diagnostics: for a module that needs no rewrite,
 * so a big tree's memory is bounded by its largest file rather than by its sum. */
void p2s_unit_drop_tree(P2sUnit *self);
/* Checks, plans, emits and verifies; fills out and changed. */
P2sTranspileStatus p2s_unit_finish(P2sUnit *self, const P2sRules *rules);
void p2s_unit_release(P2sUnit *self);

/* All steps for a lone source; on OK or CONTRACT_ERROR, out holds the output (the input itself
 * when nothing changes) and *changed says whether it differs. A file ending in the marker
 * passes through (no regenerate: the fuzz target holds untouched bytes to the plan's edits). */
P2sTranspileStatus p2s_transpile(const P2sSource *src, const P2sRules *rules, P2sDiagSink *sink,
                                 P2sStrbuf *out, bool *changed);

#endif
