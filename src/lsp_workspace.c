/* lsp_workspace.c — the cross-file index of a workspace folder: tree mode's walk and find
 * phase, and resolve.c's rounds. */
#include "lsp_workspace.h"

#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "lsp_features.h"
#include "project.h"
#include "resolve.h"
#include "settings.h"
#include "source.h"
#include "transpile.h"
#include "tree.h"

void p2s_workspace_init(P2sWorkspace *self, const char *root, const P2sConfig *config)
{
    memset(self, 0, sizeof *self);
    size_t n = strlen(root);
    while (n > 1 && root[n - 1] == '/')
        n--;
    self->root = p2s_strndup(root, n);
    self->package_prefix = p2s_project_package_prefix(self->root);
    p2s_workspace_configure(self, config);
}

void p2s_workspace_configure(P2sWorkspace *self, const P2sConfig *config)
{
    p2s_project_release(&self->project);
    p2s_strings_release(&self->excludes);
    p2s_project_init(&self->project, self->root, config);
    P2sWalkSettings walk;
    p2s_settings_walk(NULL, 0, config, &walk);
    for (size_t i = 0; i < walk.excludes.size; i++)
        array_push(&self->excludes, p2s_strdup(walk.excludes.contents[i]));
    array_delete(&walk.excludes);
}

static void ws__clear(P2sWorkspace *self)
{
    for (size_t i = 0; i < self->modules.size; i++) {
        P2sWsModule *m = &self->modules.contents[i];
        p2s_free(m->path);
        p2s_free(m->module);
        p2s_strings_release(&m->exports);
        p2s_strings_release(&m->export_targets);
        p2s_signatures_release(&m->export_signatures);
        p2s_nameset_release(&m->misses);
    }
    array_delete(&self->modules);
    p2s_externals_release(&self->external);
    p2s_nameset_release(&self->summary_of);
    p2s_nameset_release(&self->summary_by_name);
    p2s_strings_release(&self->summaries);
    self->skipped = 0;
    self->scanned = false;
}

void p2s_workspace_release(P2sWorkspace *self)
{
    ws__clear(self);
    p2s_free(self->root);
    p2s_free(self->package_prefix);
    p2s_project_release(&self->project);
    p2s_strings_release(&self->excludes);
    self->root = self->package_prefix = NULL;
}

bool p2s_workspace_contains(const P2sWorkspace *self, const char *path)
{
    size_t n = strlen(self->root);
    if (n == 1 && self->root[0] == '/')
        return path[0] == '/';
    return strncmp(path, self->root, n) == 0 && path[n] == '/';
}

char *p2s_workspace_module_name(const P2sWorkspace *self, const char *path, bool *is_package)
{
    size_t n = strlen(path);
    if (!p2s_workspace_contains(self, path) || n < 3 || strcmp(path + n - 3, ".py") != 0)
        return NULL;
    size_t root_len = strlen(self->root);
    const char *rel = path + (root_len == 1 ? 1 : root_len + 1);
    if (strlen(rel) <= 3)
        return NULL;
    return p2s_project_name_file(&self->project, self->root, self->package_prefix, rel, is_package);
}

P2sWsModule *p2s_workspace_module(P2sWorkspace *self, const char *path)
{
    for (size_t i = 0; i < self->modules.size; i++)
        if (strcmp(self->modules.contents[i].path, path) == 0)
            return &self->modules.contents[i];
    return NULL;
}

bool p2s_workspace_exports_current(const P2sWsModule *m, const P2sFindings *found)
{
    size_t n = m ? m->exports.size : 0;
    if (n != found->exports.size)
        return false;
    for (size_t i = 0; i < n; i++)
        if (strcmp(m->exports.contents[i], found->exports.contents[i]) != 0 ||
            !p2s_signature_same(m->export_signatures.contents[i], found->export_signatures.contents[i]))
            return false;
    return true;
}

const char *p2s_workspace_summary(const P2sWorkspace *self, const char *qualname)
{
    size_t index;
    if (p2s_nameset_get(&self->summary_of, qualname, strlen(qualname), &index))
        return self->summaries.contents[index];
    const char *dot = strrchr(qualname, '.');
    const char *last = dot ? dot + 1 : qualname;
    if (p2s_nameset_get(&self->summary_by_name, last, strlen(last), &index))
        return self->summaries.contents[index];
    return NULL;
}

/* Records the hover summary of each PyLayer class the module defines (replacing an earlier
 * one of the same name: a module found again may have more PyLayers). */
static void ws__summaries(P2sWorkspace *self, const P2sWsModule *m, const P2sSource *src, const P2sFindings *found)
{
    for (size_t i = 0; i < found->classes.size; i++) {
        const P2sPyLayerClass *cls = &found->classes.contents[i];
        if (!cls->is_pylayer || !cls->qualname)
            continue;
        P2sStrbuf text, qual;
        p2s_strbuf_init(&text);
        p2s_strbuf_init(&qual);
        p2s_resolve_qualify(&qual, m->module, cls->qualname);
        p2s_lsp_class_summary(src, found, i, m->module, &text);
        size_t index;
        if (p2s_nameset_get(&self->summary_of, qual.buf, qual.len, &index)) {
            p2s_free(self->summaries.contents[index]);
            self->summaries.contents[index] = p2s_strbuf_detach(&text, NULL);
        } else {
            index = self->summaries.size;
            array_push(&self->summaries, p2s_strbuf_detach(&text, NULL));
            p2s_nameset_put(&self->summary_of, qual.buf, qual.len, index);
            const char *dot = strrchr(cls->qualname, '.');
            const char *last = dot ? dot + 1 : cls->qualname;
            if (!p2s_nameset_contains(&self->summary_by_name, last, strlen(last)))
                p2s_nameset_put(&self->summary_by_name, last, strlen(last), index);
        }
        p2s_strbuf_release(&text);
        p2s_strbuf_release(&qual);
    }
}

