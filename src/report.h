/* report.h — prints the diagnostics of one run, file after file: text as each file is done;
 * JSON (one array) and SARIF 2.1.0 (one run) as one document at the end. */
#ifndef P2S_REPORT_H
#define P2S_REPORT_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdio.h>

#include "diag.h"
#include "source.h"

typedef enum { P2S_FORMAT_TEXT, P2S_FORMAT_JSON, P2S_FORMAT_SARIF } P2sFormat;

typedef struct {
    P2sFormat format;
    bool color, quiet;
    FILE *stream;
    cJSON *results;     /* JSON: the array; SARIF: the run's results */
    cJSON *rule_ids;    /* SARIF: codes seen, for tool.driver.rules */
    size_t errors, warnings;
} P2sReport;

void p2s_report_init(P2sReport *self, P2sFormat format, bool color, bool quiet, FILE *stream);
/* src is NULL when the file could not be read (positions are then omitted). */
void p2s_report_file(P2sReport *self, const char *name, const P2sSource *src, const P2sDiagSink *sink);
/* Prints the JSON or SARIF document; frees everything. */
void p2s_report_finish(P2sReport *self);

#endif
