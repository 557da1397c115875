/* untranspile.c — this tool's own rewrites, recognised by their exact shape (plan.c writes
 * them) and undone. */
#include "untranspile.h"

#include <stdlib.h>
#include <string.h>

#include "parse.h"

#define UNDO_MARKER "# pylayer2static "
#define UNDO_TAIL_HEADER "# --- pylayer2static "

bool p2s_untranspile_has_marker(const P2sSource *src)
{
    size_t end = src->len;
    while (end > 0 && (src->bytes[end - 1] == '\n' || src->bytes[end - 1] == '\r'))
        end--;
    size_t start = end;
    while (start > 0 && src->bytes[start - 1] != '\n' && src->bytes[start - 1] != '\r')
        start--;
    size_t n = strlen(UNDO_MARKER);
    return end - start > n && memcmp(src->bytes + start, UNDO_MARKER, n) == 0;
}

static void untranspile__add(P2sUndoEdits *out, size_t start, size_t end, const char *text)
{
    P2sUndoEdit e = {start, end, text};
    array_push(out, e);
}

static bool untranspile__text_is(const P2sSource *src, TSNode node, const char *text)
{
    size_t n = strlen(text);
    return ts_node_end_byte(node) - ts_node_start_byte(node) == n &&
           memcmp(src->bytes + ts_node_start_byte(node), text, n) == 0;
}

/* The first argument that is no comment, and the one after it (null nodes when absent). */
static void untranspile__arguments(TSNode args, TSNode *first, TSNode *second)
{
    *first = *second = (TSNode){0};
    uint32_t n = ts_node_named_child_count(args);
    for (uint32_t i = 0; i < n; i++) {
        TSNode a = ts_node_named_child(args, i);
        if (p2s_kind(a) == P2S_KIND_COMMENT)
            continue;
        if (ts_node_is_null(*first))
            *first = a;
        else if (ts_node_is_null(*second))
            *second = a;
    }
}

/* `_p2s.apply(X, a)` -> `X.apply(a)`, `_p2s.apply(X)` -> `X.apply()`, `_p2s.applier(X)` ->
 * `X.apply`: exactly the shapes plan.c writes, else left alone. */
static void untranspile__call(const P2sSource *src, TSNode call, P2sUndoEdits *out)
{
    TSNode function = p2s_child(call, P2S_FIELD_FUNCTION);
    TSNode args = p2s_child(call, P2S_FIELD_ARGUMENTS);
    if (p2s_kind(function) != P2S_KIND_ATTRIBUTE || p2s_kind(args) != P2S_KIND_ARGUMENT_LIST ||
        !untranspile__text_is(src, p2s_child(function, P2S_FIELD_OBJECT), "_p2s"))
        return;
    TSNode name = p2s_child(function, P2S_FIELD_ATTRIBUTE);
    bool apply = untranspile__text_is(src, name, "apply");
    if (!apply && !untranspile__text_is(src, name, "applier"))
        return;
    TSNode object, next;
    untranspile__arguments(args, &object, &next);
    P2sKind kind = p2s_kind(object);
    if (ts_node_is_null(object) || kind == P2S_KIND_KEYWORD_ARGUMENT || kind == P2S_KIND_LIST_SPLAT ||
        kind == P2S_KIND_DICTIONARY_SPLAT || ts_node_start_byte(object) != ts_node_start_byte(args) + 1)
        return;
    size_t x_end = ts_node_end_byte(object), close = ts_node_end_byte(args) - 1;
    const char *after = src->bytes + x_end;
    if (!apply) {
        if (!ts_node_is_null(next) || x_end != close)
            return;
        untranspile__add(out, ts_node_start_byte(call), ts_node_start_byte(object), "");
        untranspile__add(out, x_end, close + 1, ".apply");
        return;
    }
    if (ts_node_is_null(next) ? x_end != close : (close - x_end < 2 || memcmp(after, ", ", 2) != 0))
        return;
    untranspile__add(out, ts_node_start_byte(call), ts_node_start_byte(object), "");
    untranspile__add(out, x_end, ts_node_is_null(next) ? x_end : x_end + 2, ".apply(");
}

/* The runtime import as plan.c joins it to a line (`stmt; import ...`, `import ...; stmt`) or
 * puts it on a line of its own. */
