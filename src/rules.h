/* rules.h — the rules as data: rules/paddle.json is embedded at build time and read with
 * cJSON; --rules FILE adds to or overrides it. The format is docs/rules.md.
 *
 * P2sRules owns every string in it. It holds the PyLayer base classes, Paddle's own
 * PyLayer-backed APIs (which the runtime makes static when it is imported), the ctx method
 * table, the static-graph hazards, every diagnostic's code / severity / message template / fix
 * template, and the code selection (select / ignore, ruff's semantics). */
#ifndef P2S_RULES_H
#define P2S_RULES_H

#include <stdbool.h>
#include <stddef.h>

#include "array.h"
#include "diag.h"
#include "strbuf.h"

/* Where a ctx method may be called: a bit set. */
enum { P2S_IN_FORWARD = 1, P2S_IN_BACKWARD = 2 };

typedef enum {
    P2S_CTX_PLAIN,    /* no role in the save/load pairing */
    P2S_CTX_SAVE,     /* stores tensors for backward: ctx.save_for_backward */
    P2S_CTX_LOAD,     /* reads them back: ctx.saved_tensor */
} P2sCtxRole;

typedef struct {
    char *name;
    unsigned allowed_in;   /* P2S_IN_* bits */
    P2sCtxRole role;
} P2sCtxMethod;

typedef struct {
    char *name;            /* "numpy" for `t.numpy()`, "float" for `float(t)` */
    bool builtin;          /* true: a builtin called on a Tensor; false: a Tensor method */
    char code[8];
} P2sHazard;

typedef struct {
    char code[8];          /* "P2S101" */
    P2sSeverity severity;  /* as reported */
    P2sSeverity builtin_severity;  /* as rules/paddle.json defines it */
    char *message;         /* template: `{name}` placeholders, `{{` / `}}` for braces */
    char *fix;             /* template or NULL */
    bool configurable;     /* false: emitted by the pipeline itself (syntax, encoding, internal);
                              a rules file cannot change it, and select/ignore/noqa never hide it */
} P2sRuleDiag;

typedef struct {
    char *version;
    P2sStrings pylayer_bases;      /* qualified names: "paddle.autograd.PyLayer", ... */
    P2sStrings paddle_apis;        /* Paddle's PyLayer-backed APIs, qualified:
                                      "paddle.distributed.fleet.utils.recompute", ... */
    P2sStrings paddle_api_words;   /* what a source must spell to reach one of them: their last
                                      components, less any that holds another ("recompute", not
                                      "recompute_sequential") */
    Array(P2sCtxMethod) ctx_methods;
    Array(P2sHazard) hazards;
    Array(P2sRuleDiag) diagnostics;
    P2sStrings select;             /* code prefixes; empty means ALL */
    P2sStrings ignore;
} P2sRules;

/* Loads the embedded default rules. Returns 0, or -1 with a reason in err. */
int  p2s_rules_load_default(P2sRules *out, P2sStrbuf *err);
/* Reads a rules file over the loaded rules. Errors: `file:line:col: ...` for JSON syntax,
 * `file: /json/path: ...` for shape; -1 and self unchanged. */
int  p2s_rules_load_file(P2sRules *self, const char *path, P2sStrbuf *err);
/* Parses rules text (name is used in messages) over self. Same contract. */
int  p2s_rules_load_text(P2sRules *self, const char *name, const char *text, size_t len, P2sStrbuf *err);
bool p2s_rules_is_pylayer_base(const P2sRules *self, const char *qualname, size_t len);
/* Whether qualname is one of Paddle's PyLayer-backed APIs (`paddle_pylayer_apis`): a module that
 * uses one gets the runtime import, whose patches make it static. */
bool p2s_rules_is_paddle_api(const P2sRules *self, const char *qualname, size_t len);
void p2s_rules_release(P2sRules *self);

const P2sCtxMethod *p2s_rules_ctx_method(const P2sRules *self, const char *name, size_t len);
/* The method of the given role (the first one listed), or NULL. */
const P2sCtxMethod *p2s_rules_ctx_role(const P2sRules *self, P2sCtxRole role);
const P2sHazard *p2s_rules_hazard(const P2sRules *self, bool builtin, const char *name, size_t len);
const P2sRuleDiag *p2s_rules_diag(const P2sRules *self, const char *code);

/* Selection, with ruff's semantics. A selector is "ALL" or a code prefix ("P2S", "P2S1",
 * "P2S105"). A code is enabled when the most specific selector matching it comes from select
 * (an empty select list counts as ALL); on a tie ignore wins. Codes that are not configurable
 * are always enabled. select/ignore return 0, or -1 with a reason in err when the selector
 * matches no configurable code. */
int  p2s_rules_select(P2sRules *self, const char *selector, P2sStrbuf *err);
int  p2s_rules_ignore(P2sRules *self, const char *selector, P2sStrbuf *err);
/* Reports the errors among the codes selector matches as warnings (`warn`), in the rules loaded
 * so far. Same contract as select/ignore. */
int  p2s_rules_warn(P2sRules *self, const char *selector, P2sStrbuf *err);
/* Whether a finding of code leaves its class (or its `.apply` site) as written: the code is an
 * error as reported, or in the built-in rules. So lowering a severity (a rules file, `warn`)
 * changes what is reported and the exit status, never the output; hiding a finding (select,
 * ignore, noqa) says it does not apply. */
bool p2s_rules_leaves_as_written(const P2sRules *self, const char *code);
typedef enum { P2S_RULES_SELECT, P2S_RULES_IGNORE, P2S_RULES_WARN } P2sRulesSelection;
/* Applies each selector of a comma-separated list ("P2S1,P2S201") as select, ignore or warn.
 * Returns 0, or -1 with the reason for the first unknown selector in err. */
int  p2s_rules_apply_selectors(P2sRules *self, P2sRulesSelection what, const char *list, P2sStrbuf *err);
/* Forgets every select and ignore (a command line overriding a config file). */
void p2s_rules_selection_reset(P2sRules *self);
bool p2s_rules_code_enabled(const P2sRules *self, const char *code);

/* Expands a template: each `{key}` becomes the value paired with key in kv (key, value, key,
 * value, ...; npairs pairs); `{{` and `}}` are literal braces. */
void p2s_rules_format(const char *template, const char *const *kv, size_t npairs, P2sStrbuf *out);
/* Emits `code` with its severity, message and fix from the table, formatted with kv. Returns
 * NULL when the code is not in the table (a caller's bug, not the user's). */
P2sDiag *p2s_rules_emit(const P2sRules *self, P2sDiagSink *sink, const char *code, P2sSpan span,
                        const char *const *kv, size_t npairs);

extern const char p2s_default_rules_json[];
extern const size_t p2s_default_rules_json_len;

#endif
