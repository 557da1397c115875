/* lsp_text.c — UTF-16 positions, incremental edits and file URIs. */
#include "lsp_text.h"

#include <string.h>

#include "alloc.h"

/* Bytes of the UTF-8 sequence led by c (1 for an invalid lead byte) and its UTF-16 units. */
static size_t text__seq(unsigned char c, size_t *units)
{
    *units = 1;
    if (c >= 0xF0 && c <= 0xF7) {
        *units = 2;
        return 4;
    }
    if (c >= 0xE0 && c <= 0xEF)
        return 3;
    if (c >= 0xC0 && c <= 0xDF)
        return 2;
    return 1;
}

size_t p2s_lsp_utf16_len(const char *bytes, size_t n)
{
    size_t i = 0, units = 0;
    while (i < n) {
        size_t u, k = text__seq((unsigned char)bytes[i], &u);
        i += k;
        units += u;
    }
    return units;
}

size_t p2s_lsp_offset(const char *text, size_t len, P2sLspPosition pos)
{
    size_t i = 0;
    for (uint32_t line = 0; line < pos.line; line++) {
        while (i < len && text[i] != '\n' && text[i] != '\r')
            i++;
        if (i == len)
            return len;
        i += text[i] == '\r' && i + 1 < len && text[i + 1] == '\n' ? 2 : 1;
    }
    size_t units = 0;
    while (i < len && text[i] != '\n' && text[i] != '\r' && units < pos.character) {
        size_t u, k = text__seq((unsigned char)text[i], &u);
        if (i + k > len || units + u > pos.character)
            break;
        i += k;
        units += u;
    }
    return i;
}

P2sLspPosition p2s_lsp_position(const P2sSource *src, size_t offset)
{
    P2sLspPosition pos = {0, 0};
    if (offset > src->len)
        offset = src->len;
    size_t line = p2s_source_line_index(src, offset);
    size_t start = src->line_starts.size ? src->line_starts.contents[line] : 0;
    if (start > offset)
        start = offset;
    pos.line = (uint32_t)line;
    pos.character = (uint32_t)p2s_lsp_utf16_len(src->bytes + start, offset - start);
    return pos;
}

/* tree-sitter's point of an offset: rows at '\n', columns in bytes. */
static TSPoint text__point(const char *text, size_t offset)
{
    TSPoint p = {0, 0};
    size_t line_start = 0;
    for (const char *nl = text; (nl = memchr(nl, '\n', offset - (size_t)(nl - text))); nl++) {
        p.row++;
        line_start = (size_t)(nl - text) + 1;
    }
    p.column = (uint32_t)(offset - line_start);
    return p;
}

void p2s_lsp_splice(P2sStrbuf *text, size_t start, size_t end, const char *repl, size_t n, TSTree *tree)
{
    if (start > text->len)
        start = text->len;
    if (end > text->len)
        end = text->len;
    if (end < start)
        end = start;
    TSInputEdit edit;
    if (tree) {
        edit.start_byte = (uint32_t)start;
        edit.old_end_byte = (uint32_t)end;
        edit.new_end_byte = (uint32_t)(start + n);
        edit.start_point = text__point(text->buf, start);
        edit.old_end_point = text__point(text->buf, end);
        edit.new_end_point = edit.start_point;
        const char *last = n ? memrchr(repl, '\n', n) : NULL;
        for (const char *nl = repl; n && (nl = memchr(nl, '\n', n - (size_t)(nl - repl))); nl++)
            edit.new_end_point.row++;
        edit.new_end_point.column = last ? (uint32_t)(n - (size_t)(last - repl) - 1)
                                         : edit.start_point.column + (uint32_t)n;
    }
    size_t tail = text->len - end;
    if (n > end - start)
        p2s_strbuf_grow(text, n - (end - start));
    memmove(text->buf + start + n, text->buf + end, tail);
    memcpy(text->buf + start, repl, n);
    text->len = start + n + tail;
    text->buf[text->len] = '\0';
    if (tree)
        ts_tree_edit(tree, &edit);
}

static int text__hex(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

char *p2s_lsp_uri_to_path(const char *uri)
{
    if (strncmp(uri, "file://", 7) != 0)
        return NULL;
    const char *p = uri + 7;
    if (strncmp(p, "localhost/", 10) == 0)
        p += 9;
    if (*p != '/')
        return NULL;
    P2sStrbuf path;
    p2s_strbuf_init(&path);
    for (; *p && *p != '?' && *p != '#'; p++) {
        int hi, lo;
        if (*p == '%' && (hi = text__hex(p[1])) >= 0 && (lo = text__hex(p[2])) >= 0) {
            char c = (char)(hi * 16 + lo);
            if (c == '\0')
                break;
            p2s_strbuf_addch(&path, c);
            p += 2;
        } else {
            p2s_strbuf_addch(&path, *p);
        }
    }
    return p2s_strbuf_detach(&path, NULL);
}
