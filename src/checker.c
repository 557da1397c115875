/* checker.c — the state of one file's check: its classes indexed (by spelling, which are
 * subclassed or applied here), each forward/backward collected once from its body (its
 * decorators, returns, ctx calls, every call, and the names certainly bound to a Tensor: saved
 * with the save method, unpacked from the load, backward's gradient parameters, when nothing
 * rebinds them), and findings emitted once (a base's finding counts for each subclass). */
#include "checker.h"

#include <stdint.h>
#include <string.h>

#include "suppress.h"

/* Every node of a function body, in source order, with its parent (ts_node_parent walks down
 * from the root each time) and whether it lies inside a function, lambda or class nested in
 * the body. */
typedef struct {
    TSNode root;
    P2sNodeList nodes;
    Array(size_t) parent;          /* index in nodes; CHECK_ROOT for the root's children */
    Array(unsigned char) kind;     /* each node's P2sKind: the loops below test it many times */
    Array(unsigned char) nested;
} Body;

#define CHECK_ROOT SIZE_MAX

/* ---- tree helpers ---- */

bool p2s_checker_type_is(TSNode node, P2sKind kind)
{
    return p2s_kind(node) == kind;
}

bool p2s_checker_text_is(const P2sChecker *ck, TSNode node, const char *text, size_t n)
{
    uint32_t start = ts_node_start_byte(node), end = ts_node_end_byte(node);
    return end - start == n && memcmp(ck->src->bytes + start, text, n) == 0;
}

TSNode p2s_checker_unparen(TSNode node)
{
    while (p2s_checker_type_is(node, P2S_KIND_PARENTHESIZED_EXPRESSION) && ts_node_named_child_count(node) == 1)
        node = ts_node_named_child(node, 0);
    return node;
}

/* Pre-order through an explicit stack of (node, parent index): ts_node_child costs about as
 * many steps as the child's index, far less than a cursor step for the few children most
 * nodes have. */
static void checker__body_collect(TSNode root, Body *out)
{
    typedef struct {
        TSNode node;
        size_t parent;
    } Pending;
    memset(out, 0, sizeof *out);
    out->root = root;
    Array(Pending) stack = {0};
    for (uint32_t i = ts_node_child_count(root); i-- > 0;) {
        Pending p = {ts_node_child(root, i), CHECK_ROOT};
        array_push(&stack, p);
    }
    while (stack.size) {
        Pending p = stack.contents[--stack.size];
        P2sKind up = p.parent != CHECK_ROOT ? (P2sKind)out->kind.contents[p.parent] : P2S_KIND_OTHER;
        bool nested = p.parent != CHECK_ROOT &&
                      (out->nested.contents[p.parent] || up == P2S_KIND_FUNCTION_DEFINITION ||
                       up == P2S_KIND_LAMBDA || up == P2S_KIND_CLASS_DEFINITION);
        size_t at = out->nodes.size;
        array_push(&out->nodes, p.node);
        array_push(&out->parent, p.parent);
        array_push(&out->kind, (unsigned char)p2s_kind(p.node));
        array_push(&out->nested, (unsigned char)nested);
        for (uint32_t i = ts_node_child_count(p.node); i-- > 0;) {
            Pending child = {ts_node_child(p.node, i), at};
            array_push(&stack, child);
        }
    }
    array_delete(&stack);
}

static void checker__body_release(Body *self)
{
    array_delete(&self->nodes);
    array_delete(&self->parent);
    array_delete(&self->kind);
    array_delete(&self->nested);
}

/* The node above index i (the body's root above its children). */
static TSNode checker__body_parent(const Body *body, size_t i)
{
    size_t p = body->parent.contents[i];
    return p == CHECK_ROOT ? body->root : body->nodes.contents[p];
}

/* The decorators of a method's statement in its class body (find.c's forward_stmt), as
 * expressions. */
static void checker__decorators(TSNode stmt, P2sNodeList *out)
{
    if (!p2s_checker_type_is(stmt, P2S_KIND_DECORATED_DEFINITION))
        return;
    uint32_t n = ts_node_named_child_count(stmt);
    for (uint32_t i = 0; i < n; i++) {
        TSNode dec = ts_node_named_child(stmt, i);
        if (p2s_checker_type_is(dec, P2S_KIND_DECORATOR))
            array_push(out, ts_node_named_child(dec, 0));
    }
}

