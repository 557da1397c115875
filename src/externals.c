/* externals.c — other modules' PyLayers by qualified name (externals.h). */
#include "externals.h"

#include <string.h>

void p2s_externals_init(P2sExternals *self)
{
    memset(self, 0, sizeof *self);
    p2s_nameset_init(&self->index);
}

bool p2s_externals_add(P2sExternals *self, const char *q, size_t len, const P2sSignature *signature)
{
    if (p2s_nameset_contains(&self->index, q, len))
        return false;
    P2sExternal e = {false, signature ? p2s_signature_copy(signature) : NULL};
    p2s_nameset_put(&self->index, q, len, self->classes.size);
    array_push(&self->classes, e);
    return true;
}

static P2sExternal *externals__at(const P2sExternals *self, const char *q, size_t len)
{
    size_t at;
    return p2s_nameset_get(&self->index, q, len, &at) ? &self->classes.contents[at] : NULL;
}

const P2sExternal *p2s_externals_get(const P2sExternals *self, const char *q, size_t len)
{
    return externals__at(self, q, len);
}

bool p2s_externals_fill_signature(P2sExternals *self, const char *q, size_t len, const P2sSignature *signature)
{
    P2sExternal *e = externals__at(self, q, len);
    if (!e || e->signature || !signature)
        return false;
    e->signature = p2s_signature_copy(signature);
    return true;
}

bool p2s_externals_mark_as_written(P2sExternals *self, const char *q)
{
    size_t len = strlen(q);
    p2s_externals_add(self, q, len, NULL);
    P2sExternal *e = externals__at(self, q, len);
    if (e->as_written)
        return false;
    e->as_written = true;
    return true;
}

void p2s_externals_release(P2sExternals *self)
{
    for (size_t i = 0; i < self->classes.size; i++)
        p2s_signature_free(self->classes.contents[i].signature);
    array_delete(&self->classes);
    p2s_nameset_release(&self->index);
}