/* Reads, parses and finds one module; keeps its exports, misses and summaries. */
static void ws__analyze(P2sWorkspace *self, P2sWsModule *m, const P2sRules *rules, P2sWsOverlay overlay, void *ctx)
{
    P2sSource src = {0};
    P2sDiagSink io;
    p2s_diag_sink_init(&io);
    size_t len = 0;
    const char *text = overlay ? overlay(ctx, m->path, &len) : NULL;
    int read = 0;
    if (text)
        p2s_source_from_bytes(&src, m->path, text, len);
    else
        read = p2s_source_read_path(&src, m->path, m->path, P2S_WS_MAX_FILE, &io);
    p2s_strings_release(&m->exports);
    p2s_strings_release(&m->export_targets);
    p2s_signatures_release(&m->export_signatures);
    p2s_nameset_release(&m->misses);
    if (read == 0) {
        P2sUnit unit;
        p2s_unit_init(&unit, &src);
        if (p2s_unit_parse(&unit) == P2S_TRANSPILE_OK) {
            P2sModule module = {m->module, m->is_package, &self->external, P2S_READ_ALL};
            p2s_unit_find(&unit, rules, &module);
            m->exports = unit.found.exports;
            m->export_targets = unit.found.export_targets;
            m->export_signatures = unit.found.export_signatures;
            m->misses = unit.found.misses;
            memset(&unit.found.exports, 0, sizeof unit.found.exports);
            memset(&unit.found.export_targets, 0, sizeof unit.found.export_targets);
            memset(&unit.found.export_signatures, 0, sizeof unit.found.export_signatures);
            memset(&unit.found.misses, 0, sizeof unit.found.misses);
            if (unit.found.pylayer_count > 0) {
                /* what the summaries say of outputs and classes left as written is check's */
                P2sDiagSink scratch;
                p2s_diag_sink_init(&scratch);
                p2s_check(&src, &unit.found, rules, &scratch);
                p2s_diag_sink_release(&scratch);
            }
            ws__summaries(self, m, &src, &unit.found);
        }
        p2s_unit_release(&unit);
        p2s_source_release(&src);
    }
    p2s_diag_sink_release(&io);
}

/* The .py files tree mode walks below the root (p2s_tree_walk: one policy), within the limits. */
static void ws__walk(P2sWorkspace *self, P2sStrings *out)
{
    P2sStringList excludes = {0};
    for (size_t i = 0; i < self->excludes.size; i++)
        array_push(&excludes, (const char *)self->excludes.contents[i]);
    P2sWalkEntries found = {0};
    p2s_tree_walk(self->root, &excludes, NULL, &found);
    for (size_t i = 0; i < found.size; i++) {
        const P2sWalkEntry *f = &found.contents[i];
        if (!f->python)
            continue;
        if (out->size >= P2S_WS_MAX_FILES || (size_t)f->size > P2S_WS_MAX_FILE) {
            self->skipped++;
            continue;
        }
        P2sStrbuf path;
        p2s_strbuf_init(&path);
        p2s_strbuf_addf(&path, "%s/%s", strcmp(self->root, "/") == 0 ? "" : self->root, f->rel);
        array_push(out, p2s_strbuf_detach(&path, NULL));
    }
    p2s_tree_walk_release(&found);
    array_delete(&excludes);
}

/* What one scan finds modules with, for the resolver's callbacks. */
typedef struct {
    P2sWorkspace *ws;
    const P2sRules *rules;
    P2sWsOverlay overlay;
    void *overlay_ctx;
} Scan;

static bool ws__facts(void *ctx, size_t i, P2sModuleFacts *out)
{
    const P2sWsModule *m = &((const Scan *)ctx)->ws->modules.contents[i];
    *out = (P2sModuleFacts){m->module, &m->exports, &m->export_targets, &m->export_signatures, &m->misses, 0, NULL,
                            NULL};
    return true;
}

static void ws__refind(void *ctx, const size_t *indices, size_t n)
{
    Scan *scan = ctx;
    for (size_t k = 0; k < n; k++)
        ws__analyze(scan->ws, &scan->ws->modules.contents[indices[k]], scan->rules, scan->overlay, scan->overlay_ctx);
}

void p2s_workspace_scan(P2sWorkspace *self, const P2sRules *rules, P2sWsOverlay overlay, void *ctx)
{
    ws__clear(self);
    P2sStrings paths = {0};
    ws__walk(self, &paths);
    for (size_t i = 0; i < paths.size; i++) {
        P2sWsModule m = {0};
        m.module = p2s_workspace_module_name(self, paths.contents[i], &m.is_package);
        if (!m.module)
            continue;
        m.path = paths.contents[i];
        paths.contents[i] = NULL;
        array_push(&self->modules, m);
    }
    p2s_strings_release(&paths);
    for (size_t i = 0; i < self->modules.size; i++)
        ws__analyze(self, &self->modules.contents[i], rules, overlay, ctx);
    Scan scan = {self, rules, overlay, ctx};
    p2s_resolve_exports(&self->external, self->modules.size, ws__facts, ws__refind, &scan);
    self->scanned = true;
}
