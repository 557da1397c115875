/* rules.c — reading rules files, the diagnostic table and code selection. */
#include "rules.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <stdarg.h>
#include <string.h>

#include "source.h"

/* Placeholders a message or fix template may use; the checker fills them. A template naming
 * anything else would print a hole, so it is refused when the rules are read. */
static const char *const rules__placeholders[] = {
    "class", "method", "name", "expected", "given", "accepted", "line", "call", "object",
    "allowed", "where", "save",
};

typedef struct {
    const char *name;      /* the file, for messages */
    P2sStrbuf *err;
    bool defining;         /* the built-in rules: may add codes and set `configurable` */
} Loader;

static void rules__syntax_error(const char *name, const char *text, size_t len, const char *at,
                                P2sStrbuf *err)
{
    P2sSource src;
    p2s_source_from_bytes(&src, name, text, len);
    size_t offset = at && at >= text && at <= text + len ? (size_t)(at - text) : 0;
    size_t line, col;
    p2s_source_position(&src, offset, &line, &col);
    p2s_strbuf_addf(err, "%s:%zu:%zu: error: invalid JSON in rules file", name, line, col);
    p2s_source_release(&src);
}

/* `file: /json/path: what`; the path is a printf format so callers can name array indices and
 * object keys. Always returns -1. */
static int rules__shape_error(const Loader *ld, const char *what, const char *path_fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int rules__shape_error(const Loader *ld, const char *what, const char *path_fmt, ...)
{
    va_list ap;
    va_start(ap, path_fmt);
    p2s_strbuf_addf(ld->err, "%s: ", ld->name);
    p2s_strbuf_vaddf(ld->err, path_fmt, ap);
    p2s_strbuf_addf(ld->err, ": %s", what);
    va_end(ap);
    return -1;
}

static bool rules__is_code(const char *s)
{
    if (strlen(s) != 6 || strncmp(s, "P2S", 3) != 0)
        return false;
    for (int i = 3; i < 6; i++)
        if (!isdigit((unsigned char)s[i]))
            return false;
    return true;
}

static bool rules__is_identifier(const char *s)
{
    if (!s[0] || isdigit((unsigned char)s[0]))
        return false;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '_')
            return false;
    return true;
}

static bool rules__known_placeholder(const char *name, size_t len)
{
    for (size_t i = 0; i < sizeof rules__placeholders / sizeof rules__placeholders[0]; i++)
        if (strlen(rules__placeholders[i]) == len && memcmp(rules__placeholders[i], name, len) == 0)
            return true;
    return false;
}

static int rules__check_template(const Loader *ld, const char *text, const char *code, const char *field)
{
    for (const char *p = text; *p; p++) {
        if ((p[0] == '{' && p[1] == '{') || (p[0] == '}' && p[1] == '}')) {
            p++;
            continue;
        }
        if (*p == '}')
            return rules__shape_error(ld, "a lone '}' (write '}}' for a brace)", "/diagnostics/%s/%s", code, field);
        if (*p != '{')
            continue;
        const char *close = strchr(p, '}');
        if (!close || !rules__known_placeholder(p + 1, (size_t)(close - p - 1))) {
            P2sStrbuf what;
            p2s_strbuf_init(&what);
            p2s_strbuf_adds(&what, "unknown placeholder; known:");
            for (size_t i = 0; i < sizeof rules__placeholders / sizeof rules__placeholders[0]; i++)
                p2s_strbuf_addf(&what, " {%s}", rules__placeholders[i]);
            rules__shape_error(ld, what.buf, "/diagnostics/%s/%s", code, field);
            p2s_strbuf_release(&what);
            return -1;
        }
        p = close;
    }
    return 0;
}

static int rules__severity(const char *s, P2sSeverity *out)
{
    static const P2sSeverity all[] = {P2S_ERROR, P2S_WARNING, P2S_NOTE};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        if (strcmp(s, p2s_severity_name(all[i])) == 0) {
            *out = all[i];
            return 0;
        }
    }
    return -1;
}

static int rules__check_bases(const Loader *ld, const cJSON *item)
{
    if (!cJSON_IsArray(item))
        return rules__shape_error(ld, "expected an array of qualified names", "/pylayer_bases");
    int i = 0;
    for (const cJSON *base = item->child; base; base = base->next, i++)
        if (!cJSON_IsString(base) || !base->valuestring[0] || strchr(base->valuestring, ' '))
            return rules__shape_error(ld, "expected a qualified name such as \"paddle.autograd.PyLayer\"",
                                      "/pylayer_bases/%d", i);
    return 0;
}

