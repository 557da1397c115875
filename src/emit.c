/* emit.c — output bytes from the source and a plan. */
#include "emit.h"

void p2s_emit(const P2sSource *src, const P2sPlan *plan, P2sStrbuf *out)
{
    size_t at = 0;
    p2s_strbuf_grow(out, src->len + plan->tail.len);
    for (size_t i = 0; i < plan->edits.size; i++) {
        const P2sEdit *e = &plan->edits.contents[i];
        p2s_strbuf_add(out, src->bytes + at, e->start - at);
        p2s_strbuf_adds(out, e->text);
        at = e->end;
    }
    p2s_strbuf_add(out, src->bytes + at, src->len - at);
    p2s_strbuf_add(out, plan->tail.buf, plan->tail.len);
}
