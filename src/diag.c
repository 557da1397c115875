/* diag.c — the diagnostic sink. */
#include "diag.h"

#include <stdarg.h>
#include <string.h>

#include "strbuf.h"

static void diag__free(P2sDiag *d)
{
    p2s_free(d->message);
    p2s_free(d->fix);
}

void p2s_diag_sink_init(P2sDiagSink *self)
{
    memset(self, 0, sizeof *self);
}

void p2s_diag_sink_release(P2sDiagSink *self)
{
    for (size_t i = 0; i < self->items.size; i++)
        diag__free(&self->items.contents[i]);
    array_delete(&self->items);
    self->errors = 0;
}

void p2s_diag_sink_append(P2sDiagSink *self, P2sDiag d)
{
    array_push(&self->items, d);
    if (d.severity == P2S_ERROR)
        self->errors++;
}

void p2s_diag_sink_move(P2sDiagSink *self, P2sDiagSink *from)
{
    for (size_t i = 0; i < from->items.size; i++)
        p2s_diag_sink_append(self, from->items.contents[i]);
    array_delete(&from->items);
    from->errors = 0;
}

void p2s_diag_sink_truncate(P2sDiagSink *self, size_t from)
{
    for (size_t i = from; i < self->items.size; i++) {
        if (self->items.contents[i].severity == P2S_ERROR)
            self->errors--;
        diag__free(&self->items.contents[i]);
    }
    if (from < self->items.size)
        self->items.size = from;
}

void p2s_diag_sink_remove_if(P2sDiagSink *self, size_t from, bool (*drop)(const P2sDiag *d, const void *ctx),
                             const void *ctx)
{
    size_t kept = from;
    for (size_t i = from; i < self->items.size; i++) {
        P2sDiag *d = &self->items.contents[i];
        if (!drop(d, ctx)) {
            self->items.contents[kept++] = *d;
            continue;
        }
        if (d->severity == P2S_ERROR)
            self->errors--;
        diag__free(d);
    }
    if (kept < self->items.size)
        self->items.size = kept;
}

static P2sDiag *diag__push(P2sDiagSink *self, P2sSeverity severity, const char *code,
                           bool has_span, P2sSpan span, const char *fmt, va_list ap)
{
    P2sDiag d = {0};
    P2sStrbuf msg;
    p2s_strbuf_init(&msg);
    p2s_strbuf_vaddf(&msg, fmt, ap);
    d.severity = severity;
    if (code)
        strncpy(d.code, code, sizeof d.code - 1);
    d.has_span = has_span;
    d.span = span;
    d.message = p2s_strbuf_detach(&msg, NULL);
    p2s_diag_sink_append(self, d);
    return array_back(&self->items);
}

P2sDiag *p2s_diag_emitf(P2sDiagSink *self, P2sSeverity severity, const char *code,
                        P2sSpan span, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    P2sDiag *d = diag__push(self, severity, code, true, span, fmt, ap);
    va_end(ap);
    return d;
}

P2sDiag *p2s_diag_emit_file(P2sDiagSink *self, P2sSeverity severity, const char *code,
                            const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    P2sDiag *d = diag__push(self, severity, code, false, p2s_span(0, 0), fmt, ap);
    va_end(ap);
    return d;
}

void p2s_diag_set_fix(P2sDiag *self, const char *fix)
{
    p2s_free(self->fix);
    self->fix = fix ? p2s_strdup(fix) : NULL;
}

const char *p2s_severity_name(P2sSeverity severity)
{
    switch (severity) {
    case P2S_NOTE: return "note";
    case P2S_WARNING: return "warning";
    case P2S_ERROR: return "error";
    }
    return "error";
}