static void untranspile__import(const P2sSource *src, TSNode stmt, P2sUndoEdits *out)
{
    if (!untranspile__text_is(src, stmt, P2S_RUNTIME_IMPORT))
        return;
    size_t start = ts_node_start_byte(stmt), end = ts_node_end_byte(stmt);
    const char *b = src->bytes;
    if (start >= 2 && memcmp(b + start - 2, "; ", 2) == 0)
        untranspile__add(out, start - 2, end, "");
    else if (end + 2 <= src->len && memcmp(b + end, "; ", 2) == 0)
        untranspile__add(out, start, end + 2, "");
    else if (end + 2 <= src->len && memcmp(b + end, "\r\n", 2) == 0)
        untranspile__add(out, start, end + 2, "");
    else if (end < src->len && b[end] == '\n')
        untranspile__add(out, start, end + 1, "");
}

/* From the two line ends before the tail's header comment to the end of the file. */
static void untranspile__tail(const P2sSource *src, TSNode root, P2sUndoEdits *out)
{
    uint32_t n = ts_node_child_count(root);
    for (uint32_t i = n; i-- > 0;) {
        TSNode c = ts_node_child(root, i);
        size_t at = ts_node_start_byte(c), len = strlen(UNDO_TAIL_HEADER);
        if (p2s_kind(c) != P2S_KIND_COMMENT || ts_node_end_byte(c) - at < len ||
            memcmp(src->bytes + at, UNDO_TAIL_HEADER, len) != 0)
            continue;
        for (int k = 0; k < 2 && at > 0 && (src->bytes[at - 1] == '\n' || src->bytes[at - 1] == '\r'); k++)
            at -= at >= 2 && src->bytes[at - 1] == '\n' && src->bytes[at - 2] == '\r' ? 2 : 1;
        untranspile__add(out, at, src->len, "");
        return;
    }
}

static int untranspile__compare(const void *a, const void *b)
{
    const P2sUndoEdit *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

void p2s_untranspile_edits(const P2sSource *src, TSTree *tree, P2sUndoEdits *out)
{
    out->size = 0;
    if (!p2s_untranspile_has_marker(src))
        return;
    TSNode root = ts_tree_root_node(tree);
    uint32_t top = ts_node_named_child_count(root);
    for (uint32_t i = 0; i < top; i++) {
        TSNode stmt = ts_node_named_child(root, i);
        if (strcmp(ts_node_type(stmt), "import_statement") == 0)
            untranspile__import(src, stmt, out);
    }
    TSTreeCursor cursor = ts_tree_cursor_new(root);
    for (bool more = true; more;) {
        TSNode node = ts_tree_cursor_current_node(&cursor);
        if (p2s_kind(node) == P2S_KIND_CALL)
            untranspile__call(src, node, out);
        if (ts_tree_cursor_goto_first_child(&cursor))
            continue;
        while (!(more = ts_tree_cursor_goto_next_sibling(&cursor)) && ts_tree_cursor_goto_parent(&cursor))
            ;
    }
    ts_tree_cursor_delete(&cursor);
    untranspile__tail(src, root, out);
    if (out->size)
        qsort(out->contents, out->size, sizeof out->contents[0], untranspile__compare);
}

void p2s_untranspile_apply(const P2sSource *src, const P2sUndoEdits *edits, P2sStrbuf *out)
{
    size_t at = 0;
    for (size_t i = 0; i < edits->size; i++) {
        const P2sUndoEdit *e = &edits->contents[i];
        p2s_strbuf_add(out, src->bytes + at, e->start - at);
        p2s_strbuf_adds(out, e->text);
        at = e->end;
    }
    p2s_strbuf_add(out, src->bytes + at, src->len - at);
}

size_t p2s_untranspile_map_back(const P2sUndoEdits *edits, size_t offset, bool end_of_span)
{
    size_t shift = 0;  /* bytes the undone text is shorter than the file before edit i */
    for (size_t i = 0; i < edits->size; i++) {
        const P2sUndoEdit *e = &edits->contents[i];
        size_t at = e->start - shift, len = strlen(e->text);
        if (offset <= at)
            break;
        if (offset < at + len)
            return end_of_span ? e->end : e->start;
        shift += (e->end - e->start) - len;
    }
    return offset + shift;
}
