/* find.c — which of a module's classes are PyLayers, what they call and where, and what the
 * module exports: over the walk's scopes (scope.h), classes whose base resolves to a PyLayer
 * base (marked until nothing changes), each one's forward and backward (its own or a local
 * base's) and whether it gets a builder; the `.apply` sites of a class of the file or of
 * another module, and the unresolved ones routed through the runtime in a file that deals in
 * PyLayers; the module-level names that stand for a PyLayer at the end of the module (with the
 * re-exports of names not known yet); whether it uses one of Paddle's PyLayer-backed APIs,
 * which the runtime makes static (then it needs the runtime import, PyLayers or not); where the
 * runtime import goes. */
#include "find.h"

#include <stdint.h>
#include <string.h>

#include "parse.h"
#include "scope.h"
#include "strbuf.h"
#include "untranspile.h"

static const P2sExternal *find__external(const P2sFinder *f, const P2sMeaning *m)
{
    if (m->kind != P2S_MEANING_QUAL || !f->module || !f->module->external)
        return NULL;
    return p2s_externals_get(f->module->external, m->qual, strlen(m->qual));
}

/* Another module's PyLayer that is left as written (tree mode). */
static bool find__is_as_written(const P2sFinder *f, const P2sMeaning *m)
{
    const P2sExternal *e = find__external(f, m);
    return e && e->as_written;
}

/* Remembers that this module depends on another module's PyLayer (for --depfile, and a site's
 * qualified name); its index in externals_used, or SIZE_MAX when m is none. */
static size_t find__note_external(P2sFinder *f, const P2sMeaning *m)
{
    if (!p2s_scope_is_external(f, m))
        return SIZE_MAX;
    for (size_t i = 0; i < f->out->externals_used.size; i++)
        if (strcmp(f->out->externals_used.contents[i], m->qual) == 0)
            return i;
    array_push(&f->out->externals_used, p2s_strdup(m->qual));
    return f->out->externals_used.size - 1;
}

/* Marks PyLayer classes until nothing changes: a base may be a PyLayer found on a later pass. */
static void find__mark_pylayers(P2sFinder *f)
{
    bool changed = true;
    while (changed) {
        changed = false;
        for (size_t i = 0; i < f->out->classes.size; i++) {
            P2sPyLayerClass *cls = &f->out->classes.contents[i];
            if (cls->is_pylayer)
                continue;
            TSNode bases = p2s_child(cls->node, P2S_FIELD_SUPERCLASSES);
            if (!p2s_node_present(bases))
                continue;
            uint32_t n = ts_node_named_child_count(bases);
            for (uint32_t k = 0; k < n && !cls->is_pylayer; k++) {
                TSNode base = ts_node_named_child(bases, k);
                P2sMeaning m = p2s_scope_resolve(f, base, f->class_outer.contents[i], ts_node_start_byte(cls->node), 0);
                if (p2s_scope_is_pylayer_base(f, &m) && !(m.kind == P2S_MEANING_CLASS && m.class_index == i)) {
                    cls->is_pylayer = true;
                    changed = true;
                    find__note_external(f, &m);
                }
                p2s_scope_meaning_release(&m);
            }
        }
    }
}

/* A PyLayer derived from another module's PyLayer left as written is left as written too. */
static void find__inherit_as_written(P2sFinder *f)
{
    for (size_t i = 0; i < f->out->classes.size; i++) {
        P2sPyLayerClass *cls = &f->out->classes.contents[i];
        TSNode bases = p2s_child(cls->node, P2S_FIELD_SUPERCLASSES);
        uint32_t n = cls->is_pylayer && p2s_node_present(bases) ? ts_node_named_child_count(bases) : 0;
        for (uint32_t k = 0; k < n && !cls->as_written; k++) {
            TSNode base = ts_node_named_child(bases, k);
            P2sMeaning m = p2s_scope_resolve(f, base, f->class_outer.contents[i], ts_node_start_byte(cls->node), 0);
            if (find__is_as_written(f, &m)) {
                cls->as_written = true;
                cls->as_written_base = p2s_node_span(base);
            }
            p2s_scope_meaning_release(&m);
        }
    }
}

