/* Unit tests: the temp-file cleanup registry, used by worker threads at once. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "alloc.h"
#include "dir_entries.h"

#define THREADS 4
#define ROUNDS 2000

static atomic_int owners[P2S_CLEANUP_SLOTS];   /* which thread holds each slot, 0: none */
static atomic_int clashes;

static void *claim_and_release(void *arg)
{
    int me = (int)(intptr_t)arg;
    char path[64];
    for (int r = 0; r < ROUNDS; r++) {
        snprintf(path, sizeof path, "/nonexistent/p2s-%d-%d", me, r);
        int slot = p2s_cleanup_register(path);
        if (slot < 0)
            continue;
        int none = 0;
        if (!atomic_compare_exchange_strong(&owners[slot], &none, me))
            atomic_fetch_add(&clashes, 1);
        atomic_store(&owners[slot], 0);
        p2s_cleanup_unregister(slot);
    }
    return NULL;
}

static void test_cleanup_registry_never_gives_one_slot_to_two_threads(void **state)
{
    (void)state;
    pthread_t threads[THREADS];
    for (int i = 0; i < THREADS; i++)
        assert_int_equal(pthread_create(&threads[i], NULL, claim_and_release, (void *)(intptr_t)(i + 1)), 0);
    for (int i = 0; i < THREADS; i++)
        pthread_join(threads[i], NULL);
    assert_int_equal(atomic_load(&clashes), 0);
    assert_int_equal(p2s_cleanup_count(), 0);
}

static void test_cleanup_create_registers_the_file_it_creates(void **state)
{
    (void)state;
    char dir[] = "/tmp/p2s-alloc-XXXXXX", path[64];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/.out.p2s-XXXXXX", dir);
    int fd;
    int slot = p2s_cleanup_create(path, mkstemp, &fd);
    assert_true(slot >= 0);
    assert_true(fd >= 0);
    assert_null(strstr(path, "XXXXXX"));
    assert_int_equal(p2s_cleanup_count(), 1);
    close(fd);
    unlink(path);
    p2s_cleanup_unregister(slot);
    assert_int_equal(p2s_cleanup_count(), 0);
    rmdir(dir);
}

static void test_cleanup_create_leaves_no_file_when_every_slot_is_taken(void **state)
{
    (void)state;
    char dir[] = "/tmp/p2s-alloc-XXXXXX", path[64];
    assert_non_null(mkdtemp(dir));
    int slots[P2S_CLEANUP_SLOTS];
    for (int i = 0; i < P2S_CLEANUP_SLOTS; i++) {
        slots[i] = p2s_cleanup_register("/nonexistent/p2s-full");
        assert_true(slots[i] >= 0);
    }
    assert_int_equal(p2s_cleanup_register("/nonexistent/p2s-one-more"), -1);
    snprintf(path, sizeof path, "%s/.out.p2s-XXXXXX", dir);
    int fd;
    assert_int_equal(p2s_cleanup_create(path, mkstemp, &fd), -1);
    assert_int_equal(errno, EMFILE);
    assert_int_equal(fd, -1);
    assert_int_equal(p2s_test_entries_in(dir), 0);
    for (int i = 0; i < P2S_CLEANUP_SLOTS; i++)
        p2s_cleanup_unregister(slots[i]);
    assert_int_equal(p2s_cleanup_count(), 0);
    rmdir(dir);
}

typedef struct {
    const char *dir;
    atomic_int *created;
} Creator;

/* Creates temp files until registering fails (the gate closed by p2s_cleanup_run). */
static void *create_until_closed(void *arg)
{
    Creator *c = arg;
    for (;;) {
        char path[64];
        snprintf(path, sizeof path, "%s/.f.p2s-XXXXXX", c->dir);
        int fd;
        int slot = p2s_cleanup_create(path, mkstemp, &fd);
        if (slot < 0)
            return NULL;
        atomic_fetch_add(c->created, 1);
        close(fd);
        if (atomic_load(c->created) % 3 == 0) {  /* some are committed and unregistered */
            unlink(path);
            p2s_cleanup_unregister(slot);
        }
    }
}

/* While threads keep creating temp files, removal leaves none behind and no thread creates one
 * after it. In a child process: the gate stays closed once removal has run. */
static void test_cleanup_run_leaves_no_temp_file_while_threads_create_them(void **state)
{
    (void)state;
    char dir[] = "/tmp/p2s-alloc-XXXXXX";
    assert_non_null(mkdtemp(dir));
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        atomic_int created = 0;
        Creator c = {dir, &created};
        pthread_t threads[THREADS];
        for (int i = 0; i < THREADS; i++)
            pthread_create(&threads[i], NULL, create_until_closed, &c);
        while (atomic_load(&created) < 200) {
        }
        p2s_cleanup_run();
        for (int i = 0; i < THREADS; i++)
            pthread_join(threads[i], NULL);
        _exit(p2s_cleanup_register("/nonexistent/after") == -1 ? 0 : 1);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_int_equal(p2s_test_entries_in(dir), 0);
    rmdir(dir);
}

int main(void)
{
    p2s_alloc_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cleanup_registry_never_gives_one_slot_to_two_threads),
        cmocka_unit_test(test_cleanup_create_registers_the_file_it_creates),
        cmocka_unit_test(test_cleanup_create_leaves_no_file_when_every_slot_is_taken),
        cmocka_unit_test(test_cleanup_run_leaves_no_temp_file_while_threads_create_them),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
