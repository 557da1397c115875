/* rules.h — the rules as data: rules/paddle.json is embedded at build time and read with
 * cJSON; --rules FILE adds to or overrides it. P2sRules owns its strings. */
#ifndef P2S_RULES_H
#define P2S_RULES_H

#include <stdbool.h>
#include <stddef.h>

#include "array.h"
#include "strbuf.h"

typedef struct {
    char *version;
    Array(char *) pylayer_bases;   /* qualified names: "paddle.autograd.PyLayer", ... */
} P2sRules;

/* Loads the embedded default rules. Returns 0, or -1 with a reason in err. */
int  p2s_rules_load_default(P2sRules *out, P2sStrbuf *err);
/* Reads a rules file over the loaded rules. Errors: `file:line:col: ...` for JSON syntax,
 * `file: /json/path: ...` for shape; -1 and self unchanged. */
int  p2s_rules_load_file(P2sRules *self, const char *path, P2sStrbuf *err);
/* Parses rules text (name is used in messages) over self. Same contract. */
int  p2s_rules_load_text(P2sRules *self, const char *name, const char *text, size_t len, P2sStrbuf *err);
bool p2s_rules_is_pylayer_base(const P2sRules *self, const char *qualname, size_t len);
void p2s_rules_release(P2sRules *self);

extern const char p2s_default_rules_json[];
extern const size_t p2s_default_rules_json_len;

#endif