/* The function_definition `name` directly in the class body (the last one), or NULL node;
 * *stmt receives its statement there (its decorated_definition, or itself); *only_staticmethod
 * tells whether its decorators are exactly `@staticmethod`. */
static TSNode find__method(const P2sFinder *f, TSNode cls, const char *name, TSNode *stmt_out, bool *only_staticmethod)
{
    TSNode found = {0};
    TSNode body = p2s_child(cls, P2S_FIELD_BODY);
    uint32_t n = ts_node_named_child_count(body);
    for (uint32_t i = 0; i < n; i++) {
        TSNode stmt = ts_node_named_child(body, i);
        TSNode def = stmt;
        if (p2s_scope_type_is(stmt, "decorated_definition"))
            def = p2s_child(stmt, P2S_FIELD_DEFINITION);
        if (!p2s_scope_type_is(def, "function_definition") ||
            !p2s_scope_text_is(f, p2s_child(def, P2S_FIELD_NAME), name))
            continue;
        found = def;
        *stmt_out = stmt;
        uint32_t decorators = 0;
        bool static_seen = false;
        if (p2s_scope_type_is(stmt, "decorated_definition")) {
            uint32_t m = ts_node_named_child_count(stmt);
            for (uint32_t k = 0; k < m; k++) {
                TSNode dec = ts_node_named_child(stmt, k);
                if (!p2s_scope_type_is(dec, "decorator"))
                    continue;
                decorators++;
                TSNode expr = ts_node_named_child(dec, 0);
                if (p2s_scope_text_is(f, expr, "staticmethod"))
                    static_seen = true;
            }
        }
        *only_staticmethod = decorators == 1 && static_seen;
    }
    return found;
}

/* forward/backward of a class, or of the first local PyLayer base that has them; *owner is the
 * class whose body holds it and *stmt its statement there (check.c reads its decorators from
 * it: ts_node_parent walks down from the root). */
static TSNode find__inherited_method(const P2sFinder *f, size_t index, const char *name, TSNode *stmt,
                                     size_t *owner, bool *plain, int depth)
{
    const P2sPyLayerClass *cls = &f->out->classes.contents[index];
    TSNode own = find__method(f, cls->node, name, stmt, plain);
    if (p2s_node_present(own))
        *owner = index;
    if (p2s_node_present(own) || depth >= P2S_SCOPE_ALIAS_DEPTH)
        return own;
    TSNode bases = p2s_child(cls->node, P2S_FIELD_SUPERCLASSES);
    uint32_t n = p2s_node_present(bases) ? ts_node_named_child_count(bases) : 0;
    for (uint32_t k = 0; k < n; k++) {
        P2sMeaning m = p2s_scope_resolve(f, ts_node_named_child(bases, k), f->class_outer.contents[index],
                                         ts_node_start_byte(cls->node), 0);
        TSNode got = {0};
        if (m.kind == P2S_MEANING_CLASS && m.class_index != index)
            got = find__inherited_method(f, m.class_index, name, stmt, owner, plain, depth + 1);
        p2s_scope_meaning_release(&m);
        if (p2s_node_present(got))
            return got;
    }
    return own;
}

/* True when the module binds this name exactly once, so `Name` at module end is the class. */
static bool find__bound_once_at_module(const P2sFinder *f, P2sSpan name)
{
    const P2sScope *module = &f->scopes.contents[0];
    size_t last = p2s_scope_last_binding(f, module, name);
    return last != P2S_NO_BINDING && module->bindings.contents[last].previous == P2S_NO_BINDING;
}

