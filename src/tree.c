/* tree.c — a source tree through the pipeline.
 *
 * Phases: walk (sorted, so every run sees files in one order) -> read every module and scan
 * its imports (imports.h) -> parse and find every module on the workers in import order, each
 * after the modules it imports are found and their exports shared, and finish each whose
 * misses look final right away -> find again, on the workers, until the set of PyLayer classes
 * that modules export (directly or re-exported) stops growing (a module finished early that
 * missed a name that appears is found and finished again) -> finish every other module on the
 * workers -> on this thread, finish again each module that uses an exported PyLayer left as
 * written (a contract error), until no more are -> deliver (tree_deliver.c): window by window,
 * write the temp files on the workers, then report in path order, sync once and rename on this
 * thread; then the depfile. Workers touch their own entry, and the shared external set under a
 * lock; what they make of an entry does not depend on which of them ran first (resolution
 * checks every miss against the whole set), so -jN output is byte-identical to -j1. */
#include "tree.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "parallel.h"
#include "resolve.h"
#include "walk.h"

/* Where an entry stands in the analysis in import order. */
typedef enum {
    TREE_NOT_SHARED,            /* not found yet: its exports are not in the external set */
    TREE_SHARED_SETTLED,        /* found, exports in the set, its own misses final as far as known */
    TREE_SHARED_UNSETTLED,      /* found, exports in the set, but a miss of it may yet resolve */
} TreeShared;

P2sTreeEntry *p2s_tree_add_entry(P2sTree *t, const char *rel, bool python, off_t size)
{
    P2sTreeEntry e;
    memset(&e, 0, sizeof e);
    e.rel = p2s_strdup(rel);
    e.python = python;
    e.size = size;
    p2s_diag_sink_init(&e.io);
    p2s_output_batch_init(&e.written);
    array_push(&t->entries, e);
    return array_back(&t->entries);
}

/* The walk's files as entries; what it could not read is an I/O error of the run. */
static void tree__walk_entries(P2sTree *t)
{
    P2sWalkEntries found = {0};
    p2s_walk(t->src_root, &t->opts->excludes, t->out_exists ? &t->out_stat : NULL, &found);
    for (size_t i = 0; i < found.size; i++) {
        const P2sWalkEntry *f = &found.contents[i];
        P2sTreeEntry *e = p2s_tree_add_entry(t, f->rel, f->python, f->size);
        if (f->error) {
            p2s_diag_emit_file(&e->io, P2S_ERROR, "", "%s", f->error);
            t->io_error = true;
        }
    }
    p2s_walk_release(&found);
}

static P2sModule tree__module(const P2sTree *t, const P2sTreeEntry *e)
{
    P2sModule m = {e->module, e->is_package, &t->external, e->read};
    return m;
}

static void tree__unpark(P2sTreeEntry *e)
{
    p2s_nameset_release(&e->misses);
    p2s_strings_release(&e->exports);
    p2s_strings_release(&e->export_targets);
    p2s_signatures_release(&e->export_signatures);
    e->parked = false;
}

/* Moves *from into *to, releasing what *to held. */
static void tree__move_strings(P2sStrings *to, P2sStrings *from)
{
    p2s_strings_release(to);
    *to = *from;
    memset(from, 0, sizeof *from);
}

/* Drops a module's tree and findings, keeping what --depfile and the exports of classes left as
 * written need of them. */
static void tree__drop_tree(P2sTreeEntry *e)
{
    P2sFindings *found = &e->unit.found;
    tree__move_strings(&e->depends, &found->externals_used);
    tree__move_strings(&e->exports, &found->exports);
    tree__move_strings(&e->export_targets, &found->export_targets);
    p2s_signatures_release(&e->export_signatures);
    e->export_signatures = found->export_signatures;
    memset(&found->export_signatures, 0, sizeof found->export_signatures);
    p2s_unit_drop_tree(&e->unit);
}

/* Trees are kept between finding and finishing for at most this much source: tree-sitter's
 * trees take some 30 bytes per source byte, and a tree's peak memory must stay near its
 * largest file, not its sum. A module past the budget is parsed again when it is finished. */
#define TREE_KEPT_BUDGET ((size_t)512 << 10)

/* Keeps a module's tree when it will be rewritten and the budget allows; otherwise keeps only
 * what resolution needs of its findings (misses and exports). */
