/* jsonrpc.c — LSP base-protocol framing and JSON-RPC message builders. */
#include "jsonrpc.h"

#include <ctype.h>
#include <errno.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "alloc.h"

void p2s_rpc_framer_init(P2sRpcFramer *self)
{
    memset(self, 0, sizeof *self);
    p2s_strbuf_init(&self->buf);
}

void p2s_rpc_framer_release(P2sRpcFramer *self)
{
    p2s_strbuf_release(&self->buf);
    self->start = self->skip = 0;
}

/* Drops the consumed prefix once it is at least half of the buffer. */
static void rpc__compact(P2sRpcFramer *self)
{
    if (self->start == 0 || self->start * 2 < self->buf.len)
        return;
    size_t rest = self->buf.len - self->start;
    memmove(self->buf.buf, self->buf.buf + self->start, rest);
    self->buf.len = rest;
    self->buf.buf[rest] = '\0';
    self->start = 0;
}

void p2s_rpc_framer_feed(P2sRpcFramer *self, const char *bytes, size_t n)
{
    if (self->skip) {
        size_t drop = n < self->skip ? n : self->skip;
        self->skip -= drop;
        bytes += drop;
        n -= drop;
    }
    if (n) {
        rpc__compact(self);
        p2s_strbuf_add(&self->buf, bytes, n);
    }
}

ssize_t p2s_rpc_framer_fill(P2sRpcFramer *self, int fd)
{
    char chunk[65536];
    ssize_t n;
    do
        n = read(fd, chunk, sizeof chunk);
    while (n < 0 && errno == EINTR);
    if (n > 0)
        p2s_rpc_framer_feed(self, chunk, (size_t)n);
    return n;
}

/* The end of the header block starting at p (n bytes available): the offset just past the
 * blank line, or 0 when it is not complete. Lines end in "\r\n"; a bare "\n" is accepted. */
static size_t rpc__header_end(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (p[i] != '\n')
            continue;
        if (i + 1 < n && p[i + 1] == '\n')
            return i + 2;
        if (i + 2 < n && p[i + 1] == '\r' && p[i + 2] == '\n')
            return i + 3;
    }
    return 0;
}

/* Content-Length from a header block: -1 when absent, malformed or repeated differently. */
static long long rpc__content_length(const char *p, size_t n)
{
    static const char name[] = "content-length:";
    long long length = -1;
    size_t i = 0;
    while (i < n) {
        size_t eol = i;
        while (eol < n && p[eol] != '\n')
            eol++;
        size_t line_end = eol > i && p[eol - 1] == '\r' ? eol - 1 : eol;
        if (line_end - i >= sizeof name - 1 && strncasecmp(p + i, name, sizeof name - 1) == 0) {
            size_t k = i + sizeof name - 1;
            while (k < line_end && (p[k] == ' ' || p[k] == '\t'))
                k++;
            long long v = 0;
            size_t digits = 0;
            while (k < line_end && isdigit((unsigned char)p[k]) && digits < 19) {
                v = v * 10 + (p[k++] - '0');
                digits++;
            }
            while (k < line_end && (p[k] == ' ' || p[k] == '\t'))
                k++;
            if (!digits || k != line_end || (length >= 0 && length != v))
                return -1;
            length = v;
        }
        i = eol + 1;
    }
    return length;
}

P2sRpcEvent p2s_rpc_framer_next(P2sRpcFramer *self, const char **body, size_t *len)
{
    const char *p = self->buf.buf + self->start;
    size_t avail = self->buf.len - self->start;
    if (self->skip || avail == 0)
        return P2S_RPC_NEED_MORE;
    size_t scan = avail < P2S_RPC_MAX_HEADER + 3 ? avail : P2S_RPC_MAX_HEADER + 3;
    size_t header = rpc__header_end(p, scan);
    if (header == 0) {
        if (avail < P2S_RPC_MAX_HEADER)
            return P2S_RPC_NEED_MORE;
        /* No header is this long: resynchronise at the next "Content-Length" after it, or
         * keep only a tail that could be the start of one. */
        const char *next = memmem(p + 1, avail - 1, "Content-Length", 14);
        size_t keep = 0;
        for (size_t k = 14; !next && k > 0 && !keep; k--)
            if (strncasecmp(p + avail - k, "Content-Length", k) == 0)
                keep = k;
        size_t drop = next ? (size_t)(next - p) : avail - keep;
        self->start += drop;
        return P2S_RPC_BAD_HEADER;
    }
    long long length = rpc__content_length(p, header);
    if (length < 0) {
        self->start += header;
        return P2S_RPC_BAD_HEADER;
    }
    if ((unsigned long long)length > P2S_RPC_MAX_BODY) {
        size_t have = avail - header;
        self->start += header;
        if ((unsigned long long)have >= (unsigned long long)length) {
            self->start += (size_t)length;
        } else {
            self->skip = (size_t)length - have;
            self->start = self->buf.len;
        }
        return P2S_RPC_TOO_LARGE;
    }
    if (avail - header < (size_t)length)
        return P2S_RPC_NEED_MORE;
    *body = p + header;
    *len = (size_t)length;
    self->start += header + (size_t)length;
    return P2S_RPC_MESSAGE;
}

void p2s_rpc_frame_json(P2sStrbuf *out, const cJSON *msg)
{
    char *text = cJSON_PrintUnformatted(msg);
    size_t n = strlen(text);
    p2s_strbuf_addf(out, "Content-Length: %zu\r\n\r\n", n);
    p2s_strbuf_add(out, text, n);
    p2s_free(text);
}

int p2s_rpc_write_all(int fd, const char *bytes, size_t n)
{
    while (n) {
        ssize_t w = write(fd, bytes, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        bytes += w;
        n -= (size_t)w;
    }
    return 0;
}

static cJSON *rpc__message(const cJSON *id)
{
    cJSON *msg = cJSON_CreateObject();
    cJSON_AddStringToObject(msg, "jsonrpc", "2.0");
    if (id && (cJSON_IsNumber(id) || cJSON_IsString(id)))
        cJSON_AddItemToObject(msg, "id", cJSON_Duplicate(id, false));
    else
        cJSON_AddNullToObject(msg, "id");
    return msg;
}

cJSON *p2s_rpc_response(const cJSON *id, cJSON *result)
{
    cJSON *msg = rpc__message(id);
    cJSON_AddItemToObject(msg, "result", result ? result : cJSON_CreateNull());
    return msg;
}

cJSON *p2s_rpc_error(const cJSON *id, int code, const char *message)
{
    cJSON *msg = rpc__message(id);
    cJSON *error = cJSON_AddObjectToObject(msg, "error");
    cJSON_AddNumberToObject(error, "code", code);
    cJSON_AddStringToObject(error, "message", message);
    return msg;
}

cJSON *p2s_rpc_notification(const char *method, cJSON *params)
{
    cJSON *msg = cJSON_CreateObject();
    cJSON_AddStringToObject(msg, "jsonrpc", "2.0");
    cJSON_AddStringToObject(msg, "method", method);
    cJSON_AddItemToObject(msg, "params", params ? params : cJSON_CreateObject());
    return msg;
}