/* A parameter name that would shadow what the builder needs (the class, the runtime). */
static bool find__params_shadow(const P2sFinder *f, const P2sSignature *sig, P2sSpan head)
{
    const char *head_text = f->src->bytes + head.start;
    size_t head_len = head.end - head.start;
    if (sig->ctx.end - sig->ctx.start == head_len && memcmp(sig->text + sig->ctx.start, head_text, head_len) == 0)
        return true;
    if (sig->ctx.end - sig->ctx.start == 4 && memcmp(sig->text + sig->ctx.start, "_p2s", 4) == 0)
        return true;
    for (size_t i = 0; i < sig->params.size; i++) {
        const P2sParam *p = &sig->params.contents[i];
        if (p2s_param_is(sig, p, head_text, head_len) || p2s_param_is(sig, p, "_p2s", 4))
            return true;
    }
    return false;
}

static void find__decide_builder(P2sFinder *f, size_t index)
{
    P2sPyLayerClass *cls = &f->out->classes.contents[index];
    cls->forward = find__inherited_method(f, index, "forward", &cls->forward_stmt, &cls->forward_owner,
                                          &cls->forward_plain, 0);
    bool backward_plain = false;
    cls->backward = find__inherited_method(f, index, "backward", &cls->backward_stmt, &cls->backward_owner,
                                           &backward_plain, 0);
    if (p2s_node_present(cls->forward))
        cls->signature = p2s_signature_read(f->src, cls->forward, cls->forward_plain);
    if (p2s_node_present(cls->backward))
        cls->backward_signature = p2s_signature_read(f->src, cls->backward, backward_plain);
    if (!cls->qualname || !p2s_node_present(cls->forward) || !cls->forward_plain)
        return;
    size_t head_len = strcspn(cls->qualname, ".");
    P2sSpan head = p2s_span(0, 0);
    /* The head of the qualname is the outermost class, bound at module level. */
    for (size_t i = index + 1; i-- > 0;) {
        const P2sPyLayerClass *c = &f->out->classes.contents[i];
        if (c->qualname && strlen(c->qualname) == head_len && strncmp(c->qualname, cls->qualname, head_len) == 0) {
            head = c->name;
            break;
        }
    }
    if (head.end == head.start || !find__bound_once_at_module(f, head))
        return;
    if (!cls->signature->ctx_plain || find__params_shadow(f, cls->signature, head))
        return;
    cls->builder = true;
}

static bool find__is_assignment_target(TSNode attribute, TSNode parent)
{
    const char *type = ts_node_type(parent);
    if (strcmp(type, "assignment") == 0 || strcmp(type, "augmented_assignment") == 0) {
        TSNode left = p2s_child(parent, P2S_FIELD_LEFT);
        return ts_node_eq(left, attribute);
    }
    return strcmp(type, "delete_statement") == 0;
}

/* Whether the file deals in PyLayers at all: it defines one, or binds a name to a PyLayer base
 * or to another module's PyLayer. Only then are unresolved `.apply` uses routed through the
 * runtime: elsewhere `df.apply(f)` is nobody's business. */
static bool find__uses_pylayer(const P2sFinder *f)
{
    if (f->out->pylayer_count > 0)
        return true;
    for (size_t s = 0; s < f->scopes.size; s++) {
        const P2sScope *sc = &f->scopes.contents[s];
        for (size_t i = 0; i < sc->bindings.size; i++) {
            const P2sScopeBinding *b = &sc->bindings.contents[i];
            if (b->kind != P2S_BIND_MODULE)
                continue;
            P2sMeaning m = {P2S_MEANING_QUAL, b->as.target, 0};
            if (p2s_scope_is_pylayer_base(f, &m))
                return true;
        }
    }
    return false;
}

static bool find__is_paddle_api(const P2sFinder *f, const P2sMeaning *m)
{
    return m->kind == P2S_MEANING_QUAL && p2s_rules_is_paddle_api(f->rules, m->qual, strlen(m->qual));
}

