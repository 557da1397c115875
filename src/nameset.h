/* nameset.h — a set of strings (qualified names), open addressing. Owns its copies. */
#ifndef P2S_NAMESET_H
#define P2S_NAMESET_H

#include <stdbool.h>
#include <stddef.h>

typedef struct {
    char **slots;
    size_t capacity, size;
} P2sNameSet;

void p2s_nameset_init(P2sNameSet *self);
/* Adds a copy of name[0..len); true when it was not there yet. */
bool p2s_nameset_add(P2sNameSet *self, const char *name, size_t len);
bool p2s_nameset_contains(const P2sNameSet *self, const char *name, size_t len);
void p2s_nameset_release(P2sNameSet *self);

#endif
