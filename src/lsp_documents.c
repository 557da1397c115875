/* lsp_documents.c — the language server's open documents and the workspace folders they
 * belong to: a document's text, tree and last analysis (the CLI's pipeline over the text, or
 * after one edit that cannot change them the previous diagnostics, lsp_reuse.h), published
 * when they change; each folder's index (lsp_workspace.h), built again when the settings, the
 * folders or a saved module's exports change. */
#include "lsp_documents.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "lsp_features.h"
#include "lsp_settings.h"
#include "lsp_text.h"

static char *docs__dirname(const char *path)
{
    const char *slash = path ? strrchr(path, '/') : NULL;
    if (!slash)
        return NULL;
    return p2s_strndup(path, slash == path ? 1 : (size_t)(slash - path));
}

/* ---- documents ---- */

void p2s_lsp_doc_drop_analysis(P2sLspDoc *d)
{
    if (!d->analyzed)
        return;
    p2s_unit_release(&d->unit);
    p2s_source_release(&d->src);
    p2s_free(d->nul_copy);
    d->nul_copy = NULL;
    d->analyzed = false;
    d->too_large = false;
}

void p2s_lsp_doc_forget_kept(P2sLspDoc *d)
{
    if (d->kept)
        p2s_unit_release(&d->kept_unit);
    d->kept = false;
}

void p2s_lsp_doc_delete(P2sLspDoc *d)
{
    p2s_lsp_doc_drop_analysis(d);
    p2s_lsp_doc_forget_kept(d);
    p2s_lsp_facts_release(&d->facts);
    p2s_strbuf_release(&d->kept_text);
    if (d->tree)
        ts_tree_delete(d->tree);
    p2s_strbuf_release(&d->text);
    p2s_free(d->uri);
    p2s_free(d->path);
    p2s_free(d->module);
    p2s_free(d);
}

P2sLspDoc *p2s_lsp_doc(P2sLsp *s, const char *uri)
{
    for (size_t i = 0; i < s->docs.size; i++)
        if (strcmp(s->docs.contents[i]->uri, uri) == 0)
            return s->docs.contents[i];
    return NULL;
}

void p2s_lsp_doc_place(P2sLsp *s, P2sLspDoc *d)
{
    p2s_lsp_doc_forget_kept(d);
    p2s_free(d->module);
    d->module = NULL;
    d->ws = NULL;
    size_t best = 0;
    for (size_t i = 0; d->path && i < s->folders.size; i++) {
        P2sWorkspace *ws = s->folders.contents[i];
        size_t n = strlen(ws->root);
        if (p2s_workspace_contains(ws, d->path) && n >= best) {
            d->ws = ws;
            best = n;
        }
    }
    if (d->ws)
        d->module = p2s_workspace_module_name(d->ws, d->path, &d->is_package);
    char *dir = docs__dirname(d->path);
    d->rules = &p2s_lsp_settings_for(s, dir)->rules;
    p2s_free(dir);
}

/* P2S_LSP_CHECK_REUSE=1 (the tests): every kept result is compared with a full analysis of the
 * same text, and a difference aborts the server. */
static void docs__check_kept(const P2sLspDoc *d)
{
    const char *env = getenv("P2S_LSP_CHECK_REUSE");
    if (!env || strcmp(env, "1") != 0)
        return;
    P2sUnit unit;
    p2s_unit_init(&unit, &d->src);
    unit.lint_only = true;
    P2sTranspileStatus status = p2s_unit_parse(&unit);
    if (status == P2S_TRANSPILE_OK) {
        P2sModule module = {d->module, d->is_package, d->ws ? &d->ws->external : NULL, P2S_READ_ALL};
        p2s_unit_find(&unit, d->rules, d->module ? &module : NULL);
        status = p2s_unit_finish(&unit, d->rules);
    }
    bool same = status == d->status && p2s_lsp_same_diagnostics(&unit.sink, &d->unit.sink);
    p2s_unit_release(&unit);
    fprintf(stderr, "pylayer2static lsp: kept the diagnostics of %s\n", d->uri);
    if (!same) {
        fprintf(stderr, "pylayer2static lsp: kept diagnostics differ from a full analysis (edit %zu..%zu -> %zu)\n",
                d->edit_start, d->edit_old_end, d->edit_new_end);
        abort();
    }
}

