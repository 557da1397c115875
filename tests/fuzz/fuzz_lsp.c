/* fuzz_lsp.c — libFuzzer target for the language server's message reader and dispatch: the
 * input is what a client writes on the server's standard input (framed JSON-RPC messages, or
 * garbage), fed to p2s_lsp_feed in chunks of growing size so headers and bodies split
 * everywhere, then the pending diagnostics are published (p2s_lsp_idle), as the stdio loop
 * does. The server runs without the file system (no pyproject.toml, rules files or workspace
 * folders are read, whatever the messages say).
 * Invariants: no crash, leak, hang or undefined behaviour; everything the server writes is a
 * sequence of `Content-Length: N` framed JSON objects with "jsonrpc": "2.0".
 * Built by `make fuzz FUZZ_TARGET=fuzz_lsp`; the seeds in tests/fuzz/corpus/fuzz_lsp are
 * replayed by `make fuzz-replay` (tests/fuzz/replay.sh). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "alloc.h"
#include "lsp.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(cond, ...)                                            \
    do {                                                                 \
        if (!(cond)) {                                                   \
            fprintf(stderr, "fuzz_lsp: invariant broken: " __VA_ARGS__); \
            fputc('\n', stderr);                                         \
            abort();                                                     \
        }                                                                \
    } while (0)

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    p2s_alloc_init();
    return 0;
}

/* Checks and empties what the server wrote. */
static void fuzz__drain(P2sStrbuf *out)
{
    size_t i = 0;
    while (i < out->len) {
        static const char head[] = "Content-Length: ";
        FUZZ_CHECK(out->len - i > sizeof head - 1 && memcmp(out->buf + i, head, sizeof head - 1) == 0,
                   "output is not framed at byte %zu", i);
        char *end;
        unsigned long n = strtoul(out->buf + i + sizeof head - 1, &end, 10);
        FUZZ_CHECK(strncmp(end, "\r\n\r\n", 4) == 0, "malformed output header");
        const char *body = end + 4;
        FUZZ_CHECK((size_t)(body - out->buf) + n <= out->len, "output body shorter than its length");
        cJSON *msg = cJSON_ParseWithLength(body, n);
        FUZZ_CHECK(msg && cJSON_IsObject(msg), "output body is not a JSON object");
        const cJSON *version = cJSON_GetObjectItemCaseSensitive(msg, "jsonrpc");
        FUZZ_CHECK(cJSON_IsString(version) && strcmp(version->valuestring, "2.0") == 0, "no jsonrpc 2.0");
        cJSON_Delete(msg);
        i = (size_t)(body - out->buf) + n;
    }
    p2s_strbuf_reset(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    P2sLspOptions opts = {false};
    P2sLsp *server = p2s_lsp_new(&opts);
    size_t at = 0, chunk = 1;
    bool go_on = true;
    while (go_on && at < size) {
        size_t n = size - at < chunk ? size - at : chunk;
        go_on = p2s_lsp_feed(server, (const char *)data + at, n);
        fuzz__drain(p2s_lsp_output(server));
        at += n;
        chunk = chunk * 2 + 1;
    }
    if (go_on) {
        p2s_lsp_idle(server);
        fuzz__drain(p2s_lsp_output(server));
    }
    FUZZ_CHECK(p2s_lsp_exit_status(server) == 0 || p2s_lsp_exit_status(server) == 1, "exit status");
    p2s_lsp_delete(server);
    return 0;
}
