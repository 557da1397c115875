/* parse.c — parsing and syntax-error reporting. */
#include "parse.h"

#include <pthread.h>
#include <stdint.h>

#include <string.h>

#define PARSE_MAX_REPORTED 20

static const char *const parse__field_names[P2S_FIELD_COUNT] = {
    "alias",
    "arguments",
    "attribute",
    "body",
    "definition",
    "function",
    "left",
    "module_name",
    "name",
    "object",
    "operator",
    "parameters",
    "right",
    "superclasses",
    "value",
};
static TSFieldId parse__field_ids[P2S_FIELD_COUNT];
static pthread_once_t parse__fields_once = PTHREAD_ONCE_INIT;

static void parse__look_up_fields(void)
{
    const TSLanguage *language = tree_sitter_python();
    for (int i = 0; i < P2S_FIELD_COUNT; i++)
        parse__field_ids[i] = ts_language_field_id_for_name(language, parse__field_names[i],
                                                            (uint32_t)strlen(parse__field_names[i]));
}

TSNode p2s_child(TSNode node, P2sField field)
{
    pthread_once(&parse__fields_once, parse__look_up_fields);
    return ts_node_child_by_field_id(node, parse__field_ids[field]);
}

static const char *const parse__kind_types[P2S_KIND_COUNT] = {
    NULL,
#define PARSE_KIND_TYPE(name, type) type,
    P2S_KINDS(PARSE_KIND_TYPE)
#undef PARSE_KIND_TYPE
};
static unsigned char parse__kinds[UINT16_MAX + 1];   /* grammar symbol (a TSSymbol) -> P2sKind */
static pthread_once_t parse__kinds_once = PTHREAD_ONCE_INIT;

static void parse__look_up_kinds(void)
{
    const TSLanguage *language = tree_sitter_python();
    uint32_t count = ts_language_symbol_count(language);
    for (uint32_t sym = 0; sym < count; sym++) {
        const char *name = ts_language_symbol_name(language, (TSSymbol)sym);
        for (int k = 1; name && k < P2S_KIND_COUNT; k++)
            if (strcmp(name, parse__kind_types[k]) == 0)
                parse__kinds[sym] = (unsigned char)k;
    }
}

P2sKind p2s_kind(TSNode node)
{
    pthread_once(&parse__kinds_once, parse__look_up_kinds);
    return ts_node_is_null(node) ? P2S_KIND_OTHER : (P2sKind)parse__kinds[ts_node_symbol(node)];
}

/* Where a `def`/`class` header in [start, end) lacks its colon, as Python reports it: a line
 * whose code starts with the keyword, closes every bracket it opens, does not end in `:`, and
 * is followed by a more indented line. The offset just past its last code byte, or SIZE_MAX. */
static size_t parse__missing_colon(const P2sSource *src, size_t start, size_t end)
{
    const char *b = src->bytes;
    while (start > 0 && b[start - 1] != '\n' && b[start - 1] != '\r')
        start--;
    for (size_t line = start; line < end;) {
        size_t indent = line, stop = line;
        while (indent < src->len && (b[indent] == ' ' || b[indent] == '\t'))
            indent++;
        while (stop < src->len && b[stop] != '\n' && b[stop] != '\r')
            stop++;
        size_t next = stop;
        while (next < src->len && (b[next] == '\n' || b[next] == '\r'))
            next++;
        bool header = (stop - indent > 4 && memcmp(b + indent, "def ", 4) == 0) ||
                      (stop - indent > 6 && memcmp(b + indent, "class ", 6) == 0);
        int depth = 0;
        size_t last = indent;  /* past the last code byte */
        for (size_t i = indent; header && i < stop && b[i] != '#'; i++) {
            depth += (b[i] == '(' || b[i] == '[') - (b[i] == ')' || b[i] == ']');
            if (b[i] != ' ' && b[i] != '\t')
                last = i + 1;
        }
        size_t next_indent = next;
        while (next_indent < src->len && (b[next_indent] == ' ' || b[next_indent] == '\t'))
            next_indent++;
        if (header && depth == 0 && b[last - 1] != ':' && next < src->len && next_indent - next > indent - line)
            return last;
        line = next;
    }
    return SIZE_MAX;
}

static void parse__report_error_node(const P2sSource *src, TSNode node, P2sDiagSink *sink)
{
    P2sSpan span = p2s_node_span(node);
    size_t colon = ts_node_is_missing(node) ? SIZE_MAX : parse__missing_colon(src, span.start, span.end);
    if (colon != SIZE_MAX) {
        p2s_diag_emitf(sink, P2S_ERROR, "P2S001", p2s_span(colon, colon), "invalid syntax: expected ':'");
        return;
    }
    if (ts_node_is_missing(node)) {
        p2s_diag_emitf(sink, P2S_ERROR, "P2S001", span, "invalid syntax: expected '%s'",
                       ts_node_type(node));
        return;
    }
    /* Name what stands at the error: its first line, at most 40 bytes. */
    size_t end = span.start;
    while (end < span.end && end - span.start < 40 && src->bytes[end] != '\n' && src->bytes[end] != '\r')
        end++;
    while (end > span.start && end < src->len && ((unsigned char)src->bytes[end] & 0xC0) == 0x80)
        end--;
    if (end > span.start)
        p2s_diag_emitf(sink, P2S_ERROR, "P2S001", span, "invalid syntax at '%.*s'",
                       (int)(end - span.start), src->bytes + span.start);
    else
        p2s_diag_emitf(sink, P2S_ERROR, "P2S001", span, "invalid syntax");
}

