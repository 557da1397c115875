/* tree_deliver.c — what a tree-mode run leaves once its modules are finished (tree.c): each
 * entry's output, or its source unchanged, delivered (written, compared for --check, shown for
 * --diff) and every other file copied, window by window, with diagnostics reported in path
 * order; then the --depfile. A window's temp files are written on the workers, each touching
 * its own entry; this thread reports them, syncs once and renames, so -jN writes what -j1 does. */
#include "tree.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "deliver.h"
#include "walk.h"

static int tree_deliver__mkdirs(const char *path, P2sStrbuf *err)
{
    P2sStrbuf dir;
    p2s_strbuf_init(&dir);
    int rc = 0;
    for (const char *p = path; (p = strchr(p + 1, '/'));) {
        p2s_strbuf_reset(&dir);
        p2s_strbuf_add(&dir, path, (size_t)(p - path));
        if (mkdir(dir.buf, 0777) < 0 && errno != EEXIST) {
            p2s_strbuf_addf(err, "cannot create directory '%s': %s", dir.buf, strerror(errno));
            rc = -1;
            break;
        }
    }
    p2s_strbuf_release(&dir);
    return rc;
}

/* Delivers bytes as e's output; with a batch, its temp file is written now and renamed at the
 * batch's flush. I/O errors go to e->io (and so to the run's exit code when reported). */
static void tree_deliver__bytes(P2sTree *t, const P2sOptions *opts, P2sTreeEntry *e, const char *bytes, size_t len,
                                const P2sSource *input, FILE *diff_stream, P2sOutputBatch *batch)
{
    char *dest = p2s_walk_join(t->out_root, e->rel);
    P2sStrbuf err;
    p2s_strbuf_init(&err);
    bool writes = !opts->check && !opts->diff;
    if (writes && tree_deliver__mkdirs(dest, &err) < 0) {
        p2s_diag_emit_file(&e->io, P2S_ERROR, "", "%s", err.buf);
    } else {
        P2sDeliverStatus st = p2s_deliver(opts, dest, input, bytes, len, diff_stream, batch, &err);
        if (st == P2S_DELIVER_STALE)
            t->stale = true;  /* --check, which delivers on this thread */
        if (st == P2S_DELIVER_IO_ERROR)
            p2s_diag_emit_file(&e->io, P2S_ERROR, "", "%s", err.buf);
    }
    p2s_strbuf_release(&err);
    p2s_free(dest);
}

/* Other files are copied; --check compares them too, --diff does not show them. */
static void tree_deliver__copy(P2sTree *t, P2sTreeEntry *e, FILE *diff_stream, P2sOutputBatch *batch)
{
    if (t->opts->diff && !t->opts->check)
        return;
    char *path = p2s_walk_join(t->src_root, e->rel);
    P2sSource src;
    if (p2s_source_read_path(&src, path, path, P2S_SOURCE_LIMIT, &e->io) == 0) {
        P2sOptions no_diff = *t->opts;
        no_diff.diff = false;
        tree_deliver__bytes(t, &no_diff, e, src.bytes, src.len, &src, diff_stream, batch);
        p2s_source_release(&src);
    }
    p2s_free(path);
}

/* What becomes of one entry: its output (or its source, unchanged) delivered, a copy of a file
 * that is no Python. Touches only e, the file system and, for --check/--diff (on this thread),
 * the streams. */
static void tree_deliver__entry(P2sTree *t, P2sTreeEntry *e, FILE *out, P2sOutputBatch *batch)
{
    const P2sOptions *opts = t->opts;
    if (opts->lint || opts->list)
        return;
    if (e->python && e->read_ok) {
        if (!p2s_transpile_made_output(e->status))
            return;
        if ((e->parked && !e->rewrites) || opts->parse_only)
            tree_deliver__bytes(t, opts, e, e->src.bytes, e->src.len, &e->src, out, batch);
        else
            tree_deliver__bytes(t, opts, e, e->unit.out.buf, e->unit.out.len, &e->src, out, batch);
    } else if (!e->python && !e->io.items.size && !opts->in_place) {
        tree_deliver__copy(t, e, out, batch);
    }
}

/* Outputs are written window by window: the workers write a window's temp files (read what is
 * there, compare, write the temp file), then this thread reports the window's files in path
 * order, syncs once and renames. A window is bounded by the cleanup registry's slots. */
#define TREE_DELIVER_WINDOW 128

static void tree_deliver__write_one(P2sTree *t, P2sTreeEntry *e)
{
    tree_deliver__entry(t, e, stdout, &e->written);
    p2s_strbuf_release(&e->unit.out);  /* written: only the report is left to make */
}

