/* lsp_server.c — what the language server sends: every message framed into the server's
 * output buffer (the stdio loop or a test empties it), and the notifications that show or log a
 * line in the client. */
#include "lsp_server.h"

void p2s_lsp_send(P2sLsp *s, cJSON *msg)
{
    p2s_rpc_frame_json(&s->out, msg);
    cJSON_Delete(msg);
}

void p2s_lsp_message(P2sLsp *s, const char *method, int type, const char *text)
{
    cJSON *params = cJSON_CreateObject();
    cJSON_AddNumberToObject(params, "type", type);
    cJSON_AddStringToObject(params, "message", text);
    p2s_lsp_send(s, p2s_rpc_notification(method, params));
}
