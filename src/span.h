/* span.h — a half-open byte range [start, end) into one source's original bytes. Spans stay
 * byte offsets until a printer turns them into line:col through the source's line map. */
#ifndef P2S_SPAN_H
#define P2S_SPAN_H

#include <stddef.h>

typedef struct {
    size_t start, end;
} P2sSpan;

static inline P2sSpan p2s_span(size_t start, size_t end)
{
    P2sSpan s = {start, end};
    return s;
}

#endif
