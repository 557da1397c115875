/* alloc.h — the one allocation entry. Every allocation in the program (ours, tree-sitter's
 * through ts_set_allocator, cJSON's through cJSON_InitHooks) goes through here. On failure it
 * prints one line, removes the registered temp files and exits 4: callers never see NULL.
 * Test hook: P2S_FAIL_ALLOC=N makes the Nth allocation fail. */
#ifndef P2S_ALLOC_H
#define P2S_ALLOC_H

#include <stddef.h>

void  p2s_alloc_init(void);                  /* reads the test hook, wires tree-sitter and cJSON */
void *p2s_malloc(size_t n);
void *p2s_calloc(size_t count, size_t size);
void *p2s_realloc(void *ptr, size_t n);
void  p2s_free(void *ptr);
char *p2s_strdup(const char *s);
char *p2s_strndup(const char *s, size_t n);

/* Temp files removed on out-of-memory and on fatal signals. The path is copied into a fixed
 * slot (no allocation) so removal is safe from a signal handler. Returns a slot or -1. */
int   p2s_cleanup_register(const char *path);
void  p2s_cleanup_unregister(int slot);
void  p2s_cleanup_run(void);                 /* async-signal-safe */

#endif
