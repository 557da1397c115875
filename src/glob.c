/* glob.c — pattern matching and .gitignore rules. */
#include "glob.h"

#include <string.h>

#include "strbuf.h"

/* Matches a bracket class at *p against c; advances *p past it. */
static bool glob__class(const char **p, char c)
{
    const char *s = *p + 1;
    bool negate = *s == '!' || *s == '^';
    if (negate)
        s++;
    bool hit = false;
    bool first = true;
    while (*s && (*s != ']' || first)) {
        if (s[1] == '-' && s[2] && s[2] != ']') {
            if (c >= s[0] && c <= s[2])
                hit = true;
            s += 3;
        } else {
            if (c == *s)
                hit = true;
            s++;
        }
        first = false;
    }
    *p = *s ? s + 1 : s;
    return hit != negate;
}

bool p2s_glob_match(const char *p, const char *s)
{
    while (*p) {
        if (p[0] == '*' && p[1] == '*') {
            const char *rest = p + 2;
            if (*rest == '/')
                rest++;
            /* `**` matches nothing, or anything up to any later component. */
            for (const char *t = s;; t++) {
                if (p2s_glob_match(rest, t))
                    return true;
                if (!*t)
                    return false;
            }
        }
        if (*p == '*') {
            for (const char *t = s;; t++) {
                if (p2s_glob_match(p + 1, t))
                    return true;
                if (!*t || *t == '/')
                    return false;
            }
        }
        if (!*s)
            return false;
        if (*p == '?') {
            if (*s == '/')
                return false;
        } else if (*p == '[') {
            if (*s == '/' || !glob__class(&p, *s))
                return false;
            s++;
            continue;
        } else {
            if (*p == '\\' && p[1])
                p++;
            if (*p != *s)
                return false;
        }
        p++;
        s++;
    }
    return *s == '\0';
}

void p2s_ignore_add(P2sIgnoreRules *rules, const char *base, const char *text, size_t len)
{
    size_t i = 0;
    while (i < len) {
        size_t end = i;
        while (end < len && text[end] != '\n')
            end++;
        size_t e = end;
        if (e > i && text[e - 1] == '\r')
            e--;
        while (e > i && (text[e - 1] == ' ' || text[e - 1] == '\t') && !(e - 1 > i && text[e - 2] == '\\'))
            e--;
        size_t b = i;
        i = end + 1;
        if (b == e || text[b] == '#')
            continue;
        P2sIgnoreRule r = {0};
        if (text[b] == '!') {
            r.negate = true;
            b++;
        }
        if (e > b && text[e - 1] == '/') {
            r.dir_only = true;
            e--;
        }
        if (b == e)
            continue;
        r.anchored = memchr(text + b, '/', e - b) != NULL;
        if (text[b] == '/')
            b++;
        r.pattern = p2s_strndup(text + b, e - b);
        r.base = p2s_strdup(base);
        array_push(rules, r);
    }
}

bool p2s_ignore_match(const P2sIgnoreRules *rules, const char *rel, bool is_dir)
{
    bool ignored = false;
    for (size_t i = 0; i < rules->size; i++) {
        const P2sIgnoreRule *r = &rules->contents[i];
        if (r->dir_only && !is_dir)
            continue;
        size_t base_len = strlen(r->base);
        if (base_len && (strncmp(rel, r->base, base_len) != 0 || rel[base_len] != '/'))
            continue;
        const char *local = base_len ? rel + base_len + 1 : rel;
        bool hit;
        if (r->anchored) {
            hit = p2s_glob_match(r->pattern, local);
        } else {
            const char *slash = strrchr(local, '/');
            hit = p2s_glob_match(r->pattern, slash ? slash + 1 : local);
        }
        if (hit)
            ignored = !r->negate;
    }
    return ignored;
}

void p2s_ignore_truncate(P2sIgnoreRules *rules, size_t size)
{
    while (rules->size > size) {
        P2sIgnoreRule *r = array_back(rules);
        p2s_free(r->base);
        p2s_free(r->pattern);
        rules->size--;
    }
}

void p2s_ignore_release(P2sIgnoreRules *rules)
{
    p2s_ignore_truncate(rules, 0);
    array_delete(rules);
}
