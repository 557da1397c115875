/* jsonrpc.h — the LSP base protocol: messages framed as `Content-Length: N` header lines, a
 * blank line, then N bytes of JSON (JSON-RPC 2.0). The framer works on bytes in memory, so the
 * server loop and the fuzz target share it; it never blocks and never trusts a length: a header
 * block longer than P2S_RPC_MAX_HEADER or without a valid Content-Length is dropped with
 * P2S_RPC_BAD_HEADER, a body longer than P2S_RPC_MAX_BODY is skipped as it arrives (never
 * buffered) with P2S_RPC_TOO_LARGE. The framer owns its buffer; the caller releases it. */
#ifndef P2S_JSONRPC_H
#define P2S_JSONRPC_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "strbuf.h"

#define P2S_RPC_MAX_HEADER 8192
#define P2S_RPC_MAX_BODY ((size_t)64 << 20)

/* JSON-RPC and LSP error codes. */
enum {
    P2S_RPC_PARSE_ERROR = -32700,
    P2S_RPC_INVALID_REQUEST = -32600,
    P2S_RPC_METHOD_NOT_FOUND = -32601,
    P2S_RPC_INVALID_PARAMS = -32602,
    P2S_RPC_INTERNAL_ERROR = -32603,
    P2S_RPC_SERVER_NOT_INITIALIZED = -32002,
    P2S_RPC_REQUEST_FAILED = -32803,
};

typedef enum {
    P2S_RPC_NEED_MORE,    /* no complete message buffered */
    P2S_RPC_MESSAGE,      /* one body in *body, *len */
    P2S_RPC_BAD_HEADER,   /* a header block that names no valid length: dropped */
    P2S_RPC_TOO_LARGE,    /* a body above P2S_RPC_MAX_BODY: being skipped */
} P2sRpcEvent;

typedef struct {
    P2sStrbuf buf;        /* received, from `start` on not consumed yet */
    size_t start;
    size_t skip;          /* bytes of an oversized body still to drop */
} P2sRpcFramer;

void p2s_rpc_framer_init(P2sRpcFramer *self);
void p2s_rpc_framer_feed(P2sRpcFramer *self, const char *bytes, size_t n);
/* The next event. A MESSAGE body points into the framer and stays valid until the next call. */
P2sRpcEvent p2s_rpc_framer_next(P2sRpcFramer *self, const char **body, size_t *len);
/* Reads what fd has (one read(2), retried on EINTR) into the framer: bytes read, 0 at end of
 * input, -1 on a read error. */
ssize_t p2s_rpc_framer_fill(P2sRpcFramer *self, int fd);
void p2s_rpc_framer_release(P2sRpcFramer *self);

/* Appends one framed message: the JSON of msg (compact), which stays the caller's. */
void p2s_rpc_frame_json(P2sStrbuf *out, const cJSON *msg);
/* Writes all of bytes to fd (retrying short writes and EINTR); 0, or -1 on a write error. */
int  p2s_rpc_write_all(int fd, const char *bytes, size_t n);

/* Message builders; each returns a new object the caller frees (cJSON_Delete). id is copied;
 * NULL stands for JSON null. result is taken over. */
cJSON *p2s_rpc_response(const cJSON *id, cJSON *result);
cJSON *p2s_rpc_error(const cJSON *id, int code, const char *message);
cJSON *p2s_rpc_notification(const char *method, cJSON *params);

#endif
