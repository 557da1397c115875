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
/* A parser of the grammar, for a caller that parses many small sources (p2s_parse_with); the
 * caller deletes it (ts_parser_delete). */
TSParser *p2s_parser_new(void);
/* p2s_parse with the caller's parser (p2s_parser_new): its setup is paid once, not per parse. */
TSTree *p2s_parse_with(TSParser *parser, const P2sSource *src, P2sDiagSink *sink);
/* Parses src reusing old, a tree of an earlier text already told of the edits (ts_tree_edit):
 * only the edited regions are parsed again. old stays the caller's. */
TSTree *p2s_parse_incremental(const P2sSource *src, const TSTree *old, P2sDiagSink *sink);
/* Where tree-sitter-python rejects valid Python, replaces the syntax errors in sink (from
 * index `from` on) by one plain diagnostic: lone-CR line endings (P2S005), indentation at
 * column 256 or more, which its scanner cannot track (P2S006). Returns true when it did. */
bool p2s_parse_explain_limits(const P2sSource *src, P2sDiagSink *sink, size_t from);
/* The offset of the first lone CR line ending, or SIZE_MAX. */
size_t p2s_parse_lone_cr(const P2sSource *src);
/* Adds a P2S001 diagnostic for each ERROR / MISSING node under root; returns how many. */
size_t p2s_parse_report_errors(const P2sSource *src, TSNode root, P2sDiagSink *sink);

/* The grammar fields the tool reads, looked up by id (by name each lookup scans every field
 * name of the grammar). */
typedef enum {
    P2S_FIELD_ALIAS,
    P2S_FIELD_ARGUMENTS,
    P2S_FIELD_ATTRIBUTE,
    P2S_FIELD_BODY,
    P2S_FIELD_DEFINITION,
    P2S_FIELD_FUNCTION,
    P2S_FIELD_LEFT,
    P2S_FIELD_MODULE_NAME,
    P2S_FIELD_NAME,
    P2S_FIELD_OBJECT,
    P2S_FIELD_OPERATOR,
    P2S_FIELD_PARAMETERS,
    P2S_FIELD_RIGHT,
    P2S_FIELD_SUPERCLASSES,
    P2S_FIELD_VALUE,
    P2S_FIELD_COUNT,
} P2sField;

/* node's child in field, or a null node. */
TSNode p2s_child(TSNode node, P2sField field);

/* The node types the checker and planner test, by grammar symbol: one table lookup instead of
 * ts_node_type and a strcmp per test (several symbols may share one type name: aliases). */
#define P2S_KINDS(X) \
    X(ARGUMENT_LIST, "argument_list") X(AS_PATTERN, "as_pattern") X(AS_PATTERN_TARGET, "as_pattern_target") \
    X(ASSIGNMENT, "assignment") X(ATTRIBUTE, "attribute") X(AUGMENTED_ASSIGNMENT, "augmented_assignment") \
    X(BINARY_OPERATOR, "binary_operator") X(BLOCK, "block") X(CALL, "call") \
    X(CLASS_DEFINITION, "class_definition") X(COMMENT, "comment") X(COMPARISON_OPERATOR, "comparison_operator") \
    X(DECORATED_DEFINITION, "decorated_definition") X(DECORATOR, "decorator") \
    X(DEFAULT_PARAMETER, "default_parameter") X(DICTIONARY_SPLAT, "dictionary_splat") \
    X(DICTIONARY_SPLAT_PATTERN, "dictionary_splat_pattern") X(EXPRESSION_LIST, "expression_list") \
    X(EXPRESSION_STATEMENT, "expression_statement") X(FLOAT, "float") X(FOR_IN_CLAUSE, "for_in_clause") \
    X(FOR_STATEMENT, "for_statement") X(FUNCTION_DEFINITION, "function_definition") X(IDENTIFIER, "identifier") \
    X(KEYWORD_ARGUMENT, "keyword_argument") X(KEYWORD_SEPARATOR, "keyword_separator") X(LAMBDA, "lambda") \
    X(LIST, "list") X(LIST_PATTERN, "list_pattern") X(LIST_SPLAT, "list_splat") \
    X(LIST_SPLAT_PATTERN, "list_splat_pattern") X(NAMED_EXPRESSION, "named_expression") X(NONE, "none") \
    X(NOT_OPERATOR, "not_operator") X(PARENTHESIZED_EXPRESSION, "parenthesized_expression") \
    X(PARENTHESIZED_LIST_SPLAT, "parenthesized_list_splat") X(PATTERN_LIST, "pattern_list") \
    X(POSITIONAL_SEPARATOR, "positional_separator") X(RETURN_STATEMENT, "return_statement") \
    X(SUBSCRIPT, "subscript") X(TUPLE, "tuple") X(TUPLE_PATTERN, "tuple_pattern") \
    X(TYPED_DEFAULT_PARAMETER, "typed_default_parameter") X(TYPED_PARAMETER, "typed_parameter") \
    X(UNARY_OPERATOR, "unary_operator") X(WITH_STATEMENT, "with_statement") X(YIELD, "yield")

typedef enum {
    P2S_KIND_OTHER,   /* any type not listed, and the null node */
#define P2S_KIND_ENUM(name, type) P2S_KIND_##name,
    P2S_KINDS(P2S_KIND_ENUM)
#undef P2S_KIND_ENUM
    P2S_KIND_COUNT,
} P2sKind;

P2sKind p2s_kind(TSNode node);

/* Text of a node as a span of the source. */
static inline P2sSpan p2s_node_span(TSNode node)
{
    return p2s_span(ts_node_start_byte(node), ts_node_end_byte(node));
}

/* Appends node's text with every run of whitespace (and line continuation) made one space, as
 * diagnostics quote code that may span lines (signatures, call objects). */
void p2s_node_flat_text(const P2sSource *src, TSNode node, P2sStrbuf *out);

#endif
