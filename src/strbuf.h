/* strbuf.h — growable byte buffer (git strbuf style). Never NULL after init; always
 * NUL-terminated; safe for bytes that contain NUL. The caller owns the buffer and releases it. */
#ifndef P2S_STRBUF_H
#define P2S_STRBUF_H

#include <stdarg.h>
#include <stddef.h>

typedef struct {
    char *buf;
    size_t len, alloc;
} P2sStrbuf;

void  p2s_strbuf_init(P2sStrbuf *self);
void  p2s_strbuf_grow(P2sStrbuf *self, size_t extra);
void  p2s_strbuf_add(P2sStrbuf *self, const char *bytes, size_t n);
void  p2s_strbuf_adds(P2sStrbuf *self, const char *s);
void  p2s_strbuf_addch(P2sStrbuf *self, char c);
void  p2s_strbuf_addf(P2sStrbuf *self, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void  p2s_strbuf_vaddf(P2sStrbuf *self, const char *fmt, va_list ap);
void  p2s_strbuf_reset(P2sStrbuf *self);
char *p2s_strbuf_detach(P2sStrbuf *self, size_t *len);  /* caller frees the result */
void  p2s_strbuf_release(P2sStrbuf *self);

#endif