static void tree__park_or_keep(P2sTree *t, P2sTreeEntry *e)
{
    P2sFindings *found = &e->unit.found;
    if (e->rewrites && !e->kept) {
        size_t before = atomic_fetch_add(&t->kept_bytes, e->src.len);
        e->kept = before + e->src.len <= TREE_KEPT_BUDGET;
        if (!e->kept)
            atomic_fetch_sub(&t->kept_bytes, e->src.len);
    }
    if (e->rewrites && e->kept)
        return;
    tree__unpark(e);
    e->misses = found->misses;
    memset(&found->misses, 0, sizeof found->misses);
    tree__drop_tree(e);
    e->parked = true;
}

/* Takes a reached module's export misses from its findings; those of the names some module
 * reads join its misses. */
static void tree__take_export_misses(P2sTreeEntry *e)
{
    P2sFindings *found = &e->unit.found;
    tree__move_strings(&e->export_miss_names, &found->export_miss_names);
    tree__move_strings(&e->export_miss_targets, &found->export_miss_targets);
    for (size_t k = 0; k < e->export_miss_names.size; k++) {
        const char *name = e->export_miss_names.contents[k], *target = e->export_miss_targets.contents[k];
        if (p2s_nameset_contains(&e->exports_read, name, strlen(name)))
            p2s_nameset_put(&found->misses, target, strlen(target), P2S_MISS_EXPORT);
    }
}

/* Finds a parsed module with the external set as it stands. */
static void tree__find_only(P2sTree *t, P2sTreeEntry *e)
{
    P2sModule m = tree__module(t, e);
    p2s_unit_find(&e->unit, t->rules, &m);
    tree__take_export_misses(e);
    const P2sFindings *found = &e->unit.found;
    e->rewrites = found->pylayer_count > 0 || found->sites.size > 0 || found->uses_paddle_api || e->unit.input;
}

static void tree__find(P2sTree *t, P2sTreeEntry *e)
{
    tree__find_only(t, e);
    tree__park_or_keep(t, e);
}

/* Parses and finds a parked module again. */
static void tree__unpark_and_find(P2sTree *t, P2sTreeEntry *e)
{
    tree__unpark(e);
    e->status = p2s_unit_parse(&e->unit);
    if (e->status == P2S_TRANSPILE_OK)
        tree__find(t, e);
}

/* Parses a module anew from its source: its earlier findings and output are dropped. */
static void tree__parse_afresh(P2sTreeEntry *e)
{
    e->finished_early = false;
    tree__unpark(e);
    p2s_unit_release(&e->unit);
    p2s_unit_init(&e->unit, &e->src);
    e->unit.regenerate = true;
    e->status = p2s_unit_parse(&e->unit);
}

/* Reads a Python entry's source, unless it is read or given already; whether it is there
 * (read errors go to e->io). */
static bool tree__read(P2sTree *t, P2sTreeEntry *e)
{
    if (!e->python || e->io.items.size)
        return false;
    if (!e->read_ok) {
        char *path = p2s_walk_join(t->src_root, e->rel);
        e->read_ok = p2s_source_read_path(&e->src, path, path, P2S_SOURCE_LIMIT, &e->io) == 0;
        p2s_free(path);
    }
    return e->read_ok;
}

/* Reads (tree__read) and parses one entry; true when it is to be found. */
static bool tree__read_and_parse(P2sTree *t, P2sTreeEntry *e)
{
    if (!tree__read(t, e))
        return false;
    p2s_unit_init(&e->unit, &e->src);
    e->unit.regenerate = !e->parsed;  /* a given tree is of the source as already undone */
    e->unit.tree = e->parsed;
    e->parsed = NULL;
    e->status = e->unit.tree ? P2S_TRANSPILE_OK : p2s_unit_parse(&e->unit);
    if (e->status == P2S_TRANSPILE_OK && t->opts->parse_only) {
        tree__drop_tree(e);
        return false;
    }
    return e->status == P2S_TRANSPILE_OK;
}

/* Reads, parses and finds one entry. */
static void tree__analyze(P2sTree *t, P2sTreeEntry *e)
{
    if (tree__read_and_parse(t, e))
        tree__find(t, e);
}

/* The k-th biggest entry: read and parse (a parallel_for body: --parse-only's analysis). */
static void tree__parse_nth(void *ctx, size_t k)
{
    P2sTree *t = ctx;
    tree__read_and_parse(t, &t->entries.contents[t->by_size[k]]);
}

