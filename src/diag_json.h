/* diag_json.h — machine-readable diagnostics: objects with file, line, col, end_line,
 * end_col, severity, code, message, fix (ruff's shape), appended to a cJSON array that the
 * caller owns. Positions are 1-based, columns in code points; null for file-level ones. */
#ifndef P2S_DIAG_JSON_H
#define P2S_DIAG_JSON_H

#include <cjson/cJSON.h>

#include "diag.h"
#include "source.h"

/* src may be NULL when the file could not be read; name is then used. */
void p2s_diag_json_add(cJSON *array, const char *name, const P2sSource *src, const P2sDiag *d);

#endif
