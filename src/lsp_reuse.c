/* lsp_reuse.c — keeping diagnostics across an edit that cannot change them.
 *
 * The finder and the checker read a function body only for what it binds in its own scope and
 * for its `.apply` sites (and classes made in it); the checker reads whole bodies only of
 * forward/backward. So an edit confined to one simple statement Q of a function F changes no
 * diagnostic when, before and after the edit:
 *  1. Q is an expression or return statement, a statement of a block, whose nearest enclosing
 *     scope (function, lambda, class) is the function F; Q and each of its ancestors start at the
 *     same bytes, end at the same bytes shifted by the edit's length and have as many children,
 *     before and after, and both parses are clean. The text outside Q is the same, and the parser
 *     is in the same state where Q ends (a complete statement of the same block: no bracket,
 *     string or continuation open), so the rest of the tree is the old one, shifted. (Ranges
 *     from ts_tree_get_changed_ranges would not do: they run on past Q over the lookahead);
 *  2. Q's text, and a few bytes either side, spells none of `apply`, `class`, `import`, `lambda`,
 *     `global`, `nonlocal`, the tool's marker, `noqa` (any case), and no lone CR: Q then holds no
 *     site, class, scope, import, suppression or line-ending hazard, and the walk's "has apply /
 *     class" shortcuts decide as before;
 *  3. no forward/backward of a class contains Q and no class is defined in F (the last full
 *     analysis's facts): no method body the checker collects, no base resolved from F's scope;
 *  4. no identifier of Q (old or new) is a name F resolves: the heads of F's `.apply` objects (and
 *     of called objects) and, through F's `name = value` assignments, the heads of those values,
 *     to a fixed point. Q may bind what it likes in F's scope: nobody looks it up;
 *  5. no class left as written meets an unresolved `.apply` (P2S302 reads every identifier);
 *  6. every diagnostic lies on lines wholly before or after Q's lines (noqa is read per line),
 *     and when the edit adds or removes lines, none is P2S109 (its message names a line);
 *  7. the runtime import would not take a line of its own (the last full analysis's facts): Q
 *     may add or drop a use of one of Paddle's PyLayer-backed APIs (`fleet.utils.recompute(x)`),
 *     which decides whether a module without PyLayers gets the import, and the import's only
 *     diagnostic is P2S090, for a line of its own.
 * The diagnostics are then the old ones, shifted past the edit. */
#include "lsp_reuse.h"

#include <string.h>
#include <strings.h>

#include "alloc.h"
#include "nameset.h"
#include "parse.h"

#define REUSE_MARGIN 8

void p2s_lsp_facts_release(P2sLspFacts *self)
{
    array_delete(&self->methods);
    array_delete(&self->classes);
    memset(self, 0, sizeof *self);
}

void p2s_lsp_facts_set(P2sLspFacts *self, const P2sFindings *found)
{
    p2s_lsp_facts_release(self);
    bool as_written = false, dynamic = false;
    for (size_t i = 0; i < found->classes.size; i++) {
        const P2sPyLayerClass *cls = &found->classes.contents[i];
        array_push(&self->classes, p2s_node_span(cls->node));
        if (p2s_node_present(cls->forward))
            array_push(&self->methods, p2s_node_span(cls->forward));
        if (p2s_node_present(cls->backward))
            array_push(&self->methods, p2s_node_span(cls->backward));
        as_written = as_written || (cls->is_pylayer && cls->as_written);
    }
    for (size_t i = 0; i < found->sites.size; i++)
        dynamic = dynamic || found->sites.contents[i].class_index == P2S_SITE_DYNAMIC;
    self->escaping = as_written && dynamic;
    self->import_own_line = found->runtime_import == P2S_IMPORT_OWN_LINE;
    self->valid = true;
}

