/* parse.c — parsing and syntax-error reporting. */
#include "parse.h"

#include <pthread.h>

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

static void parse__report_error_node(const P2sSource *src, TSNode node, P2sDiagSink *sink)
{
    P2sSpan span = p2s_node_span(node);
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

TSTree *p2s_parse_incremental(const P2sSource *src, const TSTree *old, P2sDiagSink *sink)
{
    TSParser *parser = ts_parser_new();
    ts_parser_set_language(parser, tree_sitter_python());
    TSTree *tree = ts_parser_parse_string(parser, old, src->bytes, (uint32_t)src->len);
    ts_parser_delete(parser);
    p2s_parse_report_errors(src, ts_tree_root_node(tree), sink);
    return tree;
}

TSTree *p2s_parse(const P2sSource *src, P2sDiagSink *sink)
{
    return p2s_parse_incremental(src, NULL, sink);
}
