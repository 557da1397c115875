/* nameset.h — a set of strings (qualified names) that can carry a value each (a map from
 * name to index); open addressing. Owns its copies of the names. */
#ifndef P2S_NAMESET_H
#define P2S_NAMESET_H

#include <stdbool.h>
#include <stddef.h>

typedef struct {
    char *name;
    size_t value;
} P2sNameSlot;

typedef struct {
    P2sNameSlot *slots;
    size_t capacity, size;
} P2sNameSet;

void p2s_nameset_init(P2sNameSet *self);
/* Adds a copy of name[0..len); true when it was not there yet. */
bool p2s_nameset_add(P2sNameSet *self, const char *name, size_t len);
bool p2s_nameset_contains(const P2sNameSet *self, const char *name, size_t len);
/* Sets name's value, adding the name if needed; true when it was not there yet. */
bool p2s_nameset_put(P2sNameSet *self, const char *name, size_t len, size_t value);
/* name's value in *value; false when name is absent. */
bool p2s_nameset_get(const P2sNameSet *self, const char *name, size_t len, size_t *value);
void p2s_nameset_release(P2sNameSet *self);

#endif