/* ---- emitting ---- */

void p2s_checker_emit(P2sChecker *ck, const char *code, P2sSpan span, const char *const *kv, size_t npairs)
{
    for (size_t i = 0; i < ck->emitted.size; i++) {
        const P2sCheckEmitted *e = &ck->emitted.contents[i];
        if (strcmp(e->code, code) == 0 && e->span.start == span.start && e->span.end == span.end) {
            *ck->owner = *ck->owner || e->leaves;
            return;
        }
    }
    P2sCheckEmitted e = {{0}, span, false};
    memcpy(e.code, code, sizeof e.code - 1);
    const P2sDiag *d = p2s_rules_emit(ck->rules, ck->sink, code, span, kv, npairs);
    e.leaves = d && p2s_rules_leaves_as_written(ck->rules, code) && !p2s_suppress_hides(d, ck->src, ck->rules);
    array_push(&ck->emitted, e);
    *ck->owner = *ck->owner || e.leaves;
}

/* ---- classes ---- */

const P2sPyLayerClass *p2s_checker_class(const P2sChecker *ck, size_t index)
{
    return &ck->found->classes.contents[index];
}

size_t p2s_checker_local_class(const P2sChecker *ck, TSNode base)
{
    base = p2s_checker_unparen(base);
    uint32_t start = ts_node_start_byte(base), end = ts_node_end_byte(base);
    size_t by_qualname = SIZE_MAX, by_name = SIZE_MAX;
    p2s_nameset_get(&ck->by_qualname, ck->src->bytes + start, end - start, &by_qualname);
    p2s_nameset_get(&ck->by_name, ck->src->bytes + start, end - start, &by_name);
    return by_qualname < by_name ? by_qualname : by_name;
}

/* The per-class facts the checks ask for again and again, computed once per file. */
static void checker__index_classes(P2sChecker *ck)
{
    const P2sFindings *found = ck->found;
    for (size_t i = 0; i < found->classes.size; i++) {
        const P2sPyLayerClass *c = p2s_checker_class(ck, i);
        if (c->qualname && !p2s_nameset_contains(&ck->by_qualname, c->qualname, strlen(c->qualname)))
            p2s_nameset_put(&ck->by_qualname, c->qualname, strlen(c->qualname), i);
        const char *name = ck->src->bytes + c->name.start;
        if (!p2s_nameset_contains(&ck->by_name, name, c->name.end - c->name.start))
            p2s_nameset_put(&ck->by_name, name, c->name.end - c->name.start, i);
        array_push(&ck->subclassed, (unsigned char)0);
        array_push(&ck->applied, (unsigned char)0);
    }
    for (size_t i = 0; i < found->classes.size; i++) {
        TSNode bases = p2s_child(p2s_checker_class(ck, i)->node, P2S_FIELD_SUPERCLASSES);
        uint32_t n = ts_node_is_null(bases) ? 0 : ts_node_named_child_count(bases);
        for (uint32_t k = 0; k < n; k++) {
            size_t base = p2s_checker_local_class(ck, ts_node_named_child(bases, k));
            if (base != SIZE_MAX && base != i)
                ck->subclassed.contents[base] = 1;
        }
    }
    for (size_t i = 0; i < found->sites.size; i++)
        if (found->sites.contents[i].class_index < found->classes.size)
            ck->applied.contents[found->sites.contents[i].class_index] = 1;
}

void p2s_checker_class_name(const P2sChecker *ck, size_t index, P2sStrbuf *out)
{
    const P2sPyLayerClass *cls = p2s_checker_class(ck, index);
    if (cls->qualname)
        p2s_strbuf_adds(out, cls->qualname);
    else
        p2s_strbuf_add(out, ck->src->bytes + cls->name.start, cls->name.end - cls->name.start);
}

/* ---- one method ---- */

bool p2s_checker_has_ctx(const P2sCheckMethod *m)
{
    return m->sig && m->sig->ctx.end > 0;
}

static bool checker__is_ctx(const P2sCheckMethod *m, const P2sChecker *ck, TSNode node)
{
    return p2s_checker_has_ctx(m) && p2s_checker_type_is(node, P2S_KIND_IDENTIFIER) &&
           p2s_checker_text_is(ck, node, m->sig->text + m->sig->ctx.start, m->sig->ctx.end - m->sig->ctx.start);
}

