/* resolve.c — the rounds of resolution across modules: exports, then leaving as written (resolve.h). */
#include "resolve.h"

#include <stdint.h>
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

/* What a re-export takes of its target (in the set): true when that changed the set. */
typedef bool (*ResolveFollow)(P2sExternals *external, const P2sStrbuf *q, const P2sExternal *target,
                              P2sNameSet *fresh);

/* Calls follow on every module's re-exports whose targets are in the set, with their qualified
 * names, until no call changes the set (chains of re-exports, in any module order). */
static void resolve__follow_reexports(P2sExternals *external, size_t count, P2sResolveFacts facts, void *ctx,
                                      ResolveFollow follow, P2sNameSet *fresh)
{
    P2sStrbuf q;
    p2s_strbuf_init(&q);
    for (bool grew = true; grew;) {
        grew = false;
        for (size_t i = 0; i < count; i++) {
            P2sModuleFacts m;
            if (!facts(ctx, i, &m))
                continue;
            for (size_t k = 0; k < m.export_targets->size; k++) {
                const char *target = m.export_targets->contents[k];
                const P2sExternal *re = *target ? p2s_externals_get(external, target, strlen(target)) : NULL;
                if (!re)
                    continue;
                p2s_strbuf_reset(&q);
                p2s_resolve_qualify(&q, m.module, m.exports->contents[k]);
                grew |= follow(external, &q, re, fresh);
            }
        }
    }
    p2s_strbuf_release(&q);
}

/* A re-export without a signature takes its target's: one added before its target in the same
 * round (in module order). */
static bool resolve__fill_signature(P2sExternals *external, const P2sStrbuf *q, const P2sExternal *target,
                                    P2sNameSet *fresh)
{
    (void)fresh;
    return target->signature && p2s_externals_fill_signature(external, q->buf, q->len, target->signature);
}

/* Adds every module's exports (resolve__collect_module), re-exports with their targets'
 * signatures whatever the module order; the names that are new go to fresh. */
static void resolve__collect(P2sExternals *external, size_t count, P2sResolveFacts facts, void *ctx,
                             P2sNameSet *fresh)
{
    for (size_t i = 0; i < count; i++) {
        P2sModuleFacts m;
        if (facts(ctx, i, &m))
            resolve__collect_module(external, &m, fresh);
    }
    resolve__follow_reexports(external, count, facts, ctx, resolve__fill_signature, NULL);
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

/* What a round adds to the set (the names that are new go to fresh). */
typedef void (*ResolveCollect)(P2sExternals *external, size_t count, P2sResolveFacts facts, void *ctx,
                               P2sNameSet *fresh);
/* Whether a module is to be found again for what a round added. */
typedef bool (*ResolveTouched)(const P2sModuleFacts *m, const P2sNameSet *fresh);

/* Rounds until collect adds nothing: after each, the modules it touched go to again. */
static void resolve__rounds(P2sExternals *external, size_t count, P2sResolveFacts facts, P2sResolveRefind again,
                            void *ctx, ResolveCollect collect, ResolveTouched touched)
{
    Array(size_t) redo = {0};
    for (bool grew = true; grew;) {
        P2sNameSet fresh;
        p2s_nameset_init(&fresh);
        collect(external, count, facts, ctx, &fresh);
        grew = fresh.size > 0;
        redo.size = 0;
        for (size_t i = 0; grew && i < count; i++) {
            P2sModuleFacts m;
            if (facts(ctx, i, &m) && touched(&m, &fresh))
                array_push(&redo, i);
        }
        if (redo.size)
            again(ctx, redo.contents, redo.size);
        p2s_nameset_release(&fresh);
    }
    array_delete(&redo);
}

void p2s_resolve_exports(P2sExternals *external, size_t count, P2sResolveFacts facts, P2sResolveRefind refind,
                         void *ctx)
{
    resolve__rounds(external, count, facts, refind, ctx, resolve__collect, resolve__missed_any);
}

void p2s_resolve_as_written_exports(const char *module, const P2sFindings *found, P2sStrings *out)
{
    for (size_t k = 0; k < found->exports.size; k++) {
        size_t index = found->export_classes.contents[k];
        if (index == SIZE_MAX || !found->classes.contents[index].as_written)
            continue;
        P2sStrbuf q;
        p2s_strbuf_init(&q);
        p2s_resolve_qualify(&q, module, found->exports.contents[k]);
        array_push(out, p2s_strbuf_detach(&q, NULL));
    }
}

/* A re-export of a name left as written is left as written too; when it was not yet, it goes
 * to fresh. */
static bool resolve__mark_reexport(P2sExternals *external, const P2sStrbuf *q, const P2sExternal *target,
                                   P2sNameSet *fresh)
{
    if (!target->as_written || !p2s_externals_mark_as_written(external, q->buf))
        return false;
    p2s_nameset_add(fresh, q->buf, q->len);
    return true;
}

/* Marks every export left as written: each module's own, then re-exports of marked names until
 * nothing changes. The names newly marked go to fresh. */
static void resolve__collect_as_written(P2sExternals *external, size_t count, P2sResolveFacts facts, void *ctx,
                                        P2sNameSet *fresh)
{
    for (size_t i = 0; i < count; i++) {
        P2sModuleFacts m;
        if (!facts(ctx, i, &m) || !m.as_written)
            continue;
        for (size_t k = 0; k < m.as_written->size; k++) {
            const char *q = m.as_written->contents[k];
            if (p2s_externals_mark_as_written(external, q))
                p2s_nameset_add(fresh, q, strlen(q));
        }
    }
    resolve__follow_reexports(external, count, facts, ctx, resolve__mark_reexport, fresh);
}

static bool resolve__uses_any(const P2sModuleFacts *m, const P2sNameSet *fresh)
{
    for (size_t k = 0; m->uses && k < m->uses->size; k++)
        if (p2s_nameset_contains(fresh, m->uses->contents[k], strlen(m->uses->contents[k])))
            return true;
    return false;
}

void p2s_resolve_as_written(P2sExternals *external, size_t count, P2sResolveFacts facts, P2sResolveRefind redo,
                            void *ctx)
{
    resolve__rounds(external, count, facts, redo, ctx, resolve__collect_as_written, resolve__uses_any);
}
