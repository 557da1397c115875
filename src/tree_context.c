/* tree_context.c — what a lone file needs of its project: its place (module name, package
 * root), and the PyLayers of the sibling modules its imports reach, found by tree mode's phases
 * (tree.h) over the file and those modules, so that a file run alone is transpiled as it would
 * be in its tree. Which siblings are read: the files that the file's misses name (then theirs,
 * transitively), within its project or its own top package and never an excluded path; a
 * reached module's re-exports are followed only where the run reads the name. */
#include "tree_context.h"

#include <string.h>
#include <sys/stat.h>

#include "parallel.h"
#include "resolve.h"
#include "tree.h"
#include "walk.h"

/* The file of module name[0..n) that a lone file's miss reaches, or NULL: in a project (a
 * pyproject.toml above) any module below the file's package root or an import root; outside
 * one only the file's own top package (`pkg`: pkg and pkg.*), so a lone script or an
 * installed module (the standard library) reads nothing else; never an excluded path. */
static char *tree_context__reached_file(const P2sOptions *opts, const P2sProject *project, const P2sTreeContext *ctx,
                                        const char *name, size_t n, bool *is_package)
{
    size_t k = ctx->own_package ? strlen(ctx->own_package) : 0;
    if (!project->root && !(k && n >= k && memcmp(name, ctx->own_package, k) == 0 && (n == k || name[k] == '.')))
        return NULL;
    char *path = p2s_project_locate(project, ctx->crawl_root, name, n, is_package);
    if (!path)
        return NULL;
    const char *rel = path;
    size_t root_len = project->root ? strlen(project->root) : 0;
    if (root_len && strncmp(path, project->root, root_len) == 0 && path[root_len] == '/')
        rel = path + root_len + 1;
    if (p2s_walk_excluded(&opts->excludes, NULL, rel, false)) {
        p2s_free(path);
        return NULL;
    }
    return path;
}

static P2sNameSet *tree_context__misses_of(P2sTreeEntry *e)
{
    return e->parked || e->finished_early ? &e->misses : &e->unit.found.misses;
}

/* Each prefix of a missed name at a module boundary (`pkg.layers.Q`: pkg.layers.Q, pkg.layers,
 * pkg) not tried yet; false from visit stops the walk. */
typedef bool (*ContextMissVisit)(void *arg, const char *name, size_t n);

static bool tree_context__each_prefix(const P2sNameSet *misses, P2sNameSet *tried, ContextMissVisit visit, void *arg)
{
    for (size_t s = 0; s < misses->capacity; s++) {
        const char *q = misses->slots[s].name;
        for (size_t n = q ? strlen(q) : 0; n > 0; n--)
            if ((q[n] == '\0' || q[n] == '.') && (!tried || p2s_nameset_add(tried, q, n)) && !visit(arg, q, n))
                return false;
    }
    return true;
}

typedef struct {
    P2sTree *t;
    const P2sTreeContext *ctx;
} Reach;

static bool tree_context__add_one_reached(void *arg, const char *name, size_t n)
{
    Reach *r = arg;
    bool is_package = false;
    char *path = tree_context__reached_file(r->t->opts, r->t->project, r->ctx, name, n, &is_package);
    if (path) {
        struct stat st;
        P2sTreeEntry *added = p2s_tree_add_entry(r->t, path, true, stat(path, &st) == 0 ? st.st_size : 0);
        added->module = p2s_strndup(name, n);
        added->is_package = is_package;
        added->read = P2S_READ_EXPORTS;
        p2s_free(path);
    }
    return true;
}

/* Adding entries may have moved them all: each unit of entries [0, end) points at its entry's
 * source again, or, for a module this tool wrote (undone when parsed), at its own undone text:
 * pointed at the file as written, it read the rewritten bytes through the undone text's
 * tree, and a transpiled sibling's PyLayer subclasses were lost to the files that read it. */
