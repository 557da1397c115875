/* lsp_text.h — LSP documents as bytes: positions in UTF-16 code units (LSP's default encoding;
 * a character outside the BMP counts two), line ends `\n`, `\r\n` and `\r` (as the spec and the
 * source line map count them), incremental edits that also tell a tree-sitter tree what moved
 * (TSPoint rows count `\n` only, columns in bytes), and file URIs. No allocation except where
 * a function says the caller frees. */
#ifndef P2S_LSP_TEXT_H
#define P2S_LSP_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <tree_sitter/api.h>

#include "source.h"
#include "strbuf.h"

typedef struct {
    uint32_t line, character;    /* 0-based; character in UTF-16 code units */
} P2sLspPosition;

/* The byte offset of pos in text: a character past the end of its line means the line's end,
 * a line past the last one the end of the text; a position inside a UTF-8 sequence (or between
 * the two halves of a surrogate pair) rounds down to the character's start. */
size_t p2s_lsp_offset(const char *text, size_t len, P2sLspPosition pos);
/* The position of a byte offset of src (its line map), the inverse of p2s_lsp_offset. */
P2sLspPosition p2s_lsp_position(const P2sSource *src, size_t offset);
/* UTF-16 code units in bytes[0..n) (an invalid byte counts one). */
size_t p2s_lsp_utf16_len(const char *bytes, size_t n);

/* Replaces text[start..end) by repl[0..n) and tells tree (when not NULL) of the edit. */
void p2s_lsp_splice(P2sStrbuf *text, size_t start, size_t end, const char *repl, size_t n, TSTree *tree);

/* The path of a file:// URI, percent-decoded (caller frees); NULL for any other URI. */
char *p2s_lsp_uri_to_path(const char *uri);

#endif
