/* lsp_features.h — what the language server answers, from one document's analysis (its
 * source, the findings and the diagnostics sink that the CLI's pipeline filled): diagnostics as
 * LSP objects, code actions (quick fixes, noqa, "Show static form"), hover on `X.apply`, and
 * document symbols. Every function returns a new cJSON value the caller frees; none allocates
 * anything else that outlives the call. Positions are UTF-16 (lsp_text.h). */
#ifndef P2S_LSP_FEATURES_H
#define P2S_LSP_FEATURES_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <tree_sitter/api.h>

#include "diag.h"
#include "find.h"
#include "rules.h"
#include "source.h"
#include "strbuf.h"

#define P2S_LSP_SOURCE "pylayer2static"
#define P2S_LSP_CMD_STATIC_FORM "pylayer2static.showStaticForm"

/* {start, end} of a byte range as an LSP Range. */
cJSON *p2s_lsp_range(const P2sSource *src, size_t start, size_t end);
/* The sink's diagnostics as LSP Diagnostic objects (same codes, severities, spans, messages;
 * the help text follows the message after a newline and is also data.fix). */
cJSON *p2s_lsp_diagnostics(const P2sSource *src, const P2sDiagSink *sink);

/* Code actions for the byte range [start, end] of the document: for each diagnostic there, its
 * quick fix when the fix is mechanical (P2S103: add @staticmethod; P2S104: add ctx) and a
 * `# noqa: CODE` for configurable codes; then "Show static form" (a command) when
 * offer_static_form. tree may be NULL (no parse): then only noqa actions. */
cJSON *p2s_lsp_code_actions(const char *uri, const P2sSource *src, TSTree *tree, const P2sDiagSink *sink,
                            const P2sRules *rules, size_t start, size_t end, bool offer_static_form);

/* Hover for the `.apply` site at offset: a local PyLayer's summary with this call's arguments
 * bound to forward's parameters; another module's from external_summary(ctx, qualname); a
 * note for an unresolved one. NULL when offset is on no apply site. */
typedef const char *(*P2sLspSummaryLookup)(void *ctx, const char *qualname);
cJSON *p2s_lsp_hover(const P2sSource *src, const P2sFindings *found, size_t offset,
                     P2sLspSummaryLookup external_summary, void *ctx);

/* DocumentSymbol[] of the PyLayer classes (with forward and backward as children). */
cJSON *p2s_lsp_symbols(const P2sSource *src, const P2sFindings *found);

/* The Markdown summary of found->classes[index], a PyLayer: forward's and backward's
 * signatures, which arguments become tensor slots, what backward gets and must return.
 * module names where it is defined (NULL: this file). */
void p2s_lsp_class_summary(const P2sSource *src, const P2sFindings *found, size_t index,
                           const char *module, P2sStrbuf *out);

#endif
