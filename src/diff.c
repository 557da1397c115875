/* diff.c — Myers' diff over lines, printed as unified hunks. */
#include "diff.h"

#include <string.h>

#include "array.h"

#define DIFF_CONTEXT 3
/* Past this many differing lines the edit script is not searched for: one hunk replaces all. */
#define DIFF_MAX_D 4000

typedef struct {
    const char *start;
    size_t len;
} Line;

typedef Array(Line) Lines;
typedef enum { OP_KEEP, OP_DELETE, OP_INSERT } OpKind;
typedef Array(unsigned char) Ops;

static void diff__split(const char *text, size_t len, Lines *out)
{
    size_t start = 0;
    for (size_t i = 0; i < len; i++) {
        if (text[i] == '\n') {
            Line l = {text + start, i + 1 - start};
            array_push(out, l);
            start = i + 1;
        }
    }
    if (start < len) {
        Line l = {text + start, len - start};
        array_push(out, l);
    }
}

static int diff__eq(const Line *a, const Line *b)
{
    return a->len == b->len && memcmp(a->start, b->start, a->len) == 0;
}

/* The shortest edit script from a to b, in order; -1 when it needs more than DIFF_MAX_D edits. */
static int diff__script(const Lines *a, const Lines *b, Ops *ops)
{
    long n = (long)a->size, m = (long)b->size, max = n + m;
    long limit = max < DIFF_MAX_D ? max : DIFF_MAX_D;
    long width = 2 * limit + 1;
    long *v = p2s_calloc((size_t)width + 2, sizeof(long));
    Array(long) trace = {0};
    long found_d = -1;
    for (long d = 0; d <= limit && found_d < 0; d++) {
        for (long k = -d; k <= d; k++)
            array_push(&trace, v[k + limit]);
        for (long k = -d; k <= d; k += 2) {
            long x = (k == -d || (k != d && v[k - 1 + limit] < v[k + 1 + limit])) ? v[k + 1 + limit]
                                                                                 : v[k - 1 + limit] + 1;
            long y = x - k;
            while (x < n && y < m && diff__eq(&a->contents[x], &b->contents[y]))
                x++, y++;
            v[k + limit] = x;
            if (x >= n && y >= m) {
                found_d = d;
                break;
            }
        }
    }
    if (found_d < 0) {
        p2s_free(v);
        array_delete(&trace);
        return -1;
    }
    /* Walk back through the saved rows: row d holds V before step d, at offset d*d. */
    Ops reversed = {0};
    long x = n, y = m;
    for (long d = found_d; d > 0; d--) {
        const long *row = &trace.contents[d * d];  /* V before step d, for k in -d..d */
        long k = x - y;
        long prev_k = (k == -d || (k != d && row[k - 1 + d] < row[k + 1 + d])) ? k + 1 : k - 1;
        long prev_x = row[prev_k + d];
        long prev_y = prev_x - prev_k;
        while (x > prev_x && y > prev_y) {
            array_push(&reversed, (unsigned char)OP_KEEP);
            x--, y--;
        }
        array_push(&reversed, (unsigned char)(prev_k == k + 1 ? OP_INSERT : OP_DELETE));
        x = prev_x;
        y = prev_y;
    }
    while (x > 0 && y > 0) {
        array_push(&reversed, (unsigned char)OP_KEEP);
        x--, y--;
    }
    for (size_t i = reversed.size; i-- > 0;)
        array_push(ops, reversed.contents[i]);
    array_delete(&reversed);
    p2s_free(v);
    array_delete(&trace);
    return 0;
}

static void diff__line(P2sStrbuf *out, char mark, const Line *l)
{
    p2s_strbuf_addch(out, mark);
    p2s_strbuf_add(out, l->start, l->len);
    if (l->len == 0 || l->start[l->len - 1] != '\n')
        p2s_strbuf_adds(out, "\n\\ No newline at end of file\n");
}

static void diff__range(P2sStrbuf *out, size_t start, size_t count)
{
    if (count == 1)
        p2s_strbuf_addf(out, "%zu", start + 1);
    else
        p2s_strbuf_addf(out, "%zu,%zu", count ? start + 1 : start, count);
}

static void diff__hunks(const Lines *a, const Lines *b, const Ops *ops, P2sStrbuf *out)
{
    size_t i = 0;
    while (i < ops->size) {
        while (i < ops->size && ops->contents[i] == OP_KEEP)
            i++;
        if (i == ops->size)
            break;
        /* A hunk: from DIFF_CONTEXT keeps before the change to DIFF_CONTEXT after the last change
         * that is no more than 2*DIFF_CONTEXT keeps from the next. */
        size_t begin = i >= DIFF_CONTEXT ? i - DIFF_CONTEXT : 0;
        size_t end = i;
        for (;;) {
            while (end < ops->size && ops->contents[end] != OP_KEEP)
                end++;
            size_t keeps = 0;
            while (end + keeps < ops->size && ops->contents[end + keeps] == OP_KEEP)
                keeps++;
            if (end + keeps < ops->size && keeps <= 2 * DIFF_CONTEXT) {
                end += keeps;
                continue;
            }
            end += keeps < DIFF_CONTEXT ? keeps : DIFF_CONTEXT;
            break;
        }
        size_t ax = 0, by = 0;
        for (size_t k = 0; k < begin; k++) {
            if (ops->contents[k] != OP_INSERT)
                ax++;
            if (ops->contents[k] != OP_DELETE)
                by++;
        }
        size_t a_count = 0, b_count = 0;
        for (size_t k = begin; k < end; k++) {
            a_count += ops->contents[k] != OP_INSERT;
            b_count += ops->contents[k] != OP_DELETE;
        }
        p2s_strbuf_adds(out, "@@ -");
        diff__range(out, ax, a_count);
        p2s_strbuf_adds(out, " +");
        diff__range(out, by, b_count);
        p2s_strbuf_adds(out, " @@\n");
        for (size_t k = begin; k < end; k++) {
            switch ((OpKind)ops->contents[k]) {
            case OP_KEEP: diff__line(out, ' ', &a->contents[ax]); ax++; by++; break;
            case OP_DELETE: diff__line(out, '-', &a->contents[ax]); ax++; break;
            case OP_INSERT: diff__line(out, '+', &b->contents[by]); by++; break;
            }
        }
        i = end;
    }
}

void p2s_diff_unified(const char *a, size_t a_len, const char *b, size_t b_len,
                      const char *a_label, const char *b_label, P2sStrbuf *out)
{
    if (a_len == b_len && memcmp(a, b, a_len) == 0)
        return;
    Lines la = {0}, lb = {0};
    Ops ops = {0};
    diff__split(a, a_len, &la);
    diff__split(b, b_len, &lb);
    if (diff__script(&la, &lb, &ops) < 0) {
        ops.size = 0;
        for (size_t i = 0; i < la.size; i++)
            array_push(&ops, (unsigned char)OP_DELETE);
        for (size_t i = 0; i < lb.size; i++)
            array_push(&ops, (unsigned char)OP_INSERT);
    }
    p2s_strbuf_addf(out, "--- %s\n+++ %s\n", a_label, b_label);
    diff__hunks(&la, &lb, &ops, out);
    array_delete(&la);
    array_delete(&lb);
    array_delete(&ops);
}
