/* transpile.c — one source through the pipeline. */
#include "transpile.h"

#include <string.h>

#include "check.h"
#include "emit.h"
#include "parse.h"
#include "plan.h"
#include "suppress.h"

void p2s_unit_init(P2sUnit *self, const P2sSource *src)
{
    memset(self, 0, sizeof *self);
    self->src = src;
    p2s_diag_sink_init(&self->sink);
    p2s_strbuf_init(&self->out);
}

void p2s_unit_release(P2sUnit *self)
{
    p2s_unit_drop_tree(self);
    p2s_diag_sink_release(&self->sink);
    p2s_strbuf_release(&self->out);
}

void p2s_unit_drop_tree(P2sUnit *self)
{
    p2s_findings_release(&self->found);
    if (self->tree)
        ts_tree_delete(self->tree);
    self->tree = NULL;
}

P2sTranspileStatus p2s_unit_parse(P2sUnit *self)
{
    return p2s_unit_reparse(self, NULL, NULL);
}

P2sTranspileStatus p2s_unit_reparse(P2sUnit *self, const TSTree *old, TSTree **keep)
{
    if (keep)
        *keep = NULL;
    if (p2s_source_validate(self->src, &self->sink) < 0)
        return P2S_TRANSPILE_INPUT_ERROR;
    size_t errors_before = self->sink.errors, diags_before = self->sink.items.size;
    TSTree *tree = p2s_parse_incremental(self->src, old, &self->sink);
    if (keep)
        *keep = ts_tree_copy(tree);
    if (self->sink.errors > errors_before) {
        p2s_parse_explain_limits(self->src, &self->sink, diags_before);
        ts_tree_delete(tree);
        return P2S_TRANSPILE_INPUT_ERROR;
    }
    self->tree = tree;
    return P2S_TRANSPILE_OK;
}

void p2s_unit_find(P2sUnit *self, const P2sRules *rules, const P2sModule *module)
{
    p2s_findings_release(&self->found);
    p2s_find(self->src, self->tree, rules, module, &self->found);
}

/* Offsets of the source's '\n' bytes: tree-sitter points count rows at '\n' only, and
 * columns in bytes. */
typedef Array(size_t) Newlines;

static void transpile__newlines(const P2sSource *src, Newlines *out)
{
    for (const char *nl = src->bytes; (nl = memchr(nl, '\n', src->len - (size_t)(nl - src->bytes))); nl++)
        array_push(out, (size_t)(nl - src->bytes));
}

static TSPoint transpile__point(const Newlines *newlines, size_t offset)
{
    size_t lo = 0, hi = newlines->size;  /* rows = newlines before offset */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (newlines->contents[mid] < offset)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t line_start = lo ? newlines->contents[lo - 1] + 1 : 0;
    TSPoint p = {(uint32_t)lo, (uint32_t)(offset - line_start)};
    return p;
}

static TSPoint transpile__advance(TSPoint start, const char *text, size_t len)
{
    const char *last = memrchr(text, '\n', len);
    for (const char *nl = text; nl && (nl = memchr(nl, '\n', len - (size_t)(nl - text))); nl++)
        start.row++;
    start.column = last ? (uint32_t)(len - (size_t)(last - text) - 1) : start.column + (uint32_t)len;
    return start;
}

/* Tells tree of one edit in original coordinates: edits are told from the last to the first,
 * so the text before each is still the original's. */
static void transpile__tell_edit(TSTree *tree, const Newlines *newlines, size_t start, size_t end,
                                 const char *text, size_t len)
{
    TSInputEdit edit;
    edit.start_byte = (uint32_t)start;
    edit.old_end_byte = (uint32_t)end;
    edit.new_end_byte = (uint32_t)(start + len);
    edit.start_point = transpile__point(newlines, start);
    edit.old_end_point = transpile__point(newlines, end);
    edit.new_end_point = transpile__advance(edit.start_point, text, len);
    ts_tree_edit(tree, &edit);
}

/* The output must parse as cleanly as the input did: anything else is our bug. The input's
 * tree is told of the edits and reparsed incrementally, so only what changed is parsed again. */