void p2s_tree_report_and_deliver(P2sTree *t, P2sReport *report, unsigned jobs)
{
    const P2sOptions *opts = t->opts;
    /* --check and --diff print as they compare, so they stay on this thread, in path order */
    bool on_workers = !opts->check && !opts->diff;
    FILE *out = stdout;
    P2sStrbuf err;
    p2s_strbuf_init(&err);
    for (size_t from = 0; from < t->entries.size; from += TREE_DELIVER_WINDOW) {
        size_t to = from + TREE_DELIVER_WINDOW < t->entries.size ? from + TREE_DELIVER_WINDOW : t->entries.size;
        if (on_workers)
            p2s_tree_each_in_range(t, from, to, jobs, tree_deliver__write_one);
        for (size_t i = from; i < to; i++) {
            P2sTreeEntry *e = &t->entries.contents[i];
            char *display = p2s_walk_join(t->src_root, e->rel);
            if (e->python && e->read_ok) {
                if (e->status == P2S_TRANSPILE_CONTRACT_ERROR)
                    t->input_error = true;  /* and delivered like any output */
                if (e->status == P2S_TRANSPILE_INPUT_ERROR)
                    t->input_error = true;
                else if (e->status == P2S_TRANSPILE_INTERNAL_ERROR)
                    t->internal_error = true;
                else if (opts->list)
                    p2s_deliver_list(display, &e->unit, out);
            }
            if (on_workers)
                p2s_output_batch_take(&t->batch, &e->written);
            else
                tree_deliver__entry(t, e, out, &t->batch);
            if (e->python && e->read_ok)
                p2s_report_file(report, display, &e->src, &e->unit.sink);
            if (e->io.items.size) {
                t->io_error = true;
                p2s_report_file(report, display, NULL, &e->io);
            }
            p2s_free(display);
        }
        if (p2s_output_batch_flush(&t->batch, &err) < 0)
            t->io_error = true;
    }
    if (t->io_error && err.len)
        fprintf(stderr, "pylayer2static: error: %s\n", err.buf);
    p2s_strbuf_release(&err);
}

static void tree_deliver__add_escaped(P2sStrbuf *out, const char *path)
{
    for (const char *p = path; *p; p++) {
        if (*p == ' ' || *p == '#' || *p == '\\' || *p == ':')
            p2s_strbuf_addch(out, '\\');
        if (*p == '$')
            p2s_strbuf_addch(out, '$');
        p2s_strbuf_addch(out, *p);
    }
}

/* The modules an entry's PyLayers come from, transitively (a re-export depends on its source). */
static void tree_deliver__dependencies(const P2sTree *t, const P2sNameSet *modules, const P2sTreeEntry *e,
                                       P2sNameSet *seen, P2sStrbuf *line)
{
    const P2sStrings *used = e->unit.tree ? &e->unit.found.externals_used : &e->depends;
    for (size_t k = 0; k < used->size; k++) {
        const char *q = used->contents[k];
        const char *dot = strrchr(q, '.');
        size_t index;
        if (!p2s_nameset_get(modules, q, dot ? (size_t)(dot - q) : 0, &index))
            continue;
        const P2sTreeEntry *dep = &t->entries.contents[index];
        if (dep == e || !p2s_nameset_add(seen, dep->rel, strlen(dep->rel)))
            continue;
        char *path = p2s_walk_join(t->src_root, dep->rel);
        p2s_strbuf_addch(line, ' ');
        tree_deliver__add_escaped(line, path);
        p2s_free(path);
        tree_deliver__dependencies(t, modules, dep, seen, line);
    }
}

void p2s_tree_write_depfile(P2sTree *t)
{
    P2sStrbuf text;
    P2sNameSet modules;   /* module name -> its entry */
    p2s_strbuf_init(&text);
    p2s_nameset_init(&modules);
    for (size_t i = 0; i < t->entries.size; i++) {
        const char *name = t->entries.contents[i].module;
        if (name && !p2s_nameset_contains(&modules, name, strlen(name)))
            p2s_nameset_put(&modules, name, strlen(name), i);
    }
    for (size_t i = 0; i < t->entries.size; i++) {
        const P2sTreeEntry *e = &t->entries.contents[i];
        if (!e->python || !e->read_ok || e->status != P2S_TRANSPILE_OK)
            continue;
        char *dest = p2s_walk_join(t->out_root, e->rel);
        char *src = p2s_walk_join(t->src_root, e->rel);
        tree_deliver__add_escaped(&text, dest);
        p2s_strbuf_adds(&text, ": ");
        tree_deliver__add_escaped(&text, src);
        P2sNameSet seen;
        p2s_nameset_init(&seen);
        tree_deliver__dependencies(t, &modules, e, &seen, &text);
        p2s_nameset_release(&seen);
        p2s_strbuf_addch(&text, '\n');
        p2s_free(dest);
        p2s_free(src);
    }
    P2sStrbuf err;
    p2s_strbuf_init(&err);
    if (p2s_output_write_file(t->opts->depfile, text.buf, text.len, &err) < 0) {
        fprintf(stderr, "pylayer2static: error: %s\n", err.buf);
        t->io_error = true;
    }
    p2s_strbuf_release(&err);
    p2s_strbuf_release(&text);
    p2s_nameset_release(&modules);
}
