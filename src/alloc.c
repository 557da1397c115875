/* alloc.c — allocation with a single failure policy, and the temp-file cleanup registry. */
#include "alloc.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <tree_sitter/api.h>
#include <unistd.h>

#define ALLOC_EXIT_CODE 4
#define CLEANUP_PATH_MAX 4096

static atomic_ulong alloc__count;  /* workers allocate concurrently; counted only under the hook */
static unsigned long alloc__fail_at;  /* 0: never; set before any thread starts */

/* The cleanup registry. Workers create temp files concurrently, so a slot is claimed with a
 * compare-and-swap (FREE -> BUSY), its path copied, and only then published (ARMED). Removal
 * (p2s_cleanup_run, from a signal handler or out of memory on any thread) first closes the
 * gate, then waits for every thread inside it (creating a file and registering it, or
 * unregistering one) to leave, and only then unlinks the ARMED slots: no temp file is ever
 * created without being removed, and no slot is read while it is being rewritten. A thread
 * inside the gate holds SIGINT and SIGTERM blocked, so the handler never waits for the very
 * thread it interrupted; nothing inside the gate allocates, so out of memory never does. */
enum { SLOT_FREE, SLOT_BUSY, SLOT_ARMED };
static char alloc__cleanup_paths[P2S_CLEANUP_SLOTS][CLEANUP_PATH_MAX];
static atomic_int alloc__cleanup_state[P2S_CLEANUP_SLOTS];
static atomic_int alloc__gate_closed;
static atomic_int alloc__gate_inside;

static void alloc__die(void)
{
    static const char msg[] = "pylayer2static: error: out of memory\n";
    p2s_cleanup_run();
    if (write(STDERR_FILENO, msg, sizeof msg - 1) < 0) {
        /* nothing more can be reported */
    }
    _exit(ALLOC_EXIT_CODE);
}

/* The counter is shared by every thread: it is touched only when the test hook is set, so
 * workers do not contend for its cache line on every allocation. */
static int alloc__should_fail(void)
{
    if (alloc__fail_at == 0)
        return 0;
    return atomic_fetch_add(&alloc__count, 1) + 1 == alloc__fail_at;
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

/* Enters the gate with SIGINT/SIGTERM blocked (their old mask in *saved); false, with the mask
 * restored, when removal has begun. */
static bool alloc__gate_enter(sigset_t *saved)
{
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop, saved);
    atomic_fetch_add(&alloc__gate_inside, 1);
    if (!atomic_load(&alloc__gate_closed))
        return true;
    atomic_fetch_sub(&alloc__gate_inside, 1);
    pthread_sigmask(SIG_SETMASK, saved, NULL);
    return false;
}

static void alloc__gate_leave(const sigset_t *saved)
{
    atomic_fetch_sub(&alloc__gate_inside, 1);
    pthread_sigmask(SIG_SETMASK, saved, NULL);
}

/* Claims a free slot and copies path into it; -1 when every slot is taken. Inside the gate. */
static int alloc__claim(const char *path, size_t n)
{
    for (int i = 0; i < P2S_CLEANUP_SLOTS; i++) {
        int expected = SLOT_FREE;
        if (atomic_load_explicit(&alloc__cleanup_state[i], memory_order_relaxed) == SLOT_FREE &&
            atomic_compare_exchange_strong(&alloc__cleanup_state[i], &expected, SLOT_BUSY)) {
            memcpy(alloc__cleanup_paths[i], path, n + 1);
            atomic_store(&alloc__cleanup_state[i], SLOT_ARMED);
            return i;
        }
    }
    return -1;
}

int p2s_cleanup_create(char *template_path, int (*create)(char *template_path), int *fd)
{
    size_t n = strlen(template_path);
    sigset_t saved;
    *fd = -1;
    if (n >= CLEANUP_PATH_MAX || !alloc__gate_enter(&saved)) {
        errno = n >= CLEANUP_PATH_MAX ? ENAMETOOLONG : EINTR;
        return -1;
    }
    int slot = -1;
    *fd = create(template_path);
    int saved_errno = errno;
    if (*fd >= 0) {
        slot = alloc__claim(template_path, n);
        if (slot < 0) {
            unlink(template_path);
            close(*fd);
            *fd = -1;
            saved_errno = EMFILE;
        }
    }
    alloc__gate_leave(&saved);
    errno = saved_errno;
    return slot;
}

int p2s_cleanup_register(const char *path)
{
    size_t n = strlen(path);
    sigset_t saved;
    if (n >= CLEANUP_PATH_MAX || !alloc__gate_enter(&saved))
        return -1;
    int slot = alloc__claim(path, n);
    alloc__gate_leave(&saved);
    return slot;
}

void p2s_cleanup_unregister(int slot)
{
    sigset_t saved;
    if (slot < 0 || slot >= P2S_CLEANUP_SLOTS || !alloc__gate_enter(&saved))
        return;  /* removal has begun: it unlinks the path, which is gone or still a temp file */
    atomic_store(&alloc__cleanup_state[slot], SLOT_FREE);
    alloc__gate_leave(&saved);
}

size_t p2s_cleanup_count(void)
{
    size_t n = 0;
    for (int i = 0; i < P2S_CLEANUP_SLOTS; i++)
        n += atomic_load(&alloc__cleanup_state[i]) == SLOT_ARMED;
    return n;
}

void p2s_cleanup_run(void)
{
    atomic_store(&alloc__gate_closed, 1);
    while (atomic_load(&alloc__gate_inside) > 0) {
        /* another thread is between creating a file and registering it: a system call's time */
    }
    for (int i = 0; i < P2S_CLEANUP_SLOTS; i++) {
        if (atomic_load(&alloc__cleanup_state[i]) == SLOT_ARMED) {
            unlink(alloc__cleanup_paths[i]);
            atomic_store(&alloc__cleanup_state[i], SLOT_FREE);
        }
    }
}
