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
 * slot (no allocation) so removal is safe from a signal handler. Thread-safe: workers create
 * and register temp files concurrently (slots claimed atomically); removal waits for threads
 * between creating a file and registering it, so none is left behind. */
#define P2S_CLEANUP_SLOTS 256
/* Creates a file with create(template_path) (mkstemp's contract: fills the template, returns
 * an fd or -1 with errno) and registers it, with no moment in between at which an interrupt or
 * another thread's removal could miss it. Returns the slot with the fd in *fd; -1 with *fd -1
 * and errno set when it cannot be created, every slot is taken (EMFILE, the file removed) or
 * removal has begun (EINTR). */
int   p2s_cleanup_create(char *template_path, int (*create)(char *template_path), int *fd);
int   p2s_cleanup_register(const char *path);   /* a slot, or -1 */
void  p2s_cleanup_unregister(int slot);
size_t p2s_cleanup_count(void);                 /* slots in use: for tests */
void  p2s_cleanup_run(void);                 /* async-signal-safe; once run, registering fails */

#endif
