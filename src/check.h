/* check.h — the PyLayer contract (docs/DESIGN.md, rules 1-5) and static-graph hazards, as
 * diagnostics. Codes, severities, messages and fix hints come from the rules' diagnostic table
 * (rules/paddle.json, docs/rules.md); the ctx method table and the hazards too.
 *
 * Every check is conservative: it fires only on what is certain from the source alone (a
 * count is "known" only when every path states it), because a false alarm on correct code
 * costs more than a missed one. */
#ifndef P2S_CHECK_H
#define P2S_CHECK_H

#include <stddef.h>
#include <tree_sitter/api.h>

#include "diag.h"
#include "find.h"
#include "rules.h"
#include "source.h"

/* Checks one found module and marks in found the classes and sites left as written (their
 * contract cannot be trusted: see check.c). Diagnostics go to sink after selection and `# noqa`
 * (suppress.h) have been applied; returns how many of them are errors (the run still makes its
 * output, and exits 1 on any). */
size_t p2s_check(const P2sSource *src, P2sFindings *found,
                 const P2sRules *rules, P2sDiagSink *sink);

#endif
