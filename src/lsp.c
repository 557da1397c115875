/* lsp.c — the language server: the client's messages dispatched (requests, notifications,
 * JSON-RPC errors, the lifecycle), the server value fed with bytes, and the stdio loop around
 * it. Settings: lsp_settings.c; documents and workspace folders: lsp_documents.c. */
#include "lsp.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc.h"
#include "jsonrpc.h"
#include "lsp_documents.h"
#include "lsp_features.h"
#include "lsp_server.h"
#include "lsp_settings.h"
#include "lsp_text.h"
#include "lsp_workspace.h"
#include "transpile.h"
#include "version.h"

#define LSP_COALESCE_ROUNDS 16   /* reads in a row before pending diagnostics are published anyway */

/* ---- parameters ---- */

static const cJSON *lsp__get(const cJSON *obj, const char *key)
{
    return cJSON_IsObject(obj) ? cJSON_GetObjectItemCaseSensitive(obj, key) : NULL;
}

static const char *lsp__get_string(const cJSON *obj, const char *key)
{
    const cJSON *v = lsp__get(obj, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static uint32_t lsp__uint(const cJSON *v)
{
    if (!cJSON_IsNumber(v) || isnan(v->valuedouble) || v->valuedouble < 0)
        return 0;
    return v->valuedouble >= 4294967295.0 ? UINT32_MAX : (uint32_t)v->valuedouble;
}

static bool lsp__get_position(const cJSON *obj, P2sLspPosition *pos)
{
    const cJSON *line = lsp__get(obj, "line"), *character = lsp__get(obj, "character");
    if (!cJSON_IsNumber(line) || !cJSON_IsNumber(character))
        return false;
    pos->line = lsp__uint(line);
    pos->character = lsp__uint(character);
    return true;
}

static bool lsp__get_range(const cJSON *obj, P2sLspPosition *start, P2sLspPosition *end)
{
    return lsp__get_position(lsp__get(obj, "start"), start) && lsp__get_position(lsp__get(obj, "end"), end);
}

/* The open document named by params.textDocument.uri, up to date; NULL when not open. */
static P2sLspDoc *lsp__param_doc(P2sLsp *s, const cJSON *params)
{
    const char *uri = lsp__get_string(lsp__get(params, "textDocument"), "uri");
    P2sLspDoc *d = uri ? p2s_lsp_doc(s, uri) : NULL;
    if (d) {
        p2s_lsp_doc_refresh(s, d);
        p2s_lsp_doc_need_findings(d);
    }
    return d;
}

/* ---- notifications ---- */

static void lsp__did_open(P2sLsp *s, const cJSON *params)
{
    const cJSON *item = lsp__get(params, "textDocument");
    const char *uri = lsp__get_string(item, "uri"), *text = lsp__get_string(item, "text");
    if (!uri || !text)
        return;
    P2sLspDoc *d = p2s_lsp_doc(s, uri);
    if (!d) {
        d = p2s_calloc(1, sizeof *d);
        p2s_strbuf_init(&d->text);
        d->uri = p2s_strdup(uri);
        d->path = p2s_lsp_uri_to_path(uri);
        array_push(&s->docs, d);
        p2s_lsp_doc_place(s, d);
    }
    p2s_lsp_doc_drop_analysis(d);
    p2s_lsp_doc_forget_kept(d);
    if (d->tree)
        ts_tree_delete(d->tree);
    d->tree = NULL;
    p2s_strbuf_reset(&d->text);
    p2s_strbuf_adds(&d->text, text);
    d->nul = s->nul_in_message;
    const cJSON *version = lsp__get(item, "version");
    d->version = cJSON_IsNumber(version) ? version->valuedouble : 0;
    d->dirty = true;
}

static void lsp__did_change(P2sLsp *s, const cJSON *params)
{
    const cJSON *item = lsp__get(params, "textDocument");
    const char *uri = lsp__get_string(item, "uri");
    const cJSON *changes = lsp__get(params, "contentChanges");
    P2sLspDoc *d = uri ? p2s_lsp_doc(s, uri) : NULL;
    if (!d || !cJSON_IsArray(changes))
        return;
    p2s_lsp_doc_keep_or_drop(d);
    for (const cJSON *c = changes->child; c; c = c->next) {
        const char *text = lsp__get_string(c, "text");
        if (!text)
            continue;
        P2sLspPosition a, b;
        const cJSON *range = lsp__get(c, "range");
        if (range && !cJSON_IsNull(range) && !lsp__get_range(range, &a, &b))
            continue;  /* a malformed range: the change cannot be placed */
        if (range && !cJSON_IsNull(range)) {
            size_t start = p2s_lsp_offset(d->text.buf, d->text.len, a);
            size_t end = p2s_lsp_offset(d->text.buf, d->text.len, b);
            if (end < start) {
                size_t t = start;
                start = end;
                end = t;
            }
            d->kept_changes++;
            d->edit_start = start;
            d->edit_old_end = end;
            d->edit_new_end = start + strlen(text);
            p2s_lsp_splice(&d->text, start, end, text, strlen(text), d->tree);
        } else {
            p2s_lsp_doc_forget_kept(d);
            p2s_strbuf_reset(&d->text);
            p2s_strbuf_adds(&d->text, text);
            if (d->tree)
                ts_tree_delete(d->tree);
            d->tree = NULL;
            d->nul = false;
        }
    }
    d->nul = d->nul || s->nul_in_message;
    if (d->nul)
        p2s_lsp_doc_forget_kept(d);
    const cJSON *version = lsp__get(item, "version");
    if (cJSON_IsNumber(version))
        d->version = version->valuedouble;
    d->dirty = true;
}

static void lsp__did_close(P2sLsp *s, const cJSON *params)
{
    const char *uri = lsp__get_string(lsp__get(params, "textDocument"), "uri");
    for (size_t i = 0; uri && i < s->docs.size; i++) {
        P2sLspDoc *d = s->docs.contents[i];
        if (strcmp(d->uri, uri) != 0)
            continue;
        cJSON *clear = cJSON_CreateObject();
        cJSON_AddStringToObject(clear, "uri", d->uri);
        cJSON_AddArrayToObject(clear, "diagnostics");
        p2s_lsp_send(s, p2s_rpc_notification("textDocument/publishDiagnostics", clear));
        p2s_lsp_doc_delete(d);
        memmove(s->docs.contents + i, s->docs.contents + i + 1, (s->docs.size - i - 1) * sizeof *s->docs.contents);
        s->docs.size--;
        return;
    }
}

static void lsp__did_change_configuration(P2sLsp *s, const cJSON *params)
{
    p2s_lsp_settings_read(s, lsp__get(params, "settings"));
    /* Documents point at cached rules: they are placed again before the cache is gone. */
    for (size_t i = 0; i < s->docs.size; i++)
        s->docs.contents[i]->rules = NULL;
    p2s_settings_cache_release(&s->rules);
    for (size_t i = 0; i < s->folders.size; i++)
        p2s_workspace_configure(s->folders.contents[i], &p2s_lsp_settings_for(s, s->folders.contents[i]->root)->config);
    if (s->file_system)
        p2s_lsp_scan_all(s);
    else
        p2s_lsp_place_all(s);
}

static void lsp__did_change_folders(P2sLsp *s, const cJSON *params)
{
    const cJSON *event = lsp__get(params, "event");
    const cJSON *removed = lsp__get(event, "removed"), *added = lsp__get(event, "added");
    for (const cJSON *f = cJSON_IsArray(removed) ? removed->child : NULL; f; f = f->next) {
        char *path = lsp__get_string(f, "uri") ? p2s_lsp_uri_to_path(lsp__get_string(f, "uri")) : NULL;
        for (size_t i = 0; path && i < s->folders.size; i++) {
            P2sWorkspace *ws = s->folders.contents[i];
            if (strcmp(ws->root, path) != 0)
                continue;
            for (size_t k = 0; k < s->docs.size; k++) {
                if (s->docs.contents[k]->ws == ws) {
                    p2s_lsp_doc_drop_analysis(s->docs.contents[k]);
                    s->docs.contents[k]->ws = NULL;
                }
            }
            p2s_workspace_release(ws);
            p2s_free(ws);
            memmove(s->folders.contents + i, s->folders.contents + i + 1, (s->folders.size - i - 1) * sizeof ws);
            s->folders.size--;
            break;
        }
        p2s_free(path);
    }
    for (const cJSON *f = cJSON_IsArray(added) ? added->child : NULL; f; f = f->next)
        if (lsp__get_string(f, "uri") && s->file_system)
            p2s_lsp_add_folder(s, lsp__get_string(f, "uri"));
    p2s_lsp_scan_all(s);
}

/* ---- requests ---- */

static cJSON *lsp__capabilities(void)
{
    cJSON *result = cJSON_CreateObject();
    cJSON *caps = cJSON_AddObjectToObject(result, "capabilities");
    cJSON_AddStringToObject(caps, "positionEncoding", "utf-16");
    cJSON *sync = cJSON_AddObjectToObject(caps, "textDocumentSync");
    cJSON_AddTrueToObject(sync, "openClose");
    cJSON_AddNumberToObject(sync, "change", 2);  /* incremental */
    cJSON_AddFalseToObject(cJSON_AddObjectToObject(sync, "save"), "includeText");
    cJSON_AddTrueToObject(caps, "hoverProvider");
    cJSON_AddTrueToObject(caps, "documentSymbolProvider");
    cJSON *actions = cJSON_AddObjectToObject(caps, "codeActionProvider");
    cJSON *kinds = cJSON_AddArrayToObject(actions, "codeActionKinds");
    cJSON_AddItemToArray(kinds, cJSON_CreateString("quickfix"));
    cJSON_AddItemToArray(kinds, cJSON_CreateString("source"));
    cJSON *commands = cJSON_AddArrayToObject(cJSON_AddObjectToObject(caps, "executeCommandProvider"), "commands");
    cJSON_AddItemToArray(commands, cJSON_CreateString(P2S_LSP_CMD_STATIC_FORM));
    cJSON *folders = cJSON_AddObjectToObject(cJSON_AddObjectToObject(caps, "workspace"), "workspaceFolders");
    cJSON_AddTrueToObject(folders, "supported");
    cJSON_AddTrueToObject(folders, "changeNotifications");
    cJSON *info = cJSON_AddObjectToObject(result, "serverInfo");
    cJSON_AddStringToObject(info, "name", "pylayer2static");
    cJSON_AddStringToObject(info, "version", P2S_VERSION);
    return result;
}

static cJSON *lsp__initialize(P2sLsp *s, const cJSON *params)
{
    p2s_lsp_settings_read(s, lsp__get(params, "initializationOptions"));
    if (s->file_system) {
        const cJSON *folders = lsp__get(params, "workspaceFolders");
        for (const cJSON *f = cJSON_IsArray(folders) ? folders->child : NULL; f; f = f->next)
            if (lsp__get_string(f, "uri"))
                p2s_lsp_add_folder(s, lsp__get_string(f, "uri"));
        const char *root = lsp__get_string(params, "rootUri");
        if (!s->folders.size && root)
            p2s_lsp_add_folder(s, root);
    }
    s->initialized = true;
    return lsp__capabilities();
}

static bool lsp__kind_wanted(const cJSON *only, const char *kind)
{
    if (!cJSON_IsArray(only))
        return true;
    for (const cJSON *k = only->child; k; k = k->next) {
        if (!cJSON_IsString(k))
            continue;
        size_t n = strlen(k->valuestring);
        if (strncmp(kind, k->valuestring, n) == 0 && (kind[n] == '\0' || kind[n] == '.'))
            return true;
    }
    return false;
}

static cJSON *lsp__code_action(P2sLsp *s, const cJSON *params)
{
    P2sLspDoc *d = lsp__param_doc(s, params);
    P2sLspPosition a, b;
    if (!d || d->too_large || !lsp__get_range(lsp__get(params, "range"), &a, &b))
        return cJSON_CreateArray();
    size_t start = p2s_lsp_offset(d->text.buf, d->text.len, a), end = p2s_lsp_offset(d->text.buf, d->text.len, b);
    bool pylayers = d->unit.found.pylayer_count > 0 || d->unit.found.sites.size > 0;
    cJSON *all = p2s_lsp_code_actions(d->uri, &d->src, d->unit.tree, &d->unit.sink, d->rules,
                                      start < end ? start : end, start < end ? end : start, pylayers);
    const cJSON *only = lsp__get(lsp__get(params, "context"), "only");
    cJSON *kept = cJSON_CreateArray();
    while (cJSON_GetArraySize(all) > 0) {
        cJSON *action = cJSON_DetachItemFromArray(all, 0);
        if (lsp__kind_wanted(only, lsp__get_string(action, "kind")))
            cJSON_AddItemToArray(kept, action);
        else
            cJSON_Delete(action);
    }
    cJSON_Delete(all);
    return kept;
}

static const char *lsp__external_summary(void *ctx, const char *qualname)
{
    const P2sWorkspace *ws = ctx;
    return ws ? p2s_workspace_summary(ws, qualname) : NULL;
}

static cJSON *lsp__hover(P2sLsp *s, const cJSON *params)
{
    P2sLspDoc *d = lsp__param_doc(s, params);
    P2sLspPosition pos;
    if (!d || d->too_large || !lsp__get_position(lsp__get(params, "position"), &pos))
        return NULL;
    size_t offset = p2s_lsp_offset(d->text.buf, d->text.len, pos);
    return p2s_lsp_hover(&d->src, &d->unit.found, offset, lsp__external_summary, d->ws);
}

static cJSON *lsp__symbols(P2sLsp *s, const cJSON *params)
{
    P2sLspDoc *d = lsp__param_doc(s, params);
    if (!d || d->too_large)
        return cJSON_CreateArray();
    return p2s_lsp_symbols(&d->src, &d->unit.found);
}

/* workspace/executeCommand: "Show static form" returns the transpiled text of a document. */
static cJSON *lsp__execute(P2sLsp *s, const cJSON *params, const char **error)
{
    const char *command = lsp__get_string(params, "command");
    if (!command || strcmp(command, P2S_LSP_CMD_STATIC_FORM) != 0) {
        *error = "unknown command";
        return NULL;
    }
    const cJSON *args = lsp__get(params, "arguments");
    const cJSON *first = cJSON_IsArray(args) ? args->child : NULL;
    const char *uri = cJSON_IsString(first) ? first->valuestring : lsp__get_string(first, "uri");
    P2sLspDoc *d = uri ? p2s_lsp_doc(s, uri) : NULL;
    if (!d) {
        *error = "the command needs the URI of an open document";
        return NULL;
    }
    p2s_lsp_doc_refresh(s, d);
    if (d->too_large) {
        *error = "the document is too large for the language server";
        return NULL;
    }
    if (!d->full) {  /* the output is made on demand; verification may add a diagnostic */
        size_t linted = d->unit.sink.items.size;
        p2s_lsp_doc_analyze(d, true);
        if (d->unit.sink.items.size != linted)
            p2s_lsp_doc_publish(s, d);
    }
    if (!p2s_transpile_made_output(d->status)) {
        *error = "the document has errors: no static form (see its diagnostics)";
        return NULL;
    }
    return cJSON_CreateString(d->unit.out.buf);
}

/* ---- dispatch ---- */

static void lsp__request(P2sLsp *s, const char *method, const cJSON *id, const cJSON *params)
{
    cJSON *result = NULL;
    const char *failure = NULL;
    if (strcmp(method, "initialize") == 0) {
        if (s->initialized) {
            p2s_lsp_send(s, p2s_rpc_error(id, P2S_RPC_INVALID_REQUEST, "initialize was already received"));
            return;
        }
        result = lsp__initialize(s, params);
    } else if (!s->initialized) {
        p2s_lsp_send(s, p2s_rpc_error(id, P2S_RPC_SERVER_NOT_INITIALIZED, "the server is not initialized yet"));
        return;
    } else if (s->shut_down) {
        p2s_lsp_send(s, p2s_rpc_error(id, P2S_RPC_INVALID_REQUEST, "the server is shut down"));
        return;
    } else if (strcmp(method, "shutdown") == 0) {
        s->shut_down = true;
    } else if (strcmp(method, "textDocument/hover") == 0) {
        result = lsp__hover(s, params);
    } else if (strcmp(method, "textDocument/codeAction") == 0) {
        result = lsp__code_action(s, params);
    } else if (strcmp(method, "textDocument/documentSymbol") == 0) {
        result = lsp__symbols(s, params);
    } else if (strcmp(method, "workspace/executeCommand") == 0) {
        result = lsp__execute(s, params, &failure);
        if (!result) {
            p2s_lsp_send(s, p2s_rpc_error(id, P2S_RPC_INVALID_PARAMS, failure));
            return;
        }
    } else {
        P2sStrbuf text;
        p2s_strbuf_init(&text);
        p2s_strbuf_addf(&text, "method not found: %.200s", method);
        p2s_lsp_send(s, p2s_rpc_error(id, P2S_RPC_METHOD_NOT_FOUND, text.buf));
        p2s_strbuf_release(&text);
        return;
    }
    p2s_lsp_send(s, p2s_rpc_response(id, result));
}

static void lsp__notification(P2sLsp *s, const char *method, const cJSON *params)
{
    if (strcmp(method, "exit") == 0) {
        s->exiting = true;
        return;
    }
    if (!s->initialized || s->shut_down)
        return;  /* notifications before initialize or after shutdown are dropped */
    if (strcmp(method, "initialized") == 0) {
        if (s->file_system)
            p2s_lsp_scan_all(s);
    } else if (strcmp(method, "textDocument/didOpen") == 0) {
        lsp__did_open(s, params);
    } else if (strcmp(method, "textDocument/didChange") == 0) {
        lsp__did_change(s, params);
    } else if (strcmp(method, "textDocument/didSave") == 0) {
        const char *uri = lsp__get_string(lsp__get(params, "textDocument"), "uri");
        P2sLspDoc *d = uri ? p2s_lsp_doc(s, uri) : NULL;
        if (d && s->file_system)
            p2s_lsp_doc_saved(s, d);
    } else if (strcmp(method, "textDocument/didClose") == 0) {
        lsp__did_close(s, params);
    } else if (strcmp(method, "workspace/didChangeConfiguration") == 0) {
        lsp__did_change_configuration(s, params);
    } else if (strcmp(method, "workspace/didChangeWorkspaceFolders") == 0) {
        lsp__did_change_folders(s, params);
    }
    /* Anything else ($/cancelRequest, $/setTrace, unknown methods) needs no answer. */
}

/* A copy of body with each `\u0000` escape made `\u0001` (same length, same UTF-16 units), or
 * NULL when it has none: cJSON strings end at a NUL, so a document's NULs would cut its text. */
static char *lsp__mask_nul_escapes(const char *body, size_t len)
{
    char *copy = NULL;
    for (size_t i = 0; i + 6 <= len; i++) {
        if (body[i] != '\\')
            continue;
        if (memcmp(body + i, "\\u0000", 6) == 0) {
            if (!copy)
                copy = p2s_strndup(body, len);
            copy[i + 5] = '1';
        }
        i++;  /* the escaped character */
    }
    return copy;
}

static void lsp__handle(P2sLsp *s, const char *body, size_t len)
{
    char *masked = lsp__mask_nul_escapes(body, len);
    s->nul_in_message = masked != NULL;
    cJSON *msg = cJSON_ParseWithLength(masked ? masked : body, len);
    p2s_free(masked);
    if (!msg) {
        p2s_lsp_send(s, p2s_rpc_error(NULL, P2S_RPC_PARSE_ERROR, "parse error: the message is not JSON"));
        return;
    }
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(msg, "id");
    const cJSON *method = cJSON_GetObjectItemCaseSensitive(msg, "method");
    const cJSON *params = cJSON_GetObjectItemCaseSensitive(msg, "params");
    bool id_ok = !id || cJSON_IsNumber(id) || cJSON_IsString(id) || cJSON_IsNull(id);
    if (!cJSON_IsObject(msg) || !id_ok || (params && !cJSON_IsObject(params) && !cJSON_IsArray(params))) {
        p2s_lsp_send(s, p2s_rpc_error(id_ok ? id : NULL, P2S_RPC_INVALID_REQUEST, "invalid request"));
    } else if (!method && id && (cJSON_HasObjectItem(msg, "result") || cJSON_HasObjectItem(msg, "error"))) {
        /* a response to a request of ours: the server sends none it waits for */
    } else if (!cJSON_IsString(method)) {
        p2s_lsp_send(s, p2s_rpc_error(id, P2S_RPC_INVALID_REQUEST, "invalid request: no method"));
    } else if (id && !cJSON_IsNull(id)) {
        lsp__request(s, method->valuestring, id, params);
    } else {
        lsp__notification(s, method->valuestring, params);
    }
    cJSON_Delete(msg);
}

/* ---- the server value ---- */

P2sLsp *p2s_lsp_new(const P2sLspOptions *opts)
{
    P2sLsp *s = p2s_calloc(1, sizeof *s);
    s->file_system = opts->file_system;
    s->settings.no_config = !opts->file_system;  /* until the client's settings are read */
    p2s_rpc_framer_init(&s->framer);
    p2s_strbuf_init(&s->out);
    return s;
}

void p2s_lsp_delete(P2sLsp *s)
{
    for (size_t i = 0; i < s->docs.size; i++)
        p2s_lsp_doc_delete(s->docs.contents[i]);
    array_delete(&s->docs);
    for (size_t i = 0; i < s->folders.size; i++) {
        p2s_workspace_release(s->folders.contents[i]);
        p2s_free(s->folders.contents[i]);
    }
    array_delete(&s->folders);
    p2s_settings_cache_release(&s->rules);
    p2s_settings_release(&s->settings);
    p2s_rpc_framer_release(&s->framer);
    p2s_strbuf_release(&s->out);
    p2s_free(s);
}

bool p2s_lsp_feed(P2sLsp *s, const char *bytes, size_t n)
{
    p2s_rpc_framer_feed(&s->framer, bytes, n);
    while (!s->exiting) {
        const char *body;
        size_t len;
        P2sRpcEvent ev = p2s_rpc_framer_next(&s->framer, &body, &len);
        if (ev == P2S_RPC_NEED_MORE)
            break;
        if (ev == P2S_RPC_MESSAGE)
            lsp__handle(s, body, len);
        else if (ev == P2S_RPC_BAD_HEADER)
            p2s_lsp_send(s, p2s_rpc_error(NULL, P2S_RPC_PARSE_ERROR, "malformed header: expected `Content-Length: N` and a blank line"));
        else
            p2s_lsp_send(s, p2s_rpc_error(NULL, P2S_RPC_INVALID_REQUEST, "message larger than 64 MiB: dropped"));
    }
    return !s->exiting;
}

bool p2s_lsp_pending(const P2sLsp *s)
{
    for (size_t i = 0; i < s->docs.size; i++)
        if (s->docs.contents[i]->dirty)
            return true;
    return false;
}

void p2s_lsp_idle(P2sLsp *s)
{
    for (size_t i = 0; i < s->docs.size; i++)
        if (s->docs.contents[i]->dirty)
            p2s_lsp_doc_refresh(s, s->docs.contents[i]);
}

P2sStrbuf *p2s_lsp_output(P2sLsp *s)
{
    return &s->out;
}

int p2s_lsp_exit_status(const P2sLsp *s)
{
    return s->shut_down ? 0 : 1;
}

/* ---- the stdio loop ---- */

static int lsp__flush(P2sLsp *s)
{
    int rc = p2s_rpc_write_all(STDOUT_FILENO, s->out.buf, s->out.len);
    p2s_strbuf_reset(&s->out);
    return rc;
}

int p2s_lsp_main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--stdio") == 0)
            continue;
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            printf("usage: pylayer2static lsp [--stdio]\n\n"
                   "Runs the language server (LSP 3.17) on standard input and output. Setup for\n"
                   "Neovim, VS Code, Helix and Emacs: docs/CI_AND_EDITORS.md.\n");
            return 0;
        }
        fprintf(stderr, "pylayer2static: error: lsp: unrecognized argument '%s'\n"
                        "usage: pylayer2static lsp [--stdio]\n", argv[i]);
        return 2;
    }
    P2sLspOptions opts = {true};
    P2sLsp *s = p2s_lsp_new(&opts);
    int rounds = 0, code;
    for (;;) {
        bool go_on = p2s_lsp_feed(s, NULL, 0);
        if (lsp__flush(s) < 0 || !go_on)
            break;
        if (p2s_lsp_pending(s)) {
            struct pollfd in = {STDIN_FILENO, POLLIN, 0};
            if (rounds >= LSP_COALESCE_ROUNDS || poll(&in, 1, 0) <= 0) {
                p2s_lsp_idle(s);
                rounds = 0;
                if (lsp__flush(s) < 0)
                    break;
                continue;
            }
            rounds++;
        }
        if (p2s_rpc_framer_fill(&s->framer, STDIN_FILENO) <= 0)
            break;  /* the client is gone (end of input) or the pipe broke */
    }
    code = p2s_lsp_exit_status(s);
    p2s_lsp_delete(s);
    return code;
}
