/* source.c — reading inputs, validating their encoding, and the line map. */
#include "source.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include "io.h"
#include "strbuf.h"

static void source__build_line_map(P2sSource *self)
{
    array_push(&self->line_starts, (size_t)0);
    if (!memchr(self->bytes, '\r', self->len)) {   /* the common case, at memchr's speed */
        const char *end = self->bytes + self->len;
        for (const char *nl = self->bytes; (nl = memchr(nl, '\n', (size_t)(end - nl))); nl++)
            array_push(&self->line_starts, (size_t)(nl - self->bytes) + 1);
        return;
    }
    for (size_t i = 0; i < self->len; i++) {
        char c = self->bytes[i];
        if (c == '\n' || (c == '\r' && (i + 1 >= self->len || self->bytes[i + 1] != '\n')))
            array_push(&self->line_starts, i + 1);
    }
}

static void source__adopt(P2sSource *out, const char *name, char *bytes, size_t len)
{
    memset(out, 0, sizeof *out);
    out->name = p2s_strdup(name);
    out->bytes = bytes;
    out->len = len;
    source__build_line_map(out);
}

void p2s_source_from_bytes(P2sSource *out, const char *name, const char *bytes, size_t len)
{
    char *copy = p2s_malloc(len + 1);
    memcpy(copy, bytes, len);
    copy[len] = '\0';
    source__adopt(out, name, copy, len);
}

void p2s_source_view(P2sSource *out, const char *name, const char *bytes, size_t len)
{
    source__adopt(out, name, (char *)bytes, len);
    out->borrowed = true;
}

int p2s_source_read_fd(P2sSource *out, int fd, const char *name, size_t limit,
                       P2sDiagSink *sink)
{
    P2sStrbuf buf;
    p2s_strbuf_init(&buf);
    int rc = -1;

    for (;;) {
        if (buf.len > limit) {
            p2s_diag_emit_file(sink, P2S_ERROR, "", "input is larger than %zu MiB; refusing to read it",
                               limit >> 20);
            goto fail;
        }
        p2s_strbuf_grow(&buf, 65536);
        ssize_t n = p2s_io_read(fd, buf.buf + buf.len, buf.alloc - buf.len - 1);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            p2s_diag_emit_file(sink, P2S_ERROR, "", "cannot read: %s", strerror(errno));
            goto fail;
        }
        if (n == 0)
            break;
        buf.len += (size_t)n;
        buf.buf[buf.len] = '\0';
    }
    size_t len;
    char *bytes = p2s_strbuf_detach(&buf, &len);
    source__adopt(out, name, bytes, len);
    rc = 0;
fail:
    p2s_strbuf_release(&buf);
    return rc;
}

int p2s_source_read_path(P2sSource *out, const char *path, const char *name, size_t limit,
                         P2sDiagSink *sink)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        p2s_diag_emit_file(sink, P2S_ERROR, "", "cannot open: %s", strerror(errno));
        return -1;
    }
    int rc = p2s_source_read_fd(out, fd, name, limit, sink);
    close(fd);
    return rc;
}

int p2s_source_read_file(P2sSource *out, const char *path, P2sStrbuf *why)
{
    P2sDiagSink sink;
    p2s_diag_sink_init(&sink);
    int rc = p2s_source_read_path(out, path, path, P2S_SOURCE_LIMIT, &sink);
    if (rc < 0)
        p2s_strbuf_adds(why, sink.items.contents[0].message);
    p2s_diag_sink_release(&sink);
    return rc;
}

void p2s_source_release(P2sSource *self)
{
    p2s_free(self->name);
    if (!self->borrowed)
        p2s_free(self->bytes);
    array_delete(&self->line_starts);
    memset(self, 0, sizeof *self);
}

/* Length of the UTF-8 sequence at s (at most n bytes), or 0 if it is not valid UTF-8
 * (overlong forms, surrogates and code points above U+10FFFF are invalid). */
