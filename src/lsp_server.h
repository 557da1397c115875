/* lsp_server.h — the language server's state, shared by its parts: lsp.c (dispatch, the server
 * value, the stdio loop), lsp_settings.c (the client's settings) and lsp_documents.c (open
 * documents and workspace folders); and what they send to the client. Private to them: lsp.h
 * keeps P2sLsp opaque to everyone else. */
#ifndef P2S_LSP_SERVER_H
#define P2S_LSP_SERVER_H

#include <cjson/cJSON.h>
#include <stdbool.h>

#include "array.h"
#include "jsonrpc.h"
#include "lsp_workspace.h"
#include "settings.h"
#include "strbuf.h"

typedef struct P2sLsp P2sLsp;           /* as lsp.h declares it */
typedef struct P2sLspDoc P2sLspDoc;     /* one open document: lsp_documents.h */

struct P2sLsp {
    bool file_system;           /* P2sLspOptions.file_system: read pyproject.toml, rules files and
                                   workspace folders */
    P2sRpcFramer framer;
    P2sStrbuf out;
    bool initialized, shut_down, exiting;
    bool nul_in_message;        /* the message being handled had \u0000 escapes */
    Array(P2sLspDoc *) docs;
    Array(P2sWorkspace *) folders;
    P2sSettingsCache rules;     /* per configuration file: the rules of the documents below it
                                   and the configuration of the workspace folders it serves */
    P2sSettings settings;       /* the client's, in the command line's terms */
};

/* Frames msg into the output (s->out) and frees it. */
void p2s_lsp_send(P2sLsp *s, cJSON *msg);
/* A window/showMessage or window/logMessage notification of text, of the given type. */
void p2s_lsp_message(P2sLsp *s, const char *method, int type, const char *text);

#endif