static void tree_context__repoint_units(P2sTree *t, size_t end)
{
    for (size_t i = 0; i < end; i++)
        p2s_unit_moved(&t->entries.contents[i].unit, &t->entries.contents[i].src);
}

/* The files that entries [from, end) reach through their misses become entries. A missed
 * name's bytes stay put while entries are added (the array may move). */
static void tree_context__add_reached(P2sTree *t, size_t from, const P2sTreeContext *ctx, P2sNameSet *tried)
{
    size_t end = t->entries.size;
    Reach r = {t, ctx};
    for (size_t i = from; i < end; i++) {
        P2sTreeEntry *e = &t->entries.contents[i];
        if (!e->read_ok || e->status != P2S_TRANSPILE_OK)
            continue;
        P2sNameSet misses = *tree_context__misses_of(e);  /* a copy of the handle: its slots do not move */
        tree_context__each_prefix(&misses, tried, tree_context__add_one_reached, &r);
    }
    tree_context__repoint_units(t, end);
}

/* What the run reads of other modules: every prefix, at a module boundary, of every miss. */
static void tree_context__names_read(P2sTree *t, P2sNameSet *read)
{
    for (size_t i = 0; i < t->entries.size; i++) {
        P2sTreeEntry *e = &t->entries.contents[i];
        if (!e->read_ok || e->status != P2S_TRANSPILE_OK)
            continue;
        const P2sNameSet *misses = tree_context__misses_of(e);
        for (size_t s = 0; s < misses->capacity; s++) {
            const char *q = misses->slots[s].name;
            for (size_t n = q ? strlen(q) : 0; n > 0; n--)
                if (q[n] == '\0' || q[n] == '.')
                    p2s_nameset_add(read, q, n);
        }
    }
}

/* Marks the re-exports of reached modules that the run reads (another entry misses `module.name`
 * or a name below it): their targets become misses, put in follow. Returns whether any was. */
static bool tree_context__mark_read_exports(P2sTree *t, const P2sNameSet *read, P2sStrings *follow)
{
    bool any = false;
    P2sStrbuf q;
    p2s_strbuf_init(&q);
    for (size_t i = 0; i < t->entries.size; i++) {
        P2sTreeEntry *e = &t->entries.contents[i];
        for (size_t k = 0; k < e->export_miss_names.size; k++) {
            const char *name = e->export_miss_names.contents[k], *target = e->export_miss_targets.contents[k];
            p2s_strbuf_reset(&q);
            p2s_resolve_qualify(&q, e->module, name);
            if (p2s_nameset_contains(&e->exports_read, name, strlen(name)) ||
                !p2s_nameset_contains(read, q.buf, q.len))
                continue;
            p2s_nameset_add(&e->exports_read, name, strlen(name));
            p2s_nameset_put(tree_context__misses_of(e), target, strlen(target), P2S_MISS_EXPORT);
            array_push(follow, p2s_strdup(target));
            any = true;
        }
    }
    p2s_strbuf_release(&q);
    return any;
}

/* A reached module's re-export is followed only when the run reads that name of it: a chain of
 * modules that each re-export the one before is read no further than its names are. The files
 * those re-exports reach become entries (found by the caller's next window). */
static void tree_context__follow_read_exports(P2sTree *t, const P2sTreeContext *ctx, P2sNameSet *tried)
{
    size_t end = t->entries.size;
    Reach r = {t, ctx};
    for (bool grew = true; grew;) {
        P2sNameSet read;
        P2sStrings follow = {0};
        p2s_nameset_init(&read);
        tree_context__names_read(t, &read);
        grew = tree_context__mark_read_exports(t, &read, &follow);
        for (size_t k = 0; k < follow.size; k++) {
            const char *target = follow.contents[k];
            for (size_t n = strlen(target); n > 0; n--)
                if ((target[n] == '\0' || target[n] == '.') && p2s_nameset_add(tried, target, n))
                    tree_context__add_one_reached(&r, target, n);
        }
        p2s_strings_release(&follow);
        p2s_nameset_release(&read);
    }
    tree_context__repoint_units(t, end);
}

