/* parse.h — tree-sitter-python over one source. ERROR and MISSING nodes become P2S001
 * diagnostics. The caller owns the returned tree (ts_tree_delete). */
#ifndef P2S_PARSE_H
#define P2S_PARSE_H

#include <tree_sitter/api.h>

#include "diag.h"
#include "source.h"

const TSLanguage *tree_sitter_python(void);

/* Parses src; never NULL (allocation failure exits). Syntax errors go to sink. */
TSTree *p2s_parse(const P2sSource *src, P2sDiagSink *sink);
/* Adds a P2S001 diagnostic for each ERROR / MISSING node under root; returns how many. */
size_t p2s_parse_report_errors(const P2sSource *src, TSNode root, P2sDiagSink *sink);

/* Text of a node as a span of the source. */
static inline P2sSpan p2s_node_span(TSNode node)
{
    return p2s_span(ts_node_start_byte(node), ts_node_end_byte(node));
}

#endif
