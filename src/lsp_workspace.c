/* lsp_workspace.c — the cross-file index of a workspace folder: the walk (walk.h), tree
 * mode's find phase, and resolve.c's rounds. */
#include "lsp_workspace.h"

#include <stdlib.h>
#include <string.h>

#include "lsp_features.h"
#include "project.h"
#include "resolve.h"
#include "settings.h"
#include "source.h"
#include "transpile.h"
#include "walk.h"

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
        p2s_strings_release(&m->export_miss_names);
        p2s_strings_release(&m->export_miss_targets);
        p2s_strings_release(&m->used);
        p2s_strings_release(&m->as_written);
    }
    array_delete(&self->modules);
    p2s_externals_release(&self->external);
    p2s_nameset_release(&self->summary_of);
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
    if (!m)
        return true;
    P2sStrings written = {0};
    p2s_resolve_as_written_exports(m->module, found, &written);
    bool same = written.size == m->as_written.size;
    for (size_t i = 0; same && i < written.size; i++)
        same = strcmp(written.contents[i], m->as_written.contents[i]) == 0;
    p2s_strings_release(&written);
    return same;
}

/* The qualified name a re-export names (q is `module.name` of a module's export with a target),
 * or NULL. */
static const char *ws__reexported(const P2sWorkspace *self, const char *q)
{
    for (size_t i = 0; i < self->modules.size; i++) {
        const P2sWsModule *m = &self->modules.contents[i];
        size_t n = strlen(m->module);
        const char *name = n == 0 ? q : strncmp(q, m->module, n) == 0 && q[n] == '.' ? q + n + 1 : NULL;
        for (size_t k = 0; name && k < m->exports.size; k++)
            if (*m->export_targets.contents[k] && strcmp(m->exports.contents[k], name) == 0)
                return m->export_targets.contents[k];
    }
    return NULL;
}

const char *p2s_workspace_summary(const P2sWorkspace *self, const char *qualname)
{
    /* a chain of re-exports is at most as long as there are modules: a cycle ends there */
    for (size_t hops = 0; qualname && hops <= self->modules.size; hops++) {
        size_t index;
        if (p2s_nameset_get(&self->summary_of, qualname, strlen(qualname), &index))
            return self->summaries.contents[index];
        qualname = ws__reexported(self, qualname);
    }
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
        }
        p2s_strbuf_release(&text);
        p2s_strbuf_release(&qual);
    }
}

/* Moves *from into *to, releasing what *to held. */
static void ws__move_strings(P2sStrings *to, P2sStrings *from)
{
    p2s_strings_release(to);
    *to = *from;
    memset(from, 0, sizeof *from);
}

/* Reads, parses, finds and (when it defines PyLayers) checks one module, as tree mode finishes
 * it; keeps what resolution reads of it (exports, misses, what it uses, its exports left as
 * written) and its summaries. */
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
    p2s_strings_release(&m->export_miss_names);
    p2s_strings_release(&m->export_miss_targets);
    p2s_strings_release(&m->used);
    p2s_strings_release(&m->as_written);
    if (read == 0) {
        P2sUnit unit;
        p2s_unit_init(&unit, &src);
        if (p2s_unit_parse(&unit) == P2S_TRANSPILE_OK) {
            P2sModule module = {m->module, m->is_package, &self->external, P2S_READ_ALL};
            p2s_unit_find(&unit, rules, &module);
            P2sFindings *found = &unit.found;
            if (found->pylayer_count > 0) {
                /* what is left as written, and what the summaries say of outputs, is check's */
                unit.lint_only = true;
                if (p2s_transpile_made_output(p2s_unit_finish(&unit, rules)))
                    p2s_resolve_as_written_exports(m->module, found, &m->as_written);
            }
            ws__move_strings(&m->exports, &found->exports);
            ws__move_strings(&m->export_targets, &found->export_targets);
            m->export_signatures = found->export_signatures;
            memset(&found->export_signatures, 0, sizeof found->export_signatures);
            m->misses = found->misses;
            memset(&found->misses, 0, sizeof found->misses);
            ws__move_strings(&m->export_miss_names, &found->export_miss_names);
            ws__move_strings(&m->export_miss_targets, &found->export_miss_targets);
            ws__move_strings(&m->used, &found->externals_used);
            ws__summaries(self, m, &src, &unit.found);
        }
        p2s_unit_release(&unit);
        p2s_source_release(&src);
    }
    p2s_diag_sink_release(&io);
}

/* The .py files tree mode walks below the root (p2s_walk: one policy), within the limits. */
static void ws__walk(P2sWorkspace *self, P2sStrings *out)
{
    P2sStringList excludes = {0};
    for (size_t i = 0; i < self->excludes.size; i++)
        array_push(&excludes, (const char *)self->excludes.contents[i]);
    P2sWalkEntries found = {0};
    p2s_walk(self->root, &excludes, NULL, &found);
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
    p2s_walk_release(&found);
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
    *out = (P2sModuleFacts){m->module, &m->exports, &m->export_targets, &m->export_signatures, &m->misses, 0,
                            &m->export_miss_names, &m->export_miss_targets, &m->as_written, &m->used};
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
    p2s_resolve_as_written(&self->external, self->modules.size, ws__facts, ws__refind, &scan);
    self->scanned = true;
}
