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

/* Tells tree of the first `appended` bytes of the tail, then of the edits, grouped by line:
 * edits whose original bytes between them hold no newline are told as one (the text between
 * is parsed again anyway, being next to an edit), since each ts_tree_edit walks the siblings
 * before it at every level. The appended bytes come first and the groups from the last to the
 * first, so the text before each is still the original's; out holds the new text (the
 * output), at the group's start shifted by the edits before it. */
static void transpile__tell_edits(TSTree *tree, const P2sSource *src, const P2sPlan *plan,
                                  const char *out, size_t appended)
{
    typedef struct {
        size_t start, end, out_start, out_end;
    } Group;
    Array(Group) groups = {0};
    Newlines newlines = {0};
    transpile__newlines(src, &newlines);
    TSInputEdit end;
    end.start_byte = end.old_end_byte = (uint32_t)src->len;
    end.new_end_byte = (uint32_t)(src->len + appended);
    end.start_point = end.old_end_point = transpile__point(&newlines, src->len);
    end.new_end_point = transpile__advance(end.start_point, plan->tail.buf, appended);
    ts_tree_edit(tree, &end);
    size_t shift = 0;   /* output offset - input offset, before the current edit */
    for (size_t i = 0; i < plan->edits.size; i++) {
        const P2sEdit *e = &plan->edits.contents[i];
        size_t len = strlen(e->text);
        Group *last = groups.size ? array_back(&groups) : NULL;
        if (last && !memchr(src->bytes + last->end, '\n', e->start - last->end)) {
            last->end = e->end;
            last->out_end = e->start + shift + len;
        } else {
            Group g = {e->start, e->end, e->start + shift, e->start + shift + len};
            array_push(&groups, g);
        }
        shift = shift + len - (e->end - e->start);
    }
    for (size_t i = groups.size; i-- > 0;) {
        const Group *g = &groups.contents[i];
        TSInputEdit edit;
        edit.start_byte = (uint32_t)g->start;
        edit.old_end_byte = (uint32_t)g->end;
        edit.new_end_byte = (uint32_t)(g->start + (g->out_end - g->out_start));
        edit.start_point = transpile__point(&newlines, g->start);
        edit.old_end_point = transpile__point(&newlines, g->end);
        edit.new_end_point = transpile__advance(edit.start_point, out + g->out_start, g->out_end - g->out_start);
        ts_tree_edit(tree, &edit);
    }
    array_delete(&groups);
    array_delete(&newlines);
}

/* Parses output[from, to) as a source of its own; the first syntax error, if any, becomes an
 * internal error (P2S900) with its position in the whole output. old is a tree of an earlier
 * text already told of the edits, or NULL. */
static int transpile__parses(const P2sSource *src, const P2sStrbuf *output, size_t from, size_t to,
                             const TSTree *old, P2sDiagSink *sink)
{
    P2sSource part;
    P2sDiagSink scratch;
    p2s_source_view(&part, src->name, output->buf + from, to - from);
    p2s_diag_sink_init(&scratch);
    ts_tree_delete(p2s_parse_incremental(&part, old, &scratch));
    int rc = 0;
    if (scratch.errors > 0) {
        P2sSource whole;
        p2s_source_view(&whole, src->name, output->buf, output->len);
        size_t line, col;
        p2s_source_position(&whole, from + scratch.items.contents[0].span.start, &line, &col);
        p2s_diag_emit_file(sink, P2S_ERROR, "P2S900",
                           "internal error: the transpiled output does not parse (%s at output line %zu:%zu); nothing was written; please report this input",
                           scratch.items.contents[0].message, line, col);
        p2s_source_release(&whole);
        rc = -1;
    }
    p2s_diag_sink_release(&scratch);
    p2s_source_release(&part);
    return rc;
}

/* The output must parse as cleanly as the input did: anything else is our bug. It is parsed in
 * two parts. The user's code with its edits and the blank lines that open the generated tail:
 * the input's tree is told of the edits and reparsed incrementally, so only what changed is
 * parsed again. Then the rest of the tail, which starts a line at column 0 after blank lines:
 * nothing of the part before (no bracket or string left open, no pending line continuation,
 * since that part parsed alone; indentation closes before a statement at column 0) can change
 * how it parses, so parsing it alone decides as parsing the whole would. In between, the
 * input's tree is dropped when the unit may (drop_tree_when_verified): a big file then never
 * has the input's tree and the tail's alive at once. */
static int transpile__verify(P2sUnit *unit, const P2sPlan *plan, const P2sStrbuf *output, P2sDiagSink *sink)
{
    const P2sSource *src = unit->src;
    size_t tail_at = output->len - plan->tail.len;
    size_t split = tail_at + strspn(plan->tail.buf, "\r\n");
    /* A tree told of edits copies every shared node on the way to them: the unit's own tree
     * is edited when it is dropped after, a copy otherwise. */
    TSTree *old = unit->drop_tree_when_verified ? unit->tree : ts_tree_copy(unit->tree);
    if (unit->drop_tree_when_verified)
        unit->tree = NULL;
    transpile__tell_edits(old, src, plan, output->buf, split - tail_at);
    int rc = transpile__parses(src, output, 0, split, old, sink);
    ts_tree_delete(old);
    if (rc == 0 && split < output->len)
        rc = transpile__parses(src, output, split, output->len, NULL, sink);
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