/* Whether src spells the name of a PyLayer base class of the rules (`PyLayer`): a module
 * that defines PyLayers does; one that only calls or re-exports them imports one that does. */
static bool tree__mentions_a_base(const P2sTree *t, const P2sSource *src)
{
    for (size_t k = 0; k < t->rules->pylayer_bases.size; k++) {
        const char *base = t->rules->pylayer_bases.contents[k], *dot = strrchr(base, '.');
        const char *name = dot ? dot + 1 : base;
        if (*name && memmem(src->bytes, src->len, name, strlen(name)))
            return true;
    }
    return false;
}

/* Tree mode reads every source before the analysis, for the import order: what each imports,
 * and whether it mentions PyLayers (a parallel_for body). */
static void tree__read_nth(void *ctx, size_t i)
{
    P2sTree *t = ctx;
    P2sTreeEntry *e = &t->entries.contents[i];
    if (!tree__read(t, e))
        return;
    p2s_imports_scan(e->src.bytes, e->src.len, e->module ? e->module : "", e->is_package, &e->imported);
    e->may_hold_pylayers = tree__mentions_a_base(t, &e->src);
}

/* The entry of the module that name is, or lies below (the longest such prefix: `pkg.ops.X`
 * is pkg.ops's, not pkg's); false when none is a module of the tree. */
static bool tree__module_of(const P2sTree *t, const char *name, size_t *index)
{
    for (size_t n = strlen(name); n > 0; n--)
        if ((name[n] == '\0' || name[n] == '.') && p2s_nameset_get(&t->modules, name, n, index))
            return true;
    return false;
}

/* The order of the analysis (tree->order): each module after the modules it imports, which it
 * reads names of, so most are found when those are (the roots' order, biggest first, breaks
 * ties). Then which modules may hold PyLayers: those that spell a base's name, and every
 * module that imports such a one, transitively (a package that re-exports a PyLayer, or a
 * model that calls one, need not spell it).
 * Only those wait, and only for each other (tree__await_imports), so a tree with little
 * PyLayer code keeps its workers busy. */
static void tree__order_by_imports(P2sTree *t)
{
    size_t n = t->entries.size;
    for (size_t i = 0; i < n; i++) {
        const P2sTreeEntry *e = &t->entries.contents[i];
        size_t known;
        if (e->module && !p2s_nameset_get(&t->modules, e->module, strlen(e->module), &known))
            p2s_nameset_put(&t->modules, e->module, strlen(e->module), i);
    }
    t->imports = p2s_calloc(n ? n : 1, sizeof(P2sIndices));
    for (size_t i = 0; i < n; i++) {
        P2sTreeEntry *e = &t->entries.contents[i];
        for (size_t k = 0; k < e->imported.size; k++) {
            size_t j;
            if (!tree__module_of(t, e->imported.contents[k], &j) || j == i)
                continue;
            bool listed = false;
            for (size_t m = 0; m < t->imports[i].size && !listed; m++)
                listed = t->imports[i].contents[m] == j;
            if (!listed)
                array_push(&t->imports[i], j);
        }
        p2s_strings_release(&e->imported);
    }
    t->order = p2s_calloc(n ? n : 1, sizeof(size_t));
    t->position = p2s_calloc(n ? n : 1, sizeof(size_t));
    p2s_imports_order(n, t->by_size, t->imports, t->order);
    for (size_t k = 0; k < n; k++)
        t->position[t->order[k]] = k;
    P2sIndices *importers = p2s_calloc(n ? n : 1, sizeof(P2sIndices)), holding = {0};
    for (size_t i = 0; i < n; i++) {
        for (size_t k = 0; k < t->imports[i].size; k++)
            array_push(&importers[t->imports[i].contents[k]], i);
        if (t->entries.contents[i].may_hold_pylayers)
            array_push(&holding, i);
    }
    while (holding.size) {
        size_t j = holding.contents[--holding.size];
        for (size_t k = 0; k < importers[j].size; k++) {
            P2sTreeEntry *importer = &t->entries.contents[importers[j].contents[k]];
            if (!importer->may_hold_pylayers) {
                importer->may_hold_pylayers = true;
                array_push(&holding, importers[j].contents[k]);
            }
        }
    }
    for (size_t i = 0; i < n; i++)
        array_delete(&importers[i]);
    p2s_free(importers);
    array_delete(&holding);
    t->shared = p2s_calloc(n ? n : 1, sizeof(atomic_uchar));
    for (size_t i = 0; i < n; i++)
        atomic_init(&t->shared[i], TREE_NOT_SHARED);
}