size_t p2s_parse_report_errors(const P2sSource *src, TSNode root, P2sDiagSink *sink)
{
    size_t found = 0;
    if (!ts_node_has_error(root))
        return 0;
    TSTreeCursor cursor = ts_tree_cursor_new(root);
    for (;;) {
        TSNode node = ts_tree_cursor_current_node(&cursor);
        bool descend = false;
        if (strcmp(ts_node_type(node), "ERROR") == 0 || ts_node_is_missing(node)) {
            if (found < PARSE_MAX_REPORTED)
                parse__report_error_node(src, node, sink);
            found++;
        } else if (ts_node_has_error(node)) {
            descend = true;
        }
        if (descend && ts_tree_cursor_goto_first_child(&cursor))
            continue;
        while (!ts_tree_cursor_goto_next_sibling(&cursor)) {
            if (!ts_tree_cursor_goto_parent(&cursor))
                goto done;
        }
    }
done:
    ts_tree_cursor_delete(&cursor);
    if (found > PARSE_MAX_REPORTED)
        p2s_diag_emit_file(sink, P2S_NOTE, "P2S001", "%zu more syntax errors not shown",
                           found - PARSE_MAX_REPORTED);
    return found;
}

#define PARSE_INDENT_LIMIT 256  /* the scanner stores each indentation width in one byte */

size_t p2s_parse_lone_cr(const P2sSource *src)
{
    for (const char *cr = src->bytes; (cr = memchr(cr, '\r', src->len - (size_t)(cr - src->bytes))); cr++)
        if ((size_t)(cr - src->bytes) + 1 >= src->len || cr[1] != '\n')
            return (size_t)(cr - src->bytes);
    return SIZE_MAX;
}

/* The first line whose indentation (tabs to the next multiple of 8) reaches the limit. */
static bool parse__deep_indent(const P2sSource *src, P2sSpan *at, size_t *column)
{
    for (size_t line = 1; line <= p2s_source_line_count(src); line++) {
        P2sSpan text = p2s_source_line_span(src, line);
        size_t width = 0, i = text.start;
        for (; i < text.end && (src->bytes[i] == ' ' || src->bytes[i] == '\t'); i++)
            width = src->bytes[i] == '\t' ? (width / 8 + 1) * 8 : width + 1;
        if (width >= PARSE_INDENT_LIMIT && i < text.end && src->bytes[i] != '#') {
            *at = p2s_span(i, i + 1);
            *column = width;
            return true;
        }
    }
    return false;
}

bool p2s_parse_explain_limits(const P2sSource *src, P2sDiagSink *sink, size_t from)
{
    size_t cr = p2s_parse_lone_cr(src), column;
    P2sSpan at;
    if (cr != SIZE_MAX) {
        p2s_diag_sink_truncate(sink, from);
        P2sDiag *d = p2s_diag_emitf(sink, P2S_ERROR, "P2S005", p2s_span(cr, cr + 1),
                                    "this file ends lines with a lone CR (classic Mac OS), which the parser (tree-sitter-python %s) does not read",
                                    P2S_GRAMMAR_VERSION);
        p2s_diag_set_fix(d, "convert the line endings to LF or CRLF");
        return true;
    }
    if (parse__deep_indent(src, &at, &column)) {
        p2s_diag_sink_truncate(sink, from);
        P2sDiag *d = p2s_diag_emitf(sink, P2S_ERROR, "P2S006", at,
                                    "indentation reaches column %zu here; the parser (tree-sitter-python %s) cannot track blocks indented %d columns or more",
                                    column, P2S_GRAMMAR_VERSION, PARSE_INDENT_LIMIT);
        p2s_diag_set_fix(d, "indent less deeply (for example 4 spaces a level, or move the inner code into functions)");
        return true;
    }
    return false;
}

TSParser *p2s_parser_new(void)
{
    TSParser *parser = ts_parser_new();
    ts_parser_set_language(parser, tree_sitter_python());
    return parser;
}

static TSTree *parse__with(TSParser *parser, const P2sSource *src, const TSTree *old, P2sDiagSink *sink)
{
    TSTree *tree = ts_parser_parse_string(parser, old, src->bytes, (uint32_t)src->len);
    p2s_parse_report_errors(src, ts_tree_root_node(tree), sink);
    return tree;
}

TSTree *p2s_parse_with(TSParser *parser, const P2sSource *src, P2sDiagSink *sink)
{
    return parse__with(parser, src, NULL, sink);
}

TSTree *p2s_parse_incremental(const P2sSource *src, const TSTree *old, P2sDiagSink *sink)
{
    TSParser *parser = p2s_parser_new();
    TSTree *tree = parse__with(parser, src, old, sink);
    ts_parser_delete(parser);
    return tree;
}

TSTree *p2s_parse(const P2sSource *src, P2sDiagSink *sink)
{
    return p2s_parse_incremental(src, NULL, sink);
}

void p2s_node_flat_text(const P2sSource *src, TSNode node, P2sStrbuf *out)
{
    bool space = false;
    for (size_t i = ts_node_start_byte(node), end = ts_node_end_byte(node); i < end && i < src->len; i++) {
        char c = src->bytes[i];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\\') {
            space = true;
            continue;
        }
        if (space && out->len > 0 && out->buf[out->len - 1] != '(' && c != ')')
            p2s_strbuf_addch(out, ' ');
        space = false;
        p2s_strbuf_addch(out, c);
    }
}