const P2sCtxMethod *p2s_checker_ctx_call(const P2sChecker *ck, const P2sCheckMethod *m, TSNode call)
{
    TSNode fn = p2s_child(call, P2S_FIELD_FUNCTION);
    if (!p2s_checker_type_is(fn, P2S_KIND_ATTRIBUTE) || !checker__is_ctx(m, ck, p2s_child(fn, P2S_FIELD_OBJECT)))
        return NULL;
    TSNode attr = p2s_child(fn, P2S_FIELD_ATTRIBUTE);
    return p2s_rules_ctx_method(ck->rules, ck->src->bytes + ts_node_start_byte(attr),
                                ts_node_end_byte(attr) - ts_node_start_byte(attr));
}

/* How many times the body binds name (assignment targets, for/with/except targets, walrus). */
static size_t checker__bindings(const P2sChecker *ck, const Body *body, P2sCheckName name)
{
    size_t count = 0;
    for (size_t i = 0; i < body->nodes.size; i++) {
        TSNode n = body->nodes.contents[i];
        if (body->kind.contents[i] != P2S_KIND_IDENTIFIER || !p2s_checker_text_is(ck, n, name.text, name.len))
            continue;
        TSNode up = n;
        for (size_t at = i; body->parent.contents[at] != CHECK_ROOT; at = body->parent.contents[at]) {
            TSNode parent = checker__body_parent(body, at);
            P2sKind t = (P2sKind)body->kind.contents[body->parent.contents[at]];
            if ((t == P2S_KIND_ASSIGNMENT || t == P2S_KIND_AUGMENTED_ASSIGNMENT || t == P2S_KIND_FOR_STATEMENT ||
                 t == P2S_KIND_FOR_IN_CLAUSE) &&
                ts_node_eq(p2s_child(parent, P2S_FIELD_LEFT), up)) {
                count++;
                break;
            }
            if ((t == P2S_KIND_NAMED_EXPRESSION && ts_node_eq(p2s_child(parent, P2S_FIELD_NAME), up)) ||
                t == P2S_KIND_AS_PATTERN_TARGET || t == P2S_KIND_AS_PATTERN) {
                count++;
                break;
            }
            if (t != P2S_KIND_PATTERN_LIST && t != P2S_KIND_TUPLE_PATTERN && t != P2S_KIND_LIST_PATTERN &&
                t != P2S_KIND_LIST_SPLAT_PATTERN && t != P2S_KIND_PARENTHESIZED_EXPRESSION &&
                t != P2S_KIND_TUPLE && t != P2S_KIND_LIST && t != P2S_KIND_EXPRESSION_LIST)
                break;
            up = parent;
        }
    }
    return count;
}

/* Whether the call at index `at` of the body lies on its straight-line path (the body itself,
 * `with` bodies): `ctx.save_for_backward` called twice there replaces what the first call
 * saved (P2S109). Calls under if/for/try may be alternatives, so they do not count. */
static bool checker__straight_line(const Body *body, size_t at)
{
    size_t node = body->parent.contents[at];
    if (node == CHECK_ROOT || body->kind.contents[node] != P2S_KIND_EXPRESSION_STATEMENT)
        return false;
    for (;;) {
        size_t block = body->parent.contents[node];
        if (block == CHECK_ROOT)
            return true;   /* a statement of the method's own body */
        if (body->kind.contents[block] != P2S_KIND_BLOCK)
            return false;
        size_t owner = body->parent.contents[block];
        if (owner == CHECK_ROOT || body->kind.contents[owner] != P2S_KIND_WITH_STATEMENT)
            return false;
        node = owner;
    }
}

static void checker__add_tensor_name(const P2sChecker *ck, P2sCheckMethod *m, const Body *body, P2sCheckName name,
                                     size_t allowed_bindings)
{
    if (checker__bindings(ck, body, name) <= allowed_bindings)
        array_push(&m->tensors, name);
}

static void checker__add_tensor(const P2sChecker *ck, P2sCheckMethod *m, const Body *body, TSNode name,
                                size_t allowed_bindings)
{
    if (!p2s_checker_type_is(name, P2S_KIND_IDENTIFIER))
        return;
    P2sCheckName text = {ck->src->bytes + ts_node_start_byte(name), ts_node_end_byte(name) - ts_node_start_byte(name)};
    checker__add_tensor_name(ck, m, body, text, allowed_bindings);
}