/* Waits until every module entry i imports that may hold PyLayers and comes before it in the
 * order is shared. Those were handed to workers first and wait only for modules before them,
 * so this ends. */
static void tree__await_imports(P2sTree *t, size_t i)
{
    pthread_mutex_lock(&t->shared_lock);
    for (size_t k = 0; k < t->imports[i].size; k++) {
        size_t j = t->imports[i].contents[k];
        while (t->entries.contents[j].may_hold_pylayers && t->position[j] < t->position[i] &&
               atomic_load(&t->shared[j]) == TREE_NOT_SHARED)
            pthread_cond_wait(&t->shared_changed, &t->shared_lock);
    }
    pthread_mutex_unlock(&t->shared_lock);
}

static void tree__announce(P2sTree *t, size_t i, TreeShared state)
{
    pthread_mutex_lock(&t->shared_lock);
    atomic_store(&t->shared[i], state);
    pthread_cond_broadcast(&t->shared_changed);
    pthread_mutex_unlock(&t->shared_lock);
}

/* Whether entry i's misses look final: the module of the tree each names or lies below
 * (tree__module_of), if it may hold PyLayers, is shared and settled, and is not entry i
 * itself (its own exports join the set later). A guess again: resolution checks every miss. */
static bool tree__settled(P2sTree *t, size_t i)
{
    const P2sNameSet *misses = &t->entries.contents[i].unit.found.misses;
    for (size_t s = 0; s < misses->capacity; s++) {
        size_t j;
        const char *q = misses->slots[s].name;
        if (q && tree__module_of(t, q, &j) && t->entries.contents[j].may_hold_pylayers &&
            (j == i || atomic_load(&t->shared[j]) != TREE_SHARED_SETTLED))
            return false;
    }
    return true;
}

static bool tree__facts(void *ctx, size_t i, P2sModuleFacts *out);
static void tree__finish(P2sTree *t, P2sTreeEntry *e);

/* Finds a parsed module once the modules it imports are shared, shares its exports (then the
 * modules waiting for it go on), and finishes it right away when its misses look final and it
 * rewrites: its tree is then never dropped and parsed again for the finish (nor counted
 * against the budget). Otherwise it is kept or parked as by size. */
static void tree__find_in_order(P2sTree *t, size_t i)
{
    P2sTreeEntry *e = &t->entries.contents[i];
    if (e->may_hold_pylayers)
        tree__await_imports(t, i);
    pthread_rwlock_rdlock(&t->external_lock);
    tree__find_only(t, e);
    pthread_rwlock_unlock(&t->external_lock);
    P2sModuleFacts facts;
    tree__facts(t, i, &facts);
    pthread_rwlock_wrlock(&t->external_lock);
    p2s_resolve_add_exports(&t->external, &facts);
    pthread_rwlock_unlock(&t->external_lock);
    bool settled = tree__settled(t, i);
    tree__announce(t, i, settled ? TREE_SHARED_SETTLED : TREE_SHARED_UNSETTLED);
    if (settled && e->rewrites && !t->opts->list) {
        P2sFindings *found = &e->unit.found;
        e->misses = found->misses;
        memset(&found->misses, 0, sizeof found->misses);
        tree__finish(t, e);
        e->finished_early = true;
    } else {
        tree__park_or_keep(t, e);
    }
}

/* The k-th entry in import order: read, parsed, found and maybe finished; shared whatever
 * becomes of it (one that is not parsed exports nothing), so that no module waits for it
 * forever (a parallel_for body). */
static void tree__analyze_in_order(void *ctx, size_t k)
{
    P2sTree *t = ctx;
    size_t i = t->order[k];
    if (tree__read_and_parse(t, &t->entries.contents[i]))
        tree__find_in_order(t, i);
    else
        tree__announce(t, i, TREE_SHARED_SETTLED);
}

static int tree__compare_sizes(const void *a, const void *b, void *ctx)
{
    const P2sTreeEntry *entries = ctx;
    size_t i = *(const size_t *)a, k = *(const size_t *)b;
    if (entries[i].size != entries[k].size)
        return entries[i].size > entries[k].size ? -1 : 1;
    return i < k ? -1 : i > k;
}

