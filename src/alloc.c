/* alloc.c — allocation with a single failure policy, and the temp-file cleanup registry. */
#include "alloc.h"

#include <cjson/cJSON.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <tree_sitter/api.h>
#include <unistd.h>

#define ALLOC_EXIT_CODE 4
#define CLEANUP_SLOTS 64
#define CLEANUP_PATH_MAX 4096

static atomic_ulong alloc__count;  /* workers allocate concurrently */
static unsigned long alloc__fail_at;  /* 0: never */

static char alloc__cleanup_paths[CLEANUP_SLOTS][CLEANUP_PATH_MAX];
static volatile sig_atomic_t alloc__cleanup_used[CLEANUP_SLOTS];

static void alloc__die(void)
{
    static const char msg[] = "pylayer2static: error: out of memory\n";
    p2s_cleanup_run();
    if (write(STDERR_FILENO, msg, sizeof msg - 1) < 0) {
        /* nothing more can be reported */
    }
    _exit(ALLOC_EXIT_CODE);
}

static int alloc__should_fail(void)
{
    unsigned long n = atomic_fetch_add(&alloc__count, 1) + 1;
    return alloc__fail_at != 0 && n == alloc__fail_at;
}

void *p2s_malloc(size_t n)
{
    void *p = alloc__should_fail() ? NULL : malloc(n ? n : 1);
    if (!p)
        alloc__die();
    return p;
}

void *p2s_calloc(size_t count, size_t size)
{
    void *p = alloc__should_fail() ? NULL : calloc(count ? count : 1, size ? size : 1);
    if (!p)
        alloc__die();
    return p;
}

void *p2s_realloc(void *ptr, size_t n)
{
    void *p = alloc__should_fail() ? NULL : realloc(ptr, n ? n : 1);
    if (!p)
        alloc__die();
    return p;
}

void p2s_free(void *ptr)
{
    free(ptr);
}

char *p2s_strndup(const char *s, size_t n)
{
    char *copy = p2s_malloc(n + 1);
    memcpy(copy, s, n);
    copy[n] = '\0';
    return copy;
}

char *p2s_strdup(const char *s)
{
    return p2s_strndup(s, strlen(s));
}

void p2s_alloc_init(void)
{
    const char *fail = getenv("P2S_FAIL_ALLOC");
    alloc__fail_at = fail ? strtoul(fail, NULL, 10) : 0;
    atomic_store(&alloc__count, 0);
    ts_set_allocator(p2s_malloc, p2s_calloc, p2s_realloc, p2s_free);
    cJSON_Hooks hooks = {p2s_malloc, p2s_free};
    cJSON_InitHooks(&hooks);
}

int p2s_cleanup_register(const char *path)
{
    size_t n = strlen(path);
    if (n >= CLEANUP_PATH_MAX)
        return -1;
    for (int i = 0; i < CLEANUP_SLOTS; i++) {
        if (!alloc__cleanup_used[i]) {
            memcpy(alloc__cleanup_paths[i], path, n + 1);
            alloc__cleanup_used[i] = 1;
            return i;
        }
    }
    return -1;
}

void p2s_cleanup_unregister(int slot)
{
    if (slot >= 0 && slot < CLEANUP_SLOTS)
        alloc__cleanup_used[slot] = 0;
}

void p2s_cleanup_run(void)
{
    for (int i = 0; i < CLEANUP_SLOTS; i++) {
        if (alloc__cleanup_used[i]) {
            unlink(alloc__cleanup_paths[i]);
            alloc__cleanup_used[i] = 0;
        }
    }
}