typedef struct {
    const P2sOptions *opts;
    const P2sProject *project;
    const P2sTreeContext *ctx;
} Probe;

static bool tree_context__probe_one(void *arg, const char *name, size_t n)
{
    const Probe *p = arg;
    bool is_package = false;
    char *path = tree_context__reached_file(p->opts, p->project, p->ctx, name, n, &is_package);
    bool found = path != NULL;
    p2s_free(path);
    return !found;
}

void p2s_tree_context_place(const P2sProject *project, const char *path, P2sTreeContext *out)
{
    memset(out, 0, sizeof *out);
    p2s_externals_init(&out->external);
    char *abs = p2s_project_absolute(path);
    bool crawled_package = false;
    char *crawled = p2s_project_crawl_module_name(path, &out->crawl_root, &crawled_package);
    out->module = abs ? p2s_project_module_name(project, abs, &out->is_package) : NULL;
    if (!out->module) {
        out->module = crawled;
        out->is_package = crawled_package;
        crawled = NULL;
    }
    p2s_free(abs);
    p2s_free(crawled);
    const char *dot = strchr(out->module, '.');
    if (dot || out->is_package)
        out->own_package = p2s_strndup(out->module, dot ? (size_t)(dot - out->module) : strlen(out->module));
}

bool p2s_tree_context_reaches(const P2sOptions *opts, const P2sProject *project, const P2sTreeContext *ctx,
                              const P2sNameSet *misses)
{
    Probe p = {opts, project, ctx};
    return !tree_context__each_prefix(misses, NULL, tree_context__probe_one, &p);
}

void p2s_tree_context(const P2sOptions *opts, const P2sRules *rules, const P2sProject *project, const char *path,
                      const P2sSource *src, const TSTree *tree, P2sTreeContext *ctx)
{
    P2sTree t;
    p2s_tree_init(&t, opts, rules, project);
    t.src_root = p2s_strdup("");
    t.out_root = p2s_strdup("");
    t.package_prefix = p2s_strdup("");
    t.outputs_unwanted = true;  /* the siblings are never written, the file is finished after */
    P2sNameSet tried;
    p2s_nameset_init(&tried);
    p2s_nameset_add(&tried, ctx->module, strlen(ctx->module));
    P2sTreeEntry *named = p2s_tree_add_entry(&t, path, true, (off_t)src->len);
    named->module = p2s_strdup(ctx->module);
    named->is_package = ctx->is_package;
    named->read = P2S_READ_SITES;
    p2s_source_from_bytes(&named->src, src->name, src->bytes, src->len);
    named->read_ok = true;
    named->parsed = tree ? ts_tree_copy(tree) : NULL;

    t.jobs = opts->jobs ? opts->jobs : p2s_parallel_default_jobs();
    for (size_t from = 0; from < t.entries.size;) {
        size_t end = t.entries.size;
        p2s_tree_analyze_range(&t, from, end);
        tree_context__add_reached(&t, from, ctx, &tried);
        tree_context__follow_read_exports(&t, ctx, &tried);
        from = end;
    }
    p2s_tree_resolve_across_modules(&t);
    p2s_tree_order_by_size(&t);
    p2s_tree_finish_found(&t);
    p2s_tree_leave_as_written_across_modules(&t);
    p2s_externals_release(&ctx->external);
    ctx->external = t.external;
    memset(&t.external, 0, sizeof t.external);
    ctx->siblings = t.entries.size - 1;
    p2s_nameset_release(&tried);
    p2s_tree_release(&t);
}

void p2s_tree_context_release(P2sTreeContext *self)
{
    p2s_free(self->module);
    p2s_free(self->crawl_root);
    p2s_free(self->own_package);
    p2s_externals_release(&self->external);
    memset(self, 0, sizeof *self);
}