static bool find__is_instance_of_local_class(const P2sFinder *f, TSNode object, size_t scope)
{
    if (!p2s_scope_type_is(object, "call"))
        return false;
    TSNode callee = p2s_child(object, P2S_FIELD_FUNCTION);
    P2sMeaning m = p2s_scope_resolve(f, callee, scope, ts_node_start_byte(object), 0);
    bool instance = m.kind == P2S_MEANING_CLASS;
    p2s_scope_meaning_release(&m);
    return instance;
}

static void find__resolve_sites(P2sFinder *f)
{
    /* Read only for a call of no known class: its imports are looked up only then. */
    enum { UNKNOWN, NO, YES } uses_pylayer = UNKNOWN;
    for (size_t i = 0; i < f->candidates.size; i++) {
        const P2sCandidate *c = &f->candidates.contents[i];
        if (find__is_assignment_target(c->attribute, c->parent))
            continue;
        TSNode object = p2s_child(c->attribute, P2S_FIELD_OBJECT);
        P2sMeaning m = p2s_scope_resolve(f, object, c->scope, ts_node_start_byte(c->attribute), 0);
        /* One of Paddle's own PyLayers the runtime makes static (ScatterOp): left as written,
         * the runtime dispatches it; the module gets the runtime import (find__uses_paddle_api). */
        if (find__is_paddle_api(f, &m)) {
            p2s_scope_meaning_release(&m);
            continue;
        }
        bool local = m.kind == P2S_MEANING_CLASS && f->out->classes.contents[m.class_index].is_pylayer;
        bool external = !local && p2s_scope_is_external(f, &m);
        /* A class of this file that is no PyLayer, or an instance of one, has an apply of
         * its own: left alone. */
        /* The runtime's own `_p2s.apply` (this tool's output) is no PyLayer call either. */
        bool runtime = m.kind == P2S_MEANING_QUAL && strcmp(m.qual, "pylayer2static_runtime") == 0;
        bool unknown = !local && !external && !runtime && m.kind != P2S_MEANING_CLASS;
        if (unknown && uses_pylayer == UNKNOWN)
            uses_pylayer = find__uses_pylayer(f) ? YES : NO;
        bool dynamic = unknown && uses_pylayer == YES && !find__is_instance_of_local_class(f, object, c->scope);
        if (local || external || dynamic) {
            P2sApplySite site = {0};
            site.external = find__note_external(f, &m);
            site.attribute = c->attribute;
            site.class_index = local ? m.class_index : external ? P2S_SITE_EXTERNAL : P2S_SITE_DYNAMIC;
            site.as_written = external && find__is_as_written(f, &m);
            site.signature = local ? f->out->classes.contents[m.class_index].signature : NULL;
            const P2sExternal *e = external ? find__external(f, &m) : NULL;
            if (e && e->signature) {
                array_push(&f->out->external_signatures, p2s_signature_copy(e->signature));
                site.signature = *array_back(&f->out->external_signatures);
            }
            TSNode parent = c->parent;
            if (p2s_kind(parent) == P2S_KIND_CALL &&
                ts_node_eq(p2s_child(parent, P2S_FIELD_FUNCTION), c->attribute) &&
                p2s_kind(p2s_child(parent, P2S_FIELD_ARGUMENTS)) == P2S_KIND_ARGUMENT_LIST)
                site.call = parent;
            array_push(&f->out->sites, site);
        }
        p2s_scope_meaning_release(&m);
    }
}

static bool find__is_docstring(TSNode stmt)
{
    return p2s_scope_type_is(stmt, "expression_statement") && ts_node_named_child_count(stmt) == 1 &&
           p2s_scope_type_is(ts_node_named_child(stmt, 0), "string");
}