/* Names a `x, y = ctx.saved_tensor()` or `x = ctx.saved_tensor()[0]` binds to Tensors; the
 * call is node `at` of the body. */
static void checker__saved_targets(const P2sChecker *ck, P2sCheckMethod *m, const Body *body, size_t at)
{
    TSNode value = body->nodes.contents[at], up = checker__body_parent(body, at);
    bool indexed = false;
    if (p2s_checker_type_is(up, P2S_KIND_SUBSCRIPT) && ts_node_eq(p2s_child(up, P2S_FIELD_VALUE), value) &&
        body->parent.contents[at] != CHECK_ROOT) {
        at = body->parent.contents[at];
        value = up;
        indexed = true;
        up = checker__body_parent(body, at);
    }
    if (!p2s_checker_type_is(up, P2S_KIND_ASSIGNMENT) || !ts_node_eq(p2s_child(up, P2S_FIELD_RIGHT), value))
        return;
    TSNode left = p2s_child(up, P2S_FIELD_LEFT);
    if (indexed) {
        checker__add_tensor(ck, m, body, left, 1);
        return;
    }
    if (!p2s_checker_type_is(left, P2S_KIND_PATTERN_LIST) && !p2s_checker_type_is(left, P2S_KIND_TUPLE_PATTERN) &&
        !p2s_checker_type_is(left, P2S_KIND_LIST_PATTERN))
        return;
    uint32_t n = ts_node_named_child_count(left);
    for (uint32_t i = 0; i < n; i++)
        checker__add_tensor(ck, m, body, ts_node_named_child(left, i), 1);
}

static void checker__method_init(P2sChecker *ck, P2sCheckMethod *m, TSNode def, TSNode stmt, const P2sSignature *sig,
                                 size_t owner, const char *where, unsigned bit)
{
    memset(m, 0, sizeof *m);
    m->def = def;
    m->sig = sig;
    m->where = where;
    m->bit = bit;
    m->owner = owner;
    if (!p2s_node_present(def))
        return;
    checker__decorators(stmt, &m->decorators);
    const P2sCtxMethod *save = p2s_rules_ctx_role(ck->rules, P2S_CTX_SAVE);
    const P2sCtxMethod *load = p2s_rules_ctx_role(ck->rules, P2S_CTX_LOAD);
    Body collected;
    checker__body_collect(p2s_child(def, P2S_FIELD_BODY), &collected);
    const Body *body = &collected;
    for (size_t i = 0; i < body->nodes.size; i++) {
        TSNode node = body->nodes.contents[i];
        P2sKind kind = (P2sKind)body->kind.contents[i];
        if (kind == P2S_KIND_CALL)
            array_push(&m->calls, node);
        if (kind == P2S_KIND_YIELD)
            m->generator = true;
        if (kind == P2S_KIND_ATTRIBUTE && save &&
            p2s_checker_text_is(ck, p2s_child(node, P2S_FIELD_ATTRIBUTE), save->name, strlen(save->name)))
            m->mentions_save = true;
        if (kind == P2S_KIND_IDENTIFIER && checker__is_ctx(m, ck, node)) {
            size_t up = body->parent.contents[i];
            if (up == CHECK_ROOT || body->kind.contents[up] != P2S_KIND_ATTRIBUTE ||
                !ts_node_eq(p2s_child(body->nodes.contents[up], P2S_FIELD_OBJECT), node))
                m->ctx_escapes = true;
        }
    }
    for (size_t i = 0; i < body->nodes.size; i++) {
        TSNode node = body->nodes.contents[i];
        if (body->nested.contents[i])
            continue;  /* nested functions' returns and ctx calls are their own */
        if (body->kind.contents[i] == P2S_KIND_RETURN_STATEMENT)
            array_push(&m->returns, node);
        if (body->kind.contents[i] != P2S_KIND_CALL)
            continue;
        const P2sCtxMethod *cm = p2s_checker_ctx_call(ck, m, node);
        if (!cm)
            continue;
        array_push(&m->ctx_calls, node);
        array_push(&m->ctx_call_straight, (unsigned char)checker__straight_line(body, i));
        TSNode args = p2s_child(node, P2S_FIELD_ARGUMENTS);
        uint32_t na = ts_node_named_child_count(args);
        if (cm == save)
            for (uint32_t k = 0; k < na; k++)
                checker__add_tensor(ck, m, body, ts_node_named_child(args, k), 1);
        if (cm == load)
            checker__saved_targets(ck, m, body, i);
    }
    /* backward's gradient parameters are Tensors (or None) as long as nothing rebinds them. */
    for (size_t i = 0; bit == P2S_IN_BACKWARD && i < sig->params.size; i++) {
        const P2sParam *p = &sig->params.contents[i];
        P2sCheckName name = {sig->text + p->name.start, p->name.end - p->name.start};
        if (!p->has_default && p->kind != P2S_PARAM_VAR_POSITIONAL && p->kind != P2S_PARAM_VAR_KEYWORD)
            checker__add_tensor_name(ck, m, body, name, 0);
    }
    checker__body_release(&collected);   /* what the checks need of it is kept above */
    /* kept until the file is checked, one per method: most lists hold a node or two */
    array_shrink(&m->decorators);
    array_shrink(&m->ctx_call_straight);
    array_shrink(&m->calls);
    array_shrink(&m->returns);
    array_shrink(&m->ctx_calls);
    array_shrink(&m->tensors);
}

