/* diag_text.h — the human format: `path:line:col: severity[CODE]: message`, the source line,
 * a caret line under the span, and the fix hint. */
#ifndef P2S_DIAG_TEXT_H
#define P2S_DIAG_TEXT_H

#include <stdbool.h>

#include "diag.h"
#include "source.h"
#include "strbuf.h"

void p2s_diag_text_format(const P2sSource *src, const P2sDiag *d, bool color, P2sStrbuf *out);
/* A diagnostic with no source at all (file could not be read): `name: severity: message`. */
void p2s_diag_text_format_unread(const char *name, const P2sDiag *d, bool color, P2sStrbuf *out);

#endif
