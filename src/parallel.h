/* parallel.h — run fn(ctx, i) for i in [0, n) on up to `jobs` threads. Items are taken in order
 * from a shared counter; fn must only touch item i's state. jobs <= 1 runs on this thread. */
#ifndef P2S_PARALLEL_H
#define P2S_PARALLEL_H

#include <stddef.h>

void p2s_parallel_for(size_t n, unsigned jobs, void (*fn)(void *ctx, size_t i), void *ctx);
unsigned p2s_parallel_default_jobs(void);

#endif
