/* nameset.c — string set and map with linear probing (FNV-1a hashes). */
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

/* The slot that holds name, or the empty slot where it would go. */
static P2sNameSlot *nameset__find(const P2sNameSet *self, const char *name, size_t len)
{
    size_t mask = self->capacity - 1;
    for (size_t i = nameset__hash(name, len) & mask;; i = (i + 1) & mask) {
        P2sNameSlot *slot = &self->slots[i];
        if (!slot->name || (strlen(slot->name) == len && memcmp(slot->name, name, len) == 0))
            return slot;
    }
}

bool p2s_nameset_get(const P2sNameSet *self, const char *name, size_t len, size_t *value)
{
    if (!self->capacity)
        return false;
    const P2sNameSlot *slot = nameset__find(self, name, len);
    if (!slot->name)
        return false;
    if (value)
        *value = slot->value;
    return true;
}

bool p2s_nameset_contains(const P2sNameSet *self, const char *name, size_t len)
{
    return p2s_nameset_get(self, name, len, NULL);
}

static void nameset__grow(P2sNameSet *self)
{
    P2sNameSet bigger = {0};
    bigger.capacity = self->capacity ? self->capacity * 2 : 4;  /* most sets hold a name or two */
    bigger.slots = p2s_calloc(bigger.capacity, sizeof(P2sNameSlot));
    for (size_t i = 0; i < self->capacity; i++)
        if (self->slots[i].name)
            *nameset__find(&bigger, self->slots[i].name, strlen(self->slots[i].name)) = self->slots[i];
    bigger.size = self->size;
    p2s_free(self->slots);
    *self = bigger;
}

bool p2s_nameset_put(P2sNameSet *self, const char *name, size_t len, size_t value)
{
    if ((self->size + 1) * 2 > self->capacity)
        nameset__grow(self);
    P2sNameSlot *slot = nameset__find(self, name, len);
    bool fresh = slot->name == NULL;
    if (fresh) {
        slot->name = p2s_strndup(name, len);
        self->size++;
    }
    slot->value = value;
    return fresh;
}

bool p2s_nameset_add(P2sNameSet *self, const char *name, size_t len)
{
    if (p2s_nameset_contains(self, name, len))
        return false;
    return p2s_nameset_put(self, name, len, 0);
}

void p2s_nameset_release(P2sNameSet *self)
{
    for (size_t i = 0; i < self->capacity; i++)
        p2s_free(self->slots[i].name);
    p2s_free(self->slots);
    memset(self, 0, sizeof *self);
}