/* The statement of a block that holds [from, to], and the function that is its nearest scope. */
static bool reuse__locate(TSNode root, size_t from, size_t to, TSNode *stmt, TSNode *fn)
{
    TSNode n = ts_node_descendant_for_byte_range(root, (uint32_t)from, (uint32_t)to);
    for (;;) {
        TSNode up = ts_node_parent(n);
        if (ts_node_is_null(up))
            return false;
        if (p2s_kind(up) == P2S_KIND_BLOCK)
            break;
        n = up;
    }
    P2sKind k = p2s_kind(n);
    if (k != P2S_KIND_EXPRESSION_STATEMENT && k != P2S_KIND_RETURN_STATEMENT)
        return false;
    *stmt = n;
    for (TSNode up = ts_node_parent(n); !ts_node_is_null(up); up = ts_node_parent(up)) {
        k = p2s_kind(up);
        if (k == P2S_KIND_FUNCTION_DEFINITION) {
            *fn = up;
            return true;
        }
        if (k == P2S_KIND_LAMBDA || k == P2S_KIND_CLASS_DEFINITION)
            return false;
    }
    return false;
}

/* Condition 2 over text[from - margin, to + margin). */
static bool reuse__plain_text(const char *text, size_t len, size_t from, size_t to)
{
    static const char *const words[] = {"apply", "class", "import", "lambda", "global", "nonlocal",
                                        "pylayer2static"};
    from = from > REUSE_MARGIN ? from - REUSE_MARGIN : 0;
    to = to + REUSE_MARGIN < len ? to + REUSE_MARGIN : len;
    const char *p = text + from;
    size_t n = to - from;
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (memmem(p, n, words[i], strlen(words[i])))
            return false;
    for (size_t i = 0; i < n; i++) {
        if (i + 4 <= n && strncasecmp(p + i, "noqa", 4) == 0)
            return false;
        if (p[i] == '\r' && (i + 1 >= n || p[i + 1] != '\n'))
            return false;
    }
    return true;
}

/* The identifier a name lookup starts from: `a` of `a.b.c`, `a(...)`, `(a)`; null node if none. */
static TSNode reuse__head(TSNode node)
{
    for (;;) {
        switch (p2s_kind(node)) {
        case P2S_KIND_IDENTIFIER:
            return node;
        case P2S_KIND_ATTRIBUTE:
            node = p2s_child(node, P2S_FIELD_OBJECT);
            break;
        case P2S_KIND_CALL:
            node = p2s_child(node, P2S_FIELD_FUNCTION);
            break;
        case P2S_KIND_PARENTHESIZED_EXPRESSION:
            if (ts_node_named_child_count(node) != 1)
                return (TSNode){0};
            node = ts_node_named_child(node, 0);
            break;
        default:
            return (TSNode){0};
        }
    }
}

static bool reuse__text_is(const char *text, TSNode node, const char *word)
{
    size_t s = ts_node_start_byte(node), e = ts_node_end_byte(node), n = strlen(word);
    return e - s == n && memcmp(text + s, word, n) == 0;
}

static void reuse__add(P2sNameSet *set, const char *text, TSNode node, bool *grew)
{
    if (ts_node_is_null(node))
        return;
    size_t s = ts_node_start_byte(node);
    if (p2s_nameset_add(set, text + s, ts_node_end_byte(node) - s))
        *grew = true;
}

