/* suppress.c — selection and `# noqa` applied to a sink. */
#include "suppress.h"

#include <ctype.h>
#include <string.h>

/* A code token as ruff reads one in a noqa list: letters then digits ("P2S201" has both). */
static size_t suppress__code_len(const char *p, const char *end)
{
    const char *q = p;
    while (q < end && isupper((unsigned char)*q))
        q++;
    if (q == p)
        return 0;
    const char *digits = q;
    while (q < end && isalnum((unsigned char)*q))
        q++;
    return q > digits ? (size_t)(q - p) : 0;
}

/* Looks at one `#...` comment from p to end. Returns 1 when it is a noqa covering code, 0 when
 * it is not a noqa or does not cover it. A `# noqa:` with no valid code is no noqa (ruff warns
 * about it rather than silencing the whole line). */
static int suppress__comment_covers(const char *p, const char *end, const char *code)
{
    p++;
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    if (end - p < 4 || strncasecmp(p, "noqa", 4) != 0)
        return 0;
    p += 4;
    if (p == end || *p != ':')
        return p == end || !isalnum((unsigned char)*p);
    p++;
    for (;;) {
        while (p < end && (*p == ' ' || *p == '\t' || *p == ','))
            p++;
        size_t n = suppress__code_len(p, end);
        if (n == 0)
            break;
        if (n == strlen(code) && memcmp(p, code, n) == 0)
            return 1;
        p += n;
    }
    return 0;
}

bool p2s_suppress_noqa(const P2sSource *src, size_t line, const char *code)
{
    if (line == 0 || line > p2s_source_line_count(src))
        return false;
    P2sSpan span = p2s_source_line_span(src, line);
    const char *end = src->bytes + span.end;
    for (const char *p = src->bytes + span.start; p < end; p++)
        if (*p == '#' && suppress__comment_covers(p, end, code))
            return true;
    return false;
}

bool p2s_suppress_hides(const P2sDiag *d, const P2sSource *src, const P2sRules *rules)
{
    if (!d->code[0])
        return false;
    const P2sRuleDiag *rule = p2s_rules_diag(rules, d->code);
    if (rule && !rule->configurable)
        return false;
    if (!p2s_rules_code_enabled(rules, d->code))
        return true;
    if (!src || !d->has_span)
        return false;
    size_t line, col;
    p2s_source_position(src, d->span.start, &line, &col);
    return p2s_suppress_noqa(src, line, d->code);
}

typedef struct {
    const P2sSource *src;
    const P2sRules *rules;
} SuppressBy;

static bool suppress__hidden(const P2sDiag *d, const void *ctx)
{
    const SuppressBy *by = ctx;
    return p2s_suppress_hides(d, by->src, by->rules);
}

void p2s_suppress_filter(P2sDiagSink *sink, size_t from, const P2sSource *src, const P2sRules *rules)
{
    SuppressBy by = {src, rules};
    p2s_diag_sink_remove_if(sink, from, suppress__hidden, &by);
}
