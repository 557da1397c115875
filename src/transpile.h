/* transpile.h — the whole pipeline for one source held in memory:
 * validate -> parse -> find -> plan -> emit -> verify. No I/O; diagnostics go to the sink. */
#ifndef P2S_TRANSPILE_H
#define P2S_TRANSPILE_H

#include <stdbool.h>

#include "diag.h"
#include "find.h"
#include "rules.h"
#include "source.h"
#include "strbuf.h"

typedef enum {
    P2S_TRANSPILE_OK,
    P2S_TRANSPILE_INPUT_ERROR,     /* encoding or syntax errors in the input: nothing produced */
    P2S_TRANSPILE_INTERNAL_ERROR,  /* the output failed verification: nothing produced */
} P2sTranspileStatus;

typedef enum {
    P2S_MODE_TRANSPILE,   /* find, rewrite and verify */
    P2S_MODE_PARSE_ONLY,  /* validate and parse: the output is the input */
} P2sTranspileMode;

/* On OK, out holds the output bytes (the input itself when nothing changes) and *changed says
 * whether they differ from the input. */
P2sTranspileStatus p2s_transpile(const P2sSource *src, const P2sRules *rules, P2sTranspileMode mode,
                                 P2sDiagSink *sink, P2sStrbuf *out, bool *changed);

#endif
