/* transpile.c — one source through the pipeline. */
#include "transpile.h"

#include <string.h>

#include "check.h"
#include "emit.h"
#include "parse.h"
#include "plan.h"
#include "suppress.h"
#include "untranspile.h"

void p2s_unit_init(P2sUnit *self, const P2sSource *src)
{
    memset(self, 0, sizeof *self);
    self->src = src;
    p2s_diag_sink_init(&self->sink);
    p2s_strbuf_init(&self->out);
}

/* Back to the input, when an earlier parse undid it. */
static void transpile__restore(P2sUnit *self)
{
    if (!self->input)
        return;
    self->src = self->input;
    self->input = NULL;
    p2s_source_release(&self->undone);
    array_delete(&self->undo);
}

void p2s_unit_release(P2sUnit *self)
{
    p2s_unit_drop_tree(self);
    transpile__restore(self);
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

/* A file ending in the marker: the pipeline goes on with this tool's rewrites undone, when that
 * parses cleanly (anything else was not written by it: the file then passes through). */
static void transpile__undo(P2sUnit *self)
{
    P2sUndoEdits edits = {0};
    p2s_untranspile_edits(self->src, self->tree, &edits);
    if (!edits.size)
        return;
    P2sStrbuf text;
    P2sDiagSink scratch;
    p2s_strbuf_init(&text);
    p2s_diag_sink_init(&scratch);
    p2s_untranspile_apply(self->src, &edits, &text);
    P2sSource undone;
    p2s_source_from_bytes(&undone, self->src->name, text.buf, text.len);
    TSTree *tree = p2s_parse(&undone, &scratch);
    if (scratch.errors || p2s_untranspile_has_marker(&undone)) {
        ts_tree_delete(tree);
        p2s_source_release(&undone);
        array_delete(&edits);
    } else {
        ts_tree_delete(self->tree);
        self->tree = tree;
        self->input = self->src;
        self->undone = undone;
        self->src = &self->undone;
        self->undo = edits;
        self->mapped_diags = self->sink.items.size;
    }
    p2s_diag_sink_release(&scratch);
    p2s_strbuf_release(&text);
}

P2sTranspileStatus p2s_unit_reparse(P2sUnit *self, const TSTree *old, TSTree **keep)
{
    transpile__restore(self);
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
    if (self->regenerate && !keep)
        transpile__undo(self);
    return P2S_TRANSPILE_OK;
}

void p2s_unit_find(P2sUnit *self, const P2sRules *rules, const P2sModule *module)
{
    p2s_findings_release(&self->found);
    p2s_find(self->src, self->tree, rules, module, &self->found);
}

/* Where the input splits into pieces that parse independently: 0, and the start of each
 * top-level statement (not a comment) that begins a line at column 0 after a line that does
 * not continue (no trailing backslash). At such a point the parser is where it is at the start
 * of a file: every block is closed (a statement at column 0 follows), no bracket or string is
 * open and no continuation pending (the piece before parsed without error), and a module is
 * a sequence of statements. */
/* The first syntax error of scratch, found parsing output from offset `from`, becomes an
 * internal error (P2S900) with its position in the whole output. Returns -1 when there is one. */
static int transpile__report_unparsable(const P2sSource *src, const P2sStrbuf *output, size_t from,
                                        const P2sDiagSink *scratch, P2sDiagSink *sink)
{
    if (scratch->errors == 0)
        return 0;
    P2sSource whole;
    p2s_source_view(&whole, src->name, output->buf, output->len);
    size_t line, col;
    p2s_source_position(&whole, from + scratch->items.contents[0].span.start, &line, &col);
    p2s_diag_emit_file(sink, P2S_ERROR, "P2S900",
                       "internal error: the transpiled output does not parse (%s at output line %zu:%zu); nothing was written; please report this input",
                       scratch->items.contents[0].message, line, col);
    p2s_source_release(&whole);
    return -1;
}

/* Parses output[from, to) as a source of its own (old: NULL, or a tree of an earlier text told
 * of the edits that made this one); see transpile__report_unparsable. */
static int transpile__parses(const P2sSource *src, const P2sStrbuf *output, size_t from, size_t to,
                             const TSTree *old, P2sDiagSink *sink)
{
    P2sSource part;
    P2sDiagSink scratch;
    p2s_source_view(&part, src->name, output->buf + from, to - from);
    p2s_diag_sink_init(&scratch);
    ts_tree_delete(p2s_parse_incremental(&part, old, &scratch));
    int rc = transpile__report_unparsable(src, output, from, &scratch, sink);
    p2s_diag_sink_release(&scratch);
    p2s_source_release(&part);
    return rc;
}

/* point moved past text[0, n). */
static TSPoint transpile__advance(TSPoint point, const char *text, size_t n)
{
    for (const char *p = text, *end = text + n; p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl) {
            point.column += (uint32_t)(end - p);
            break;
        }
        point.row++;
        point.column = 0;
        p = nl + 1;
    }
    return point;
}