static int transpile__verify(const P2sUnit *unit, const P2sPlan *plan, const P2sStrbuf *output,
                             P2sDiagSink *sink)
{
    const P2sSource *src = unit->src;
    P2sSource out_src;
    P2sDiagSink scratch;
    p2s_source_view(&out_src, src->name, output->buf, output->len);
    p2s_diag_sink_init(&scratch);
    Newlines newlines = {0};
    transpile__newlines(src, &newlines);
    TSTree *old = ts_tree_copy(unit->tree);
    transpile__tell_edit(old, &newlines, src->len, src->len, plan->tail.buf, plan->tail.len);
    for (size_t i = plan->edits.size; i-- > 0;) {
        const P2sEdit *e = &plan->edits.contents[i];
        transpile__tell_edit(old, &newlines, e->start, e->end, e->text, strlen(e->text));
    }
    array_delete(&newlines);
    TSTree *tree = p2s_parse_incremental(&out_src, old, &scratch);
    int rc = 0;
    if (scratch.errors > 0) {
        const P2sDiag *first = &scratch.items.contents[0];
        size_t line, col;
        p2s_source_position(&out_src, first->span.start, &line, &col);
        p2s_diag_emit_file(sink, P2S_ERROR, "P2S900",
                           "internal error: the transpiled output does not parse (%s at output line %zu:%zu); nothing was written; please report this input",
                           first->message, line, col);
        rc = -1;
    }
    ts_tree_delete(tree);
    ts_tree_delete(old);
    p2s_diag_sink_release(&scratch);
    p2s_source_release(&out_src);
    return rc;
}

P2sTranspileStatus p2s_unit_finish(P2sUnit *self, const P2sRules *rules)
{
    P2sTranspileStatus status = P2S_TRANSPILE_INTERNAL_ERROR;
    P2sPlan plan;
    p2s_plan_init(&plan);
    self->changed = false;
    p2s_strbuf_reset(&self->out);

    /* A broken contract leaves the classes and sites at fault as written (check.c marks them);
     * the rest is transpiled, and the run still fails. */
    P2sTranspileStatus made = p2s_check(self->src, &self->found, rules, &self->sink) > 0
                            ? P2S_TRANSPILE_CONTRACT_ERROR : P2S_TRANSPILE_OK;
    size_t planned_from = self->sink.items.size;
    if (p2s_plan_build(self->src, &self->found, rules, !self->lint_only, &self->sink, &plan) < 0) {
        if (strcmp(array_back(&self->sink.items)->code, "P2S001") == 0)
            status = P2S_TRANSPILE_INPUT_ERROR;
        goto done;
    }
    p2s_suppress_filter(&self->sink, planned_from, self->src, rules);
    if (p2s_plan_is_empty(&plan)) {
        p2s_strbuf_add(&self->out, self->src->bytes, self->src->len);
        status = made;
        goto done;
    }
    /* The grammar misreads lone-CR line endings without always failing: such a file is
     * passed through, but never rewritten from a tree that may be wrong. */
    if (p2s_parse_lone_cr(self->src) != SIZE_MAX) {
        p2s_parse_explain_limits(self->src, &self->sink, self->sink.items.size);
        status = P2S_TRANSPILE_INPUT_ERROR;
        goto done;
    }
    if (self->lint_only) {  /* every diagnostic is in: the output is not wanted */
        status = made;
        goto done;
    }
    p2s_emit(self->src, &plan, &self->out);
    if (transpile__verify(self, &plan, &self->out, &self->sink) < 0) {
        p2s_strbuf_reset(&self->out);
        goto done;
    }
    self->changed = true;
    status = made;
done:
    p2s_plan_release(&plan);
    return status;
}

/* Moves the unit's diagnostics into sink (the caller's sink outlives the unit). */
static void transpile__move_diagnostics(P2sUnit *unit, P2sDiagSink *sink)
{
    for (size_t i = 0; i < unit->sink.items.size; i++) {
        array_push(&sink->items, unit->sink.items.contents[i]);
        if (unit->sink.items.contents[i].severity == P2S_ERROR)
            sink->errors++;
    }
    unit->sink.items.size = 0;
    unit->sink.errors = 0;
}

P2sTranspileStatus p2s_transpile(const P2sSource *src, const P2sRules *rules, P2sTranspileMode mode,
                                 P2sDiagSink *sink, P2sStrbuf *out, bool *changed)
{
    P2sUnit unit;
    p2s_unit_init(&unit, src);
    *changed = false;
    P2sTranspileStatus status = p2s_unit_parse(&unit);
    if (status == P2S_TRANSPILE_OK && mode == P2S_MODE_PARSE_ONLY) {
        p2s_strbuf_add(out, src->bytes, src->len);
    } else if (status == P2S_TRANSPILE_OK) {
        p2s_unit_find(&unit, rules, NULL);
        status = p2s_unit_finish(&unit, rules);
        if (p2s_transpile_made_output(status)) {
            p2s_strbuf_add(out, unit.out.buf, unit.out.len);
            *changed = unit.changed;
        }
    }
    transpile__move_diagnostics(&unit, sink);
    p2s_unit_release(&unit);
    return status;
}