void p2s_tree_order_by_size(P2sTree *t)
{
    t->by_size = p2s_calloc(t->entries.size ? t->entries.size : 1, sizeof(size_t));
    for (size_t i = 0; i < t->entries.size; i++)
        t->by_size[i] = i;
    qsort_r(t->by_size, t->entries.size, sizeof(size_t), tree__compare_sizes, t->entries.contents);
}

/* An entry's facts for the resolver: the findings', or what was kept of them when parked. */
static bool tree__facts(void *ctx, size_t i, P2sModuleFacts *out)
{
    const P2sTreeEntry *e = &((const P2sTree *)ctx)->entries.contents[i];
    if (!e->read_ok || e->status != P2S_TRANSPILE_OK)
        return false;
    const P2sFindings *found = &e->unit.found;
    /* A parked module that rewrites is found again only for a base: its calls are found again
     * when it is finished (parsed again then), and its re-exports are resolution's (resolve.h).
     * One that rewrites nothing is never finished: a call it missed may make it rewrite. One
     * finished early is found again for any miss: its output is made again then. */
    bool dropped = e->parked || e->finished_early;
    *out = (P2sModuleFacts){e->module, dropped ? &e->exports : &found->exports,
                            dropped ? &e->export_targets : &found->export_targets,
                            dropped ? &e->export_signatures : &found->export_signatures,
                            dropped ? &e->misses : &found->misses, e->parked && e->rewrites ? P2S_MISS_BASE : 0,
                            &e->export_miss_names, &e->export_miss_targets, NULL, NULL};
    return true;
}

typedef struct {
    P2sTree *t;
    const size_t *indices;
} Refind;

static void tree__refind_one(void *ctx, size_t k)
{
    Refind *r = ctx;
    P2sTreeEntry *e = &r->t->entries.contents[r->indices[k]];
    if (e->finished_early) {
        tree__parse_afresh(e);  /* its output was made with a miss that did not hold */
        if (e->status == P2S_TRANSPILE_OK)
            tree__find(r->t, e);
    } else if (e->parked) {
        tree__unpark_and_find(r->t, e);
    } else {
        tree__find(r->t, e);
    }
}

/* A round's modules are found again on the workers (a parked one parsed again for it): the
 * external set is only read while they run. */
static void tree__refind(void *ctx, const size_t *indices, size_t n)
{
    Refind r = {ctx, indices};
    p2s_parallel_for(n, r.t->jobs, tree__refind_one, &r);
}

/* A parked module's re-exports that resolution added without finding it again join its
 * exports, which marking the exports left as written reads (a parked module that rewrites
 * nothing is never found again). */
static void tree__keep_resolved_reexports(P2sTree *t)
{
    for (size_t i = 0; i < t->entries.size; i++) {
        P2sTreeEntry *e = &t->entries.contents[i];
        for (size_t k = 0; e->parked && k < e->export_miss_names.size; k++) {
            const char *name = e->export_miss_names.contents[k], *target = e->export_miss_targets.contents[k];
            bool known = false;
            for (size_t j = 0; j < e->exports.size && !known; j++)
                known = strcmp(e->exports.contents[j], name) == 0;
            if (known || !p2s_externals_get(&t->external, target, strlen(target)))
                continue;
            array_push(&e->exports, p2s_strdup(name));
            array_push(&e->export_targets, p2s_strdup(target));
            array_push(&e->export_signatures, NULL);
        }
    }
}

void p2s_tree_resolve_across_modules(P2sTree *t)
{
    p2s_resolve_exports(&t->external, t->entries.size, tree__facts, tree__refind, t);
    tree__keep_resolved_reexports(t);
}

/* Finishes a found module; notes which of its exports are left as written. */
static void tree__finish(P2sTree *t, P2sTreeEntry *e)
{
    e->unit.drop_tree_when_verified = !t->opts->list;
    e->unit.lint_only = t->outputs_unwanted;  /* no emit, no verification */
    e->status = p2s_unit_finish(&e->unit, t->rules);
    p2s_strings_release(&e->as_written);
    if (p2s_transpile_made_output(e->status))
        p2s_resolve_as_written_exports(e->module, &e->unit.found, &e->as_written);
    if (!t->opts->list)
        tree__drop_tree(e);  /* the output is made; only --list reads the findings */
}