/* Condition 4's names: what F (walked whole, nested functions too) looks up. */
static void reuse__resolved_names(const char *text, TSNode fn, P2sNameSet *out)
{
    typedef struct {
        TSNode name, value;
    } Alias;
    Array(Alias) aliases = {0};
    bool grew = false;
    TSTreeCursor cursor = ts_tree_cursor_new(fn);
    for (bool more = true; more;) {
        TSNode node = ts_tree_cursor_current_node(&cursor);
        P2sKind k = p2s_kind(node);
        if (k == P2S_KIND_ATTRIBUTE && reuse__text_is(text, p2s_child(node, P2S_FIELD_ATTRIBUTE), "apply")) {
            reuse__add(out, text, reuse__head(p2s_child(node, P2S_FIELD_OBJECT)), &grew);
        } else if (k == P2S_KIND_ASSIGNMENT || k == P2S_KIND_AUGMENTED_ASSIGNMENT) {
            TSNode left = p2s_child(node, P2S_FIELD_LEFT), right = p2s_child(node, P2S_FIELD_RIGHT);
            TSNode head = ts_node_is_null(right) ? right : reuse__head(right);
            if (p2s_kind(left) == P2S_KIND_IDENTIFIER && !ts_node_is_null(head)) {
                Alias a = {left, head};
                array_push(&aliases, a);
            }
        }
        if (ts_tree_cursor_goto_first_child(&cursor))
            continue;
        while (!(more = ts_tree_cursor_goto_next_sibling(&cursor)) && ts_tree_cursor_goto_parent(&cursor))
            ;
    }
    ts_tree_cursor_delete(&cursor);
    for (grew = true; grew;) {
        grew = false;
        for (size_t i = 0; i < aliases.size; i++) {
            size_t s = ts_node_start_byte(aliases.contents[i].name);
            if (p2s_nameset_contains(out, text + s, ts_node_end_byte(aliases.contents[i].name) - s))
                reuse__add(out, text, aliases.contents[i].value, &grew);
        }
    }
    array_delete(&aliases);
}

/* Whether an identifier under node is one of names. */
static bool reuse__mentions(const char *text, TSNode node, const P2sNameSet *names)
{
    bool found = false;
    TSTreeCursor cursor = ts_tree_cursor_new(node);
    for (bool more = true; more && !found;) {
        TSNode n = ts_tree_cursor_current_node(&cursor);
        if (p2s_kind(n) == P2S_KIND_IDENTIFIER) {
            size_t s = ts_node_start_byte(n);
            found = p2s_nameset_contains(names, text + s, ts_node_end_byte(n) - s);
        }
        if (ts_tree_cursor_goto_first_child(&cursor))
            continue;
        while (!(more = ts_tree_cursor_goto_next_sibling(&cursor)) && ts_tree_cursor_goto_parent(&cursor))
            ;
    }
    ts_tree_cursor_delete(&cursor);
    return found;
}

static size_t reuse__newlines(const char *p, size_t n)
{
    size_t count = 0;
    for (size_t i = 0; i < n; i++)
        count += p[i] == '\n' || (p[i] == '\r' && (i + 1 == n || p[i + 1] != '\n'));
    return count;
}

static size_t reuse__shift(size_t at, size_t old_end, size_t new_end)
{
    return at >= old_end ? at - old_end + new_end : at;
}

/* Q's ancestors, up to the module, are alike before and after: same symbols, starts, ends
 * (shifted) and numbers of children. */
static bool reuse__same_ancestors(TSNode q, TSNode old_q, size_t old_end, size_t new_end)
{
    TSNode a = ts_node_parent(q), b = ts_node_parent(old_q);
    for (; !ts_node_is_null(a) && !ts_node_is_null(b); a = ts_node_parent(a), b = ts_node_parent(b))
        if (ts_node_symbol(a) != ts_node_symbol(b) || ts_node_start_byte(a) != ts_node_start_byte(b) ||
            ts_node_end_byte(a) != reuse__shift(ts_node_end_byte(b), old_end, new_end) ||
            ts_node_child_count(a) != ts_node_child_count(b))
            return false;
    return ts_node_is_null(a) && ts_node_is_null(b);
}