/* `a.b.c`: Python names joined by dots. */
static bool rules__is_dotted(const char *s)
{
    for (;;) {
        size_t n = strcspn(s, ".");
        if (n == 0 || isdigit((unsigned char)s[0]))
            return false;
        for (size_t i = 0; i < n; i++)
            if (!isalnum((unsigned char)s[i]) && s[i] != '_')
                return false;
        if (!s[n])
            return true;
        s += n + 1;
    }
}

static int rules__check_apis(const Loader *ld, const cJSON *item)
{
    if (!cJSON_IsObject(item))
        return rules__shape_error(ld, "expected an object: module path -> array of names", "/paddle_pylayer_apis");
    for (const cJSON *module = item->child; module; module = module->next) {
        const char *path = module->string;
        if (strcmp(path, "$comment") == 0)
            continue;
        if (!rules__is_dotted(path))
            return rules__shape_error(ld, "expected a module path such as \"paddle.distributed.fleet.utils\"",
                                      "/paddle_pylayer_apis/%s", path);
        if (!cJSON_IsArray(module))
            return rules__shape_error(ld, "expected an array of names", "/paddle_pylayer_apis/%s", path);
        int i = 0;
        for (const cJSON *name = module->child; name; name = name->next, i++)
            if (!cJSON_IsString(name) || !rules__is_identifier(name->valuestring))
                return rules__shape_error(ld, "expected a Python name such as \"recompute\"",
                                          "/paddle_pylayer_apis/%s/%d", path, i);
    }
    return 0;
}

static int rules__check_diag(const Loader *ld, const P2sRules *self, const cJSON *entry)
{
    const char *code = entry->string;
    if (!rules__is_code(code))
        return rules__shape_error(ld, "expected a code such as \"P2S101\"", "/diagnostics/%s", code);
    const P2sRuleDiag *known = p2s_rules_diag(self, code);
    if (!ld->defining && !known)
        return rules__shape_error(ld, "unknown diagnostic code (a rules file changes the codes of docs/rules.md; it cannot add checks)",
                                  "/diagnostics/%s", code);
    if (known && !known->configurable)
        return rules__shape_error(ld, "this diagnostic comes from the pipeline itself and cannot be changed",
                                  "/diagnostics/%s", code);
    if (!cJSON_IsObject(entry))
        return rules__shape_error(ld, "expected an object with severity, message and fix", "/diagnostics/%s", code);
    for (const cJSON *f = entry->child; f; f = f->next) {
        const char *key = f->string;
        P2sSeverity severity;
        if (strcmp(key, "severity") == 0) {
            if (!cJSON_IsString(f) || rules__severity(f->valuestring, &severity) < 0)
                return rules__shape_error(ld, "expected \"error\", \"warning\" or \"note\"", "/diagnostics/%s/severity", code);
        } else if (strcmp(key, "message") == 0) {
            if (!cJSON_IsString(f) || !f->valuestring[0])
                return rules__shape_error(ld, "expected a non-empty string", "/diagnostics/%s/message", code);
            if (rules__check_template(ld, f->valuestring, code, "message") < 0)
                return -1;
        } else if (strcmp(key, "fix") == 0) {
            if (!cJSON_IsString(f) && !cJSON_IsNull(f))
                return rules__shape_error(ld, "expected a string, or null for no hint", "/diagnostics/%s/fix", code);
            if (cJSON_IsString(f) && rules__check_template(ld, f->valuestring, code, "fix") < 0)
                return -1;
        } else if (strcmp(key, "configurable") == 0 && ld->defining) {
            if (!cJSON_IsBool(f))
                return rules__shape_error(ld, "expected true or false", "/diagnostics/%s/configurable", code);
        } else if (strcmp(key, "$comment") != 0) {
            return rules__shape_error(ld, "unknown key", "/diagnostics/%s/%s", code, key);
        }
    }
    if (!known && (!cJSON_GetObjectItemCaseSensitive(entry, "severity") ||
                   !cJSON_GetObjectItemCaseSensitive(entry, "message")))
        return rules__shape_error(ld, "a new code needs a severity and a message", "/diagnostics/%s", code);
    return 0;
}

