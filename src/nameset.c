/* nameset.c — string set with linear probing (FNV-1a hashes). */
#include "nameset.h"

#include <stdint.h>
#include <string.h>

#include "alloc.h"

static uint64_t nameset__hash(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ULL;
    }
    return h;
}

void p2s_nameset_init(P2sNameSet *self)
{
    memset(self, 0, sizeof *self);
}

static size_t nameset__find(const P2sNameSet *self, const char *name, size_t len)
{
    size_t mask = self->capacity - 1;
    for (size_t i = nameset__hash(name, len) & mask;; i = (i + 1) & mask) {
        const char *slot = self->slots[i];
        if (!slot || (strlen(slot) == len && memcmp(slot, name, len) == 0))
            return i;
    }
}

bool p2s_nameset_contains(const P2sNameSet *self, const char *name, size_t len)
{
    return self->capacity && self->slots[nameset__find(self, name, len)] != NULL;
}

static void nameset__grow(P2sNameSet *self)
{
    P2sNameSet bigger = {0};
    bigger.capacity = self->capacity ? self->capacity * 2 : 16;
    bigger.slots = p2s_calloc(bigger.capacity, sizeof(char *));
    for (size_t i = 0; i < self->capacity; i++) {
        char *s = self->slots[i];
        if (s)
            bigger.slots[nameset__find(&bigger, s, strlen(s))] = s;
    }
    bigger.size = self->size;
    p2s_free(self->slots);
    *self = bigger;
}

bool p2s_nameset_add(P2sNameSet *self, const char *name, size_t len)
{
    if (p2s_nameset_contains(self, name, len))
        return false;
    if ((self->size + 1) * 2 > self->capacity)
        nameset__grow(self);
    self->slots[nameset__find(self, name, len)] = p2s_strndup(name, len);
    self->size++;
    return true;
}

void p2s_nameset_release(P2sNameSet *self)
{
    for (size_t i = 0; i < self->capacity; i++)
        p2s_free(self->slots[i]);
    p2s_free(self->slots);
    memset(self, 0, sizeof *self);
}