static void checker__method_release(P2sCheckMethod *m)
{
    array_delete(&m->decorators);
    array_delete(&m->ctx_call_straight);
    array_delete(&m->calls);
    array_delete(&m->returns);
    array_delete(&m->ctx_calls);
    array_delete(&m->tensors);
}

const P2sCheckMethod *p2s_checker_method(P2sChecker *ck, size_t index, unsigned bit)
{
    const P2sPyLayerClass *cls = p2s_checker_class(ck, index);
    bool fwd = bit == P2S_IN_FORWARD;
    TSNode def = fwd ? cls->forward : cls->backward;
    size_t owner = fwd ? cls->forward_owner : cls->backward_owner;
    size_t slot = 2 * (p2s_node_present(def) ? owner : ck->found->classes.size) + !fwd;
    P2sCheckMethod *m = ck->methods.contents[slot];
    if (m)
        return m;
    m = p2s_malloc(sizeof *m);
    checker__method_init(ck, m, def, fwd ? cls->forward_stmt : cls->backward_stmt,
                         fwd ? cls->signature : cls->backward_signature, owner, fwd ? "forward" : "backward", bit);
    ck->methods.contents[slot] = m;
    return m;
}

bool p2s_checker_only_staticmethod(const P2sChecker *ck, const P2sCheckMethod *m)
{
    bool only = true;
    for (size_t i = 0; i < m->decorators.size; i++)
        only = only && p2s_checker_text_is(ck, m->decorators.contents[i], "staticmethod", 12);
    return only;
}

bool p2s_checker_is_tensor_name(const P2sChecker *ck, const P2sCheckMethod *m, TSNode node)
{
    if (!p2s_checker_type_is(node, P2S_KIND_IDENTIFIER))
        return false;
    for (size_t i = 0; i < m->tensors.size; i++)
        if (p2s_checker_text_is(ck, node, m->tensors.contents[i].text, m->tensors.contents[i].len))
            return true;
    return false;
}

/* ---- the checker ---- */

void p2s_checker_init(P2sChecker *ck, const P2sSource *src, P2sFindings *found, const P2sRules *rules,
                      P2sDiagSink *sink)
{
    memset(ck, 0, sizeof *ck);
    ck->src = src;
    ck->found = found;
    ck->rules = rules;
    ck->sink = sink;
    checker__index_classes(ck);
    for (size_t i = 0; i < 2 * (found->classes.size + 1); i++)
        array_push(&ck->methods, NULL);
}

void p2s_checker_release(P2sChecker *ck)
{
    array_delete(&ck->emitted);
    array_delete(&ck->subclassed);
    array_delete(&ck->applied);
    for (size_t i = 0; i < ck->methods.size; i++) {
        if (!ck->methods.contents[i])
            continue;
        checker__method_release(ck->methods.contents[i]);
        p2s_free(ck->methods.contents[i]);
    }
    array_delete(&ck->methods);
    p2s_nameset_release(&ck->by_qualname);
    p2s_nameset_release(&ck->by_name);
}
