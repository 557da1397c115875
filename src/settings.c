/* settings.c — the caller's settings merged over the configuration file. */
#include "settings.h"

#include <string.h>

void p2s_settings_release(P2sSettings *self)
{
    p2s_free(self->config);
    p2s_strings_release(&self->rules_files);
    p2s_strings_release(&self->select);
    p2s_strings_release(&self->ignore);
    p2s_strings_release(&self->warn);
    memset(self, 0, sizeof *self);
}

char *p2s_settings_config_path(const P2sSettings *self, const char *dir)
{
    if (self->no_config)
        return NULL;
    if (self->config)
        return p2s_strdup(self->config);
    return dir ? p2s_config_discover(dir) : NULL;
}

/* Each item of each list, in order: the configuration's lists first. */
static int settings__select(const P2sSettings *self, P2sRules *rules, P2sRulesSelection what,
                            const P2sStrings *first, const P2sStrings *then, P2sStrbuf *err)
{
    static const char *const option[] = {"select", "ignore", "warn"};
    const P2sStrings *lists[] = {first, then};
    for (size_t l = 0; l < 2; l++) {
        for (size_t i = 0; lists[l] && i < lists[l]->size; i++) {
            P2sStrbuf why;
            p2s_strbuf_init(&why);
            int rc = p2s_rules_apply_selectors(rules, what, lists[l]->contents[i], &why);
            if (rc < 0)
                p2s_strbuf_addf(err, "%s%s: %s", self->command_line ? "pylayer2static: error: --" : "",
                                option[what], why.buf);
            p2s_strbuf_release(&why);
            if (rc < 0)
                return -1;
        }
    }
    return 0;
}

int p2s_settings_load(const P2sSettings *self, const char *config_path, P2sConfig *config, P2sRules *rules,
                      P2sStrbuf *err)
{
    memset(config, 0, sizeof *config);
    if (config_path && p2s_config_load(config_path, config, err) < 0)
        return -1;
    if (p2s_rules_load_default(rules, err) < 0)
        return -1;
    for (size_t i = 0; i < config->rules.size; i++)
        if (p2s_rules_load_file(rules, config->rules.contents[i], err) < 0)
            return -1;
    for (size_t i = 0; i < self->rules_files.size; i++)
        if (p2s_rules_load_file(rules, self->rules_files.contents[i], err) < 0)
            return -1;
    const P2sStrings *select = self->select_given ? &self->select : &config->select;
    const P2sStrings *config_ignore = self->select_given ? NULL : &config->ignore;
    if (settings__select(self, rules, P2S_RULES_SELECT, select, NULL, err) < 0 ||
        settings__select(self, rules, P2S_RULES_IGNORE, config_ignore, &self->ignore, err) < 0 ||
        settings__select(self, rules, P2S_RULES_WARN, &config->warn, &self->warn, err) < 0)
        return -1;
    return 0;
}

int p2s_settings_for(const P2sSettings *self, P2sSettingsCache *cache, const char *config_path,
                     const P2sFileSettings **out, P2sStrbuf *err)
{
    for (size_t i = 0; i < cache->size; i++) {
        const char *read = cache->contents[i]->config_path;
        if ((!read && !config_path) || (read && config_path && strcmp(read, config_path) == 0)) {
            *out = cache->contents[i];
            return 0;
        }
    }
    P2sFileSettings *entry = p2s_calloc(1, sizeof *entry);
    entry->config_path = config_path ? p2s_strdup(config_path) : NULL;
    array_push(cache, entry);
    *out = entry;
    if (p2s_settings_load(self, config_path, &entry->config, &entry->rules, err) == 0)
        return 0;
    p2s_config_release(&entry->config);
    p2s_rules_release(&entry->rules);
    memset(&entry->config, 0, sizeof entry->config);
    memset(&entry->rules, 0, sizeof entry->rules);
    P2sStrbuf ignored;
    p2s_strbuf_init(&ignored);
    p2s_rules_load_default(&entry->rules, &ignored);
    p2s_strbuf_release(&ignored);
    return -1;
}

void p2s_settings_cache_release(P2sSettingsCache *cache)
{
    for (size_t i = 0; i < cache->size; i++) {
        p2s_free(cache->contents[i]->config_path);
        p2s_config_release(&cache->contents[i]->config);
        p2s_rules_release(&cache->contents[i]->rules);
        p2s_free(cache->contents[i]);
    }
    array_delete(cache);
}

void p2s_settings_walk(const P2sStringList *excludes, unsigned jobs, const P2sConfig *config, P2sWalkSettings *out)
{
    memset(out, 0, sizeof *out);
    for (size_t i = 0; excludes && i < excludes->size; i++)
        array_push(&out->excludes, excludes->contents[i]);
    for (size_t i = 0; i < config->exclude.size; i++)
        array_push(&out->excludes, (const char *)config->exclude.contents[i]);
    out->jobs = jobs ? jobs : config->jobs;
}
