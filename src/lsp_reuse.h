/* lsp_reuse.h — whether one edit leaves a document's diagnostics as they were, so the language
 * server can keep them (shifted past the edit) instead of finding and checking the whole file
 * again.
 *
 * An edit qualifies only when it provably changes nothing the finder and the checker read
 * outside the edited statement (the conditions are listed in lsp_reuse.c): it lies in one
 * simple statement of a function body that is no class's forward/backward, that statement
 * (before and after) spells no `apply`, `class`, `import`, `lambda`, `global`, `nonlocal`, `noqa`
 * or the tool's marker, binds no name that the function's `.apply` objects resolve through, and
 * no diagnostic sits on its lines. Anything else is analyzed in full, as the CLI would.
 * tests/lsp (random edits compared with the CLI, and P2S_LSP_CHECK_REUSE=1, which makes the
 * server compare every kept result with a full analysis and abort on a difference) hold it to
 * that. Nothing here allocates for the caller except sink's diagnostics and facts' arrays. */
#ifndef P2S_LSP_REUSE_H
#define P2S_LSP_REUSE_H

#include <stdbool.h>
#include <stddef.h>
#include <tree_sitter/api.h>

#include "array.h"
#include "diag.h"
#include "find.h"
#include "source.h"

/* What the last full analysis found, as byte spans of its text (kept shifted across kept
 * edits): the checker reads the bodies of forward/backward, and classes' bases and bodies. */
typedef struct {
    bool valid;
    Array(P2sSpan) methods;    /* every class's forward and backward definition */
    Array(P2sSpan) classes;    /* every class definition */
    bool escaping;             /* a class left as written and an unresolved `.apply`: the checker
                                  then reads every identifier of the file (P2S302) */
    bool import_own_line;      /* the runtime import would take a line of its own (P2S090), and
                                  a use of one of Paddle's PyLayer-backed APIs in a function body
                                  decides whether it goes in */
} P2sLspFacts;

/* The facts of a finished analysis (check has marked what is left as written). */
void p2s_lsp_facts_set(P2sLspFacts *self, const P2sFindings *found);
void p2s_lsp_facts_release(P2sLspFacts *self);

/* The previous analysis and the one edit since: old_text[start, old_end) became
 * new text[start, new_end). */
typedef struct {
    const char *old_text;
    size_t old_len;
    const TSTree *old_tree;        /* the previous analysis's tree, as parsed (not edited) */
    const P2sDiagSink *old_sink;   /* its diagnostics: after check, noqa, selection and plan */
    size_t start, old_end, new_end;
} P2sLspEdit;

/* True when the edit leaves every diagnostic as it was: then sink (empty) receives copies of
 * old_sink's, shifted past the edit, and facts are shifted. False changes nothing. src and tree
 * are the new text and its (clean) parse. */
bool p2s_lsp_reuse(const P2sLspEdit *edit, const P2sSource *src, const TSTree *tree, P2sLspFacts *facts,
                   P2sDiagSink *sink);

/* Whether two sinks hold the same diagnostics (codes, severities, spans, messages, fixes). */
bool p2s_lsp_same_diagnostics(const P2sDiagSink *a, const P2sDiagSink *b);

#endif
