/* resolve.c — the export rounds of resolution across modules (resolve.h). */
#include "resolve.h"

#include <string.h>

void p2s_resolve_qualify(P2sStrbuf *out, const char *module, const char *name)
{
    p2s_strbuf_addf(out, "%s%s%s", module, *module ? "." : "", name);
}

/* Adds `module.name` to the external set (a re-export: with its target's signature); when it
 * is new, to fresh too (when given). */
static void resolve__add(P2sExternals *external, const char *module, const char *name, const char *target,
                         const P2sSignature *own, P2sNameSet *fresh)
{
    P2sStrbuf q;
    p2s_strbuf_init(&q);
    p2s_resolve_qualify(&q, module, name);
    const P2sExternal *re = *target ? p2s_externals_get(external, target, strlen(target)) : NULL;
    if (p2s_externals_add(external, q.buf, q.len, re ? re->signature : own) && fresh)
        p2s_nameset_add(fresh, q.buf, q.len);
    p2s_strbuf_release(&q);
}

/* Adds one module's exports to the external set, and its re-exports whose targets are in it;
 * the names that are new go to fresh, when given. */
static void resolve__collect_module(P2sExternals *external, const P2sModuleFacts *m, P2sNameSet *fresh)
{
    for (size_t k = 0; k < m->exports->size; k++)
        resolve__add(external, m->module, m->exports->contents[k], m->export_targets->contents[k],
                     m->export_signatures->contents[k], fresh);
    for (size_t k = 0; m->export_miss_names && k < m->export_miss_names->size; k++) {
        const char *target = m->export_miss_targets->contents[k];
        if (p2s_externals_get(external, target, strlen(target)))
            resolve__add(external, m->module, m->export_miss_names->contents[k], target, NULL, fresh);
    }
}

/* Adds every module's exports (resolve__collect_module); the names that are new go to fresh. */
static void resolve__collect(P2sExternals *external, size_t count, P2sResolveFacts facts, void *ctx,
                             P2sNameSet *fresh)
{
    for (size_t i = 0; i < count; i++) {
        P2sModuleFacts m;
        if (facts(ctx, i, &m))
            resolve__collect_module(external, &m, fresh);
    }
}

void p2s_resolve_add_exports(P2sExternals *external, const P2sModuleFacts *m)
{
    resolve__collect_module(external, m, NULL);
}

/* Whether a module looked up one of the fresh names and missed, for something refind_for
 * names: only then can finding it again change anything. Its misses are walked: a round's
 * fresh names are as a rule every export of the tree, a module's misses a few. */
static bool resolve__missed_any(const P2sModuleFacts *m, const P2sNameSet *fresh)
{
    for (size_t s = 0; s < m->misses->capacity; s++) {
        const P2sNameSlot *slot = &m->misses->slots[s];
        if (slot->name && (!m->refind_for || (slot->value & m->refind_for)) &&
            p2s_nameset_contains(fresh, slot->name, strlen(slot->name)))
            return true;
    }
    return false;
}

void p2s_resolve_exports(P2sExternals *external, size_t count, P2sResolveFacts facts, P2sResolveRefind refind,
                         void *ctx)
{
    Array(size_t) redo = {0};
    for (bool grew = true; grew;) {
        P2sNameSet fresh;
        p2s_nameset_init(&fresh);
        resolve__collect(external, count, facts, ctx, &fresh);
        grew = fresh.size > 0;
        redo.size = 0;
        for (size_t i = 0; grew && i < count; i++) {
            P2sModuleFacts m;
            if (facts(ctx, i, &m) && resolve__missed_any(&m, &fresh))
                array_push(&redo, i);
        }
        if (redo.size)
            refind(ctx, redo.contents, redo.size);
        p2s_nameset_release(&fresh);
    }
    array_delete(&redo);
}