/* After the reparse of a lint analysis: the previous diagnostics, shifted, when the one edit
 * since cannot change them (lsp_reuse.h). edited is the previous tree told of the edit (NULL:
 * the text was parsed anew). */
static bool docs__keep_diagnostics(P2sLspDoc *d, const TSTree *edited)
{
    if (!d->kept || d->kept_changes != 1 || !edited || d->unit.sink.items.size > 0 || !d->unit.tree ||
        !d->kept_unit.tree || d->nul)
        return false;
    P2sLspEdit edit = {d->kept_text.buf, d->kept_text.len, d->kept_unit.tree, &d->kept_unit.sink,
                       d->edit_start, d->edit_old_end, d->edit_new_end};
    if (!p2s_lsp_reuse(&edit, &d->src, d->unit.tree, &d->facts, &d->unit.sink))
        return false;
    d->status = d->kept_status;
    docs__check_kept(d);
    return true;
}

void p2s_lsp_doc_analyze(P2sLspDoc *d, bool full)
{
    p2s_lsp_doc_drop_analysis(d);
    d->analyzed = true;
    d->full = full;
    if (d->text.len > P2S_LSP_MAX_DOC) {
        p2s_lsp_doc_forget_kept(d);
        d->too_large = true;
        if (d->tree)
            ts_tree_delete(d->tree);
        d->tree = NULL;
        return;
    }
    const char *bytes = d->text.buf;
    if (d->nul && !memchr(d->text.buf, 0x01, d->text.len))
        d->nul = false;
    if (d->nul) {  /* the NULs the client sent, where the text keeps them as 0x01 */
        d->nul_copy = p2s_strndup(d->text.buf, d->text.len);
        for (char *p = d->nul_copy; (p = memchr(p, 0x01, d->text.len - (size_t)(p - d->nul_copy))); p++)
            *p = '\0';
        bytes = d->nul_copy;
    }
    p2s_source_view(&d->src, d->path ? d->path : d->uri, bytes, d->text.len);
    p2s_unit_init(&d->unit, &d->src);
    d->unit.lint_only = !full;
    TSTree *tree = NULL, *edited = d->tree;
    d->status = p2s_unit_reparse(&d->unit, edited, &tree);
    d->tree = tree;
    d->stale_findings = false;
    if (d->status == P2S_TRANSPILE_OK && !full && docs__keep_diagnostics(d, edited)) {
        d->stale_findings = true;
    } else if (d->status == P2S_TRANSPILE_OK) {
        P2sModule module = {d->module, d->is_package, d->ws ? &d->ws->external : NULL, P2S_READ_ALL};
        p2s_unit_find(&d->unit, d->rules, d->module ? &module : NULL);
        d->status = p2s_unit_finish(&d->unit, d->rules);
    }
    if (!d->stale_findings && p2s_transpile_made_output(d->status) && d->unit.tree)
        p2s_lsp_facts_set(&d->facts, &d->unit.found);
    else if (!d->stale_findings)
        p2s_lsp_facts_release(&d->facts);
    if (edited)
        ts_tree_delete(edited);
    p2s_lsp_doc_forget_kept(d);
}

void p2s_lsp_doc_need_findings(P2sLspDoc *d)
{
    if (d->analyzed && d->stale_findings && !d->too_large)
        p2s_lsp_doc_analyze(d, d->full);
}

void p2s_lsp_doc_publish(P2sLsp *s, P2sLspDoc *d)
{
    cJSON *params = cJSON_CreateObject();
    cJSON_AddStringToObject(params, "uri", d->uri);
    cJSON_AddNumberToObject(params, "version", d->version);
    cJSON *diags;
    if (d->too_large) {
        diags = cJSON_CreateArray();
        cJSON *diag = cJSON_CreateObject();
        P2sSource empty;
        p2s_source_view(&empty, "", "", 0);
        cJSON_AddItemToObject(diag, "range", p2s_lsp_range(&empty, 0, 0));
        p2s_source_release(&empty);
        cJSON_AddNumberToObject(diag, "severity", 3);
        cJSON_AddStringToObject(diag, "source", P2S_LSP_SOURCE);
        cJSON_AddStringToObject(diag, "message", "the document is larger than 16 MiB: not analyzed by the language server (the command line still checks it)");
        cJSON_AddItemToArray(diags, diag);
    } else {
        diags = p2s_lsp_diagnostics(&d->src, &d->unit.sink);
    }
    cJSON_AddItemToObject(params, "diagnostics", diags);
    p2s_lsp_send(s, p2s_rpc_notification("textDocument/publishDiagnostics", params));
}

