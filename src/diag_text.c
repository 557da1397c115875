/* diag_text.c — text rendering of diagnostics. */
#include "diag_text.h"

#define TEXT_BOLD "\033[1m"
#define TEXT_RESET "\033[0m"

static const char *text__severity_color(P2sSeverity severity)
{
    switch (severity) {
    case P2S_ERROR: return "\033[1;31m";
    case P2S_WARNING: return "\033[1;33m";
    case P2S_NOTE: return "\033[1;36m";
    }
    return "";
}

static void text__header(const char *location, const P2sDiag *d, bool color, P2sStrbuf *out)
{
    if (color)
        p2s_strbuf_addf(out, TEXT_BOLD "%s" TEXT_RESET ": %s%s", location,
                        text__severity_color(d->severity), p2s_severity_name(d->severity));
    else
        p2s_strbuf_addf(out, "%s: %s", location, p2s_severity_name(d->severity));
    if (d->code[0])
        p2s_strbuf_addf(out, "[%s]", d->code);
    p2s_strbuf_addf(out, color ? ":" TEXT_RESET " %s\n" : ": %s\n", d->message);
}

static void text__fix(const P2sDiag *d, P2sStrbuf *out)
{
    if (d->fix)
        p2s_strbuf_addf(out, "  = help: %s\n", d->fix);
}

static void text__snippet(const P2sSource *src, const P2sDiag *d, bool color, P2sStrbuf *out)
{
    size_t line, col;
    p2s_source_position(src, d->span.start, &line, &col);
    P2sSpan text = p2s_source_line_span(src, line);
    p2s_strbuf_adds(out, "    ");
    p2s_strbuf_add(out, src->bytes + text.start, text.end - text.start);
    p2s_strbuf_adds(out, "\n    ");
    size_t caret_start = d->span.start < text.end ? d->span.start : text.end;
    for (size_t i = text.start; i < caret_start; i++) {
        unsigned char c = (unsigned char)src->bytes[i];
        if ((c & 0xC0) == 0x80)
            continue;
        p2s_strbuf_addch(out, c == '\t' ? '\t' : ' ');
    }
    size_t caret_end = d->span.end < text.end ? d->span.end : text.end;
    size_t carets = 0;
    for (size_t i = caret_start; i < caret_end; i++)
        if (((unsigned char)src->bytes[i] & 0xC0) != 0x80)
            carets++;
    if (color)
        p2s_strbuf_adds(out, text__severity_color(d->severity));
    p2s_strbuf_addch(out, '^');
    for (size_t i = 1; i < carets; i++)
        p2s_strbuf_addch(out, '~');
    if (color)
        p2s_strbuf_adds(out, TEXT_RESET);
    p2s_strbuf_addch(out, '\n');
}

void p2s_diag_text_format(const P2sSource *src, const P2sDiag *d, bool color, P2sStrbuf *out)
{
    if (!d->has_span) {
        p2s_diag_text_format_unread(src->name, d, color, out);
        return;
    }
    size_t line, col;
    p2s_source_position(src, d->span.start, &line, &col);
    P2sStrbuf location;
    p2s_strbuf_init(&location);
    p2s_strbuf_addf(&location, "%s:%zu:%zu", src->name, line, col);
    text__header(location.buf, d, color, out);
    p2s_strbuf_release(&location);
    text__snippet(src, d, color, out);
    text__fix(d, out);
}

void p2s_diag_text_format_unread(const char *name, const P2sDiag *d, bool color, P2sStrbuf *out)
{
    text__header(name, d, color, out);
    text__fix(d, out);
}
