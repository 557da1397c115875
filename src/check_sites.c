/* check_sites.c — per `.apply(...)` site: the arguments bound to forward's signature, as
 * Python binds them (P2S110-P2S113); what is left as written: each class left so, and those
 * derived from one (P2S301); per `.apply` routed through the runtime unresolved, a note
 * (P2S300), or left as written too when a class left as written is passed around in the file
 * (P2S302). */
#include "check_sites.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* ---- .apply sites ---- */

/* The class a site calls, as its messages name it: a class of this file by its qualified name,
 * another module's as the call spells it. */
static void check_sites__site_class_name(const P2sChecker *ck, const P2sApplySite *site, P2sStrbuf *out)
{
    if (site->class_index == P2S_SITE_EXTERNAL)
        p2s_node_flat_text(ck->src, p2s_child(site->attribute, P2S_FIELD_OBJECT), out);
    else
        p2s_checker_class_name(ck, site->class_index, out);
}

/* The class's name and what forward accepts, for a site's message: made only when one fires. */
static void check_sites__site_texts(const P2sChecker *ck, const P2sApplySite *site, P2sStrbuf *name,
                                    P2sStrbuf *accepted)
{
    if (name->len)
        return;
    check_sites__site_class_name(ck, site, name);
    const char *text = p2s_signature_accepted(site->signature);
    p2s_strbuf_adds(accepted, *text ? text : "no arguments");
}

/* P2S111: positional arguments past every parameter that takes one; only when no `*xs` makes
 * the count unknown. */
static void check_sites__too_many(P2sChecker *ck, const P2sApplySite *site, const P2sBinding *b, P2sStrbuf *name,
                                  P2sStrbuf *accepted)
{
    TSNode first = {0}, last = {0};
    for (size_t i = 0; i < b->arguments.size && !b->list_unpacked; i++) {
        if (b->arguments.contents[i].kind != P2S_BOUND_EXTRA)
            continue;
        if (ts_node_is_null(first))
            first = b->arguments.contents[i].argument;
        last = b->arguments.contents[i].argument;
    }
    if (ts_node_is_null(first))
        return;
    char expected[48], given[24];
    if (b->required == b->capacity)
        snprintf(expected, sizeof expected, "%zu", b->capacity);
    else
        snprintf(expected, sizeof expected, "from %zu to %zu", b->required, b->capacity);
    snprintf(given, sizeof given, "%zu", b->positional);
    check_sites__site_texts(ck, site, name, accepted);
    const char *kv[] = {"class", name->buf, "expected", expected, "given", given, "accepted", accepted->buf};
    p2s_checker_emit(ck, "P2S111", p2s_span(ts_node_start_byte(first), ts_node_end_byte(last)), kv, 4);
}

void p2s_check_site(P2sChecker *ck, P2sApplySite *site)
{
    if (site->class_index != P2S_SITE_EXTERNAL)
        site->as_written = p2s_checker_class(ck, site->class_index)->as_written;
    ck->owner = &site->as_written;
    const P2sSignature *sig = site->signature;
    if (!p2s_node_present(site->call) || !sig || !sig->bindable)
        return;
    TSNode args = p2s_child(site->call, P2S_FIELD_ARGUMENTS);
    P2sBinding b;
    p2s_bind(ck->src, sig, args, &b);
    P2sStrbuf name, accepted, text;
    p2s_strbuf_init(&name);
    p2s_strbuf_init(&accepted);
    p2s_strbuf_init(&text);
    check_sites__too_many(ck, site, &b, &name, &accepted);
    for (size_t i = 0; i < b.arguments.size; i++) {
        const P2sBoundArgument *arg = &b.arguments.contents[i];
        if (arg->kind != P2S_BOUND_NO_KEYWORD && arg->kind != P2S_BOUND_DUPLICATE)
            continue;
        TSNode key = p2s_child(arg->argument, P2S_FIELD_NAME);
        p2s_strbuf_reset(&text);
        p2s_node_flat_text(ck->src, key, &text);
        check_sites__site_texts(ck, site, &name, &accepted);
        const char *kv[] = {"class", name.buf, "name", text.buf, "accepted", accepted.buf};
        if (arg->kind == P2S_BOUND_NO_KEYWORD)
            p2s_checker_emit(ck, "P2S110", p2s_node_span(key), kv, 3);
        else
            p2s_checker_emit(ck, "P2S113", p2s_node_span(arg->argument), kv, 3);
    }
    if (b.missing != SIZE_MAX) {
        P2sSpan missing = sig->params.contents[b.missing].name;
        p2s_strbuf_reset(&text);
        p2s_strbuf_add(&text, sig->text + missing.start, missing.end - missing.start);
        check_sites__site_texts(ck, site, &name, &accepted);
        const char *kv[] = {"class", name.buf, "name", text.buf, "accepted", accepted.buf};
        p2s_checker_emit(ck, "P2S112", p2s_node_span(args), kv, 3);
    }
    p2s_binding_release(&b);
    p2s_strbuf_release(&name);
    p2s_strbuf_release(&accepted);
    p2s_strbuf_release(&text);
}

