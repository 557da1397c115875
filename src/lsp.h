/* lsp.h — `pylayer2static lsp`: a language server (LSP 3.17) over standard input and output.
 *
 * Documents are kept as bytes with their last tree-sitter tree; each change is applied to the
 * bytes and told to the tree (ts_tree_edit), and the next analysis reparses incrementally, then
 * runs the CLI's own pipeline on the unit (find, check, noqa and selection, plan, emit, verify:
 * transpile.h), so diagnostics are the CLI's: codes, severities, spans, messages, help texts.
 * Configuration is the CLI's too (the nearest pyproject.toml's [tool.pylayer2static], plus the
 * client's settings in the shape of the command line's options), and modules of a workspace
 * folder are indexed as tree mode finds them (lsp_workspace.h) for PyLayers of sibling
 * modules. Changes are coalesced: diagnostics are published when no more input is waiting.
 * An edit that cannot change any diagnostic (lsp_reuse.h) keeps the previous ones, shifted;
 * P2S_LSP_CHECK_REUSE=1 checks each such result against a full analysis (the tests).
 *
 * The server is a value driven by bytes (p2s_lsp_feed), so the fuzz target drives it exactly as
 * the stdio loop does; it never touches the file system when the options say so. */
#ifndef P2S_LSP_H
#define P2S_LSP_H

#include <stdbool.h>
#include <stddef.h>

#include "strbuf.h"

typedef struct {
    bool file_system;   /* read pyproject.toml, rules files and workspace folders */
} P2sLspOptions;

typedef struct P2sLsp P2sLsp;

P2sLsp *p2s_lsp_new(const P2sLspOptions *opts);
void    p2s_lsp_delete(P2sLsp *self);
/* Feeds received bytes and handles every complete message (without publishing pending
 * diagnostics: p2s_lsp_idle). Returns false once the client asked the server to exit. */
bool    p2s_lsp_feed(P2sLsp *self, const char *bytes, size_t n);
/* Whether a change awaits analysis and publishing. */
bool    p2s_lsp_pending(const P2sLsp *self);
/* Analyzes every changed document and publishes its diagnostics. */
void    p2s_lsp_idle(P2sLsp *self);
/* What the server has to send (framed messages); the caller empties it once sent. */
P2sStrbuf *p2s_lsp_output(P2sLsp *self);
/* The exit status LSP prescribes: 0 after a shutdown request, 1 otherwise. */
int     p2s_lsp_exit_status(const P2sLsp *self);

/* The subcommand: `pylayer2static lsp [--stdio]`. Returns the process exit code. */
int     p2s_lsp_main(int argc, char **argv);

#endif
