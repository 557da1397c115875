/* suppress.h — which diagnostics are shown: the rules' selection (select / ignore by code
 * prefix, ruff's semantics: rules.h) and `# noqa` comments (ruff's and flake8's form):
 *   x = t.numpy()  # noqa              every code on this line
 *   x = t.numpy()  # noqa: P2S201      only these codes (comma or space separated, exact)
 * A diagnostic is covered by the comment on the line where its span starts. Codes that are not
 * configurable (syntax, encoding, internal errors) are never hidden. */
#ifndef P2S_SUPPRESS_H
#define P2S_SUPPRESS_H

#include <stdbool.h>
#include <stddef.h>

#include "diag.h"
#include "rules.h"
#include "source.h"

/* True when 1-based line `line` of src carries a noqa comment that covers code. */
bool p2s_suppress_noqa(const P2sSource *src, size_t line, const char *code);
/* True when the selection disables d or a noqa covers it (src NULL: no noqa). */
bool p2s_suppress_hides(const P2sDiag *d, const P2sSource *src, const P2sRules *rules);
/* Removes from sink->items[from..] every diagnostic the selection disables or a noqa covers,
 * keeping the order of the rest. src may be NULL (no noqa then). */
void p2s_suppress_filter(P2sDiagSink *sink, size_t from, const P2sSource *src, const P2sRules *rules);

#endif
