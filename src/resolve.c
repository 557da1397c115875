/* resolve.c — the export rounds of resolution across modules (resolve.h). */
#include "resolve.h"

#include <string.h>

void p2s_resolve_qualify(P2sStrbuf *out, const char *module, const char *name)
{
    p2s_strbuf_addf(out, "%s%s%s", module, *module ? "." : "", name);
}

/* Adds `module.name` to the external set (a re-export: with its target's signature); when it
 * is new, to fresh too. */
static void resolve__add(P2sExternals *external, const char *module, const char *name, const char *target,
                         const P2sSignature *own, P2sStrings *fresh)
{
    P2sStrbuf q;
    p2s_strbuf_init(&q);
    p2s_resolve_qualify(&q, module, name);
    const P2sExternal *re = *target ? p2s_externals_get(external, target, strlen(target)) : NULL;
    if (p2s_externals_add(external, q.buf, q.len, re ? re->signature : own))
        array_push(fresh, p2s_strbuf_detach(&q, NULL));
    p2s_strbuf_release(&q);
}

/* Adds every module's exports to the external set, and the re-exports whose targets are in it;
 * the names that are new go to fresh. */
static void resolve__collect(P2sExternals *external, size_t count, P2sResolveFacts facts, void *ctx,
                             P2sStrings *fresh)
{
    for (size_t i = 0; i < count; i++) {
        P2sModuleFacts m;
        if (!facts(ctx, i, &m))
            continue;
        for (size_t k = 0; k < m.exports->size; k++)
            resolve__add(external, m.module, m.exports->contents[k], m.export_targets->contents[k],
                         m.export_signatures->contents[k], fresh);
        for (size_t k = 0; m.export_miss_names && k < m.export_miss_names->size; k++) {
            const char *target = m.export_miss_targets->contents[k];
            if (p2s_externals_get(external, target, strlen(target)))
                resolve__add(external, m.module, m.export_miss_names->contents[k], target, NULL, fresh);
        }
    }
}

/* Whether a module looked up one of the fresh names and missed, for something refind_for
 * names: only then can finding it again change anything. */
static bool resolve__missed_any(const P2sModuleFacts *m, const P2sStrings *fresh)
{
    for (size_t k = 0; k < fresh->size; k++) {
        size_t where = 0;
        if (p2s_nameset_get(m->misses, fresh->contents[k], strlen(fresh->contents[k]), &where) &&
            (!m->refind_for || (where & m->refind_for)))
            return true;
    }
    return false;
}

void p2s_resolve_exports(P2sExternals *external, size_t count, P2sResolveFacts facts, P2sResolveRefind refind,
                         void *ctx)
{
    Array(size_t) redo = {0};
    for (bool grew = true; grew;) {
        P2sStrings fresh = {0};
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
        p2s_strings_release(&fresh);
    }
    array_delete(&redo);
}