static int rules__check_ctx_method(const Loader *ld, const cJSON *entry)
{
    const char *name = entry->string;
    if (!rules__is_identifier(name))
        return rules__shape_error(ld, "expected a method name", "/ctx_methods/%s", name);
    if (cJSON_IsNull(entry))
        return 0;
    if (!cJSON_IsObject(entry))
        return rules__shape_error(ld, "expected an object with allowed_in (or null to remove the method)", "/ctx_methods/%s", name);
    const cJSON *allowed = cJSON_GetObjectItemCaseSensitive(entry, "allowed_in");
    if (!cJSON_IsArray(allowed) || !allowed->child)
        return rules__shape_error(ld, "expected a non-empty array of \"forward\" / \"backward\"", "/ctx_methods/%s/allowed_in", name);
    int i = 0;
    for (const cJSON *w = allowed->child; w; w = w->next, i++)
        if (!cJSON_IsString(w) || (strcmp(w->valuestring, "forward") != 0 && strcmp(w->valuestring, "backward") != 0))
            return rules__shape_error(ld, "expected \"forward\" or \"backward\"", "/ctx_methods/%s/allowed_in/%d", name, i);
    for (const cJSON *f = entry->child; f; f = f->next) {
        if (strcmp(f->string, "role") == 0) {
            if (!cJSON_IsString(f) || (strcmp(f->valuestring, "save") != 0 && strcmp(f->valuestring, "load") != 0))
                return rules__shape_error(ld, "expected \"save\" or \"load\"", "/ctx_methods/%s/role", name);
        } else if (strcmp(f->string, "allowed_in") != 0 && strcmp(f->string, "$comment") != 0) {
            return rules__shape_error(ld, "unknown key", "/ctx_methods/%s/%s", name, f->string);
        }
    }
    return 0;
}

/* A hazard names a code that must exist once this file is applied: in self, or defined by the
 * same document. */
static int rules__check_hazards(const Loader *ld, const P2sRules *self, const cJSON *item, const cJSON *root)
{
    if (!cJSON_IsObject(item))
        return rules__shape_error(ld, "expected an object with methods and builtins", "/static_graph_hazards");
    const cJSON *diags = cJSON_GetObjectItemCaseSensitive(root, "diagnostics");
    for (const cJSON *group = item->child; group; group = group->next) {
        if (strcmp(group->string, "$comment") == 0)
            continue;
        if (strcmp(group->string, "methods") != 0 && strcmp(group->string, "builtins") != 0)
            return rules__shape_error(ld, "unknown key (expected methods or builtins)", "/static_graph_hazards/%s", group->string);
        if (!cJSON_IsObject(group))
            return rules__shape_error(ld, "expected an object: name -> code", "/static_graph_hazards/%s", group->string);
        for (const cJSON *h = group->child; h; h = h->next) {
            if (!rules__is_identifier(h->string))
                return rules__shape_error(ld, "expected a Python name", "/static_graph_hazards/%s/%s", group->string, h->string);
            if (cJSON_IsNull(h))
                continue;
            if (!cJSON_IsString(h) || !rules__is_code(h->valuestring))
                return rules__shape_error(ld, "expected a code such as \"P2S201\", or null to remove it",
                                          "/static_graph_hazards/%s/%s", group->string, h->string);
            if (!p2s_rules_diag(self, h->valuestring) &&
                !(ld->defining && cJSON_GetObjectItemCaseSensitive(diags, h->valuestring)))
                return rules__shape_error(ld, "names a code that is not in the diagnostics table",
                                          "/static_graph_hazards/%s/%s", group->string, h->string);
        }
    }
    return 0;
}