/* ---- what is left as written ---- */

void p2s_check_note_as_written(P2sChecker *ck)
{
    P2sStrbuf name, at_fault;
    p2s_strbuf_init(&name);
    p2s_strbuf_init(&at_fault);
    for (size_t i = 0; i < ck->found->classes.size; i++) {
        P2sPyLayerClass *cls = &ck->found->classes.contents[i];
        if (!cls->is_pylayer || !cls->as_written)
            continue;
        p2s_strbuf_reset(&name);
        p2s_strbuf_reset(&at_fault);
        p2s_checker_class_name(ck, i, &name);
        P2sSpan base = cls->as_written_base;
        if (base.end > base.start)
            p2s_strbuf_add(&at_fault, ck->src->bytes + base.start, base.end - base.start);
        else
            p2s_strbuf_adds(&at_fault, name.buf);
        const char *kv[] = {"class", name.buf, "name", at_fault.buf};
        ck->owner = &cls->as_written;
        p2s_checker_emit(ck, "P2S301", cls->name, kv, 2);
    }
    p2s_strbuf_release(&name);
    p2s_strbuf_release(&at_fault);
}

/* Name and qualified name of every class left as written, each to its class index. */
static void check_sites__as_written_names(const P2sChecker *ck, P2sNameSet *out)
{
    for (size_t i = 0; i < ck->found->classes.size; i++) {
        const P2sPyLayerClass *cls = p2s_checker_class(ck, i);
        if (!cls->is_pylayer || !cls->as_written)
            continue;
        p2s_nameset_put(out, ck->src->bytes + cls->name.start, cls->name.end - cls->name.start, i);
        if (cls->qualname)
            p2s_nameset_put(out, cls->qualname, strlen(cls->qualname), i);
    }
}

void p2s_check_inherit_as_written(P2sChecker *ck)
{
    P2sStrbuf name, base_text;
    p2s_strbuf_init(&name);
    p2s_strbuf_init(&base_text);
    for (bool changed = true; changed;) {
        changed = false;
        P2sNameSet names;
        p2s_nameset_init(&names);
        check_sites__as_written_names(ck, &names);
        for (size_t i = 0; i < ck->found->classes.size; i++) {
            P2sPyLayerClass *cls = &ck->found->classes.contents[i];
            TSNode bases = p2s_child(cls->node, P2S_FIELD_SUPERCLASSES);
            uint32_t n = cls->is_pylayer && !cls->as_written && p2s_node_present(bases) ? ts_node_named_child_count(bases) : 0;
            for (uint32_t k = 0; k < n && !cls->as_written; k++) {
                TSNode base = p2s_checker_unparen(ts_node_named_child(bases, k));
                uint32_t start = ts_node_start_byte(base), end = ts_node_end_byte(base);
                if (!p2s_nameset_contains(&names, ck->src->bytes + start, end - start))
                    continue;
                p2s_strbuf_reset(&name);
                p2s_strbuf_reset(&base_text);
                p2s_checker_class_name(ck, i, &name);
                p2s_strbuf_add(&base_text, ck->src->bytes + start, end - start);
                const char *kv[] = {"class", name.buf, "name", base_text.buf};
                cls->as_written = true;
                ck->owner = &cls->as_written;
                p2s_checker_emit(ck, "P2S301", cls->name, kv, 2);
                changed = true;
            }
        }
        p2s_nameset_release(&names);
    }
    p2s_strbuf_release(&name);
    p2s_strbuf_release(&base_text);
}

