/* report.c — diagnostics across files in text, JSON and SARIF. */
#include "report.h"

#include <string.h>

#include "alloc.h"
#include "diag_json.h"
#include "diag_text.h"
#include "strbuf.h"
#include "version.h"

void p2s_report_init(P2sReport *self, P2sFormat format, bool color, bool quiet, FILE *stream)
{
    memset(self, 0, sizeof *self);
    self->format = format;
    self->color = color;
    self->quiet = quiet;
    self->stream = stream;
    if (format != P2S_FORMAT_TEXT)
        self->results = cJSON_CreateArray();
    if (format == P2S_FORMAT_SARIF)
        self->rule_ids = cJSON_CreateObject();
}

static void report__sarif_add(P2sReport *self, const char *name, const P2sSource *src, const P2sDiag *d)
{
    const char *rule = d->code[0] ? d->code : "P2S-IO";
    cJSON *result = cJSON_CreateObject();
    cJSON_AddStringToObject(result, "ruleId", rule);
    /* SARIF's levels are our severity names. */
    cJSON_AddStringToObject(result, "level", p2s_severity_name(d->severity));
    cJSON *message = cJSON_AddObjectToObject(result, "message");
    if (d->fix) {
        P2sStrbuf text;
        p2s_strbuf_init(&text);
        p2s_strbuf_addf(&text, "%s (help: %s)", d->message, d->fix);
        cJSON_AddStringToObject(message, "text", text.buf);
        p2s_strbuf_release(&text);
    } else {
        cJSON_AddStringToObject(message, "text", d->message);
    }
    cJSON *locations = cJSON_AddArrayToObject(result, "locations");
    cJSON *location = cJSON_CreateObject();
    cJSON *physical = cJSON_AddObjectToObject(location, "physicalLocation");
    cJSON *artifact = cJSON_AddObjectToObject(physical, "artifactLocation");
    cJSON_AddStringToObject(artifact, "uri", name);
    if (src && d->has_span) {
        size_t line, col, end_line, end_col;
        p2s_source_position(src, d->span.start, &line, &col);
        p2s_source_position(src, d->span.end, &end_line, &end_col);
        cJSON *region = cJSON_AddObjectToObject(physical, "region");
        cJSON_AddNumberToObject(region, "startLine", (double)line);
        cJSON_AddNumberToObject(region, "startColumn", (double)col);
        cJSON_AddNumberToObject(region, "endLine", (double)end_line);
        cJSON_AddNumberToObject(region, "endColumn", (double)(end_col > col || end_line > line ? end_col : col + 1));
    }
    cJSON_AddItemToArray(locations, location);
    cJSON_AddItemToArray(self->results, result);
    if (!cJSON_HasObjectItem(self->rule_ids, rule))
        cJSON_AddTrueToObject(self->rule_ids, rule);
}

void p2s_report_file(P2sReport *self, const char *name, const P2sSource *src, const P2sDiagSink *sink)
{
    P2sStrbuf text;
    p2s_strbuf_init(&text);
    for (size_t i = 0; i < sink->items.size; i++) {
        const P2sDiag *d = &sink->items.contents[i];
        if (d->severity == P2S_ERROR)
            self->errors++;
        else if (d->severity == P2S_WARNING)
            self->warnings++;
        if (self->quiet && d->severity != P2S_ERROR)
            continue;
        if (self->format == P2S_FORMAT_JSON)
            p2s_diag_json_add(self->results, name, src, d);
        else if (self->format == P2S_FORMAT_SARIF)
            report__sarif_add(self, name, src, d);
        else if (src)
            p2s_diag_text_format(src, d, self->color, &text);
        else
            p2s_diag_text_format_unread(name, d, self->color, &text);
    }
    if (text.len) {
        fwrite(text.buf, 1, text.len, self->stream);
        fflush(self->stream);
    }
    p2s_strbuf_release(&text);
}

static cJSON *report__sarif_document(P2sReport *self)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddStringToObject(doc, "$schema", "https://json.schemastore.org/sarif-2.1.0.json");
    cJSON_AddStringToObject(doc, "version", "2.1.0");
    cJSON *runs = cJSON_AddArrayToObject(doc, "runs");
    cJSON *run = cJSON_CreateObject();
    cJSON *driver = cJSON_AddObjectToObject(cJSON_AddObjectToObject(run, "tool"), "driver");
    cJSON_AddStringToObject(driver, "name", "pylayer2static");
    cJSON_AddStringToObject(driver, "version", P2S_VERSION);
    cJSON *rules = cJSON_AddArrayToObject(driver, "rules");
    for (const cJSON *id = self->rule_ids->child; id; id = id->next) {
        cJSON *rule = cJSON_CreateObject();
        cJSON_AddStringToObject(rule, "id", id->string);
        cJSON_AddItemToArray(rules, rule);
    }
    cJSON_AddItemToObject(run, "results", self->results);
    self->results = NULL;
    cJSON_AddItemToArray(runs, run);
    return doc;
}

void p2s_report_finish(P2sReport *self)
{
    if (self->format != P2S_FORMAT_TEXT) {
        cJSON *doc = self->format == P2S_FORMAT_SARIF ? report__sarif_document(self) : self->results;
        char *text = cJSON_Print(doc);
        fprintf(self->stream, "%s\n", text);
        fflush(self->stream);
        p2s_free(text);
        cJSON_Delete(doc);
        self->results = NULL;
    }
    cJSON_Delete(self->rule_ids);
    self->rule_ids = NULL;
}
