/* plan.h — the edits that turn a source into its transpiled form: {start, end, replacement}
 * over the original bytes, sorted and disjoint (an overlap is an internal error), plus the
 * generated tail appended after the user's code. The plan owns its strings. */
#ifndef P2S_PLAN_H
#define P2S_PLAN_H

#include "array.h"
#include "diag.h"
#include "find.h"
#include "rules.h"
#include "source.h"
#include "strbuf.h"

typedef struct {
    size_t start, end;
    char *text;
    size_t rank;        /* orders insertions at one offset: the lower first */
} P2sEdit;

typedef struct {
    Array(P2sEdit) edits;
    P2sStrbuf tail;
} P2sPlan;

void p2s_plan_init(P2sPlan *self);
/* Adds one edit (text copied). */
void p2s_plan_add(P2sPlan *self, size_t start, size_t end, const char *text, size_t len);
/* An insertion that must come before those of higher rank at the same offset. */
void p2s_plan_insert_ranked(P2sPlan *self, size_t at, const char *text, size_t rank);
/* Sorts the edits; returns 0, or -1 with an internal-error diagnostic if two overlap. */
int  p2s_plan_finish(P2sPlan *self, P2sDiagSink *sink);
typedef enum {
    P2S_PLAN_MADE,
    P2S_PLAN_NOT_PYTHON,        /* P2S001: the input turns out not to be Python (the grammar
                                   accepts a superset) */
    P2S_PLAN_INTERNAL_ERROR,    /* P2S900: overlapping edits */
} P2sPlanStatus;

/* The plan for a module's findings; any status but MADE comes with its diagnostic.
 * Without with_tail the generated tail stays empty: its text reports nothing, and the language
 * server, which wants only the diagnostics, makes no output. */
P2sPlanStatus p2s_plan_build(const P2sSource *src, const P2sFindings *found, const P2sRules *rules,
                             bool with_tail, P2sDiagSink *sink, P2sPlan *out);
bool p2s_plan_is_empty(const P2sPlan *self);
void p2s_plan_release(P2sPlan *self);

#endif