/* Validates the whole document before anything is changed, so a bad file leaves self as it was. */
static int rules__check_shape(const Loader *ld, const P2sRules *self, const cJSON *root)
{
    if (!cJSON_IsObject(root))
        return rules__shape_error(ld, "expected an object", "/");
    for (const cJSON *item = root->child; item; item = item->next) {
        const char *key = item->string;
        if (strcmp(key, "version") == 0) {
            if (!cJSON_IsString(item))
                return rules__shape_error(ld, "expected a string", "/version");
        } else if (strcmp(key, "pylayer_bases") == 0) {
            if (rules__check_bases(ld, item) < 0)
                return -1;
        } else if (strcmp(key, "paddle_pylayer_apis") == 0) {
            if (rules__check_apis(ld, item) < 0)
                return -1;
        } else if (strcmp(key, "diagnostics") == 0) {
            if (!cJSON_IsObject(item))
                return rules__shape_error(ld, "expected an object: code -> {severity, message, fix}", "/diagnostics");
            for (const cJSON *entry = item->child; entry; entry = entry->next)
                if (strcmp(entry->string, "$comment") != 0 && rules__check_diag(ld, self, entry) < 0)
                    return -1;
        } else if (strcmp(key, "ctx_methods") == 0) {
            if (!cJSON_IsObject(item))
                return rules__shape_error(ld, "expected an object: method -> {allowed_in, role}", "/ctx_methods");
            for (const cJSON *entry = item->child; entry; entry = entry->next)
                if (strcmp(entry->string, "$comment") != 0 && rules__check_ctx_method(ld, entry) < 0)
                    return -1;
        } else if (strcmp(key, "static_graph_hazards") == 0) {
            if (rules__check_hazards(ld, self, item, root) < 0)
                return -1;
        } else if (strcmp(key, "$comment") != 0) {
            return rules__shape_error(ld, "unknown key", "/%s", key);
        }
    }
    return 0;
}

static void rules__set_text(char **slot, const cJSON *value)
{
    p2s_free(*slot);
    *slot = cJSON_IsString(value) ? p2s_strdup(value->valuestring) : NULL;
}

static void rules__apply_diag(P2sRules *self, const cJSON *entry, bool defining)
{
    P2sRuleDiag *d = (P2sRuleDiag *)p2s_rules_diag(self, entry->string);
    if (!d) {
        P2sRuleDiag fresh = {0};
        memcpy(fresh.code, entry->string, 7);
        fresh.configurable = true;
        array_push(&self->diagnostics, fresh);
        d = array_back(&self->diagnostics);
    }
    for (const cJSON *f = entry->child; f; f = f->next) {
        if (strcmp(f->string, "severity") == 0) {
            rules__severity(f->valuestring, &d->severity);
            if (defining)
                d->builtin_severity = d->severity;
        }
        else if (strcmp(f->string, "message") == 0)
            rules__set_text(&d->message, f);
        else if (strcmp(f->string, "fix") == 0)
            rules__set_text(&d->fix, f);
        else if (strcmp(f->string, "configurable") == 0)
            d->configurable = cJSON_IsTrue(f);
    }
}

static void rules__apply_ctx_method(P2sRules *self, const cJSON *entry)
{
    P2sCtxMethod *m = (P2sCtxMethod *)p2s_rules_ctx_method(self, entry->string, strlen(entry->string));
    if (cJSON_IsNull(entry)) {
        if (m) {
            p2s_free(m->name);
            *m = self->ctx_methods.contents[--self->ctx_methods.size];
        }
        return;
    }
    if (!m) {
        P2sCtxMethod fresh = {0};
        fresh.name = p2s_strdup(entry->string);
        array_push(&self->ctx_methods, fresh);
        m = array_back(&self->ctx_methods);
    }
    m->allowed_in = 0;
    const cJSON *allowed = cJSON_GetObjectItemCaseSensitive(entry, "allowed_in");
    for (const cJSON *w = allowed->child; w; w = w->next)
        m->allowed_in |= strcmp(w->valuestring, "forward") == 0 ? P2S_IN_FORWARD : P2S_IN_BACKWARD;
    const cJSON *role = cJSON_GetObjectItemCaseSensitive(entry, "role");
    m->role = !role ? P2S_CTX_PLAIN : strcmp(role->valuestring, "save") == 0 ? P2S_CTX_SAVE : P2S_CTX_LOAD;
}

static void rules__apply_hazard(P2sRules *self, const cJSON *h, bool builtin)
{
    P2sHazard *known = (P2sHazard *)p2s_rules_hazard(self, builtin, h->string, strlen(h->string));
    if (cJSON_IsNull(h)) {
        if (known) {
            p2s_free(known->name);
            *known = self->hazards.contents[--self->hazards.size];
        }
        return;
    }
    if (!known) {
        P2sHazard fresh = {0};
        fresh.name = p2s_strdup(h->string);
        fresh.builtin = builtin;
        array_push(&self->hazards, fresh);
        known = array_back(&self->hazards);
    }
    memcpy(known->code, h->valuestring, 7);
}

static bool rules__listed(const P2sStrings *names, const char *name, size_t len)
{
    for (size_t i = 0; i < names->size; i++)
        if (strlen(names->contents[i]) == len && memcmp(names->contents[i], name, len) == 0)
            return true;
    return false;
}