/* Whether an identifier spelled like a class only defines it, derives from it or calls its
 * `.apply` (also as `Outer.Inner`): any other use passes the class around. */
static bool check_sites__stays_put(const P2sChecker *ck, TSNode id)
{
    TSNode use = id, parent = ts_node_parent(id);
    if (p2s_checker_type_is(parent, P2S_KIND_CLASS_DEFINITION))
        return ts_node_eq(p2s_child(parent, P2S_FIELD_NAME), id);
    if (p2s_checker_type_is(parent, P2S_KIND_ATTRIBUTE) && ts_node_eq(p2s_child(parent, P2S_FIELD_ATTRIBUTE), id)) {
        use = parent;
        parent = ts_node_parent(use);
    }
    if (p2s_checker_type_is(parent, P2S_KIND_ATTRIBUTE) && ts_node_eq(p2s_child(parent, P2S_FIELD_OBJECT), use))
        return p2s_checker_text_is(ck, p2s_child(parent, P2S_FIELD_ATTRIBUTE), "apply", 5);
    return p2s_checker_type_is(parent, P2S_KIND_ARGUMENT_LIST) &&
           p2s_checker_type_is(ts_node_parent(parent), P2S_KIND_CLASS_DEFINITION);
}

size_t p2s_check_escaping(const P2sChecker *ck, TSNode any)
{
    P2sNameSet names;
    p2s_nameset_init(&names);
    check_sites__as_written_names(ck, &names);
    size_t found = SIZE_MAX;
    for (TSNode up = ts_node_parent(any); p2s_node_present(up); up = ts_node_parent(any))
        any = up;
    TSTreeCursor cursor = ts_tree_cursor_new(any);
    bool more = names.size > 0;
    while (more && found == SIZE_MAX) {
        TSNode node = ts_tree_cursor_current_node(&cursor);
        size_t index;
        if (p2s_checker_type_is(node, P2S_KIND_IDENTIFIER) &&
            p2s_nameset_get(&names, ck->src->bytes + ts_node_start_byte(node),
                            ts_node_end_byte(node) - ts_node_start_byte(node), &index) &&
            !check_sites__stays_put(ck, node))
            found = index;
        if (ts_tree_cursor_goto_first_child(&cursor))
            continue;
        while (!(more = ts_tree_cursor_goto_next_sibling(&cursor)) && ts_tree_cursor_goto_parent(&cursor))
            ;
    }
    ts_tree_cursor_delete(&cursor);
    p2s_nameset_release(&names);
    return found;
}

/* ---- unresolved .apply ---- */

void p2s_check_dynamic_site(P2sChecker *ck, P2sApplySite *site, size_t escaping)
{
    P2sStrbuf object, name;
    p2s_strbuf_init(&object);
    p2s_strbuf_init(&name);
    p2s_node_flat_text(ck->src, p2s_child(site->attribute, P2S_FIELD_OBJECT), &object);
    ck->owner = &site->as_written;
    if (escaping == SIZE_MAX) {
        const char *kv[] = {"object", object.buf};
        p2s_checker_emit(ck, "P2S300", p2s_node_span(site->attribute), kv, 1);
    } else {
        p2s_checker_class_name(ck, escaping, &name);
        const char *kv[] = {"object", object.buf, "class", name.buf};
        site->as_written = true;
        p2s_checker_emit(ck, "P2S302", p2s_node_span(site->attribute), kv, 2);
    }
    p2s_strbuf_release(&object);
    p2s_strbuf_release(&name);
}
