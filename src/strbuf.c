/* strbuf.c — growable byte buffer. */
#include "strbuf.h"

#include <stdio.h>
#include <string.h>

#include "alloc.h"

static char strbuf__empty[1];

void p2s_strbuf_init(P2sStrbuf *self)
{
    self->buf = strbuf__empty;
    self->len = 0;
    self->alloc = 0;
}

void p2s_strbuf_grow(P2sStrbuf *self, size_t extra)
{
    size_t need = self->len + extra + 1;
    if (need <= self->alloc)
        return;
    size_t grown = self->alloc ? self->alloc : 64;
    while (grown < need)
        grown *= 2;
    char *fresh = p2s_realloc(self->alloc ? self->buf : NULL, grown);
    if (!self->alloc)
        fresh[0] = '\0';
    self->buf = fresh;
    self->alloc = grown;
}

void p2s_strbuf_add(P2sStrbuf *self, const char *bytes, size_t n)
{
    p2s_strbuf_grow(self, n);
    memcpy(self->buf + self->len, bytes, n);
    self->len += n;
    self->buf[self->len] = '\0';
}

void p2s_strbuf_adds(P2sStrbuf *self, const char *s)
{
    p2s_strbuf_add(self, s, strlen(s));
}

void p2s_strbuf_addch(P2sStrbuf *self, char c)
{
    p2s_strbuf_add(self, &c, 1);
}

void p2s_strbuf_vaddf(P2sStrbuf *self, const char *fmt, va_list ap)
{
    va_list copy;
    va_copy(copy, ap);
    int n = vsnprintf(NULL, 0, fmt, copy);
    va_end(copy);
    if (n <= 0)
        return;
    p2s_strbuf_grow(self, (size_t)n);
    vsnprintf(self->buf + self->len, (size_t)n + 1, fmt, ap);
    self->len += (size_t)n;
}

void p2s_strbuf_addf(P2sStrbuf *self, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    p2s_strbuf_vaddf(self, fmt, ap);
    va_end(ap);
}

void p2s_strbuf_reset(P2sStrbuf *self)
{
    self->len = 0;
    if (self->alloc)
        self->buf[0] = '\0';
}

char *p2s_strbuf_detach(P2sStrbuf *self, size_t *len)
{
    if (!self->alloc)
        p2s_strbuf_grow(self, 0);
    char *out = self->buf;
    if (len)
        *len = self->len;
    p2s_strbuf_init(self);
    return out;
}

void p2s_strbuf_release(P2sStrbuf *self)
{
    if (self->alloc)
        p2s_free(self->buf);
    p2s_strbuf_init(self);
}