/* The words a source must spell to reach an API: each API's last component, unless it holds
 * another's ("recompute_sequential" holds "recompute"), so every use spells one of them. */
static void rules__api_words(P2sRules *self)
{
    p2s_strings_release(&self->paddle_api_words);
    for (size_t i = 0; i < self->paddle_apis.size; i++) {
        const char *leaf = strrchr(self->paddle_apis.contents[i], '.') + 1;  /* a module path, a dot, a name */
        bool covered = false;
        for (size_t k = 0; k < self->paddle_apis.size && !covered; k++) {
            const char *other = strrchr(self->paddle_apis.contents[k], '.') + 1;
            covered = strcmp(other, leaf) != 0 && strstr(leaf, other) != NULL;
        }
        if (!covered && !rules__listed(&self->paddle_api_words, leaf, strlen(leaf)))
            array_push(&self->paddle_api_words, p2s_strdup(leaf));
    }
}

static void rules__apply_apis(P2sRules *self, const cJSON *apis)
{
    for (const cJSON *module = apis->child; module; module = module->next) {
        if (strcmp(module->string, "$comment") == 0)
            continue;
        for (const cJSON *name = module->child; name; name = name->next) {
            P2sStrbuf q;
            p2s_strbuf_init(&q);
            p2s_strbuf_addf(&q, "%s.%s", module->string, name->valuestring);
            if (p2s_rules_is_paddle_api(self, q.buf, q.len))
                p2s_strbuf_release(&q);
            else
                array_push(&self->paddle_apis, p2s_strbuf_detach(&q, NULL));
        }
    }
    rules__api_words(self);
}

static void rules__apply(P2sRules *self, const cJSON *root, bool defining)
{
    const cJSON *version = cJSON_GetObjectItemCaseSensitive(root, "version");
    if (version)
        rules__set_text(&self->version, version);
    const cJSON *bases = cJSON_GetObjectItemCaseSensitive(root, "pylayer_bases");
    for (const cJSON *base = bases ? bases->child : NULL; base; base = base->next)
        if (!p2s_rules_is_pylayer_base(self, base->valuestring, strlen(base->valuestring)))
            array_push(&self->pylayer_bases, p2s_strdup(base->valuestring));
    const cJSON *apis = cJSON_GetObjectItemCaseSensitive(root, "paddle_pylayer_apis");
    if (apis)
        rules__apply_apis(self, apis);
    const cJSON *diags = cJSON_GetObjectItemCaseSensitive(root, "diagnostics");
    for (const cJSON *entry = diags ? diags->child : NULL; entry; entry = entry->next)
        if (strcmp(entry->string, "$comment") != 0)
            rules__apply_diag(self, entry, defining);
    const cJSON *methods = cJSON_GetObjectItemCaseSensitive(root, "ctx_methods");
    for (const cJSON *entry = methods ? methods->child : NULL; entry; entry = entry->next)
        if (strcmp(entry->string, "$comment") != 0)
            rules__apply_ctx_method(self, entry);
    const cJSON *hazards = cJSON_GetObjectItemCaseSensitive(root, "static_graph_hazards");
    for (const cJSON *group = hazards ? hazards->child : NULL; group; group = group->next) {
        if (strcmp(group->string, "$comment") == 0)
            continue;
        bool builtin = strcmp(group->string, "builtins") == 0;
        for (const cJSON *h = group->child; h; h = h->next)
            rules__apply_hazard(self, h, builtin);
    }
}

static int rules__load(P2sRules *self, const Loader *ld, const char *text, size_t len)
{
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    if (!root) {
        rules__syntax_error(ld->name, text, len, end ? end : cJSON_GetErrorPtr(), ld->err);
        return -1;
    }
    int rc = rules__check_shape(ld, self, root);
    if (rc == 0)
        rules__apply(self, root, ld->defining);
    cJSON_Delete(root);
    return rc;
}

int p2s_rules_load_text(P2sRules *self, const char *name, const char *text, size_t len, P2sStrbuf *err)
{
    Loader ld = {name, err, false};
    return rules__load(self, &ld, text, len);
}

int p2s_rules_load_default(P2sRules *out, P2sStrbuf *err)
{
    memset(out, 0, sizeof *out);
    Loader ld = {"<built-in rules/paddle.json>", err, true};
    return rules__load(out, &ld, p2s_default_rules_json, p2s_default_rules_json_len);
}

