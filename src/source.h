/* source.h — one input file: its bytes exactly as stored (BOM, CRLF, tabs kept), its display
 * name, and its line map for offset -> line:col. The source owns its bytes and name. */
#ifndef P2S_SOURCE_H
#define P2S_SOURCE_H

#include <stdbool.h>
#include <stddef.h>

#include "array.h"
#include "diag.h"
#include "span.h"
#include "strbuf.h"

#define P2S_SOURCE_LIMIT ((size_t)256 << 20)  /* larger inputs (or endless ones) are refused */

typedef struct {
    char *name;
    char *bytes;                 /* NUL-terminated copy; len excludes the terminator */
    size_t len;
    Array(size_t) line_starts;   /* byte offset of each line; \n, \r\n and lone \r end lines */
    bool borrowed;               /* bytes belong to someone else (p2s_source_view) */
} P2sSource;

/* Reads all of fd (at most `limit` bytes). Returns 0, or -1 with an I/O diagnostic in sink;
 * *out is only filled on success. */
int  p2s_source_read_fd(P2sSource *out, int fd, const char *name, size_t limit,
                        P2sDiagSink *sink);
/* Opens and reads path. Same contract. */
int  p2s_source_read_path(P2sSource *out, const char *path, const char *name, size_t limit,
                          P2sDiagSink *sink);
/* Reads a whole file that is not a Python input (rules, configuration): 0, or -1 with the
 * reason (without the path) in why. */
int  p2s_source_read_file(P2sSource *out, const char *path, P2sStrbuf *why);
/* Copies bytes (for tests and the fuzzer). */
void p2s_source_from_bytes(P2sSource *out, const char *name, const char *bytes, size_t len);
/* A source over bytes that stay the caller's (NUL-terminated, alive as long as the view). */
void p2s_source_view(P2sSource *out, const char *name, const char *bytes, size_t len);
void p2s_source_release(P2sSource *self);

/* Rejects what is not UTF-8 Python text: NUL bytes (P2S002), invalid UTF-8 (P2S003), a PEP 263
 * cookie naming another encoding (P2S004). Returns 0, or -1 with errors in sink. */
int  p2s_source_validate(const P2sSource *self, P2sDiagSink *sink);

/* 1-based line and column (column in Unicode code points; a BOM is not a column). */
void p2s_source_position(const P2sSource *self, size_t offset, size_t *line, size_t *col);
/* The bytes of 1-based line `line`, without its line ending. */
P2sSpan p2s_source_line_span(const P2sSource *self, size_t line);
size_t p2s_source_line_count(const P2sSource *self);
/* The 0-based line that holds offset: the last line start <= offset (0 when the map is empty). */
size_t p2s_source_line_index(const P2sSource *self, size_t offset);

#endif
