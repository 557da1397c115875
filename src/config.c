/* config.c — the [tool.pylayer2static] table of pyproject.toml. */
#include "config.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "diag.h"
#include "source.h"

#define CONFIG_TABLE "tool.pylayer2static"

typedef struct {
    const P2sSource *src;
    size_t at;
    P2sStrbuf *err;
} Toml;

static int config__error(Toml *t, const char *what)
{
    size_t line, col;
    p2s_source_position(t->src, t->at, &line, &col);
    p2s_strbuf_addf(t->err, "%s:%zu:%zu: error: %s", t->src->name, line, col, what);
    return -1;
}

static char config__peek(const Toml *t)
{
    return t->at < t->src->len ? t->src->bytes[t->at] : '\0';
}

/* Skips blanks and comments; newlines too when `lines`. */
static void config__skip(Toml *t, bool lines)
{
    for (;;) {
        char c = config__peek(t);
        if (c == ' ' || c == '\t' || (lines && (c == '\n' || c == '\r'))) {
            t->at++;
        } else if (c == '#') {
            while (t->at < t->src->len && t->src->bytes[t->at] != '\n')
                t->at++;
        } else {
            return;
        }
    }
}

static int config__string(Toml *t, P2sStrbuf *out)
{
    char quote = config__peek(t);
    if (quote != '"' && quote != '\'')
        return config__error(t, "expected a string");
    t->at++;
    for (;;) {
        char c = config__peek(t);
        if (c == '\0' || c == '\n')
            return config__error(t, "unterminated string");
        t->at++;
        if (c == quote)
            return 0;
        if (c == '\\' && quote == '"') {
            char e = config__peek(t);
            t->at++;
            switch (e) {
            case 'n': c = '\n'; break;
            case 't': c = '\t'; break;
            case '"': case '\\': c = e; break;
            default: t->at--; return config__error(t, "unsupported escape in string");
            }
        }
        p2s_strbuf_addch(out, c);
    }
}

static int config__push_string(Toml *t, P2sStrings *out)
{
    P2sStrbuf s;
    p2s_strbuf_init(&s);
    if (config__string(t, &s) < 0) {
        p2s_strbuf_release(&s);
        return -1;
    }
    array_push(out, p2s_strbuf_detach(&s, NULL));
    return 0;
}

static int config__string_array(Toml *t, P2sStrings *out)
{
    if (config__peek(t) != '[')
        return config__error(t, "expected an array of strings");
    t->at++;
    for (;;) {
        config__skip(t, true);
        if (config__peek(t) == ']') {
            t->at++;
            return 0;
        }
        if (config__push_string(t, out) < 0)
            return -1;
        config__skip(t, true);
        if (config__peek(t) == ',')
            t->at++;
        else if (config__peek(t) != ']')
            return config__error(t, "expected ',' or ']'");
    }
}

/* A string or an array of strings; a lone string becomes a one-element list. */
static int config__strings(Toml *t, P2sStrings *out)
{
    if (config__peek(t) == '[')
        return config__string_array(t, out);
    return config__push_string(t, out);
}

static int config__integer(Toml *t, unsigned *out)
{
    size_t start = t->at;
    unsigned long n = 0;
    while (config__peek(t) >= '0' && config__peek(t) <= '9' && n <= 100000)
        n = n * 10 + (unsigned long)(t->src->bytes[t->at++] - '0');
    if (t->at == start || n == 0 || n > 256) {
        t->at = start;
        return config__error(t, "expected a number of jobs from 1 to 256");
    }
    *out = (unsigned)n;
    return 0;
}

/* Makes the relative paths of list[from..] relative to base_dir. */
static void config__resolve_paths(P2sStrings *list, const char *base_dir, size_t from)
{
    for (size_t i = from; i < list->size; i++) {
        char *p = list->contents[i];
        if (p[0] == '/' || !base_dir)
            continue;
        P2sStrbuf full;
        p2s_strbuf_init(&full);
        p2s_strbuf_addf(&full, "%s/%s", base_dir, p);
        p2s_free(p);
        list->contents[i] = p2s_strbuf_detach(&full, NULL);
    }
}

static int config__value(Toml *t, size_t key_at, size_t key_len, const char *base_dir, P2sConfig *out)
{
    const char *key = t->src->bytes + key_at;
#define KEY_IS(k) (key_len == strlen(k) && memcmp(key, k, key_len) == 0)
    if (KEY_IS("rules") || KEY_IS("src")) {
        P2sStrings *list = KEY_IS("rules") ? &out->rules : &out->src;
        size_t before = list->size;
        if (config__strings(t, list) < 0)
            return -1;
        config__resolve_paths(list, base_dir, before);
        out->has_src |= list == &out->src;
        return 0;
    }
    if (KEY_IS("select"))
        return config__strings(t, &out->select);
    if (KEY_IS("ignore"))
        return config__strings(t, &out->ignore);
    if (KEY_IS("warn"))
        return config__strings(t, &out->warn);
    if (KEY_IS("exclude"))
        return config__strings(t, &out->exclude);
    if (KEY_IS("jobs"))
        return config__integer(t, &out->jobs);
    if (KEY_IS("packages")) {
        /* Installed libraries the runtime's import hook transpiles too (configured_packages in
         * importhook.py, which wants an array); nothing of this binary reads them. */
        P2sStrings packages = {0};
        int rc = config__string_array(t, &packages);
        p2s_strings_release(&packages);
        return rc;
    }
#undef KEY_IS
    t->at = key_at;
    return config__error(t, "unknown key (expected rules, select, ignore, warn, exclude, jobs, src or packages)");
}