/* The k-th biggest entry, found: finished (a parallel_for body). */
static void tree__finish_nth(void *ctx, size_t k)
{
    P2sTree *t = ctx;
    P2sTreeEntry *e = &t->entries.contents[t->by_size[k]];
    if (!e->read_ok || e->status != P2S_TRANSPILE_OK || t->opts->parse_only || (e->parked && !e->rewrites) ||
        e->finished_early)
        return;
    if (e->parked) {
        e->kept = true;  /* past the budget: this worker's one tree at a time */
        tree__unpark_and_find(t, e);
        if (e->status != P2S_TRANSPILE_OK)
            return;
    }
    tree__finish(t, e);
}

void p2s_tree_finish_found(P2sTree *t)
{
    p2s_parallel_for(t->entries.size, t->jobs, tree__finish_nth, t);
}

/* An entry's facts for leaving as written across modules, once finished: its exports (the
 * findings', or what was kept of them when its tree was dropped), those left as written, and
 * what it uses when it may be finished again for one (it made an output that rewrites). */
static bool tree__written_facts(void *ctx, size_t i, P2sModuleFacts *out)
{
    const P2sTreeEntry *e = &((const P2sTree *)ctx)->entries.contents[i];
    if (!e->read_ok)
        return false;
    bool tree = e->unit.tree != NULL;
    bool again = p2s_transpile_made_output(e->status) && !(e->parked && !e->rewrites);
    *out = (P2sModuleFacts){0};
    out->module = e->module;
    out->exports = tree ? &e->unit.found.exports : &e->exports;
    out->export_targets = tree ? &e->unit.found.export_targets : &e->export_targets;
    out->as_written = &e->as_written;
    out->uses = !again ? NULL : tree ? &e->unit.found.externals_used : &e->depends;
    return true;
}

/* Finds and finishes modules again (one tree at a time, on this thread) now that names they
 * use are left as written. */
static void tree__finish_again(void *ctx, const size_t *indices, size_t n)
{
    P2sTree *t = ctx;
    for (size_t k = 0; k < n; k++) {
        P2sTreeEntry *e = &t->entries.contents[indices[k]];
        e->kept = true;
        tree__parse_afresh(e);
        if (e->status != P2S_TRANSPILE_OK)
            continue;
        tree__find(t, e);
        if (!e->parked)
            tree__finish(t, e);
    }
}

/* A module's calls of another module's PyLayer left as written stay as written too, and its
 * subclasses of one are left as written (resolve.c's rounds). */
void p2s_tree_leave_as_written_across_modules(P2sTree *t)
{
    p2s_resolve_as_written(&t->external, t->entries.size, tree__written_facts, tree__finish_again, t);
}

/* Entries from `from` on, for a parallel_for body, and what is done to each. */
typedef struct {
    P2sTree *t;
    size_t from;
    void (*each)(P2sTree *t, P2sTreeEntry *e);
} Range;

static void tree__range_nth(void *ctx, size_t k)
{
    Range *r = ctx;
    r->each(r->t, &r->t->entries.contents[r->from + k]);
}

void p2s_tree_each_in_range(P2sTree *t, size_t from, size_t end, unsigned jobs,
                            void (*each)(P2sTree *t, P2sTreeEntry *e))
{
    Range r = {t, from, each};
    p2s_parallel_for(end - from, jobs, tree__range_nth, &r);
}

void p2s_tree_analyze_range(P2sTree *t, size_t from, size_t end)
{
    p2s_tree_each_in_range(t, from, end, t->jobs, tree__analyze);
}

static char *tree__strip_slashes(const char *path)
{
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/')
        n--;
    return p2s_strndup(path, n);
}

