/* lsp_documents.h — the language server's open documents (each owned by the server, s->docs,
 * until didClose) and its workspace folders (s->folders): a document's analysis made, kept
 * across an edit or dropped, and published; the folders indexed. */
#ifndef P2S_LSP_DOCUMENTS_H
#define P2S_LSP_DOCUMENTS_H

#include <stdbool.h>
#include <tree_sitter/api.h>

#include "lsp_reuse.h"
#include "lsp_server.h"
#include "rules.h"
#include "source.h"
#include "strbuf.h"
#include "transpile.h"

#define P2S_LSP_MAX_DOC ((size_t)16 << 20)   /* larger documents are kept but not analyzed */

/* One open document and its last analysis. The analysis (src, unit) views text: it is dropped
 * before text changes. */
struct P2sLspDoc {
    char *uri;
    char *path;                 /* NULL for a URI that is no file (untitled:) */
    double version;
    P2sStrbuf text;
    TSTree *tree;               /* the last parse, told of every edit since; NULL: parse anew */
    bool dirty;                 /* changed since its diagnostics were published */
    const P2sRules *rules;
    P2sWorkspace *ws;           /* the folder it belongs to, or NULL */
    char *module;               /* its module name in ws */
    bool is_package;
    bool nul;                   /* text may hold NUL bytes, received as \u0000 and kept as 0x01
                                   (cJSON strings end at a NUL): analyzed as NULs */
    char *nul_copy;             /* the analyzed bytes when nul: text with 0x01 as NUL */
    bool analyzed;              /* src and unit hold the analysis of text */
    bool full;                  /* ... with the output made and verified (not only linted) */
    bool too_large;
    P2sSource src;
    P2sUnit unit;
    P2sTranspileStatus status;
    bool stale_findings;        /* diagnostics kept across an edit (lsp_reuse.h): unit.found is
                                   empty, and a request that reads it analyzes in full first */
    P2sLspFacts facts;          /* of the last full analysis, shifted across kept edits */
    /* The analysis of the text before the pending changes, kept by didChange so that the next
     * analysis may keep its diagnostics (one ranged change only; anything else forgets it). Its
     * unit's src is not read: kept_text holds those bytes. */
    bool kept;
    size_t kept_changes;
    size_t edit_start, edit_old_end, edit_new_end;
    P2sStrbuf kept_text;
    P2sUnit kept_unit;
    P2sTranspileStatus kept_status;
};

/* The analysis (src and unit) dropped: the text is about to change, or the document's place. */
void p2s_lsp_doc_drop_analysis(P2sLspDoc *d);
/* The analysis kept for reuse (p2s_lsp_doc_keep_or_drop) forgotten. */
void p2s_lsp_doc_forget_kept(P2sLspDoc *d);
void p2s_lsp_doc_delete(P2sLspDoc *d);
/* The open document of uri, or NULL. */
P2sLspDoc *p2s_lsp_doc(P2sLsp *s, const char *uri);
/* Where a document belongs: its folder (the deepest that contains it), module and rules. */
void p2s_lsp_doc_place(P2sLsp *s, P2sLspDoc *d);
/* Runs the CLI's pipeline over the document: reparse from the edited tree, find, then check and
 * plan (lint only: the diagnostics) or the whole of finish (full: the output, verified); or,
 * after one edit that cannot change them, the previous diagnostics (lsp_reuse.h). */
void p2s_lsp_doc_analyze(P2sLspDoc *d, bool full);
/* Requests read the findings: after kept diagnostics they are made (the diagnostics are the
 * same, so nothing is published again). */
void p2s_lsp_doc_need_findings(P2sLspDoc *d);
/* Sends the document's diagnostics (textDocument/publishDiagnostics). */
void p2s_lsp_doc_publish(P2sLsp *s, P2sLspDoc *d);
/* Brings a document's analysis up to date, publishing its diagnostics when they changed. */
void p2s_lsp_doc_refresh(P2sLsp *s, P2sLspDoc *d);
/* Before the text changes: an up-to-date lint analysis is kept (p2s_lsp_doc_analyze may reuse
 * it), any other dropped. */
void p2s_lsp_doc_keep_or_drop(P2sLspDoc *d);
/* After a save: when the module's exported PyLayers (or their forward signatures) differ from
 * the index, the folder is indexed again (other open documents may resolve or bind differently
 * now). */
void p2s_lsp_doc_saved(P2sLsp *s, P2sLspDoc *d);

/* A workspace folder (by its URI; none when it is no file or known already), not indexed yet. */
void p2s_lsp_add_folder(P2sLsp *s, const char *uri);
/* Every document placed again (p2s_lsp_doc_place) and marked for analysis. */
void p2s_lsp_place_all(P2sLsp *s);
/* Every document placed again, then every folder indexed again (its documents analyzed again). */
void p2s_lsp_scan_all(P2sLsp *s);

#endif