static bool find__is_simple_statement(TSNode stmt)
{
    static const char *const compound[] = {
        "if_statement", "for_statement", "while_statement", "try_statement", "with_statement",
        "function_definition", "class_definition", "decorated_definition", "match_statement",
    };
    for (size_t i = 0; i < sizeof compound / sizeof compound[0]; i++)
        if (p2s_scope_type_is(stmt, compound[i]))
            return false;
    return true;
}

/* Whether the module-level import stmt binds one of Paddle's PyLayer-backed APIs by name
 * (`from paddle.distributed.fleet.recompute import recompute`): bound before the runtime is
 * imported, the name would keep the function the runtime's patch replaces. */
static bool find__imports_paddle_api(const P2sFinder *f, TSNode stmt)
{
    const P2sScope *module = &f->scopes.contents[0];
    size_t end = ts_node_end_byte(stmt);
    for (size_t i = 0; i < module->bindings.size; i++) {
        const P2sScopeBinding *b = &module->bindings.contents[i];
        if (b->kind == P2S_BIND_MODULE && b->position == end &&
            p2s_rules_is_paddle_api(f->rules, b->as.target, strlen(b->as.target)))
            return true;
    }
    return false;
}

/* Where the runtime import goes: joined after the first module-level import that follows the
 * docstring and `from __future__` imports (before it, when it imports one of Paddle's
 * PyLayer-backed APIs by name); else after the last of those; else joined before the first
 * statement when that is a simple one; else on a line of its own before it. Whether the runtime
 * import is among the imports there already (has_runtime_import). */
static void find__runtime_import_point(P2sFinder *f, TSNode root)
{
    uint32_t n = ts_node_named_child_count(root);
    TSNode last_header = {0};
    bool placed = false;
    for (uint32_t i = 0; i < n; i++) {
        TSNode stmt = ts_node_named_child(root, i);
        if (p2s_scope_type_is(stmt, "comment"))
            continue;
        if (!placed && (p2s_scope_type_is(stmt, "future_import_statement") ||
                        (!p2s_node_present(last_header) && find__is_docstring(stmt)))) {
            last_header = stmt;
            continue;
        }
        if (p2s_scope_type_is(stmt, "import_statement") || p2s_scope_type_is(stmt, "import_from_statement")) {
            if (!placed) {
                bool before = find__imports_paddle_api(f, stmt);
                f->out->runtime_import_at = before ? ts_node_start_byte(stmt) : ts_node_end_byte(stmt);
                f->out->runtime_import = before ? P2S_IMPORT_JOIN_BEFORE : P2S_IMPORT_JOIN_AFTER;
                placed = true;
            }
            if (p2s_scope_text_is(f, stmt, P2S_RUNTIME_IMPORT))
                f->out->has_runtime_import = true;
            continue;
        }
        if (placed)
            return;
        if (p2s_node_present(last_header))
            break;
        f->out->runtime_import_at = ts_node_start_byte(stmt);
        f->out->runtime_import = find__is_simple_statement(stmt) ? P2S_IMPORT_JOIN_BEFORE : P2S_IMPORT_OWN_LINE;
        return;
    }
    if (placed)
        return;
    if (p2s_node_present(last_header)) {
        f->out->runtime_import_at = ts_node_end_byte(last_header);
    } else {
        f->out->runtime_import_at = 0;
        f->out->runtime_import = P2S_IMPORT_OWN_LINE;
    }
}

/* The rules' API words this source spells (none, for nearly every module: then nothing more is
 * looked for). */
static void find__api_words(P2sFinder *f)
{
    const P2sStrings *words = &f->rules->paddle_api_words;
    for (size_t i = 0; i < words->size; i++)
        if (memmem(f->src->bytes, f->src->len, words->contents[i], strlen(words->contents[i])))
            array_push(&f->api_words, words->contents[i]);
}

/* The scope node is evaluated in: the innermost recorded function, lambda or class whose body
 * holds it (a default, a decorator, a base is its owner's outer scope's), else the module. */
