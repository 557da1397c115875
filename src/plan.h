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

/* A builder of the generated tail: tail[at, at + len) is the text of shape `shape` (one of
 * P2sPlan.shapes) with the class's qualified name `qualname` put in (p2s_plan_expand). */
typedef struct {
    size_t at, len;
    size_t shape;
    char *qualname;
} P2sBuilder;

/* A builder's text is one template over the class's qualified name and the parameter text
 * made of forward's signature; its shape is that text with placeholders for the name. */
#define P2S_PLAN_NAME '\x01'        /* the qualified name: `A.B` */
#define P2S_PLAN_MANGLED '\x02'     /* the name in the builder function's name: `A__B` */

typedef struct {
    Array(P2sEdit) edits;
    P2sStrbuf tail;
    Array(P2sBuilder) builders;     /* the tail's, in order, one after another */
    P2sStrings shapes;              /* the builders' distinct shapes, in first use order */
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
/* Appends shape with qualname put in for its placeholders. */
void p2s_plan_expand(const char *shape, const char *qualname, P2sStrbuf *out);
void p2s_plan_release(P2sPlan *self);

#endif