int p2s_rules_load_file(P2sRules *self, const char *path, P2sStrbuf *err)
{
    P2sSource src;
    P2sStrbuf why;
    p2s_strbuf_init(&why);
    int rc = -1;
    if (p2s_source_read_file(&src, path, &why) < 0) {
        p2s_strbuf_addf(err, "%s: cannot read rules file: %s", path, why.buf);
    } else {
        rc = p2s_rules_load_text(self, path, src.bytes, src.len, err);
        p2s_source_release(&src);
    }
    p2s_strbuf_release(&why);
    return rc;
}

bool p2s_rules_is_pylayer_base(const P2sRules *self, const char *qualname, size_t len)
{
    return rules__listed(&self->pylayer_bases, qualname, len);
}

bool p2s_rules_is_paddle_api(const P2sRules *self, const char *qualname, size_t len)
{
    return rules__listed(&self->paddle_apis, qualname, len);
}

const P2sCtxMethod *p2s_rules_ctx_method(const P2sRules *self, const char *name, size_t len)
{
    for (size_t i = 0; i < self->ctx_methods.size; i++) {
        const P2sCtxMethod *m = &self->ctx_methods.contents[i];
        if (strlen(m->name) == len && memcmp(m->name, name, len) == 0)
            return m;
    }
    return NULL;
}

const P2sCtxMethod *p2s_rules_ctx_role(const P2sRules *self, P2sCtxRole role)
{
    for (size_t i = 0; i < self->ctx_methods.size; i++)
        if (self->ctx_methods.contents[i].role == role)
            return &self->ctx_methods.contents[i];
    return NULL;
}

const P2sHazard *p2s_rules_hazard(const P2sRules *self, bool builtin, const char *name, size_t len)
{
    for (size_t i = 0; i < self->hazards.size; i++) {
        const P2sHazard *h = &self->hazards.contents[i];
        if (h->builtin == builtin && strlen(h->name) == len && memcmp(h->name, name, len) == 0)
            return h;
    }
    return NULL;
}

const P2sRuleDiag *p2s_rules_diag(const P2sRules *self, const char *code)
{
    for (size_t i = 0; i < self->diagnostics.size; i++)
        if (strcmp(self->diagnostics.contents[i].code, code) == 0)
            return &self->diagnostics.contents[i];
    return NULL;
}

static bool rules__selector_matches(const char *selector, const char *code)
{
    return strcmp(selector, "ALL") == 0 || strncmp(code, selector, strlen(selector)) == 0;
}

/* How specific a selector is: ALL least, then by prefix length (ruff's precedence). */
static size_t rules__specificity(const char *selector)
{
    return strcmp(selector, "ALL") == 0 ? 0 : strlen(selector);
}

static int rules__check_selector(const P2sRules *self, const char *selector, P2sStrbuf *err)
{
    bool matches = false;
    for (size_t i = 0; i < self->diagnostics.size && !matches; i++)
        matches = self->diagnostics.contents[i].configurable &&
                  rules__selector_matches(selector, self->diagnostics.contents[i].code);
    if (!matches || !selector[0]) {
        p2s_strbuf_addf(err, "unknown rule selector '%s': expected ALL or a prefix of a code such as P2S1 or P2S105 (docs/rules.md)", selector);
        return -1;
    }
    return 0;
}

int p2s_rules_select(P2sRules *self, const char *selector, P2sStrbuf *err)
{
    if (rules__check_selector(self, selector, err) < 0)
        return -1;
    array_push(&self->select, p2s_strdup(selector));
    return 0;
}

int p2s_rules_ignore(P2sRules *self, const char *selector, P2sStrbuf *err)
{
    if (rules__check_selector(self, selector, err) < 0)
        return -1;
    array_push(&self->ignore, p2s_strdup(selector));
    return 0;
}

int p2s_rules_warn(P2sRules *self, const char *selector, P2sStrbuf *err)
{
    if (rules__check_selector(self, selector, err) < 0)
        return -1;
    for (size_t i = 0; i < self->diagnostics.size; i++) {
        P2sRuleDiag *d = &self->diagnostics.contents[i];
        if (d->configurable && d->severity == P2S_ERROR && rules__selector_matches(selector, d->code))
            d->severity = P2S_WARNING;
    }
    return 0;
}