static size_t source__utf8_length(const unsigned char *s, size_t n)
{
    unsigned char c = s[0];
    size_t need;
    unsigned int cp;
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF) { need = 2; cp = c & 0x1F; }
    else if (c >= 0xE0 && c <= 0xEF) { need = 3; cp = c & 0x0F; }
    else if (c >= 0xF0 && c <= 0xF4) { need = 4; cp = c & 0x07; }
    else
        return 0;
    if (n < need)
        return 0;
    for (size_t i = 1; i < need; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    if ((need == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
        (need == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
        return 0;
    return need;
}

static bool source__is_utf8_name(const char *name, size_t n)
{
    static const char *const accepted[] = {"utf-8", "utf8", "utf_8", "utf-8-sig", "u8"};
    for (size_t i = 0; i < sizeof accepted / sizeof accepted[0]; i++) {
        if (strlen(accepted[i]) == n && strncasecmp(accepted[i], name, n) == 0)
            return true;
    }
    /* CPython also accepts "utf-8-<anything>" (e.g. utf-8-unix, as Emacs writes). */
    return n > 6 && strncasecmp(name, "utf-8-", 6) == 0;
}

/* Finds a PEP 263 cookie (`coding[:=]\s*([-\w.]+)` in a comment) on the line [start, end).
 * Returns true and the encoding name's span when there is one. */
static bool source__find_cookie(const P2sSource *self, size_t start, size_t end, P2sSpan *name)
{
    size_t i = start;
    while (i < end && (self->bytes[i] == ' ' || self->bytes[i] == '\t' || self->bytes[i] == '\f'))
        i++;
    if (i >= end || self->bytes[i] != '#')
        return false;
    for (; i + 7 <= end; i++) {
        if (memcmp(self->bytes + i, "coding", 6) != 0 || (self->bytes[i + 6] != ':' && self->bytes[i + 6] != '='))
            continue;
        size_t j = i + 7;
        while (j < end && (self->bytes[j] == ' ' || self->bytes[j] == '\t'))
            j++;
        size_t k = j;
        while (k < end) {
            char c = self->bytes[k];
            if (!(c == '-' || c == '_' || c == '.' || (c >= '0' && c <= '9') ||
                  (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')))
                break;
            k++;
        }
        if (k > j) {
            *name = p2s_span(j, k);
            return true;
        }
    }
    return false;
}

/* True when a line holds only blanks and maybe a comment: CPython then looks at line 2. */
static bool source__is_blank_or_comment(const P2sSource *self, P2sSpan line)
{
    for (size_t i = line.start; i < line.end; i++) {
        char c = self->bytes[i];
        if (c == '#')
            return true;
        if (c != ' ' && c != '\t' && c != '\f')
            return false;
    }
    return true;
}

static int source__check_cookie(const P2sSource *self, P2sDiagSink *sink)
{
    size_t lines = p2s_source_line_count(self);
    for (size_t line = 1; line <= 2 && line <= lines; line++) {
        P2sSpan s = p2s_source_line_span(self, line);
        P2sSpan name;
        if (source__find_cookie(self, s.start, s.end, &name)) {
            if (source__is_utf8_name(self->bytes + name.start, name.end - name.start))
                return 0;
            P2sDiag *d = p2s_diag_emitf(sink, P2S_ERROR, "P2S004", name,
                                        "encoding declaration '%.*s' is not supported; only UTF-8 source is",
                                        (int)(name.end - name.start), self->bytes + name.start);
            p2s_diag_set_fix(d, "convert the file to UTF-8 and declare '# -*- coding: utf-8 -*-' or nothing");
            return -1;
        }
        if (!source__is_blank_or_comment(self, s))
            return 0;
    }
    return 0;
}

int p2s_source_validate(const P2sSource *self, P2sDiagSink *sink)
{
    const unsigned char *s = (const unsigned char *)self->bytes;
    size_t i = 0;
    while (i < self->len) {
        if (s[i] == 0) {
            p2s_diag_emitf(sink, P2S_ERROR, "P2S002", p2s_span(i, i + 1),
                           "source contains a NUL byte; this is not a text file");
            return -1;
        }
        size_t n = source__utf8_length(s + i, self->len - i);
        if (n == 0) {
            P2sDiag *d = p2s_diag_emitf(sink, P2S_ERROR, "P2S003", p2s_span(i, i + 1),
                                        "invalid UTF-8 (byte 0x%02X)", s[i]);
            p2s_diag_set_fix(d, "Python source must be UTF-8; re-encode the file");
            return -1;
        }
        i += n;
    }
    return source__check_cookie(self, sink);
}

size_t p2s_source_line_count(const P2sSource *self)
{
    return self->line_starts.size;
}

size_t p2s_source_line_index(const P2sSource *self, size_t offset)
{
    size_t lo = 0, hi = self->line_starts.size;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (self->line_starts.contents[mid] <= offset)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

void p2s_source_position(const P2sSource *self, size_t offset, size_t *line, size_t *col)
{
    if (offset > self->len)
        offset = self->len;
    size_t index = p2s_source_line_index(self, offset);
    size_t start = self->line_starts.contents[index];
    if (index == 0 && self->len >= 3 && memcmp(self->bytes, "\xEF\xBB\xBF", 3) == 0 && offset >= 3)
        start = 3;
    size_t points = 0;
    for (size_t i = start; i < offset; i++)
        if (((unsigned char)self->bytes[i] & 0xC0) != 0x80)
            points++;
    *line = index + 1;
    *col = points + 1;
}

P2sSpan p2s_source_line_span(const P2sSource *self, size_t line)
{
    size_t index = line - 1;
    size_t start = self->line_starts.contents[index];
    size_t end = index + 1 < self->line_starts.size ? self->line_starts.contents[index + 1] : self->len;
    while (end > start && (self->bytes[end - 1] == '\n' || self->bytes[end - 1] == '\r'))
        end--;
    return p2s_span(start, end);
}
