/* parallel.c — a minimal worker pool over an index range. */
#include "parallel.h"

#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include "alloc.h"

#define PARALLEL_MAX_JOBS 256

typedef struct {
    atomic_size_t next;
    size_t n;
    void (*fn)(void *ctx, size_t i);
    void *ctx;
} Pool;

static void *parallel__worker(void *arg)
{
    Pool *pool = arg;
    for (;;) {
        size_t i = atomic_fetch_add(&pool->next, 1);
        if (i >= pool->n)
            return NULL;
        pool->fn(pool->ctx, i);
    }
}

void p2s_parallel_for(size_t n, unsigned jobs, void (*fn)(void *ctx, size_t i), void *ctx)
{
    Pool pool;
    atomic_init(&pool.next, 0);
    pool.n = n;
    pool.fn = fn;
    pool.ctx = ctx;
    if (jobs > PARALLEL_MAX_JOBS)
        jobs = PARALLEL_MAX_JOBS;
    if (jobs > n)
        jobs = (unsigned)n;
    if (jobs <= 1) {
        parallel__worker(&pool);
        return;
    }
    pthread_t *threads = p2s_calloc(jobs, sizeof(pthread_t));
    unsigned started = 0;
    for (; started < jobs - 1; started++)
        if (pthread_create(&threads[started], NULL, parallel__worker, &pool) != 0)
            break;  /* fewer threads is slower, not wrong: this thread works too */
    parallel__worker(&pool);
    for (unsigned i = 0; i < started; i++)
        pthread_join(threads[i], NULL);
    p2s_free(threads);
}

unsigned p2s_parallel_default_jobs(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (unsigned)n : 1;
}