int p2s_rules_apply_selectors(P2sRules *self, P2sRulesSelection what, const char *list, P2sStrbuf *err)
{
    int rc = 0;
    while (*list && rc == 0) {
        size_t n = strcspn(list, ",");
        char *selector = p2s_strndup(list, n);
        rc = what == P2S_RULES_SELECT ? p2s_rules_select(self, selector, err)
           : what == P2S_RULES_IGNORE ? p2s_rules_ignore(self, selector, err)
           : p2s_rules_warn(self, selector, err);
        p2s_free(selector);
        list += n + (list[n] == ',');
    }
    return rc;
}

bool p2s_rules_leaves_as_written(const P2sRules *self, const char *code)
{
    const P2sRuleDiag *d = p2s_rules_diag(self, code);
    return d && (d->severity == P2S_ERROR || d->builtin_severity == P2S_ERROR);
}

void p2s_rules_selection_reset(P2sRules *self)
{
    p2s_strings_release(&self->select);
    p2s_strings_release(&self->ignore);
}

bool p2s_rules_code_enabled(const P2sRules *self, const char *code)
{
    const P2sRuleDiag *d = p2s_rules_diag(self, code);
    if (d && !d->configurable)
        return true;
    /* An empty select list is ALL; -1 means "no selector matched". */
    long selected = self->select.size == 0 ? 0 : -1, ignored = -1;
    for (size_t i = 0; i < self->select.size; i++)
        if (rules__selector_matches(self->select.contents[i], code) &&
            (long)rules__specificity(self->select.contents[i]) > selected)
            selected = (long)rules__specificity(self->select.contents[i]);
    for (size_t i = 0; i < self->ignore.size; i++)
        if (rules__selector_matches(self->ignore.contents[i], code) &&
            (long)rules__specificity(self->ignore.contents[i]) > ignored)
            ignored = (long)rules__specificity(self->ignore.contents[i]);
    return selected >= 0 && selected > ignored;
}

void p2s_rules_format(const char *template, const char *const *kv, size_t npairs, P2sStrbuf *out)
{
    for (const char *p = template; *p; p++) {
        if ((p[0] == '{' && p[1] == '{') || (p[0] == '}' && p[1] == '}')) {
            p2s_strbuf_addch(out, *p++);
            continue;
        }
        const char *close = *p == '{' ? strchr(p, '}') : NULL;
        if (!close) {
            p2s_strbuf_addch(out, *p);
            continue;
        }
        size_t len = (size_t)(close - p - 1);
        for (size_t i = 0; i < npairs; i++) {
            if (strlen(kv[2 * i]) == len && memcmp(kv[2 * i], p + 1, len) == 0) {
                p2s_strbuf_adds(out, kv[2 * i + 1]);
                break;
            }
        }
        p = close;
    }
}

P2sDiag *p2s_rules_emit(const P2sRules *self, P2sDiagSink *sink, const char *code, P2sSpan span,
                        const char *const *kv, size_t npairs)
{
    const P2sRuleDiag *rule = p2s_rules_diag(self, code);
    if (!rule)
        return NULL;
    P2sStrbuf text;
    p2s_strbuf_init(&text);
    p2s_rules_format(rule->message, kv, npairs, &text);
    P2sDiag *d = p2s_diag_emitf(sink, rule->severity, code, span, "%s", text.buf);
    if (rule->fix) {
        p2s_strbuf_reset(&text);
        p2s_rules_format(rule->fix, kv, npairs, &text);
        p2s_diag_set_fix(d, text.buf);
    }
    p2s_strbuf_release(&text);
    return d;
}

void p2s_rules_release(P2sRules *self)
{
    p2s_strings_release(&self->pylayer_bases);
    p2s_strings_release(&self->paddle_apis);
    p2s_strings_release(&self->paddle_api_words);
    for (size_t i = 0; i < self->ctx_methods.size; i++)
        p2s_free(self->ctx_methods.contents[i].name);
    array_delete(&self->ctx_methods);
    for (size_t i = 0; i < self->hazards.size; i++)
        p2s_free(self->hazards.contents[i].name);
    array_delete(&self->hazards);
    for (size_t i = 0; i < self->diagnostics.size; i++) {
        p2s_free(self->diagnostics.contents[i].message);
        p2s_free(self->diagnostics.contents[i].fix);
    }
    array_delete(&self->diagnostics);
    p2s_rules_selection_reset(self);
    p2s_free(self->version);
    self->version = NULL;
}
