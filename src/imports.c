/* imports.c — the modules a source imports, by a scan of its bytes, and the import order
 * (imports.h). */
#include "imports.h"

#include <string.h>

#include "strbuf.h"

typedef struct {
    const char *p, *end;
    bool bracketed;     /* inside a `from ... import (` list: newlines and comments are blanks */
} Scan;

static bool imports__ident_byte(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           (unsigned char)c >= 0x80;
}

/* Skips blanks: spaces, tabs, a backslash before a line end, and inside brackets line ends
 * and comments too. */
static void imports__blanks(Scan *s)
{
    while (s->p < s->end) {
        char c = *s->p;
        if (c == ' ' || c == '\t' || c == '\f' || (s->bracketed && (c == '\n' || c == '\r'))) {
            s->p++;
        } else if (c == '\\' && s->p + 1 < s->end && (s->p[1] == '\n' || s->p[1] == '\r')) {
            s->p += s->p[1] == '\r' && s->p + 2 < s->end && s->p[2] == '\n' ? 3 : 2;
        } else if (c == '#' && s->bracketed) {
            while (s->p < s->end && *s->p != '\n')
                s->p++;
        } else {
            return;
        }
    }
}

/* The identifier at the cursor (taken) and its length; 0 when there is none. */
static size_t imports__word(Scan *s, const char **word)
{
    imports__blanks(s);
    *word = s->p;
    while (s->p < s->end && imports__ident_byte(*s->p))
        s->p++;
    return (size_t)(s->p - *word);
}

/* Takes the keyword kw when it is the next word. */
static bool imports__keyword(Scan *s, const char *kw)
{
    const char *at = s->p, *word;
    size_t n = imports__word(s, &word);
    if (n == strlen(kw) && memcmp(word, kw, n) == 0)
        return true;
    s->p = at;
    return false;
}

/* Takes the character c when it is next. */
static bool imports__punct(Scan *s, char c)
{
    imports__blanks(s);
    if (s->p < s->end && *s->p == c) {
        s->p++;
        return true;
    }
    return false;
}

/* Appends a dotted name (`a.b.c`, blanks allowed around the dots) to name; false when there is
 * none. */
static bool imports__dotted(Scan *s, P2sStrbuf *name)
{
    for (bool first = true;; first = false) {
        const char *word;
        size_t n = imports__word(s, &word);
        if (!n)
            return !first;
        if (!first)
            p2s_strbuf_addch(name, '.');
        p2s_strbuf_add(name, word, n);
        const char *at = s->p;
        if (!imports__punct(s, '.')) {
            s->p = at;
            return true;
        }
    }
}

/* Skips `as NAME`, if there. */
static void imports__alias(Scan *s)
{
    const char *word;
    if (imports__keyword(s, "as"))
        imports__word(s, &word);
}

/* The package `dots` leading dots name from module: its package, then one up per further dot.
 * False when that climbs above the top package (or module is in none). */
static bool imports__relative_base(const char *module, bool is_package, size_t dots, P2sStrbuf *base)
{
    size_t n = strlen(module);
    for (size_t up = is_package ? 1 : 0; up < dots; up++) {
        if (n == 0)
            return false;
        while (n > 0 && module[n - 1] != '.')
            n--;
        n = n > 0 ? n - 1 : 0;
    }
    if (n == 0)
        return false;
    p2s_strbuf_add(base, module, n);
    return true;
}

/* `import a.b [as c], d`: each name. */
static void imports__import(Scan *s, P2sStrings *out)
{
    P2sStrbuf name;
    p2s_strbuf_init(&name);
    do {
        p2s_strbuf_reset(&name);
        if (!imports__dotted(s, &name))
            break;
        array_push(out, p2s_strndup(name.buf, name.len));
        imports__alias(s);
    } while (imports__punct(s, ','));
    p2s_strbuf_release(&name);
}

/* `from [dots]M import a [as b], c` or `... import (a, c)`: M.a, M.c; `... import *`: M. */
static void imports__from(Scan *s, const char *module, bool is_package, P2sStrings *out)
{
    P2sStrbuf base, name;
    p2s_strbuf_init(&base);
    p2s_strbuf_init(&name);
    size_t dots = 0;
    for (;; dots++) {
        const char *at = s->p;
        if (imports__punct(s, '.'))
            continue;
        s->p = at;
        break;
    }
    const char *at = s->p;
    bool named = false;
    if (imports__keyword(s, "import"))
        s->p = at;  /* `from . import x`: no module after the dots */
    else
        named = imports__dotted(s, &name);
    bool ok = dots ? imports__relative_base(module, is_package, dots, &base) : named;
    if (ok && named) {
        if (base.len)
            p2s_strbuf_addch(&base, '.');
        p2s_strbuf_add(&base, name.buf, name.len);
    }
    if (ok && imports__keyword(s, "import")) {
        if (imports__punct(s, '*'))
            array_push(out, p2s_strndup(base.buf, base.len));
        s->bracketed = imports__punct(s, '(');
        const char *word;
        for (size_t n; (n = imports__word(s, &word)) > 0;) {
            p2s_strbuf_reset(&name);
            p2s_strbuf_addf(&name, "%s.%.*s", base.buf, (int)n, word);
            array_push(out, p2s_strndup(name.buf, name.len));
            imports__alias(s);
            if (!imports__punct(s, ','))
                break;
        }
        s->bracketed = false;
    }
    p2s_strbuf_release(&name);
    p2s_strbuf_release(&base);
}

void p2s_imports_scan(const char *bytes, size_t len, const char *module, bool is_package, P2sStrings *out)
{
    Scan s = {bytes, bytes + len, false};
    while (s.p < s.end) {
        do {
            if (imports__keyword(&s, "import"))
                imports__import(&s, out);
            else if (imports__keyword(&s, "from"))
                imports__from(&s, module, is_package, out);
        } while (imports__punct(&s, ';'));
        const char *eol = memchr(s.p, '\n', (size_t)(s.end - s.p));
        s.p = eol ? eol + 1 : s.end;
    }
}

void p2s_imports_order(size_t n, const size_t *roots, const P2sIndices *imports, size_t *order)
{
    unsigned char *state = p2s_calloc(n ? n : 1, 1);        /* 0 new, 1 on the path, 2 placed */
    size_t *next = p2s_calloc(n ? n : 1, sizeof(size_t));   /* a node's next import to visit */
    P2sIndices path = {0};
    size_t placed = 0;
    for (size_t r = 0; r < n; r++) {
        if (state[roots[r]])
            continue;
        state[roots[r]] = 1;
        array_push(&path, roots[r]);
        while (path.size) {
            size_t v = *array_back(&path);
            if (next[v] < imports[v].size) {
                size_t w = imports[v].contents[next[v]++];
                if (w < n && !state[w]) {
                    state[w] = 1;
                    array_push(&path, w);
                }
            } else {
                state[v] = 2;
                order[placed++] = v;
                path.size--;
            }
        }
    }
    array_delete(&path);
    p2s_free(next);
    p2s_free(state);
}