bool p2s_lsp_reuse(const P2sLspEdit *edit, const P2sSource *src, const TSTree *tree, P2sLspFacts *facts,
                   P2sDiagSink *sink)
{
    const char *old = edit->old_text, *text = src->bytes;
    size_t start = edit->start, old_end = edit->old_end, new_end = edit->new_end;
    TSNode root = ts_tree_root_node(tree);
    TSNode q, f, old_q, old_f;
    if (!facts->valid || facts->escaping || facts->import_own_line || ts_node_has_error(root) || old_end > edit->old_len ||
        new_end > src->len)
        return false;
    /* 1: the statement and its function, the same before and after. */
    if (!reuse__locate(root, start, new_end, &q, &f) ||
        !reuse__locate(ts_tree_root_node(edit->old_tree), start, old_end, &old_q, &old_f))
        return false;
    size_t qs = ts_node_start_byte(q), qe = ts_node_end_byte(q), fs = ts_node_start_byte(f);
    size_t old_qe = ts_node_end_byte(old_q), old_fe = ts_node_end_byte(old_f);
    if (qs > start || qe < new_end || old_qe < old_end || ts_node_start_byte(old_q) != qs || ts_node_symbol(old_q) != ts_node_symbol(q) ||
        reuse__shift(old_qe, old_end, new_end) != qe || ts_node_start_byte(old_f) != fs ||
        reuse__shift(old_fe, old_end, new_end) != ts_node_end_byte(f))
        return false;
    /* 3 (cheap, so first) */
    for (size_t i = 0; i < facts->methods.size; i++)
        if (facts->methods.contents[i].start <= qs && qs < facts->methods.contents[i].end)
            return false;
    for (size_t i = 0; i < facts->classes.size; i++)
        if (facts->classes.contents[i].start >= fs && facts->classes.contents[i].start < old_fe)
            return false;
    if (!reuse__same_ancestors(q, old_q, old_end, new_end))
        return false;
    /* 2 */
    if (!reuse__plain_text(text, src->len, qs, qe) || !reuse__plain_text(old, edit->old_len, qs, old_qe))
        return false;
    /* 4 */
    P2sNameSet names;
    p2s_nameset_init(&names);
    reuse__resolved_names(text, f, &names);
    bool bound = names.size > 0 && (reuse__mentions(text, q, &names) || reuse__mentions(old, old_q, &names));
    p2s_nameset_release(&names);
    if (bound)
        return false;
    /* 6 */
    size_t line_start = qs, line_end = old_qe;
    while (line_start > 0 && text[line_start - 1] != '\n' && text[line_start - 1] != '\r')
        line_start--;
    while (line_end < edit->old_len && old[line_end] != '\n' && old[line_end] != '\r')
        line_end++;
    bool rows_change = reuse__newlines(old + start, old_end - start) != reuse__newlines(text + start, new_end - start);
    const P2sDiagSink *from = edit->old_sink;
    for (size_t i = 0; i < from->items.size; i++) {
        const P2sDiag *d = &from->items.contents[i];
        if (!d->has_span || (d->span.end > line_start && d->span.start < line_end) ||
            (d->span.start < line_start && d->span.end > line_start) ||
            (rows_change && strcmp(d->code, "P2S109") == 0))
            return false;
    }
    for (size_t i = 0; i < from->items.size; i++) {
        P2sDiag d = from->items.contents[i];
        d.span = p2s_span(reuse__shift(d.span.start, old_end, new_end), reuse__shift(d.span.end, old_end, new_end));
        d.message = p2s_strdup(d.message);
        d.fix = d.fix ? p2s_strdup(d.fix) : NULL;
        p2s_diag_sink_append(sink, d);
    }
    for (size_t i = 0; i < facts->methods.size; i++) {
        P2sSpan *s = &facts->methods.contents[i];
        *s = p2s_span(reuse__shift(s->start, old_end, new_end), reuse__shift(s->end, old_end, new_end));
    }
    for (size_t i = 0; i < facts->classes.size; i++) {
        P2sSpan *s = &facts->classes.contents[i];
        *s = p2s_span(reuse__shift(s->start, old_end, new_end), reuse__shift(s->end, old_end, new_end));
    }
    return true;
}

static bool reuse__same_string(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

bool p2s_lsp_same_diagnostics(const P2sDiagSink *a, const P2sDiagSink *b)
{
    if (a->items.size != b->items.size || a->errors != b->errors)
        return false;
    for (size_t i = 0; i < a->items.size; i++) {
        const P2sDiag *x = &a->items.contents[i], *y = &b->items.contents[i];
        if (x->severity != y->severity || strcmp(x->code, y->code) != 0 || x->has_span != y->has_span ||
            x->span.start != y->span.start || x->span.end != y->span.end || !reuse__same_string(x->message, y->message) ||
            !reuse__same_string(x->fix, y->fix))
            return false;
    }
    return true;
}
