/* untranspile.h — this tool's own rewrites in a file that ends in its marker, undone: the
 * generated tail, the runtime import, and `_p2s.apply(X, a)` / `_p2s.applier(X)` back to
 * `X.apply(a)` / `X.apply`. The pipeline then transpiles what the user wrote as it is now (a
 * forward that gained a parameter gets a new builder), and a file whose classes did not change
 * comes back byte for byte. Diagnostics made on the undone text are mapped back to the file. */
#ifndef P2S_UNTRANSPILE_H
#define P2S_UNTRANSPILE_H

#include <stdbool.h>
#include <stddef.h>
#include <tree_sitter/api.h>

#include "array.h"
#include "source.h"
#include "strbuf.h"

/* The runtime import, as plan.c writes it and this module and find.c recognise it. */
#define P2S_RUNTIME_IMPORT "import pylayer2static_runtime as _p2s"

typedef struct {
    size_t start, end;          /* bytes of the file replaced */
    const char *text;           /* by this (static) text */
} P2sUndoEdit;

typedef Array(P2sUndoEdit) P2sUndoEdits;

/* Whether src's last line is this tool's marker. */
bool   p2s_untranspile_has_marker(const P2sSource *src);
/* The edits (sorted, disjoint) that undo the rewrites in src, parsed as tree; none when src
 * does not end in the marker. */
void   p2s_untranspile_edits(const P2sSource *src, TSTree *tree, P2sUndoEdits *out);
/* src with the edits applied. */
void   p2s_untranspile_apply(const P2sSource *src, const P2sUndoEdits *edits, P2sStrbuf *out);
/* The file's offset of an offset of the undone text: inside an edit's text, the edit's start
 * (end_of_span: its end). */
size_t p2s_untranspile_map_back(const P2sUndoEdits *edits, size_t offset, bool end_of_span);

#endif