void p2s_lsp_doc_refresh(P2sLsp *s, P2sLspDoc *d)
{
    if (!d->dirty && d->analyzed)
        return;
    p2s_lsp_doc_analyze(d, false);
    p2s_lsp_doc_publish(s, d);
    d->dirty = false;
}

void p2s_lsp_doc_keep_or_drop(P2sLspDoc *d)
{
    if (!d->analyzed)
        return;
    bool keep = !d->dirty && !d->full && !d->too_large && !d->nul && d->facts.valid &&
                p2s_transpile_made_output(d->status) && d->unit.tree;
    p2s_lsp_doc_forget_kept(d);
    if (!keep) {
        p2s_lsp_doc_drop_analysis(d);
        return;
    }
    p2s_strbuf_reset(&d->kept_text);
    p2s_strbuf_add(&d->kept_text, d->text.buf, d->text.len);
    d->kept_unit = d->unit;          /* moved: its src (a view of text) is not read again */
    memset(&d->unit, 0, sizeof d->unit);
    d->kept_status = d->status;
    d->kept = true;
    d->kept_changes = 0;
    p2s_source_release(&d->src);
    d->analyzed = false;
}

/* ---- workspace folders ---- */

static const char *docs__overlay(void *ctx, const char *path, size_t *len)
{
    P2sLsp *s = ctx;
    for (size_t i = 0; i < s->docs.size; i++) {
        P2sLspDoc *d = s->docs.contents[i];
        if (d->path && strcmp(d->path, path) == 0) {
            *len = d->text.len;
            return d->text.buf;
        }
    }
    return NULL;
}

static void docs__scan(P2sLsp *s, P2sWorkspace *ws)
{
    P2sStrbuf text;
    p2s_strbuf_init(&text);
    p2s_workspace_scan(ws, &p2s_lsp_settings_for(s, ws->root)->rules, docs__overlay, s);
    p2s_strbuf_addf(&text, "pylayer2static: indexed %zu modules in %s", ws->modules.size, ws->root);
    if (ws->skipped)
        p2s_strbuf_addf(&text, " (%zu files skipped: over %d files or %zu MiB each)", ws->skipped,
                        P2S_WS_MAX_FILES, P2S_WS_MAX_FILE >> 20);
    p2s_lsp_message(s, "window/logMessage", 4, text.buf);
    p2s_strbuf_release(&text);
    for (size_t i = 0; i < s->docs.size; i++) {
        if (s->docs.contents[i]->ws == ws) {
            s->docs.contents[i]->dirty = true;
            p2s_lsp_doc_forget_kept(s->docs.contents[i]);
        }
    }
}

void p2s_lsp_add_folder(P2sLsp *s, const char *uri)
{
    char *path = p2s_lsp_uri_to_path(uri);
    if (!path)
        return;
    for (size_t i = 0; i < s->folders.size; i++)
        if (strcmp(s->folders.contents[i]->root, path) == 0) {
            p2s_free(path);
            return;
        }
    P2sWorkspace *ws = p2s_malloc(sizeof *ws);
    p2s_workspace_init(ws, path, &p2s_lsp_settings_for(s, path)->config);
    array_push(&s->folders, ws);
    p2s_free(path);
}

void p2s_lsp_place_all(P2sLsp *s)
{
    for (size_t i = 0; i < s->docs.size; i++) {
        p2s_lsp_doc_place(s, s->docs.contents[i]);
        s->docs.contents[i]->dirty = true;
    }
}

void p2s_lsp_scan_all(P2sLsp *s)
{
    p2s_lsp_place_all(s);
    for (size_t i = 0; i < s->folders.size; i++)
        docs__scan(s, s->folders.contents[i]);
}

void p2s_lsp_doc_saved(P2sLsp *s, P2sLspDoc *d)
{
    if (!d->ws || !d->module)
        return;
    p2s_lsp_doc_refresh(s, d);
    p2s_lsp_doc_need_findings(d);
    if (d->too_large || d->status == P2S_TRANSPILE_INPUT_ERROR || !d->unit.tree)
        return;
    if (p2s_workspace_exports_current(p2s_workspace_module(d->ws, d->path), &d->unit.found))
        return;
    docs__scan(s, d->ws);
}