/* A copy of the input's tree told of the plan's edits, in order, and of the blank lines that
 * lead the generated tail (output[user_end, split)): a tree of output[0, split) but for what
 * those edits touched. */
static TSTree *transpile__edited_tree(const P2sUnit *unit, const P2sPlan *plan, const P2sStrbuf *output,
                                      size_t user_end, size_t split)
{
    TSTree *tree = ts_tree_copy(unit->tree);
    TSPoint at = {0, 0};
    size_t scanned = 0, shift = 0;   /* shift: output offset - input offset before edit k */
    for (size_t k = 0; k <= plan->edits.size; k++) {
        bool tail = k == plan->edits.size;
        const P2sEdit *ed = tail ? NULL : &plan->edits.contents[k];
        size_t start = tail ? user_end : ed->start + shift;
        size_t old_len = tail ? 0 : ed->end - ed->start;
        const char *text = tail ? output->buf + user_end : ed->text;
        size_t new_len = tail ? split - user_end : strlen(ed->text);
        at = transpile__advance(at, output->buf + scanned, start - scanned);
        scanned = start;
        TSInputEdit edit = {(uint32_t)start, (uint32_t)(start + old_len), (uint32_t)(start + new_len), at,
                            tail ? at : transpile__advance(at, unit->src->bytes + ed->start, old_len),
                            transpile__advance(at, text, new_len)};
        ts_tree_edit(tree, &edit);
        shift += new_len - old_len;
    }
    return tree;
}

/* The output must parse as cleanly as the input did: anything else is our bug. The user's code
 * with the edits (output[0, split), split past the blank lines that lead the generated tail) is
 * parsed again incrementally from the input's tree told of the edits: tree-sitter parses again
 * only what the edits touched and reuses every subtree they leave alone, which gives the tree
 * a parse from scratch gives; then the generated tail, new text, is parsed on its own (it
 * starts a line at column 0 after blank lines, so it parses alone as it does in place). The
 * input's tree is dropped before the tail when the unit may (drop_tree_when_verified): a big
 * file then never has the input's tree and the tail's alive at once. */
static int transpile__verify(P2sUnit *unit, const P2sPlan *plan, const P2sStrbuf *output, P2sDiagSink *sink)
{
    size_t user_end = output->len - plan->tail.len;
    size_t split = user_end + strspn(plan->tail.buf, "\r\n");
    TSTree *edited = transpile__edited_tree(unit, plan, output, user_end, split);
    int rc = transpile__parses(unit->src, output, 0, split, edited, sink);
    ts_tree_delete(edited);
    if (unit->drop_tree_when_verified) {
        ts_tree_delete(unit->tree);
        unit->tree = NULL;
    }
    if (rc == 0 && split < output->len)
        rc = transpile__parses(unit->src, output, split, output->len, NULL, sink);
    return rc;
}

/* Diagnostics made on the undone text move to the input's offsets, and the output is compared
 * with the input, not with the undone text. */
static void transpile__map_back(P2sUnit *self)
{
    if (!self->input)
        return;
    for (size_t i = self->mapped_diags; i < self->sink.items.size; i++) {
        P2sDiag *d = &self->sink.items.contents[i];
        if (!d->has_span)
            continue;
        d->span.start = p2s_untranspile_map_back(&self->undo, d->span.start, false);
        d->span.end = p2s_untranspile_map_back(&self->undo, d->span.end, true);
    }
    self->mapped_diags = self->sink.items.size;
    if (self->out.len || !self->lint_only)
        self->changed = self->out.len != self->input->len || memcmp(self->out.buf, self->input->bytes, self->out.len) != 0;
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
    switch (p2s_plan_build(self->src, &self->found, rules, !self->lint_only, &self->sink, &plan)) {
    case P2S_PLAN_MADE:
        break;
    case P2S_PLAN_NOT_PYTHON:
        status = P2S_TRANSPILE_INPUT_ERROR;
        goto done;
    case P2S_PLAN_INTERNAL_ERROR:
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
    transpile__map_back(self);
    return status;
}

P2sTranspileStatus p2s_transpile(const P2sSource *src, const P2sRules *rules, P2sDiagSink *sink,
                                 P2sStrbuf *out, bool *changed)
{
    P2sUnit unit;
    p2s_unit_init(&unit, src);
    *changed = false;
    P2sTranspileStatus status = p2s_unit_parse(&unit);
    if (status == P2S_TRANSPILE_OK) {
        p2s_unit_find(&unit, rules, NULL);
        status = p2s_unit_finish(&unit, rules);
        if (p2s_transpile_made_output(status)) {
            p2s_strbuf_add(out, unit.out.buf, unit.out.len);
            *changed = unit.changed;
        }
    }
    p2s_diag_sink_move(sink, &unit.sink);
    p2s_unit_release(&unit);
    return status;
}
