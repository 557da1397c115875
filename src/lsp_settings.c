/* lsp_settings.c — the language server's settings: the client's, read from JSON (strings or
 * arrays of strings, wrongly typed values treated as absent), and the merged settings of a
 * directory's configuration file (settings.h's cache), a broken one shown to the user once. */
#include "lsp_settings.h"

#include <string.h>

#include "alloc.h"

/* A string or an array of strings, appended to out; true when the key was given. */
static bool lsp_settings__strings(const cJSON *obj, const char *key, P2sStrings *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (cJSON_IsString(v)) {
        array_push(out, p2s_strdup(v->valuestring));
        return true;
    }
    if (!cJSON_IsArray(v))
        return false;
    for (const cJSON *item = v->child; item; item = item->next)
        if (cJSON_IsString(item))
            array_push(out, p2s_strdup(item->valuestring));
    return true;
}

void p2s_lsp_settings_read(P2sLsp *s, const cJSON *settings)
{
    P2sSettings *st = &s->settings;
    p2s_settings_release(st);
    st->no_config = !s->file_system;
    if (!cJSON_IsObject(settings))
        return;
    const cJSON *inner = cJSON_GetObjectItemCaseSensitive(settings, "pylayer2static");
    if (cJSON_IsObject(inner))
        settings = inner;
    if (s->file_system)
        lsp_settings__strings(settings, "rules", &st->rules_files);
    st->select_given = lsp_settings__strings(settings, "select", &st->select);
    lsp_settings__strings(settings, "ignore", &st->ignore);
    lsp_settings__strings(settings, "warn", &st->warn);
    const cJSON *config = cJSON_GetObjectItemCaseSensitive(settings, "config");
    if (cJSON_IsString(config) && config->valuestring[0])
        st->config = p2s_strdup(config->valuestring);
    st->no_config |= cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(settings, "noConfig"));
}

const P2sFileSettings *p2s_lsp_settings_for(P2sLsp *s, const char *dir)
{
    char *path = p2s_settings_config_path(&s->settings, dir);
    const P2sFileSettings *r;
    P2sStrbuf err;
    p2s_strbuf_init(&err);
    if (p2s_settings_for(&s->settings, &s->rules, path, &r, &err) < 0) {
        P2sStrbuf text;
        p2s_strbuf_init(&text);
        p2s_strbuf_addf(&text, "pylayer2static: %s (using the built-in rules)", err.buf);
        p2s_lsp_message(s, "window/showMessage", 1, text.buf);
        p2s_strbuf_release(&text);
    }
    p2s_strbuf_release(&err);
    p2s_free(path);
    return r;
}
