/* lsp.c — the language server: documents, configuration, dispatch and the stdio loop. */
#include "lsp.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc.h"
#include "config.h"
#include "jsonrpc.h"
#include "lsp_features.h"
#include "lsp_reuse.h"
#include "lsp_text.h"
#include "lsp_workspace.h"
#include "rules.h"
#include "settings.h"
#include "transpile.h"
#include "version.h"

#define LSP_COALESCE_ROUNDS 16   /* reads in a row before pending diagnostics are published anyway */

/* One open document and its last analysis. The analysis (src, unit) views text: it is dropped
 * before text changes. */
typedef struct {
    char *uri;
    char *path;                 /* NULL for a URI that is no file (untitled:) */
    double version;
    P2sStrbuf text;
    TSTree *tree;               /* the last parse, told of every edit since; NULL: parse anew */
    bool dirty;                 /* changed since its diagnostics were published */
    const P2sRules *rules;
    P2sWorkspace *ws;           /* the folder it belongs to, or NULL */
    char *module;               /* its module name in ws */
    bool is_package;
    bool nul;                   /* text may hold NUL bytes, received as \u0000 and kept as 0x01
                                   (cJSON strings end at a NUL): analyzed as NULs */
    char *nul_copy;             /* the analyzed bytes when nul: text with 0x01 as NUL */
    bool analyzed;              /* src and unit hold the analysis of text */
    bool full;                  /* ... with the output made and verified (not only linted) */
    bool too_large;
    P2sSource src;
    P2sUnit unit;
    P2sTranspileStatus status;
    bool stale_findings;        /* diagnostics kept across an edit (lsp_reuse.h): unit.found is
                                   empty, and a request that reads it analyzes in full first */
    P2sLspFacts facts;          /* of the last full analysis, shifted across kept edits */
    /* The analysis of the text before the pending changes, kept by didChange so that the next
     * analysis may keep its diagnostics (one ranged change only; anything else forgets it). Its
     * unit's src is not read: kept_text holds those bytes. */
    bool kept;
    size_t kept_changes;
    size_t edit_start, edit_old_end, edit_new_end;
    P2sStrbuf kept_text;
    P2sUnit kept_unit;
    P2sTranspileStatus kept_status;
} LspDoc;

struct P2sLsp {
    P2sLspOptions opts;
    P2sRpcFramer framer;
    P2sStrbuf out;
    bool initialized, shut_down, exiting;
    bool nul_in_message;        /* the message being handled had \u0000 escapes */
    Array(LspDoc *) docs;
    Array(P2sWorkspace *) folders;
    P2sSettingsCache rules;     /* per configuration file: the rules of the documents below it
                                   and the configuration of the workspace folders it serves */
    P2sSettings settings;       /* the client's, in the command line's terms */
};

/* ---- output ---- */

static void lsp__send(P2sLsp *s, cJSON *msg)
{
    p2s_rpc_frame_json(&s->out, msg);
    cJSON_Delete(msg);
}

static void lsp__message(P2sLsp *s, const char *method, int type, const char *text)
{
    cJSON *params = cJSON_CreateObject();
    cJSON_AddNumberToObject(params, "type", type);
    cJSON_AddStringToObject(params, "message", text);
    lsp__send(s, p2s_rpc_notification(method, params));
}

/* ---- settings and rules ---- */

/* A string or an array of strings, appended to out; true when the key was given. */
static bool lsp__strings(const cJSON *obj, const char *key, P2sStrings *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (cJSON_IsString(v)) {
        array_push(out, p2s_strdup(v->valuestring));
        return true;
    }
    if (!cJSON_IsArray(v))
        return false;
    for (const cJSON *item = v->child; item; item = item->next)
        if (cJSON_IsString(item))
            array_push(out, p2s_strdup(item->valuestring));
    return true;
}

/* Reads settings: `{"pylayer2static": {...}}` or the inner object itself, with the keys rules,
 * select, ignore, warn (strings or arrays of strings), config (a path), noConfig (a bool).
 * Without a file system no file is read: neither rules files nor a configuration. */