void p2s_tree_release(P2sTree *t)
{
    for (size_t i = 0; i < t->entries.size; i++) {
        P2sTreeEntry *e = &t->entries.contents[i];
        if (e->read_ok) {
            p2s_unit_release(&e->unit);
            p2s_source_release(&e->src);
        }
        p2s_diag_sink_release(&e->io);
        p2s_output_batch_release(&e->written);
        tree__unpark(e);
        if (e->parsed)
            ts_tree_delete(e->parsed);
        p2s_strings_release(&e->export_miss_names);
        p2s_strings_release(&e->export_miss_targets);
        p2s_nameset_release(&e->exports_read);
        p2s_strings_release(&e->depends);
        p2s_strings_release(&e->as_written);
        p2s_strings_release(&e->imported);
        if (t->imports)
            array_delete(&t->imports[i]);
        p2s_free(e->rel);
        p2s_free(e->module);
    }
    array_delete(&t->entries);
    p2s_free(t->by_size);
    p2s_free(t->order);
    p2s_free(t->position);
    p2s_free(t->imports);
    p2s_free(t->shared);
    p2s_nameset_release(&t->modules);
    pthread_rwlock_destroy(&t->external_lock);
    pthread_mutex_destroy(&t->shared_lock);
    pthread_cond_destroy(&t->shared_changed);
    p2s_output_batch_release(&t->batch);
    p2s_externals_release(&t->external);
    p2s_free(t->src_root);
    p2s_free(t->out_root);
    p2s_free(t->package_prefix);
    p2s_free(t->abs_root);
}

void p2s_tree_init(P2sTree *t, const P2sOptions *opts, const P2sRules *rules, const P2sProject *project)
{
    memset(t, 0, sizeof *t);
    t->opts = opts;
    t->rules = rules;
    t->project = project;
    pthread_rwlock_init(&t->external_lock, NULL);
    pthread_mutex_init(&t->shared_lock, NULL);
    pthread_cond_init(&t->shared_changed, NULL);
    p2s_externals_init(&t->external);
    p2s_output_batch_init(&t->batch);
}

int p2s_tree_run(const P2sOptions *opts, const P2sRules *rules, const P2sProject *project, P2sReport *report)
{
    P2sTree t;
    p2s_tree_init(&t, opts, rules, project);
    t.src_root = tree__strip_slashes(opts->input);
    char *abs_root = realpath(t.src_root, NULL);
    t.abs_root = abs_root ? p2s_strdup(abs_root) : NULL;
    free(abs_root);  /* from realpath */
    t.out_root = tree__strip_slashes(opts->in_place || !opts->output ? opts->input : opts->output);
    t.package_prefix = p2s_project_package_prefix(t.src_root);
    int code = P2S_EXIT_OK;

    struct stat src_stat;
    t.out_exists = stat(t.out_root, &t.out_stat) == 0;
    if (!opts->in_place && opts->output && t.out_exists && stat(t.src_root, &src_stat) == 0 &&
        src_stat.st_dev == t.out_stat.st_dev && src_stat.st_ino == t.out_stat.st_ino) {
        fprintf(stderr, "pylayer2static: error: output directory '%s' is the input; use --in-place to rewrite it\n",
                opts->output);
        code = P2S_EXIT_USAGE;
        goto done;
    }
    if (opts->in_place)
        t.out_exists = false;  /* the tree itself is the output: walk all of it */
    tree__walk_entries(&t);
    for (size_t i = 0; i < t.entries.size; i++)
        if (t.entries.contents[i].python) {
            P2sTreeEntry *e = &t.entries.contents[i];
            e->module = p2s_project_name_file(project, t.abs_root, t.package_prefix, e->rel, &e->is_package);
        }
    unsigned jobs = t.jobs = opts->jobs ? opts->jobs : p2s_parallel_default_jobs();
    p2s_tree_order_by_size(&t);
    if (opts->parse_only) {
        p2s_parallel_for(t.entries.size, jobs, tree__parse_nth, &t);
    } else {
        p2s_parallel_for(t.entries.size, jobs, tree__read_nth, &t);
        tree__order_by_imports(&t);
        p2s_parallel_for(t.entries.size, jobs, tree__analyze_in_order, &t);
        /* The set the analysis filled is not the rounds': they start from nothing, so that
         * every name is new in some round and each module that missed it is found again. */
        p2s_externals_release(&t.external);
        p2s_externals_init(&t.external);
        p2s_tree_resolve_across_modules(&t);
    }
    p2s_tree_finish_found(&t);
    if (!opts->parse_only)
        p2s_tree_leave_as_written_across_modules(&t);
    p2s_tree_report_and_deliver(&t, report, jobs);
    if (opts->depfile && !opts->check && !opts->diff)
        p2s_tree_write_depfile(&t);
    code = t.internal_error ? P2S_EXIT_INTERNAL
         : t.io_error ? P2S_EXIT_IO
         : (t.input_error || t.stale) ? P2S_EXIT_INPUT
         : P2S_EXIT_OK;
done:
    p2s_tree_release(&t);
    return code;
}
