/* array.h — typed growable arrays (after tree-sitter's lib/src/array.h). An Array(T) is a
 * plain struct {contents, size, capacity}; zero-initialised is empty. The owner calls
 * array_delete. Growth goes through p2s_realloc, so it never fails back to the caller. */
#ifndef P2S_ARRAY_H
#define P2S_ARRAY_H

#include <stddef.h>
#include "alloc.h"

#define Array(T) struct { T *contents; size_t size; size_t capacity; }

#define array_reserve(self, n) \
    array__reserve((void **)&(self)->contents, &(self)->capacity, sizeof(*(self)->contents), (n))

#define array_push(self, element)                                    \
    (array_reserve((self), (self)->size + 1),                        \
     (self)->contents[(self)->size++] = (element))

#define array_back(self) (&(self)->contents[(self)->size - 1])

#define array_delete(self)                                           \
    (p2s_free((self)->contents), (self)->contents = NULL,            \
     (self)->size = 0, (self)->capacity = 0)

/* Gives back the unused capacity: for arrays kept long after they stop growing. */
#define array_shrink(self) \
    array__shrink((void **)&(self)->contents, (self)->size, &(self)->capacity, sizeof(*(self)->contents))

/* Owned strings: p2s_strings_release frees each item, then the array. */
typedef Array(char *) P2sStrings;
/* Borrowed strings: array_delete frees the array only. */
typedef Array(const char *) P2sStringList;

static inline void array__reserve(void **contents, size_t *capacity, size_t element_size, size_t n)
{
    if (n <= *capacity)
        return;
    size_t grown = *capacity ? *capacity * 2 : 8;
    if (grown < n)
        grown = n;
    *contents = p2s_realloc(*contents, grown * element_size);
    *capacity = grown;
}

static inline void array__shrink(void **contents, size_t size, size_t *capacity, size_t element_size)
{
    if (size == *capacity)
        return;
    if (size == 0) {
        p2s_free(*contents);
        *contents = NULL;
    } else {
        *contents = p2s_realloc(*contents, size * element_size);
    }
    *capacity = size;
}

static inline void p2s_strings_release(P2sStrings *self)
{
    for (size_t i = 0; i < self->size; i++)
        p2s_free(self->contents[i]);
    array_delete(self);
}

#endif