static void lsp__settings_read(P2sLsp *s, const cJSON *settings)
{
    P2sSettings *st = &s->settings;
    p2s_settings_release(st);
    st->no_config = !s->opts.file_system;
    if (!cJSON_IsObject(settings))
        return;
    const cJSON *inner = cJSON_GetObjectItemCaseSensitive(settings, "pylayer2static");
    if (cJSON_IsObject(inner))
        settings = inner;
    if (s->opts.file_system)
        lsp__strings(settings, "rules", &st->rules_files);
    st->select_given = lsp__strings(settings, "select", &st->select);
    lsp__strings(settings, "ignore", &st->ignore);
    lsp__strings(settings, "warn", &st->warn);
    const cJSON *config = cJSON_GetObjectItemCaseSensitive(settings, "config");
    if (cJSON_IsString(config) && config->valuestring[0])
        st->config = p2s_strdup(config->valuestring);
    st->no_config |= cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(settings, "noConfig"));
}

/* The settings for documents and folders in dir (NULL: no directory, e.g. an untitled buffer),
 * cached per configuration file: the one the client names (`config`), none (`noConfig`), else
 * the nearest. A broken configuration is shown once, and the built-in rules and no configuration
 * used. */
static const P2sFileSettings *lsp__settings_for(P2sLsp *s, const char *dir)
{
    char *path = p2s_settings_config_path(&s->settings, dir);
    const P2sFileSettings *r;
    P2sStrbuf err;
    p2s_strbuf_init(&err);
    if (p2s_settings_for(&s->settings, &s->rules, path, &r, &err) < 0) {
        P2sStrbuf text;
        p2s_strbuf_init(&text);
        p2s_strbuf_addf(&text, "pylayer2static: %s (using the built-in rules)", err.buf);
        lsp__message(s, "window/showMessage", 1, text.buf);
        p2s_strbuf_release(&text);
    }
    p2s_strbuf_release(&err);
    p2s_free(path);
    return r;
}

static char *lsp__dirname(const char *path)
{
    const char *slash = path ? strrchr(path, '/') : NULL;
    if (!slash)
        return NULL;
    return p2s_strndup(path, slash == path ? 1 : (size_t)(slash - path));
}

/* ---- documents ---- */

static void lsp__drop_analysis(LspDoc *d)
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

static void lsp__forget_kept(LspDoc *d)
{
    if (d->kept)
        p2s_unit_release(&d->kept_unit);
    d->kept = false;
}

