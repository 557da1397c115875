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

/* Diagnostics change hands only through the functions below, which keep `errors` true: read
 * it, never write it. */
typedef struct {
    Array(P2sDiag) items;
    size_t errors;              /* items of severity error */
} P2sDiagSink;

void p2s_diag_sink_init(P2sDiagSink *self);
void p2s_diag_sink_release(P2sDiagSink *self);
/* Appends d, taking its message and fix. */
void p2s_diag_sink_append(P2sDiagSink *self, P2sDiag d);
/* Appends every diagnostic of from, which is left empty (and released). */
void p2s_diag_sink_move(P2sDiagSink *self, P2sDiagSink *from);
/* Drops the diagnostics from index `from` on. */
void p2s_diag_sink_truncate(P2sDiagSink *self, size_t from);
/* Drops the diagnostics from index `from` on for which drop says so, keeping the order of the
 * rest. */
void p2s_diag_sink_remove_if(P2sDiagSink *self, size_t from, bool (*drop)(const P2sDiag *d, const void *ctx),
                             const void *ctx);

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