/* Reads `[table]` at t->at; *ours tells whether it is [tool.pylayer2static]. */
static int config__table(Toml *t, bool *ours)
{
    size_t start = ++t->at;
    while (config__peek(t) && config__peek(t) != ']' && config__peek(t) != '\n')
        t->at++;
    if (config__peek(t) != ']')
        return config__error(t, "expected ']'");
    size_t n = t->at - start;
    *ours = n == strlen(CONFIG_TABLE) && memcmp(t->src->bytes + start, CONFIG_TABLE, n) == 0;
    t->at++;
    return 0;
}

/* Skips a value of a table that is not ours: anything up to the end of the line, or of a
 * bracketed value spread over lines. */
static void config__skip_value(Toml *t)
{
    int depth = 0;
    char quote = 0;
    while (t->at < t->src->len) {
        char c = t->src->bytes[t->at];
        if (quote) {
            if (c == '\\')
                t->at++;
            else if (c == quote)
                quote = 0;
        } else if (c == '"' || c == '\'') {
            quote = c;
        } else if (c == '[' || c == '{') {
            depth++;
        } else if (c == ']' || c == '}') {
            depth--;
        } else if (c == '\n' && depth <= 0) {
            return;
        } else if (c == '#' && depth <= 0) {
            config__skip(t, false);
            continue;
        }
        t->at++;
    }
}

int p2s_config_parse(const char *name, const char *text, size_t len, const char *base_dir,
                     P2sConfig *out, P2sStrbuf *err)
{
    P2sSource src;
    p2s_source_from_bytes(&src, name, text, len);
    Toml t = {&src, 0, err};
    bool ours = false;
    int rc = 0;
    memset(out, 0, sizeof *out);
    out->path = p2s_strdup(name);
    while (rc == 0) {
        config__skip(&t, true);
        char c = config__peek(&t);
        if (c == '\0')
            break;
        if (c == '[') {
            rc = config__table(&t, &ours);
            continue;
        }
        size_t key_start = t.at;
        while (config__peek(&t) && config__peek(&t) != '=' && config__peek(&t) != '\n')
            t.at++;
        size_t key_end = t.at;
        while (key_end > key_start && (src.bytes[key_end - 1] == ' ' || src.bytes[key_end - 1] == '\t'))
            key_end--;
        if (config__peek(&t) != '=') {
            rc = config__error(&t, "expected 'key = value'");
            break;
        }
        t.at++;
        config__skip(&t, false);
        if (!ours) {
            config__skip_value(&t);
            continue;
        }
        if (key_end == key_start) {
            t.at = key_start;
            rc = config__error(&t, "expected a key");
            break;
        }
        rc = config__value(&t, key_start, key_end - key_start, base_dir, out);
        if (rc == 0) {
            config__skip(&t, false);
            char end = config__peek(&t);
            if (end != '\0' && end != '\n' && end != '\r')
                rc = config__error(&t, "expected the end of the line after the value");
        }
    }
    p2s_source_release(&src);
    if (rc < 0)
        p2s_config_release(out);
    return rc;
}

int p2s_config_load(const char *path, P2sConfig *out, P2sStrbuf *err)
{
    P2sSource src;
    P2sStrbuf why;
    p2s_strbuf_init(&why);
    int rc = -1;
    if (p2s_source_read_file(&src, path, &why) < 0) {
        p2s_strbuf_addf(err, "%s: error: %s", path, why.buf);
    } else {
        P2sStrbuf dir;
        p2s_strbuf_init(&dir);
        const char *slash = strrchr(path, '/');
        p2s_strbuf_add(&dir, path, slash ? (size_t)(slash - path) : 0);
        rc = p2s_config_parse(path, src.bytes, src.len, slash ? dir.buf : NULL, out, err);
        p2s_strbuf_release(&dir);
        p2s_source_release(&src);
    }
    p2s_strbuf_release(&why);
    return rc;
}

/* Whether a pyproject.toml has our table (a plain text search for the header line). */
static bool config__has_table(const char *path)
{
    P2sSource src;
    P2sStrbuf why;
    p2s_strbuf_init(&why);
    bool found = false;
    if (p2s_source_read_file(&src, path, &why) == 0) {
        found = strstr(src.bytes, "[" CONFIG_TABLE "]") != NULL;
        p2s_source_release(&src);
    }
    p2s_strbuf_release(&why);
    return found;
}

/* The nearest pyproject.toml at or above dir (with our table when need_table); NULL if none. */
static char *config__nearest(const char *dir, bool need_table)
{
    char *resolved = realpath(dir, NULL);
    if (!resolved)
        return NULL;
    P2sStrbuf probe;
    p2s_strbuf_init(&probe);
    char *found = NULL;
    size_t len = strlen(resolved);
    for (;;) {
        p2s_strbuf_reset(&probe);
        p2s_strbuf_addf(&probe, "%.*s/pyproject.toml", (int)len, resolved);
        if (access(probe.buf, R_OK) == 0 && (!need_table || config__has_table(probe.buf))) {
            found = p2s_strbuf_detach(&probe, NULL);
            break;
        }
        if (len <= 1)
            break;
        while (len > 1 && resolved[len - 1] != '/')
            len--;
        if (len > 1)
            len--;
    }
    p2s_strbuf_release(&probe);
    free(resolved);  /* from realpath, not ours */
    return found;
}

char *p2s_config_discover(const char *dir)
{
    return config__nearest(dir, true);
}

char *p2s_config_nearest_pyproject(const char *dir)
{
    return config__nearest(dir, false);
}

void p2s_config_release(P2sConfig *self)
{
    p2s_strings_release(&self->rules);
    p2s_strings_release(&self->select);
    p2s_strings_release(&self->ignore);
    p2s_strings_release(&self->warn);
    p2s_strings_release(&self->exclude);
    p2s_strings_release(&self->src);
    p2s_free(self->path);
    memset(self, 0, sizeof *self);
}