static size_t find__scope_of(const P2sFinder *f, TSNode node)
{
    TSNode child = node;
    for (TSNode up = ts_node_parent(node); !ts_node_is_null(up); child = up, up = ts_node_parent(up)) {
        if (!p2s_scope_type_is(up, "function_definition") && !p2s_scope_type_is(up, "class_definition") &&
            !p2s_scope_type_is(up, "lambda"))
            continue;
        if (!ts_node_eq(p2s_child(up, P2S_FIELD_BODY), child))
            continue;
        for (size_t s = 1; s < f->scopes.size; s++)
            if (ts_node_eq(f->scopes.contents[s].owner, up))
                return s;
    }
    return 0;
}

static bool find__is_identifier_byte(unsigned char c)
{
    return c == '_' || c >= 0x80 || (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z');
}

/* Whether the identifier at [start, end) is the name of an attribute (`fleet.utils.recompute`)
 * that resolves, where it stands, to one of Paddle's PyLayer-backed APIs. */
static bool find__attribute_is_paddle_api(P2sFinder *f, TSNode root, size_t start, size_t end)
{
    TSNode id = ts_node_named_descendant_for_byte_range(root, (uint32_t)start, (uint32_t)end);
    if (ts_node_start_byte(id) != start || ts_node_end_byte(id) != end || !p2s_scope_type_is(id, "identifier"))
        return false;
    TSNode attribute = ts_node_parent(id);
    if (ts_node_is_null(attribute) || !p2s_scope_type_is(attribute, "attribute") ||
        !ts_node_eq(p2s_child(attribute, P2S_FIELD_ATTRIBUTE), id))
        return false;
    P2sMeaning m = p2s_scope_resolve(f, attribute, find__scope_of(f, attribute), ts_node_start_byte(attribute), 0);
    bool api = find__is_paddle_api(f, &m);
    p2s_scope_meaning_release(&m);
    return api;
}

/* Whether the module uses one of Paddle's PyLayer-backed APIs: an import binds one by name
 * (used or not: another module may import it from this one), or an attribute resolves to one
 * (`fleet.utils.recompute(...)`, `spu.ScatterOp.apply(x)`). Either spells the API's last
 * component, which is how they are found: the walk went into every function body that spells
 * one (its imports are bound), and such an attribute is found by its spelling in the bytes. A
 * star import is not followed. */
static bool find__uses_paddle_api(P2sFinder *f, TSNode root)
{
    if (!f->api_words.size)
        return false;
    for (size_t s = 0; s < f->scopes.size; s++) {
        const P2sScope *sc = &f->scopes.contents[s];
        for (size_t i = 0; i < sc->bindings.size; i++) {
            const P2sScopeBinding *b = &sc->bindings.contents[i];
            if (b->kind == P2S_BIND_MODULE && p2s_rules_is_paddle_api(f->rules, b->as.target, strlen(b->as.target)))
                return true;
        }
    }
    const char *bytes = f->src->bytes;
    size_t len = f->src->len;
    for (size_t w = 0; w < f->api_words.size; w++) {
        const char *word = f->api_words.contents[w];
        size_t n = strlen(word);
        for (const char *hit = memmem(bytes, len, word, n); hit; hit = memmem(hit, len - (size_t)(hit - bytes), word, n)) {
            size_t start = (size_t)(hit - bytes), end = start + n;
            while (start > 0 && find__is_identifier_byte((unsigned char)bytes[start - 1]))
                start--;
            while (end < len && find__is_identifier_byte((unsigned char)bytes[end]))
                end++;
            if (find__attribute_is_paddle_api(f, root, start, end))
                return true;
            hit = bytes + end;
        }
    }
    return false;
}

/* Module-level names that stand for a PyLayer class at the end of the module. */
static void find__exports(P2sFinder *f)
{
    const P2sScope *module = &f->scopes.contents[0];
    for (size_t i = 0; i < module->names.size; i++) {
        P2sSpan name = module->bindings.contents[module->names.contents[i]].name;
        const char *text = f->src->bytes + name.start;
        P2sMeaning m = p2s_scope_lookup(f, name, 0, f->src->len, 0);
        bool local = m.kind == P2S_MEANING_CLASS && f->out->classes.contents[m.class_index].is_pylayer;
        bool external = !local && p2s_scope_is_external(f, &m);
        if (!local && !external && f->records_export_misses && m.kind == P2S_MEANING_QUAL && f->module &&
            f->module->external) {
            array_push(&f->out->export_miss_names, p2s_strndup(text, name.end - name.start));
            array_push(&f->out->export_miss_targets, p2s_strdup(m.qual));
        }
        if (local || external) {
            const P2sSignature *sig = local ? f->out->classes.contents[m.class_index].signature : NULL;
            array_push(&f->out->exports, p2s_strndup(text, name.end - name.start));
            array_push(&f->out->export_classes, local ? m.class_index : SIZE_MAX);
            array_push(&f->out->export_signatures, sig ? p2s_signature_copy(sig) : NULL);
            array_push(&f->out->export_targets, p2s_strdup(local ? "" : m.qual));
        }
        p2s_scope_meaning_release(&m);
    }
}

void p2s_find(const P2sSource *src, TSTree *tree, const P2sRules *rules, const P2sModule *module,
              P2sFindings *out)
{
    P2sFinder f = {0};
    memset(out, 0, sizeof *out);
    f.src = src;
    f.tree = tree;
    f.rules = rules;
    f.module = module;
    f.out = out;
    f.records_misses = true;
    f.miss_where = P2S_MISS_BASE;
    out->already_transpiled = p2s_untranspile_has_marker(src);
    find__api_words(&f);
    TSNode root = ts_tree_root_node(tree);
    size_t module_scope = p2s_scope_new(&f, P2S_SCOPE_MODULE, root, P2S_NO_SCOPE);
    array_push(&f.stack, module_scope);
    p2s_scope_walk(&f, root);
    find__mark_pylayers(&f);
    for (size_t i = 0; i < out->classes.size; i++) {
        if (out->classes.contents[i].is_pylayer) {
            out->pylayer_count++;
            find__decide_builder(&f, i);
        }
    }
    find__inherit_as_written(&f);
    P2sModuleRead read = module ? module->read : P2S_READ_ALL;
    f.records_misses = read != P2S_READ_EXPORTS;
    f.miss_where = P2S_MISS_SITE;
    find__resolve_sites(&f);
    f.records_misses = read == P2S_READ_ALL;
    f.records_export_misses = read != P2S_READ_SITES;
    f.miss_where = P2S_MISS_EXPORT;
    find__exports(&f);
    f.records_misses = false;  /* what resolving API uses looks up is no other module's business */
    out->uses_paddle_api = find__uses_paddle_api(&f, root);
    find__runtime_import_point(&f, root);
    /* The findings outlive the scopes (check and plan read them): no spare capacity. */
    array_shrink(&out->classes);
    array_shrink(&out->sites);
    p2s_scope_release(&f);
}

void p2s_findings_release(P2sFindings *self)
{
    for (size_t i = 0; i < self->classes.size; i++) {
        p2s_free(self->classes.contents[i].qualname);
        p2s_signature_free(self->classes.contents[i].signature);
        p2s_signature_free(self->classes.contents[i].backward_signature);
    }
    p2s_strings_release(&self->exports);
    array_delete(&self->export_classes);
    p2s_signatures_release(&self->export_signatures);
    p2s_signatures_release(&self->external_signatures);
    p2s_strings_release(&self->export_targets);
    p2s_strings_release(&self->export_miss_names);
    p2s_strings_release(&self->export_miss_targets);
    p2s_strings_release(&self->externals_used);
    p2s_nameset_release(&self->misses);
    array_delete(&self->classes);
    array_delete(&self->sites);
    memset(self, 0, sizeof *self);
}
