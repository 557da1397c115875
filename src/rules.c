/* rules.c — reading rules files. */
#include "rules.h"

#include <cjson/cJSON.h>
#include <string.h>

#include "source.h"

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

static int rules__shape_error(const char *name, const char *path, const char *what, P2sStrbuf *err)
{
    p2s_strbuf_addf(err, "%s: %s: %s", name, path, what);
    return -1;
}

/* Validates the whole document before anything is changed, so a bad file leaves self as it was. */
static int rules__check_shape(const cJSON *root, const char *name, P2sStrbuf *err)
{
    if (!cJSON_IsObject(root))
        return rules__shape_error(name, "/", "expected an object", err);
    for (const cJSON *item = root->child; item; item = item->next) {
        if (strcmp(item->string, "version") == 0) {
            if (!cJSON_IsString(item))
                return rules__shape_error(name, "/version", "expected a string", err);
        } else if (strcmp(item->string, "pylayer_bases") == 0) {
            if (!cJSON_IsArray(item))
                return rules__shape_error(name, "/pylayer_bases", "expected an array of qualified names", err);
            int i = 0;
            for (const cJSON *base = item->child; base; base = base->next, i++) {
                if (!cJSON_IsString(base) || !base->valuestring[0] || strchr(base->valuestring, ' ')) {
                    P2sStrbuf path;
                    p2s_strbuf_init(&path);
                    p2s_strbuf_addf(&path, "/pylayer_bases/%d", i);
                    rules__shape_error(name, path.buf, "expected a qualified name such as \"paddle.autograd.PyLayer\"", err);
                    p2s_strbuf_release(&path);
                    return -1;
                }
            }
        } else if (strcmp(item->string, "$comment") != 0) {
            P2sStrbuf path;
            p2s_strbuf_init(&path);
            p2s_strbuf_addf(&path, "/%s", item->string);
            rules__shape_error(name, path.buf, "unknown key", err);
            p2s_strbuf_release(&path);
            return -1;
        }
    }
    return 0;
}

int p2s_rules_load_text(P2sRules *self, const char *name, const char *text, size_t len, P2sStrbuf *err)
{
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    if (!root) {
        rules__syntax_error(name, text, len, end ? end : cJSON_GetErrorPtr(), err);
        return -1;
    }
    int rc = rules__check_shape(root, name, err);
    if (rc == 0) {
        const cJSON *version = cJSON_GetObjectItemCaseSensitive(root, "version");
        if (version) {
            p2s_free(self->version);
            self->version = p2s_strdup(version->valuestring);
        }
        const cJSON *bases = cJSON_GetObjectItemCaseSensitive(root, "pylayer_bases");
        for (const cJSON *base = bases ? bases->child : NULL; base; base = base->next)
            if (!p2s_rules_is_pylayer_base(self, base->valuestring, strlen(base->valuestring)))
                array_push(&self->pylayer_bases, p2s_strdup(base->valuestring));
    }
    cJSON_Delete(root);
    return rc;
}

int p2s_rules_load_default(P2sRules *out, P2sStrbuf *err)
{
    memset(out, 0, sizeof *out);
    return p2s_rules_load_text(out, "<built-in rules/paddle.json>", p2s_default_rules_json,
                               p2s_default_rules_json_len, err);
}

int p2s_rules_load_file(P2sRules *self, const char *path, P2sStrbuf *err)
{
    P2sDiagSink sink;
    P2sSource src;
    p2s_diag_sink_init(&sink);
    int rc = -1;
    if (p2s_source_read_path(&src, path, path, P2S_SOURCE_LIMIT, &sink) < 0) {
        p2s_strbuf_addf(err, "%s: cannot read rules file: %s", path, sink.items.contents[0].message);
        goto done;
    }
    rc = p2s_rules_load_text(self, path, src.bytes, src.len, err);
    p2s_source_release(&src);
done:
    p2s_diag_sink_release(&sink);
    return rc;
}

bool p2s_rules_is_pylayer_base(const P2sRules *self, const char *qualname, size_t len)
{
    for (size_t i = 0; i < self->pylayer_bases.size; i++) {
        const char *base = self->pylayer_bases.contents[i];
        if (strlen(base) == len && memcmp(base, qualname, len) == 0)
            return true;
    }
    return false;
}

void p2s_rules_release(P2sRules *self)
{
    for (size_t i = 0; i < self->pylayer_bases.size; i++)
        p2s_free(self->pylayer_bases.contents[i]);
    array_delete(&self->pylayer_bases);
    p2s_free(self->version);
    self->version = NULL;
}