static void lsp__doc_delete(LspDoc *d)
{
    lsp__drop_analysis(d);
    lsp__forget_kept(d);
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

static LspDoc *lsp__doc(P2sLsp *s, const char *uri)
{
    for (size_t i = 0; i < s->docs.size; i++)
        if (strcmp(s->docs.contents[i]->uri, uri) == 0)
            return s->docs.contents[i];
    return NULL;
}

/* Where a document belongs: its folder (the deepest that contains it), module and rules. */
static void lsp__place(P2sLsp *s, LspDoc *d)
{
    lsp__forget_kept(d);
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
    char *dir = lsp__dirname(d->path);
    d->rules = &lsp__settings_for(s, dir)->rules;
    p2s_free(dir);
}

/* P2S_LSP_CHECK_REUSE=1 (the tests): every kept result is compared with a full analysis of the
 * same text, and a difference aborts the server. */
static void lsp__check_kept(const LspDoc *d)
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
static bool lsp__keep_diagnostics(LspDoc *d, const TSTree *edited)
{
    if (!d->kept || d->kept_changes != 1 || !edited || d->unit.sink.items.size > 0 || !d->unit.tree ||
        !d->kept_unit.tree || d->nul)
        return false;
    P2sLspEdit edit = {d->kept_text.buf, d->kept_text.len, d->kept_unit.tree, &d->kept_unit.sink,
                       d->edit_start, d->edit_old_end, d->edit_new_end};
    if (!p2s_lsp_reuse(&edit, &d->src, d->unit.tree, &d->facts, &d->unit.sink))
        return false;
    d->status = d->kept_status;
    lsp__check_kept(d);
    return true;
}

/* Runs the CLI's pipeline over the document: reparse from the edited tree, find, then check and
 * plan (lint only: the diagnostics) or the whole of finish (full: the output, verified); or,
 * after one edit that cannot change them, the previous diagnostics (lsp__keep_diagnostics). */
static void lsp__analyze(LspDoc *d, bool full)
{
    lsp__drop_analysis(d);
    d->analyzed = true;
    d->full = full;
    if (d->text.len > P2S_LSP_MAX_DOC) {
        lsp__forget_kept(d);
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
    if (d->status == P2S_TRANSPILE_OK && !full && lsp__keep_diagnostics(d, edited)) {
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
    lsp__forget_kept(d);
}

/* Requests read the findings: after kept diagnostics they are made (the diagnostics are the
 * same, so nothing is published again). */
static void lsp__need_findings(LspDoc *d)
{
    if (d->analyzed && d->stale_findings && !d->too_large)
        lsp__analyze(d, d->full);
}

static void lsp__publish(P2sLsp *s, LspDoc *d)
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
    lsp__send(s, p2s_rpc_notification("textDocument/publishDiagnostics", params));
}

/* Brings a document's analysis up to date, publishing its diagnostics when they changed. */
static void lsp__refresh(P2sLsp *s, LspDoc *d)
{
    if (!d->dirty && d->analyzed)
        return;
    lsp__analyze(d, false);
    lsp__publish(s, d);
    d->dirty = false;
}

/* ---- workspace folders ---- */

static const char *lsp__overlay(void *ctx, const char *path, size_t *len)
{
    P2sLsp *s = ctx;
    for (size_t i = 0; i < s->docs.size; i++) {
        LspDoc *d = s->docs.contents[i];
        if (d->path && strcmp(d->path, path) == 0) {
            *len = d->text.len;
            return d->text.buf;
        }
    }
    return NULL;
}

static void lsp__scan(P2sLsp *s, P2sWorkspace *ws)
{
    P2sStrbuf text;
    p2s_strbuf_init(&text);
    p2s_workspace_scan(ws, &lsp__settings_for(s, ws->root)->rules, lsp__overlay, s);
    p2s_strbuf_addf(&text, "pylayer2static: indexed %zu modules in %s", ws->modules.size, ws->root);
    if (ws->skipped)
        p2s_strbuf_addf(&text, " (%zu files skipped: over %d files or %zu MiB each)", ws->skipped,
                        P2S_WS_MAX_FILES, P2S_WS_MAX_FILE >> 20);
    lsp__message(s, "window/logMessage", 4, text.buf);
    p2s_strbuf_release(&text);
    for (size_t i = 0; i < s->docs.size; i++) {
        if (s->docs.contents[i]->ws == ws) {
            s->docs.contents[i]->dirty = true;
            lsp__forget_kept(s->docs.contents[i]);
        }
    }
}

static void lsp__add_folder(P2sLsp *s, const char *uri)
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
    p2s_workspace_init(ws, path, &lsp__settings_for(s, path)->config);
    array_push(&s->folders, ws);
    p2s_free(path);
}

static void lsp__place_all(P2sLsp *s)
{
    for (size_t i = 0; i < s->docs.size; i++) {
        lsp__place(s, s->docs.contents[i]);
        s->docs.contents[i]->dirty = true;
    }
}

static void lsp__scan_all(P2sLsp *s)
{
    lsp__place_all(s);
    for (size_t i = 0; i < s->folders.size; i++)
        lsp__scan(s, s->folders.contents[i]);
}

/* After a save: when the module's exported PyLayers (or their forward signatures) differ from
 * the index, the folder is indexed again (other open documents may resolve or bind differently
 * now). */
static void lsp__saved(P2sLsp *s, LspDoc *d)
{
    if (!d->ws || !d->module)
        return;
    lsp__refresh(s, d);
    lsp__need_findings(d);
    if (d->too_large || d->status == P2S_TRANSPILE_INPUT_ERROR || !d->unit.tree)
        return;
    if (p2s_workspace_exports_current(p2s_workspace_module(d->ws, d->path), &d->unit.found))
        return;
    lsp__scan(s, d->ws);
}

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
static LspDoc *lsp__param_doc(P2sLsp *s, const cJSON *params)
{
    const char *uri = lsp__get_string(lsp__get(params, "textDocument"), "uri");
    LspDoc *d = uri ? lsp__doc(s, uri) : NULL;
    if (d) {
        lsp__refresh(s, d);
        lsp__need_findings(d);
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
    LspDoc *d = lsp__doc(s, uri);
    if (!d) {
        d = p2s_calloc(1, sizeof *d);
        p2s_strbuf_init(&d->text);
        d->uri = p2s_strdup(uri);
        d->path = p2s_lsp_uri_to_path(uri);
        array_push(&s->docs, d);
        lsp__place(s, d);
    }
    lsp__drop_analysis(d);
    lsp__forget_kept(d);
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

/* Before the text changes: an up-to-date lint analysis is kept (lsp__keep_diagnostics may reuse
 * it), any other dropped. */
static void lsp__keep_or_drop(LspDoc *d)
{
    if (!d->analyzed)
        return;
    bool keep = !d->dirty && !d->full && !d->too_large && !d->nul && d->facts.valid &&
                p2s_transpile_made_output(d->status) && d->unit.tree;
    lsp__forget_kept(d);
    if (!keep) {
        lsp__drop_analysis(d);
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

static void lsp__did_change(P2sLsp *s, const cJSON *params)
{
    const cJSON *item = lsp__get(params, "textDocument");
    const char *uri = lsp__get_string(item, "uri");
    const cJSON *changes = lsp__get(params, "contentChanges");
    LspDoc *d = uri ? lsp__doc(s, uri) : NULL;
    if (!d || !cJSON_IsArray(changes))
        return;
    lsp__keep_or_drop(d);
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
            lsp__forget_kept(d);
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
        lsp__forget_kept(d);
    const cJSON *version = lsp__get(item, "version");
    if (cJSON_IsNumber(version))
        d->version = version->valuedouble;
    d->dirty = true;
}

static void lsp__did_close(P2sLsp *s, const cJSON *params)
{
    const char *uri = lsp__get_string(lsp__get(params, "textDocument"), "uri");
    for (size_t i = 0; uri && i < s->docs.size; i++) {
        LspDoc *d = s->docs.contents[i];
        if (strcmp(d->uri, uri) != 0)
            continue;
        cJSON *clear = cJSON_CreateObject();
        cJSON_AddStringToObject(clear, "uri", d->uri);
        cJSON_AddArrayToObject(clear, "diagnostics");
        lsp__send(s, p2s_rpc_notification("textDocument/publishDiagnostics", clear));
        lsp__doc_delete(d);
        memmove(s->docs.contents + i, s->docs.contents + i + 1, (s->docs.size - i - 1) * sizeof *s->docs.contents);
        s->docs.size--;
        return;
    }
}

static void lsp__did_change_configuration(P2sLsp *s, const cJSON *params)
{
    lsp__settings_read(s, lsp__get(params, "settings"));
    /* Documents point at cached rules: they are placed again before the cache is gone. */
    for (size_t i = 0; i < s->docs.size; i++)
        s->docs.contents[i]->rules = NULL;
    p2s_settings_cache_release(&s->rules);
    for (size_t i = 0; i < s->folders.size; i++)
        p2s_workspace_configure(s->folders.contents[i], &lsp__settings_for(s, s->folders.contents[i]->root)->config);
    if (s->opts.file_system)
        lsp__scan_all(s);
    else
        lsp__place_all(s);
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
                    lsp__drop_analysis(s->docs.contents[k]);
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
        if (lsp__get_string(f, "uri") && s->opts.file_system)
            lsp__add_folder(s, lsp__get_string(f, "uri"));
    lsp__scan_all(s);
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
    lsp__settings_read(s, lsp__get(params, "initializationOptions"));
    if (s->opts.file_system) {
        const cJSON *folders = lsp__get(params, "workspaceFolders");
        for (const cJSON *f = cJSON_IsArray(folders) ? folders->child : NULL; f; f = f->next)
            if (lsp__get_string(f, "uri"))
                lsp__add_folder(s, lsp__get_string(f, "uri"));
        const char *root = lsp__get_string(params, "rootUri");
        if (!s->folders.size && root)
            lsp__add_folder(s, root);
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
    LspDoc *d = lsp__param_doc(s, params);
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
    LspDoc *d = lsp__param_doc(s, params);
    P2sLspPosition pos;
    if (!d || d->too_large || !lsp__get_position(lsp__get(params, "position"), &pos))
        return NULL;
    size_t offset = p2s_lsp_offset(d->text.buf, d->text.len, pos);
    return p2s_lsp_hover(&d->src, &d->unit.found, offset, lsp__external_summary, d->ws);
}

static cJSON *lsp__symbols(P2sLsp *s, const cJSON *params)
{
    LspDoc *d = lsp__param_doc(s, params);
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
    LspDoc *d = uri ? lsp__doc(s, uri) : NULL;
    if (!d) {
        *error = "the command needs the URI of an open document";
        return NULL;
    }
    lsp__refresh(s, d);
    if (d->too_large) {
        *error = "the document is too large for the language server";
        return NULL;
    }
    if (!d->full) {  /* the output is made on demand; verification may add a diagnostic */
        size_t linted = d->unit.sink.items.size;
        lsp__analyze(d, true);
        if (d->unit.sink.items.size != linted)
            lsp__publish(s, d);
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
            lsp__send(s, p2s_rpc_error(id, P2S_RPC_INVALID_REQUEST, "initialize was already received"));
            return;
        }
        result = lsp__initialize(s, params);
    } else if (!s->initialized) {
        lsp__send(s, p2s_rpc_error(id, P2S_RPC_SERVER_NOT_INITIALIZED, "the server is not initialized yet"));
        return;
    } else if (s->shut_down) {
        lsp__send(s, p2s_rpc_error(id, P2S_RPC_INVALID_REQUEST, "the server is shut down"));
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
            lsp__send(s, p2s_rpc_error(id, P2S_RPC_INVALID_PARAMS, failure));
            return;
        }
    } else {
        P2sStrbuf text;
        p2s_strbuf_init(&text);
        p2s_strbuf_addf(&text, "method not found: %.200s", method);
        lsp__send(s, p2s_rpc_error(id, P2S_RPC_METHOD_NOT_FOUND, text.buf));
        p2s_strbuf_release(&text);
        return;
    }
    lsp__send(s, p2s_rpc_response(id, result));
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
        if (s->opts.file_system)
            lsp__scan_all(s);
    } else if (strcmp(method, "textDocument/didOpen") == 0) {
        lsp__did_open(s, params);
    } else if (strcmp(method, "textDocument/didChange") == 0) {
        lsp__did_change(s, params);
    } else if (strcmp(method, "textDocument/didSave") == 0) {
        const char *uri = lsp__get_string(lsp__get(params, "textDocument"), "uri");
        LspDoc *d = uri ? lsp__doc(s, uri) : NULL;
        if (d && s->opts.file_system)
            lsp__saved(s, d);
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
        lsp__send(s, p2s_rpc_error(NULL, P2S_RPC_PARSE_ERROR, "parse error: the message is not JSON"));
        return;
    }
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(msg, "id");
    const cJSON *method = cJSON_GetObjectItemCaseSensitive(msg, "method");
    const cJSON *params = cJSON_GetObjectItemCaseSensitive(msg, "params");
    bool id_ok = !id || cJSON_IsNumber(id) || cJSON_IsString(id) || cJSON_IsNull(id);
    if (!cJSON_IsObject(msg) || !id_ok || (params && !cJSON_IsObject(params) && !cJSON_IsArray(params))) {
        lsp__send(s, p2s_rpc_error(id_ok ? id : NULL, P2S_RPC_INVALID_REQUEST, "invalid request"));
    } else if (!method && id && (cJSON_HasObjectItem(msg, "result") || cJSON_HasObjectItem(msg, "error"))) {
        /* a response to a request of ours: the server sends none it waits for */
    } else if (!cJSON_IsString(method)) {
        lsp__send(s, p2s_rpc_error(id, P2S_RPC_INVALID_REQUEST, "invalid request: no method"));
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
    s->opts = *opts;
    s->settings.no_config = !opts->file_system;  /* until the client's settings are read */
    p2s_rpc_framer_init(&s->framer);
    p2s_strbuf_init(&s->out);
    return s;
}

void p2s_lsp_delete(P2sLsp *s)
{
    for (size_t i = 0; i < s->docs.size; i++)
        lsp__doc_delete(s->docs.contents[i]);
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
            lsp__send(s, p2s_rpc_error(NULL, P2S_RPC_PARSE_ERROR, "malformed header: expected `Content-Length: N` and a blank line"));
        else
            lsp__send(s, p2s_rpc_error(NULL, P2S_RPC_INVALID_REQUEST, "message larger than 64 MiB: dropped"));
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
            lsp__refresh(s, s->docs.contents[i]);
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
