/* diag.h — diagnostics as data. A sink collects them for one source; printers (diag_text,
 * diag_json, diag_sarif) and tests read the same list. The sink owns every message. */
#ifndef P2S_DIAG_H
#define P2S_DIAG_H

#include <stdbool.h>

#include "array.h"
#include "span.h"

typedef enum { P2S_NOTE, P2S_WARNING, P2S_ERROR } P2sSeverity;

typedef struct {
    P2sSeverity severity;
    char code[8];        /* "P2S001"; empty for diagnostics without a code (I/O) */
    bool has_span;       /* false: about the file as a whole (I/O, limits) */
    P2sSpan span;
    char *message;
    char *fix;           /* NULL when there is no hint */
} P2sDiag;

typedef struct {
    Array(P2sDiag) items;
    size_t errors;
} P2sDiagSink;

void p2s_diag_sink_init(P2sDiagSink *self);
void p2s_diag_sink_release(P2sDiagSink *self);

/* Appends one diagnostic; returns it so a caller can attach a fix hint. */
P2sDiag *p2s_diag_emitf(P2sDiagSink *self, P2sSeverity severity, const char *code,
                        P2sSpan span, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* A diagnostic about the whole file, with no position (I/O errors, limits). */
P2sDiag *p2s_diag_emit_file(P2sDiagSink *self, P2sSeverity severity, const char *code,
                            const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void p2s_diag_set_fix(P2sDiag *self, const char *fix);

const char *p2s_severity_name(P2sSeverity severity);

#endif
