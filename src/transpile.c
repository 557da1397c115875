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

void p2s_unit_moved(P2sUnit *self, const P2sSource *src)
{
    if (self->input) {
        self->input = src;
        self->src = &self->undone;
    } else {
        self->src = src;
    }
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
 * a sequence of statements.
 *
 * A top-level definition (a class, a function) with edits splits further: at the start of the
 * line of each statement of its body that begins its line (after indentation only) after a
 * line that does not continue; and so does, again, a definition among those statements that
 * holds edits (a model's method), down to its own body's statements. Such a nested piece, up
 * to the next one (or the next top-level piece), parses in place as it does alone under
 * `if 1:` (TRANSPILE_NESTED), whatever its indentation: the parser is inside a block at that
 * indentation with nothing open, the piece holds whole statements of that block (and
 * comments or blank lines after them), and it ends where a line at that indentation or less
 * begins. A definition's own lines before its first nested piece (its header, a piece of its
 * own) are then not parsed, so it splits only when no edit is there; nor does the last
 * top-level piece, which takes the tail's leading blank lines. */
#define TRANSPILE_NESTED "if 1:\n"

typedef struct {
    size_t at;
    bool nested;
} PieceStart;

typedef Array(PieceStart) Pieces;

/* Whether the statement at `at` begins its line (only spaces and tabs before it) after a line
 * that does not continue; *line: where its line begins. */
static bool transpile__begins_line(const P2sSource *src, size_t at, size_t *line)
{
    size_t start = at;
    while (start > 0 && (src->bytes[start - 1] == ' ' || src->bytes[start - 1] == '\t'))
        start--;
    *line = start;
    if (start == 0)
        return true;
    if (src->bytes[start - 1] != '\n')
        return false;
    size_t eol = start - 1;
    if (eol > 0 && src->bytes[eol - 1] == '\r')
        eol--;
    return !(eol > 0 && src->bytes[eol - 1] == '\\');
}

/* Index of the first edit that starts at or after `at`. */
static size_t transpile__first_edit(const P2sPlan *plan, size_t at)
{
    size_t lo = 0, hi = plan->edits.size;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (plan->edits.contents[mid].start < at)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

#define TRANSPILE_NESTING_MAX 8   /* definitions split this deep at most (methods of nested classes) */

static void transpile__definition_pieces(const P2sSource *src, TSNode stmt, size_t end, const P2sPlan *plan,
                                         Pieces *pieces, int depth);

/* The nested piece starts of a block's statements (see above): each that begins its line,
 * indented, after a line that does not continue; a definition among them splits further. */
static void transpile__block_pieces(const P2sSource *src, TSNode body, const P2sPlan *plan, Pieces *pieces,
                                    int depth)
{
    TSTreeCursor cursor = ts_tree_cursor_new(body);
    for (bool more = ts_tree_cursor_goto_first_child(&cursor); more; more = ts_tree_cursor_goto_next_sibling(&cursor)) {
        TSNode child = ts_tree_cursor_current_node(&cursor);
        size_t at = ts_node_start_byte(child), line;
        if (!ts_node_is_named(child) || p2s_kind(child) == P2S_KIND_COMMENT ||
            !transpile__begins_line(src, at, &line) || line == at)
            continue;
        array_push(pieces, ((PieceStart){line, true}));
        if (depth < TRANSPILE_NESTING_MAX)
            transpile__definition_pieces(src, child, ts_node_end_byte(child), plan, pieces, depth + 1);
    }
    ts_tree_cursor_delete(&cursor);
}

/* After the piece start of the statement `stmt`, which reaches to `end`: when it is a
 * definition (a class, a function, decorated or not) holding edits, none in its header (its
 * lines before its body's first piece), the piece starts of its body's statements. */
static void transpile__definition_pieces(const P2sSource *src, TSNode stmt, size_t end, const P2sPlan *plan,
                                         Pieces *pieces, int depth)
{
    size_t e = transpile__first_edit(plan, ts_node_start_byte(stmt));
    if (e == plan->edits.size || plan->edits.contents[e].start >= end)
        return;
    TSNode def = p2s_kind(stmt) == P2S_KIND_DECORATED_DEFINITION ? p2s_child(stmt, P2S_FIELD_DEFINITION) : stmt;
    P2sKind kind = p2s_kind(def);
    TSNode body = kind == P2S_KIND_CLASS_DEFINITION || kind == P2S_KIND_FUNCTION_DEFINITION
                ? p2s_child(def, P2S_FIELD_BODY) : (TSNode){0};
    if (ts_node_is_null(body))
        return;
    size_t before = pieces->size;
    transpile__block_pieces(src, body, plan, pieces, depth);
    if (pieces->size > before && plan->edits.contents[e].start < pieces->contents[before].at)
        pieces->size = before;  /* an edit in the header: the definition is one piece */
}

static void transpile__pieces(const P2sSource *src, TSNode root, const P2sPlan *plan, Pieces *pieces)
{
    array_push(pieces, ((PieceStart){0, false}));
    TSNode top = {0};   /* the top-level statement the last piece began with, if any */
    TSTreeCursor cursor = ts_tree_cursor_new(root);
    for (bool more = ts_tree_cursor_goto_first_child(&cursor); more; more = ts_tree_cursor_goto_next_sibling(&cursor)) {
        TSNode stmt = ts_tree_cursor_current_node(&cursor);
        size_t at = ts_node_start_byte(stmt), line;
        if (!ts_node_is_named(stmt) || p2s_kind(stmt) == P2S_KIND_COMMENT ||
            (at > 0 && (!transpile__begins_line(src, at, &line) || line != at)))
            continue;
        if (!ts_node_is_null(top))
            transpile__definition_pieces(src, top, at, plan, pieces, 1);
        top = stmt;
        if (at > 0)
            array_push(pieces, ((PieceStart){at, false}));
    }
    ts_tree_cursor_delete(&cursor);
}

/* Parses output[from, to), after `prefix` (TRANSPILE_NESTED, or ""), as a source of its own;
 * the first syntax error, if any, becomes an internal error (P2S900) with its position in the
 * whole output. */
static int transpile__parses(TSParser *parser, const P2sSource *src, const P2sStrbuf *output, const char *prefix,
                             size_t from, size_t to, P2sDiagSink *sink)
{
    P2sSource part;
    P2sDiagSink scratch;
    P2sStrbuf text;
    size_t skip = strlen(prefix);
    p2s_strbuf_init(&text);
    if (skip) {
        p2s_strbuf_adds(&text, prefix);
        p2s_strbuf_add(&text, output->buf + from, to - from);
    }
    p2s_source_view(&part, src->name, skip ? text.buf : output->buf + from, skip ? text.len : to - from);
    p2s_diag_sink_init(&scratch);
    ts_tree_delete(p2s_parse_with(parser, &part, &scratch));
    int rc = 0;
    if (scratch.errors > 0) {
        P2sSource whole;
        p2s_source_view(&whole, src->name, output->buf, output->len);
        size_t line, col, at = scratch.items.contents[0].span.start;
        p2s_source_position(&whole, from + (at > skip ? at - skip : 0), &line, &col);
        p2s_diag_emit_file(sink, P2S_ERROR, "P2S900",
                           "internal error: the transpiled output does not parse (%s at output line %zu:%zu); nothing was written; please report this input",
                           scratch.items.contents[0].message, line, col);
        p2s_source_release(&whole);
        rc = -1;
    }
    p2s_diag_sink_release(&scratch);
    p2s_source_release(&part);
    p2s_strbuf_release(&text);
    return rc;
}

/* Whether a qualified name is plain: dotted ASCII identifiers, none a keyword (soft ones and
 * those tree-sitter-python reads as statements too: `print`, `exec`). */
static bool transpile__plain_name(const char *qualname)
{
    static const char *const keywords[] = {
        "False", "None", "True", "and", "as", "assert", "async", "await", "break", "case", "class",
        "continue", "def", "del", "elif", "else", "except", "exec", "finally", "for", "from",
        "global", "if", "import", "in", "is", "lambda", "match", "nonlocal", "not", "or", "pass",
        "print", "raise", "return", "try", "type", "while", "with", "yield", "_",
    };
    for (const char *part = qualname;; part++) {
        size_t len = strspn(part, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");
        if (len == 0 || (*part >= '0' && *part <= '9') || (part[len] != '.' && part[len] != '\0'))
            return false;
        for (size_t k = 0; k < sizeof keywords / sizeof keywords[0]; k++)
            if (strlen(keywords[k]) == len && memcmp(keywords[k], part, len) == 0)
                return false;
        part += len;
        if (*part == '\0')
            return true;
    }
}

/* Verifies the generated tail, output[from, len), by shape. A builder is one template over
 * its class's name and forward's parameters (plan.h), and the name stands only where an
 * identifier does (or inside one, or a docstring): with one plain name in place of another
 * the tokens, and so the parse, are the same. So a builder whose bytes are its shape with
 * its own plain name, of a shape parsed already with another plain name, is not parsed again;
 * the rest of the tail, and every other builder, is parsed as it is, in one source. If that
 * fails, the whole tail is parsed to say where. */
static int transpile__verify_tail(TSParser *parser, const P2sSource *src, const P2sPlan *plan,
                                  const P2sStrbuf *output, size_t from, P2sDiagSink *sink)
{
    size_t tail_at = output->len - plan->tail.len;
    P2sStrbuf text, expanded;
    p2s_strbuf_init(&text);
    p2s_strbuf_init(&expanded);
    bool *parsed_plain = p2s_calloc(plan->shapes.size + 1, sizeof(bool));  /* by shape */
    size_t at = from;                  /* output bytes up to here are in text, or verified */
    for (size_t i = 0; i < plan->builders.size; i++) {
        const P2sBuilder *b = &plan->builders.contents[i];
        p2s_strbuf_reset(&expanded);
        p2s_plan_expand(plan->shapes.contents[b->shape], b->qualname, &expanded);
        bool plain = transpile__plain_name(b->qualname) && expanded.len == b->len &&
                     memcmp(expanded.buf, output->buf + tail_at + b->at, b->len) == 0;
        if (plain && parsed_plain[b->shape]) {
            p2s_strbuf_add(&text, output->buf + at, tail_at + b->at - at);
            at = tail_at + b->at + b->len;
        }
        parsed_plain[b->shape] = parsed_plain[b->shape] || plain;
    }
    p2s_strbuf_add(&text, output->buf + at, output->len - at);
    P2sSource part;
    P2sDiagSink scratch;
    p2s_source_view(&part, src->name, text.buf, text.len);
    p2s_diag_sink_init(&scratch);
    ts_tree_delete(p2s_parse_with(parser, &part, &scratch));
    int rc = scratch.errors > 0 ? transpile__parses(parser, src, output, "", from, output->len, sink) : 0;
    p2s_diag_sink_release(&scratch);
    p2s_source_release(&part);
    p2s_free(parsed_plain);
    p2s_strbuf_release(&expanded);
    p2s_strbuf_release(&text);
    return rc;
}

/* The output must parse as cleanly as the input did: anything else is our bug. It is checked
 * piece by piece (transpile__pieces): a piece of the input no edit touches is in the output
 * byte for byte, and parsed cleanly as part of the input, so only the pieces with edits are
 * parsed, each on its own, and the generated tail (by shape: transpile__verify_tail), which
 * starts a line at column 0 after blank lines: the last piece takes those blank lines, and so
 * is always parsed. Pieces parse alone as they do in place, so the output parses cleanly when
 * every piece does. The input's
 * tree is dropped first when the unit may (drop_tree_when_verified): a big file then never has
 * the input's tree and those of its pieces alive at once. */
static int transpile__verify(P2sUnit *unit, const P2sPlan *plan, const P2sStrbuf *output, P2sDiagSink *sink)
{
    const P2sSource *src = unit->src;
    Pieces starts = {0};
    transpile__pieces(src, ts_tree_root_node(unit->tree), plan, &starts);
    if (unit->drop_tree_when_verified) {
        ts_tree_delete(unit->tree);
        unit->tree = NULL;
    }
    size_t tail_at = output->len - plan->tail.len;
    size_t split = tail_at + strspn(plan->tail.buf, "\r\n");
    /* a piece's start inside an edit (none is: edits stay within statements) joins it to the
     * piece before */
    size_t kept = 0;
    for (size_t k = 0, e = 0; k < starts.size; k++) {
        size_t at = starts.contents[k].at;
        while (e < plan->edits.size && plan->edits.contents[e].end <= at)
            e++;
        if (k == 0 || e == plan->edits.size || plan->edits.contents[e].start >= at)
            starts.contents[kept++] = starts.contents[k];
    }
    starts.size = kept;
    size_t e = 0, shift = 0;   /* shift: output offset - input offset before edit e */
    int rc = 0;
    TSParser *parser = p2s_parser_new();  /* one for every piece: a parser's setup outweighs a short piece */
    for (size_t k = 0; k < starts.size && rc == 0; k++) {
        size_t from = starts.contents[k].at + shift;
        bool last = k + 1 == starts.size, edited = last;
        for (; e < plan->edits.size && (last || plan->edits.contents[e].start < starts.contents[k + 1].at); e++) {
            const P2sEdit *ed = &plan->edits.contents[e];
            shift = shift + strlen(ed->text) - (ed->end - ed->start);
            edited = true;
        }
        if (edited)
            rc = transpile__parses(parser, src, output, starts.contents[k].nested ? TRANSPILE_NESTED : "", from,
                                   last ? split : starts.contents[k + 1].at + shift, sink);
    }
    array_delete(&starts);
    if (rc == 0 && split < output->len)
        rc = transpile__verify_tail(parser, src, plan, output, split, sink);
    ts_parser_delete(parser);
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
