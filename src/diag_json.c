/* diag_json.c — JSON rendering of diagnostics. */
#include "diag_json.h"

static void json__position(cJSON *obj, const char *line_key, const char *col_key,
                           const P2sSource *src, size_t offset)
{
    size_t line, col;
    p2s_source_position(src, offset, &line, &col);
    cJSON_AddNumberToObject(obj, line_key, (double)line);
    cJSON_AddNumberToObject(obj, col_key, (double)col);
}

void p2s_diag_json_add(cJSON *array, const char *name, const P2sSource *src, const P2sDiag *d)
{
    cJSON *obj = cJSON_CreateObject();
    cJSON_AddStringToObject(obj, "file", name);
    if (src && d->has_span) {
        json__position(obj, "line", "col", src, d->span.start);
        json__position(obj, "end_line", "end_col", src, d->span.end);
    } else {
        cJSON_AddNullToObject(obj, "line");
        cJSON_AddNullToObject(obj, "col");
        cJSON_AddNullToObject(obj, "end_line");
        cJSON_AddNullToObject(obj, "end_col");
    }
    cJSON_AddStringToObject(obj, "severity", p2s_severity_name(d->severity));
    if (d->code[0])
        cJSON_AddStringToObject(obj, "code", d->code);
    else
        cJSON_AddNullToObject(obj, "code");
    cJSON_AddStringToObject(obj, "message", d->message);
    if (d->fix)
        cJSON_AddStringToObject(obj, "fix", d->fix);
    else
        cJSON_AddNullToObject(obj, "fix");
    cJSON_AddItemToArray(array, obj);
}
