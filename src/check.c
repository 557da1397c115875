/* check.c — the PyLayer contract and static-graph hazards.
 *
 * Per PyLayer class: forward/backward present (P2S101/102), static (P2S103), ctx first
 * (P2S104); between its forward and backward: gradient counts (P2S105/106), the save/load
 * pairing and where ctx methods are called (P2S107-109); inside both: calls that need a
 * concrete Tensor value (P2S2xx). Per `.apply(...)` site: the arguments against forward's
 * signature (P2S110-113). Per `.apply` routed through the runtime unresolved: a note (P2S300).
 *
 * A finding that leaves its owner as written (p2s_rules_leaves_as_written, and not hidden) marks
 * the class or site it was found for: such a class keeps its sites and gets no builder, and so
 * does every class derived from it (P2S301); an unresolved `.apply` stays too when one of them
 * is passed around in the file (P2S302).
 *
 * "Known" is always a bound every path agrees on: forward returns at most N tensors only when
 * every `return` is a literal tuple/list of N elements; backward returns at least N values
 * only when every `return` says so. A parameter, a call result or a name is never assumed to
 * be a Tensor without evidence (saved with save_for_backward, a gradient parameter, unpacked
 * from saved_tensor()). */
#include "check.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "nameset.h"
#include "parse.h"
#include "strbuf.h"
#include "suppress.h"

#define CHECK_DEPTH 8            /* local base classes followed, like find.c's alias depth */
#define CHECK_UNKNOWN SIZE_MAX   /* a count that is not statically known */
#define CHECK_CALL_TEXT_MAX 60   /* longer calls are shown as `.numpy()` */

typedef struct {
    char code[8];
    P2sSpan span;
    bool leaves;                 /* shown, and of a code that leaves its owner as written */
} Emitted;

typedef struct {
    const P2sSource *src;
    P2sFindings *found;
    const P2sRules *rules;
    P2sDiagSink *sink;
    bool *owner;                 /* as_written of the class or site being checked */
    P2sNameSet by_qualname, by_name;   /* the file's classes: first index of each spelling */
    Array(unsigned char) subclassed;   /* per class: a class of the file derives from it */
    Array(unsigned char) applied;      /* per class: a `.apply` of the file names it */
    Array(Emitted) emitted;      /* (code, span) already reported: shared bases are seen twice */
    Array(struct Method *) methods;  /* every forward/backward looked at, each collected once
                                        (a base's are shared by its subclasses and every site):
                                        2 * owner class + 0 / 1 for forward / backward, then
                                        the two absent ones; NULL until asked for */
} Checker;

typedef Array(TSNode) NodeList;

/* Every node of a function body, in source order, with its parent (ts_node_parent walks down
 * from the root each time) and whether it lies inside a function, lambda or class nested in
 * the body. */
typedef struct {
    TSNode root;
    NodeList nodes;
    Array(size_t) parent;          /* index in nodes; CHECK_ROOT for the root's children */
    Array(unsigned char) kind;     /* each node's P2sKind: the loops below test it many times */
    Array(unsigned char) nested;
} Body;

#define CHECK_ROOT SIZE_MAX

/* A name's text: an identifier's in the source, or a parameter's in its signature. */
typedef struct {
    const char *text;
    size_t len;
} CheckName;

/* What one forward or backward looks like from the outside. */
typedef struct Method {
    TSNode def;                  /* function_definition; null node when absent */
    const char *where;           /* "forward" / "backward" */
    unsigned bit;                /* P2S_IN_FORWARD / P2S_IN_BACKWARD */
    size_t owner;                /* the class whose body holds def */
    NodeList decorators;         /* its decorators, as expressions */
    const P2sSignature *sig;     /* def's signature (find.c read it for the class); NULL when absent */
    NodeList returns;            /* return statements of this function (not nested ones) */
    NodeList ctx_calls;          /* calls `ctx.<method from the table>(...)`, not in nested defs */
    Array(unsigned char) ctx_call_straight;  /* each one lies on the straight-line path */
    Array(CheckName) tensors;    /* names certainly bound to a Tensor */
    NodeList calls;              /* every call in its body, nested ones too (the hazards) */
    bool ctx_escapes;            /* ctx is used other than as `ctx.attr` (passed on, aliased) */
    bool mentions_save;          /* some `.save_for_backward`-like attribute appears anywhere */
    bool generator;              /* contains yield: returns say nothing about outputs */
} Method;

/* ---- tree helpers ---- */

static bool check__type_is(TSNode node, P2sKind kind)
{
    return p2s_kind(node) == kind;
}

static bool check__text_is(const Checker *ck, TSNode node, const char *text, size_t n)
{
    uint32_t start = ts_node_start_byte(node), end = ts_node_end_byte(node);
    return end - start == n && memcmp(ck->src->bytes + start, text, n) == 0;
}

/* Looks through parentheses: `((x))` is `x`. */
static TSNode check__unparen(TSNode node)
{
    while (check__type_is(node, P2S_KIND_PARENTHESIZED_EXPRESSION) && ts_node_named_child_count(node) == 1)
        node = ts_node_named_child(node, 0);
    return node;
}

/* Pre-order through an explicit stack of (node, parent index): ts_node_child costs about as
 * many steps as the child's index, far less than a cursor step for the few children most
 * nodes have. */
static void check__body_collect(TSNode root, Body *out)
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

static void check__body_release(Body *self)
{
    array_delete(&self->nodes);
    array_delete(&self->parent);
    array_delete(&self->kind);
    array_delete(&self->nested);
}

/* The node above index i (the body's root above its children). */
static TSNode check__body_parent(const Body *body, size_t i)
{
    size_t p = body->parent.contents[i];
    return p == CHECK_ROOT ? body->root : body->nodes.contents[p];
}

/* The decorators of a method's statement in its class body (find.c's forward_stmt), as
 * expressions. */
static void check__decorators(TSNode stmt, NodeList *out)
{
    if (!check__type_is(stmt, P2S_KIND_DECORATED_DEFINITION))
        return;
    uint32_t n = ts_node_named_child_count(stmt);
    for (uint32_t i = 0; i < n; i++) {
        TSNode dec = ts_node_named_child(stmt, i);
        if (check__type_is(dec, P2S_KIND_DECORATOR))
            array_push(out, ts_node_named_child(dec, 0));
    }
}

/* True when the method carries @staticmethod and nothing else that could change its signature. */
static bool check__only_staticmethod(const Checker *ck, const struct Method *m);

/* ---- emitting ---- */

/* Reports a finding once, and leaves the class or site being checked as written when the
 * finding says so (a base's finding, reported when the base was checked, counts for each
 * subclass that inherits the method too). */
static void check__emit(Checker *ck, const char *code, P2sSpan span, const char *const *kv, size_t npairs)
{
    for (size_t i = 0; i < ck->emitted.size; i++) {
        const Emitted *e = &ck->emitted.contents[i];
        if (strcmp(e->code, code) == 0 && e->span.start == span.start && e->span.end == span.end) {
            *ck->owner = *ck->owner || e->leaves;
            return;
        }
    }
    Emitted e = {{0}, span, false};
    memcpy(e.code, code, sizeof e.code - 1);
    const P2sDiag *d = p2s_rules_emit(ck->rules, ck->sink, code, span, kv, npairs);
    e.leaves = d && p2s_rules_leaves_as_written(ck->rules, code) && !p2s_suppress_hides(d, ck->src, ck->rules);
    array_push(&ck->emitted, e);
    *ck->owner = *ck->owner || e.leaves;
}

/* ---- classes ---- */

static const P2sPyLayerClass *check__class(const Checker *ck, size_t index)
{
    return &ck->found->classes.contents[index];
}

/* The local class a base expression names (by its qualified or simple name), or SIZE_MAX:
 * the first class of the file spelled so. */
static size_t check__local_class(const Checker *ck, TSNode base)
{
    base = check__unparen(base);
    uint32_t start = ts_node_start_byte(base), end = ts_node_end_byte(base);
    size_t by_qualname = SIZE_MAX, by_name = SIZE_MAX;
    p2s_nameset_get(&ck->by_qualname, ck->src->bytes + start, end - start, &by_qualname);
    p2s_nameset_get(&ck->by_name, ck->src->bytes + start, end - start, &by_name);
    return by_qualname < by_name ? by_qualname : by_name;
}

/* A base spelled like one of the rules' PyLayer bases (`PyLayer`, `paddle.autograd.PyLayer`). */
static bool check__is_root_base(const Checker *ck, TSNode base)
{
    base = check__unparen(base);
    uint32_t start = ts_node_start_byte(base), end = ts_node_end_byte(base);
    const char *text = ck->src->bytes + start;
    size_t len = end - start;
    const char *dot = memrchr(text, '.', len);
    const char *last = dot ? dot + 1 : text;
    size_t last_len = len - (size_t)(last - text);
    for (size_t i = 0; i < ck->rules->pylayer_bases.size; i++) {
        const char *qual = ck->rules->pylayer_bases.contents[i];
        const char *qdot = strrchr(qual, '.');
        const char *qlast = qdot ? qdot + 1 : qual;
        if ((strlen(qual) == len && memcmp(qual, text, len) == 0) ||
            (strlen(qlast) == last_len && memcmp(qlast, last, last_len) == 0))
            return true;
    }
    return false;
}

/* True when every base of the class, followed through local classes, is a root PyLayer base
 * or a local class: then nothing unseen can supply forward/backward. */
static bool check__bases_known(const Checker *ck, size_t index, int depth)
{
    if (depth > CHECK_DEPTH)
        return false;
    TSNode bases = p2s_child(check__class(ck, index)->node, P2S_FIELD_SUPERCLASSES);
    uint32_t n = ts_node_is_null(bases) ? 0 : ts_node_named_child_count(bases);
    for (uint32_t k = 0; k < n; k++) {
        TSNode base = ts_node_named_child(bases, k);
        if (check__type_is(base, P2S_KIND_COMMENT))
            continue;
        if (check__type_is(base, P2S_KIND_KEYWORD_ARGUMENT))
            return false;   /* a metaclass can add anything */
        size_t local = check__local_class(ck, base);
        if (local == index)
            return false;
        if (local != SIZE_MAX ? !check__bases_known(ck, local, depth + 1) : !check__is_root_base(ck, base))
            return false;
    }
    return true;
}

/* The class body binds name some other way than a def found by find.c (`forward = f`). */
static bool check__body_binds(const Checker *ck, size_t index, const char *name, int depth)
{
    if (depth > CHECK_DEPTH)
        return false;
    const P2sPyLayerClass *cls = check__class(ck, index);
    TSNode body = p2s_child(cls->node, P2S_FIELD_BODY);
    uint32_t n = ts_node_named_child_count(body);
    size_t len = strlen(name);
    for (uint32_t i = 0; i < n; i++) {
        TSNode stmt = ts_node_named_child(body, i);
        TSNode expr = check__type_is(stmt, P2S_KIND_EXPRESSION_STATEMENT) ? ts_node_named_child(stmt, 0) : (TSNode){0};
        if (check__type_is(expr, P2S_KIND_ASSIGNMENT) && check__text_is(ck, p2s_child(expr, P2S_FIELD_LEFT), name, len))
            return true;
    }
    TSNode bases = p2s_child(cls->node, P2S_FIELD_SUPERCLASSES);
    uint32_t nb = ts_node_is_null(bases) ? 0 : ts_node_named_child_count(bases);
    for (uint32_t k = 0; k < nb; k++) {
        size_t local = check__local_class(ck, ts_node_named_child(bases, k));
        if (local != SIZE_MAX && local != index && check__body_binds(ck, local, name, depth + 1))
            return true;
    }
    return false;
}

static bool check__is_subclassed(const Checker *ck, size_t index)
{
    return ck->subclassed.contents[index];
}

static bool check__is_applied(const Checker *ck, size_t index)
{
    return ck->applied.contents[index];
}

/* The per-class facts the checks ask for again and again, computed once per file. */
static void check__index_classes(Checker *ck)
{
    const P2sFindings *found = ck->found;
    for (size_t i = 0; i < found->classes.size; i++) {
        const P2sPyLayerClass *c = check__class(ck, i);
        if (c->qualname && !p2s_nameset_contains(&ck->by_qualname, c->qualname, strlen(c->qualname)))
            p2s_nameset_put(&ck->by_qualname, c->qualname, strlen(c->qualname), i);
        const char *name = ck->src->bytes + c->name.start;
        if (!p2s_nameset_contains(&ck->by_name, name, c->name.end - c->name.start))
            p2s_nameset_put(&ck->by_name, name, c->name.end - c->name.start, i);
        array_push(&ck->subclassed, (unsigned char)0);
        array_push(&ck->applied, (unsigned char)0);
    }
    for (size_t i = 0; i < found->classes.size; i++) {
        TSNode bases = p2s_child(check__class(ck, i)->node, P2S_FIELD_SUPERCLASSES);
        uint32_t n = ts_node_is_null(bases) ? 0 : ts_node_named_child_count(bases);
        for (uint32_t k = 0; k < n; k++) {
            size_t base = check__local_class(ck, ts_node_named_child(bases, k));
            if (base != SIZE_MAX && base != i)
                ck->subclassed.contents[base] = 1;
        }
    }
    for (size_t i = 0; i < found->sites.size; i++)
        if (found->sites.contents[i].class_index < found->classes.size)
            ck->applied.contents[found->sites.contents[i].class_index] = 1;
}

static void check__class_name(const Checker *ck, size_t index, P2sStrbuf *out)
{
    const P2sPyLayerClass *cls = check__class(ck, index);
    if (cls->qualname)
        p2s_strbuf_adds(out, cls->qualname);
    else
        p2s_strbuf_add(out, ck->src->bytes + cls->name.start, cls->name.end - cls->name.start);
}

/* P2S101 / P2S102. A class that defines neither and is not applied here is taken for an
 * abstract base; a subclassed one may leave the method to its subclasses. */
static void check__missing(Checker *ck, size_t index, const char *cls_name)
{
    const P2sPyLayerClass *cls = check__class(ck, index);
    bool has_f = p2s_node_present(cls->forward), has_b = p2s_node_present(cls->backward);
    if ((has_f && has_b) || check__is_subclassed(ck, index) || !check__bases_known(ck, index, 0))
        return;
    if (!has_f && !has_b && !check__is_applied(ck, index))
        return;
    const char *kv[] = {"class", cls_name};
    if (!has_f && !check__body_binds(ck, index, "forward", 0))
        check__emit(ck, "P2S101", cls->name, kv, 1);
    if (!has_b && !check__body_binds(ck, index, "backward", 0))
        check__emit(ck, "P2S102", cls->name, kv, 1);
}

/* P2S103 / P2S104 for a method the class defines itself (a base's are checked with the base). */
static void check__signature(Checker *ck, size_t index, const Method *m, const char *cls_name)
{
    if (!p2s_node_present(m->def) || m->owner != index)
        return;
    const char *kv[] = {"class", cls_name, "method", m->where};
    const NodeList decs = m->decorators;
    bool is_static = false, is_classmethod = false;
    for (size_t i = 0; i < decs.size; i++) {
        is_static = is_static || check__text_is(ck, decs.contents[i], "staticmethod", 12);
        is_classmethod = is_classmethod || check__text_is(ck, decs.contents[i], "classmethod", 11);
    }
    /* Another decorator may well return a staticmethod: only the certain cases fire. */
    if (!is_static && (decs.size == 0 || is_classmethod))
        check__emit(ck, "P2S103", p2s_node_span(p2s_child(m->def, P2S_FIELD_NAME)), kv, 2);
    if (!p2s_signature_receives_ctx(m->sig))
        check__emit(ck, "P2S104", p2s_node_span(p2s_child(m->def, P2S_FIELD_PARAMETERS)), kv, 2);
}

/* ---- one method ---- */

/* Whether the method's first parameter has a name (the ctx the checks follow). */
static bool check__has_ctx(const Method *m)
{
    return m->sig && m->sig->ctx.end > 0;
}

static bool check__is_ctx(const Method *m, const Checker *ck, TSNode node)
{
    return check__has_ctx(m) && check__type_is(node, P2S_KIND_IDENTIFIER) &&
           check__text_is(ck, node, m->sig->text + m->sig->ctx.start, m->sig->ctx.end - m->sig->ctx.start);
}

/* `ctx.<name>(...)` with name in the ctx method table: the table entry, else NULL. */
static const P2sCtxMethod *check__ctx_call(const Checker *ck, const Method *m, TSNode call)
{
    TSNode fn = p2s_child(call, P2S_FIELD_FUNCTION);
    if (!check__type_is(fn, P2S_KIND_ATTRIBUTE) || !check__is_ctx(m, ck, p2s_child(fn, P2S_FIELD_OBJECT)))
        return NULL;
    TSNode attr = p2s_child(fn, P2S_FIELD_ATTRIBUTE);
    return p2s_rules_ctx_method(ck->rules, ck->src->bytes + ts_node_start_byte(attr),
                                ts_node_end_byte(attr) - ts_node_start_byte(attr));
}

/* How many times the body binds name (assignment targets, for/with/except targets, walrus). */
static size_t check__bindings(const Checker *ck, const Body *body, CheckName name)
{
    size_t count = 0;
    for (size_t i = 0; i < body->nodes.size; i++) {
        TSNode n = body->nodes.contents[i];
        if (body->kind.contents[i] != P2S_KIND_IDENTIFIER || !check__text_is(ck, n, name.text, name.len))
            continue;
        TSNode up = n;
        for (size_t at = i; body->parent.contents[at] != CHECK_ROOT; at = body->parent.contents[at]) {
            TSNode parent = check__body_parent(body, at);
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
static bool check__straight_line(const Body *body, size_t at)
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

static void check__add_tensor_name(const Checker *ck, Method *m, const Body *body, CheckName name,
                                   size_t allowed_bindings)
{
    if (check__bindings(ck, body, name) <= allowed_bindings)
        array_push(&m->tensors, name);
}

static void check__add_tensor(const Checker *ck, Method *m, const Body *body, TSNode name, size_t allowed_bindings)
{
    if (!check__type_is(name, P2S_KIND_IDENTIFIER))
        return;
    CheckName text = {ck->src->bytes + ts_node_start_byte(name), ts_node_end_byte(name) - ts_node_start_byte(name)};
    check__add_tensor_name(ck, m, body, text, allowed_bindings);
}

/* Names a `x, y = ctx.saved_tensor()` or `x = ctx.saved_tensor()[0]` binds to Tensors; the
 * call is node `at` of the body. */
static void check__saved_targets(const Checker *ck, Method *m, const Body *body, size_t at)
{
    TSNode value = body->nodes.contents[at], up = check__body_parent(body, at);
    bool indexed = false;
    if (check__type_is(up, P2S_KIND_SUBSCRIPT) && ts_node_eq(p2s_child(up, P2S_FIELD_VALUE), value) &&
        body->parent.contents[at] != CHECK_ROOT) {
        at = body->parent.contents[at];
        value = up;
        indexed = true;
        up = check__body_parent(body, at);
    }
    if (!check__type_is(up, P2S_KIND_ASSIGNMENT) || !ts_node_eq(p2s_child(up, P2S_FIELD_RIGHT), value))
        return;
    TSNode left = p2s_child(up, P2S_FIELD_LEFT);
    if (indexed) {
        check__add_tensor(ck, m, body, left, 1);
        return;
    }
    if (!check__type_is(left, P2S_KIND_PATTERN_LIST) && !check__type_is(left, P2S_KIND_TUPLE_PATTERN) &&
        !check__type_is(left, P2S_KIND_LIST_PATTERN))
        return;
    uint32_t n = ts_node_named_child_count(left);
    for (uint32_t i = 0; i < n; i++)
        check__add_tensor(ck, m, body, ts_node_named_child(left, i), 1);
}

static void check__method_init(Checker *ck, Method *m, TSNode def, TSNode stmt, const P2sSignature *sig,
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
    check__decorators(stmt, &m->decorators);
    const P2sCtxMethod *save = p2s_rules_ctx_role(ck->rules, P2S_CTX_SAVE);
    const P2sCtxMethod *load = p2s_rules_ctx_role(ck->rules, P2S_CTX_LOAD);
    Body collected;
    check__body_collect(p2s_child(def, P2S_FIELD_BODY), &collected);
    const Body *body = &collected;
    for (size_t i = 0; i < body->nodes.size; i++) {
        TSNode node = body->nodes.contents[i];
        P2sKind kind = (P2sKind)body->kind.contents[i];
        if (kind == P2S_KIND_CALL)
            array_push(&m->calls, node);
        if (kind == P2S_KIND_YIELD)
            m->generator = true;
        if (kind == P2S_KIND_ATTRIBUTE && save &&
            check__text_is(ck, p2s_child(node, P2S_FIELD_ATTRIBUTE), save->name, strlen(save->name)))
            m->mentions_save = true;
        if (kind == P2S_KIND_IDENTIFIER && check__is_ctx(m, ck, node)) {
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
        const P2sCtxMethod *cm = check__ctx_call(ck, m, node);
        if (!cm)
            continue;
        array_push(&m->ctx_calls, node);
        array_push(&m->ctx_call_straight, (unsigned char)check__straight_line(body, i));
        TSNode args = p2s_child(node, P2S_FIELD_ARGUMENTS);
        uint32_t na = ts_node_named_child_count(args);
        if (cm == save)
            for (uint32_t k = 0; k < na; k++)
                check__add_tensor(ck, m, body, ts_node_named_child(args, k), 1);
        if (cm == load)
            check__saved_targets(ck, m, body, i);
    }
    /* backward's gradient parameters are Tensors (or None) as long as nothing rebinds them. */
    for (size_t i = 0; bit == P2S_IN_BACKWARD && i < sig->params.size; i++) {
        const P2sParam *p = &sig->params.contents[i];
        CheckName name = {sig->text + p->name.start, p->name.end - p->name.start};
        if (!p->has_default && p->kind != P2S_PARAM_VAR_POSITIONAL && p->kind != P2S_PARAM_VAR_KEYWORD)
            check__add_tensor_name(ck, m, body, name, 0);
    }
    check__body_release(&collected);   /* what the checks need of it is kept above */
    /* kept until the file is checked, one per method: most lists hold a node or two */
    array_shrink(&m->decorators);
    array_shrink(&m->ctx_call_straight);
    array_shrink(&m->calls);
    array_shrink(&m->returns);
    array_shrink(&m->ctx_calls);
    array_shrink(&m->tensors);
}

static void check__method_release(Method *m)
{
    array_delete(&m->decorators);
    array_delete(&m->ctx_call_straight);
    array_delete(&m->calls);
    array_delete(&m->returns);
    array_delete(&m->ctx_calls);
    array_delete(&m->tensors);
}

/* forward (bit P2S_IN_FORWARD) or backward of a class, collected the first time any class or
 * site asks for it. */
static const Method *check__method(Checker *ck, size_t index, unsigned bit)
{
    const P2sPyLayerClass *cls = check__class(ck, index);
    bool fwd = bit == P2S_IN_FORWARD;
    TSNode def = fwd ? cls->forward : cls->backward;
    size_t owner = fwd ? cls->forward_owner : cls->backward_owner;
    size_t slot = 2 * (p2s_node_present(def) ? owner : ck->found->classes.size) + !fwd;
    Method *m = ck->methods.contents[slot];
    if (m)
        return m;
    m = p2s_malloc(sizeof *m);
    check__method_init(ck, m, def, fwd ? cls->forward_stmt : cls->backward_stmt,
                       fwd ? cls->signature : cls->backward_signature, owner, fwd ? "forward" : "backward", bit);
    ck->methods.contents[slot] = m;
    return m;
}

static bool check__only_staticmethod(const Checker *ck, const Method *m)
{
    bool only = true;
    for (size_t i = 0; i < m->decorators.size; i++)
        only = only && check__text_is(ck, m->decorators.contents[i], "staticmethod", 12);
    return only;
}

static bool check__is_tensor_name(const Checker *ck, const Method *m, TSNode node)
{
    if (!check__type_is(node, P2S_KIND_IDENTIFIER))
        return false;
    for (size_t i = 0; i < m->tensors.size; i++)
        if (check__text_is(ck, node, m->tensors.contents[i].text, m->tensors.contents[i].len))
            return true;
    return false;
}

/* The elements of a literal tuple / list return value, or false when the value is not one or
 * has a starred element (its length is then unknown). */
static bool check__literal_elements(TSNode value, NodeList *out)
{
    value = check__unparen(value);
    if (!check__type_is(value, P2S_KIND_EXPRESSION_LIST) && !check__type_is(value, P2S_KIND_TUPLE) && !check__type_is(value, P2S_KIND_LIST))
        return false;
    uint32_t n = ts_node_named_child_count(value);
    for (uint32_t i = 0; i < n; i++) {
        TSNode e = ts_node_named_child(value, i);
        if (check__type_is(e, P2S_KIND_COMMENT))
            continue;
        if (check__type_is(e, P2S_KIND_LIST_SPLAT) || check__type_is(e, P2S_KIND_PARENTHESIZED_LIST_SPLAT))
            return false;
        array_push(out, e);
    }
    return true;
}

static bool check__is_float(TSNode node)
{
    return check__type_is(check__unparen(node), P2S_KIND_FLOAT);
}

/* A returned value that cannot be a tuple or list, so that it is one output (eager PyLayer
 * makes a slot of each item of a returned tuple or list, and of any other value one): a Tensor
 * by the evidence, a unary operation or comparison, or arithmetic that no sequence supports —
 * `+` and `*` concatenate and repeat sequences, so they count only with a float or a Tensor
 * operand. */
static bool check__one_value(const Checker *ck, const Method *f, TSNode value)
{
    value = check__unparen(value);
    if (check__type_is(value, P2S_KIND_UNARY_OPERATOR) || check__type_is(value, P2S_KIND_COMPARISON_OPERATOR) ||
        check__type_is(value, P2S_KIND_NOT_OPERATOR) || check__is_tensor_name(ck, f, value))
        return true;
    if (!check__type_is(value, P2S_KIND_BINARY_OPERATOR))
        return false;
    TSNode op = p2s_child(value, P2S_FIELD_OPERATOR);
    if (!check__text_is(ck, op, "+", 1) && !check__text_is(ck, op, "*", 1))
        return true;
    TSNode left = check__unparen(p2s_child(value, P2S_FIELD_LEFT));
    TSNode right = check__unparen(p2s_child(value, P2S_FIELD_RIGHT));
    return check__is_float(left) || check__is_float(right) ||
           check__is_tensor_name(ck, f, left) || check__is_tensor_name(ck, f, right);
}

/* What forward's returns say of its outputs: the most any return can have (CHECK_UNKNOWN
 * unless every return is a literal or one value), the fewest certain Tensor outputs over all
 * returns, and the count when every return has the same one (the hover's "returns N"). */
typedef struct {
    size_t at_most, at_least, exactly;
} ForwardOutputs;

static ForwardOutputs check__forward_outputs(const Checker *ck, const Method *f)
{
    bool known = f->returns.size && !f->generator;
    ForwardOutputs out = {known ? 0 : CHECK_UNKNOWN, known ? CHECK_UNKNOWN : 0, CHECK_UNKNOWN};
    for (size_t i = 0; i < f->returns.size && !f->generator; i++) {
        TSNode value = ts_node_named_child(f->returns.contents[i], 0);
        NodeList elems = {0};
        size_t most = CHECK_UNKNOWN, least = 0;
        if (ts_node_is_null(value)) {
            most = 0;
        } else if (check__literal_elements(value, &elems)) {
            most = elems.size;
            for (size_t k = 0; k < elems.size; k++)
                least += check__is_tensor_name(ck, f, check__unparen(elems.contents[k]));
        } else {
            most = check__one_value(ck, f, value) ? 1 : CHECK_UNKNOWN;
            least = check__is_tensor_name(ck, f, check__unparen(value));
        }
        array_delete(&elems);
        if (out.at_most != CHECK_UNKNOWN && (most == CHECK_UNKNOWN || most > out.at_most))
            out.at_most = most;
        if (least < out.at_least)
            out.at_least = least;
        out.exactly = i == 0 || most == out.exactly ? most : CHECK_UNKNOWN;
    }
    return out;
}

/* backward: the fewest values any return gives, or CHECK_UNKNOWN when some return's count is
 * not known; *first is the first return, for the span. */
static size_t check__backward_returns(const Checker *ck, const Method *b, TSNode *first)
{
    size_t fewest = CHECK_UNKNOWN;
    bool known = b->returns.size > 0 && !b->generator;
    for (size_t i = 0; i < b->returns.size && known; i++) {
        TSNode value = ts_node_named_child(b->returns.contents[i], 0);
        TSNode plain = check__unparen(value);
        NodeList elems = {0};
        size_t count = CHECK_UNKNOWN;
        /* A bare `return` is left unknown: it gives None, but is rarely what was meant. */
        if (ts_node_is_null(value))
            count = CHECK_UNKNOWN;
        else if (check__literal_elements(value, &elems))
            count = elems.size;
        else if (check__type_is(plain, P2S_KIND_NONE) || check__type_is(plain, P2S_KIND_BINARY_OPERATOR) ||
                 check__type_is(plain, P2S_KIND_UNARY_OPERATOR) || check__is_tensor_name(ck, b, plain))
            count = 1;
        array_delete(&elems);
        known = count != CHECK_UNKNOWN;
        if (count < fewest)
            fewest = count;
    }
    *first = b->returns.size ? b->returns.contents[0] : (TSNode){0};
    return known ? fewest : CHECK_UNKNOWN;
}

/* forward's inputs: one per parameter after ctx, unless *args / **kwargs take more. */
static size_t check__forward_inputs(const P2sSignature *sig)
{
    for (size_t i = 0; i < sig->params.size; i++)
        if (sig->params.contents[i].kind == P2S_PARAM_VAR_POSITIONAL || sig->params.contents[i].kind == P2S_PARAM_VAR_KEYWORD)
            return CHECK_UNKNOWN;
    return sig->params.size;
}

/* P2S105 / P2S106. */
static void check__counts(Checker *ck, const Method *f, const Method *b, const P2sSignature *sig,
                          const ForwardOutputs *outputs, const char *cls_name)
{
    if (!check__has_ctx(f) || !check__has_ctx(b))
        return;
    size_t required = 0, accepted = 0;
    bool star = false;
    for (size_t i = 0; i < b->sig->params.size; i++) {
        const P2sParam *p = &b->sig->params.contents[i];
        star = star || p->kind == P2S_PARAM_VAR_POSITIONAL;
        if (p->kind == P2S_PARAM_POSITIONAL_ONLY || p->kind == P2S_PARAM_POSITIONAL_OR_KEYWORD) {
            accepted++;
            required += !p->has_default;
        }
    }
    size_t at_most = outputs->at_most, at_least = outputs->at_least;
    char given[48], expected[48];
    P2sSpan span = p2s_node_span(p2s_child(b->def, P2S_FIELD_PARAMETERS));
    if (at_most != CHECK_UNKNOWN && required > at_most) {
        snprintf(given, sizeof given, required == accepted && !star ? "%zu" : "at least %zu", required);
        snprintf(expected, sizeof expected, "at most %zu", at_most);
        const char *kv[] = {"class", cls_name, "given", given, "expected", expected};
        check__emit(ck, "P2S105", span, kv, 3);
    } else if (!star && at_least != CHECK_UNKNOWN && at_least > accepted) {
        snprintf(given, sizeof given, required == accepted ? "%zu" : "at most %zu", accepted);
        snprintf(expected, sizeof expected, "at least %zu", at_least);
        const char *kv[] = {"class", cls_name, "given", given, "expected", expected};
        check__emit(ck, "P2S105", span, kv, 3);
    }
    TSNode first = {0};
    size_t returned = check__backward_returns(ck, b, &first);
    size_t inputs = check__forward_inputs(sig);
    /* With no inputs nothing needs a gradient, so backward never runs. */
    if (returned != CHECK_UNKNOWN && inputs != CHECK_UNKNOWN && inputs > 0 && returned > inputs) {
        snprintf(given, sizeof given, "%zu", returned);
        snprintf(expected, sizeof expected, "%zu", inputs);
        const char *kv[] = {"class", cls_name, "given", given, "expected", expected};
        check__emit(ck, "P2S106", p2s_node_span(ts_node_named_child(first, 0)), kv, 3);
    }
}

static void check__allowed_text(unsigned allowed, P2sStrbuf *out)
{
    if (allowed == (P2S_IN_FORWARD | P2S_IN_BACKWARD))
        p2s_strbuf_adds(out, "forward or backward");
    else
        p2s_strbuf_adds(out, allowed & P2S_IN_FORWARD ? "forward" : "backward");
}

/* P2S107 / P2S108 / P2S109. */
static void check__ctx_calls(Checker *ck, const Method *f, const Method *b, const char *cls_name)
{
    const P2sCtxMethod *save = p2s_rules_ctx_role(ck->rules, P2S_CTX_SAVE);
    const Method *both[] = {f, b};
    P2sStrbuf allowed, method;
    p2s_strbuf_init(&allowed);
    p2s_strbuf_init(&method);
    for (size_t w = 0; w < 2; w++) {
        const Method *m = both[w];
        TSNode first_save = {0};
        for (size_t i = 0; i < m->ctx_calls.size; i++) {
            TSNode call = m->ctx_calls.contents[i];
            const P2sCtxMethod *cm = check__ctx_call(ck, m, call);
            p2s_strbuf_reset(&allowed);
            p2s_strbuf_reset(&method);
            check__allowed_text(cm->allowed_in, &allowed);
            p2s_strbuf_adds(&method, cm->name);
            if (!(cm->allowed_in & m->bit)) {
                const char *kv[] = {"method", method.buf, "where", m->where, "allowed", allowed.buf};
                check__emit(ck, "P2S108", p2s_node_span(call), kv, 3);
            }
            if (cm != save || m->bit != P2S_IN_FORWARD || !m->ctx_call_straight.contents[i])
                continue;
            if (ts_node_is_null(first_save)) {
                first_save = call;
                continue;
            }
            char line[24];
            snprintf(line, sizeof line, "%u", ts_node_start_point(first_save).row + 1);
            const char *kv[] = {"method", method.buf, "line", line};
            check__emit(ck, "P2S109", p2s_node_span(call), kv, 2);
        }
    }
    /* backward loads what forward never saved: only when forward is fully visible (ctx never
     * leaves it, no decorator that could save) and no save is spelled anywhere in it. */
    if (save && check__has_ctx(f) && !f->mentions_save &&
        !f->ctx_escapes && check__only_staticmethod(ck, f)) {
        for (size_t i = 0; i < b->ctx_calls.size; i++) {
            const P2sCtxMethod *cm = check__ctx_call(ck, b, b->ctx_calls.contents[i]);
            if (cm->role != P2S_CTX_LOAD)
                continue;
            const char *kv[] = {"class", cls_name, "method", cm->name, "save", save->name};
            check__emit(ck, "P2S107", p2s_node_span(b->ctx_calls.contents[i]), kv, 3);
            break;
        }
    }
    p2s_strbuf_release(&allowed);
    p2s_strbuf_release(&method);
}

static void check__call_text(const Checker *ck, TSNode call, const char *name, bool builtin, P2sStrbuf *out)
{
    uint32_t start = ts_node_start_byte(call), end = ts_node_end_byte(call);
    if (end - start <= CHECK_CALL_TEXT_MAX && !memchr(ck->src->bytes + start, '\n', end - start))
        p2s_strbuf_add(out, ck->src->bytes + start, end - start);
    else
        p2s_strbuf_addf(out, builtin ? "%s(...)" : ".%s()", name);
}

/* P2S2xx: calls that need a concrete value, anywhere inside forward/backward. */
static void check__hazards(Checker *ck, const Method *m)
{
    if (!p2s_node_present(m->def))
        return;
    P2sStrbuf text;
    p2s_strbuf_init(&text);
    for (size_t i = 0; i < m->calls.size; i++) {
        TSNode call = m->calls.contents[i];
        TSNode fn = p2s_child(call, P2S_FIELD_FUNCTION), args = p2s_child(call, P2S_FIELD_ARGUMENTS);
        const P2sHazard *h = NULL;
        if (check__type_is(fn, P2S_KIND_ATTRIBUTE)) {
            TSNode attr = p2s_child(fn, P2S_FIELD_ATTRIBUTE);
            h = p2s_rules_hazard(ck->rules, false, ck->src->bytes + ts_node_start_byte(attr),
                                 ts_node_end_byte(attr) - ts_node_start_byte(attr));
        } else if (check__type_is(fn, P2S_KIND_IDENTIFIER) && check__type_is(args, P2S_KIND_ARGUMENT_LIST) &&
                   ts_node_named_child_count(args) == 1) {
            /* float(t) only when t is certainly a Tensor: float(scale) on a number is fine. */
            TSNode arg = check__unparen(ts_node_named_child(args, 0));
            if (check__type_is(arg, P2S_KIND_SUBSCRIPT))
                arg = p2s_child(arg, P2S_FIELD_VALUE);
            if (check__is_tensor_name(ck, m, arg))
                h = p2s_rules_hazard(ck->rules, true, ck->src->bytes + ts_node_start_byte(fn),
                                     ts_node_end_byte(fn) - ts_node_start_byte(fn));
        }
        if (!h)
            continue;
        p2s_strbuf_reset(&text);
        check__call_text(ck, call, h->name, h->builtin, &text);
        const char *kv[] = {"call", text.buf, "where", m->where};
        check__emit(ck, h->code, p2s_node_span(call), kv, 2);
    }
    p2s_strbuf_release(&text);
}

static void check__pylayer(Checker *ck, size_t index)
{
    ck->owner = &ck->found->classes.contents[index].as_written;
    P2sStrbuf name;
    p2s_strbuf_init(&name);
    check__class_name(ck, index, &name);
    check__missing(ck, index, name.buf);
    const Method *f = check__method(ck, index, P2S_IN_FORWARD);
    const Method *b = check__method(ck, index, P2S_IN_BACKWARD);
    check__signature(ck, index, f, name.buf);
    check__signature(ck, index, b, name.buf);
    ForwardOutputs outputs = check__forward_outputs(ck, f);
    ck->found->classes.contents[index].forward_outputs = outputs.exactly;
    check__counts(ck, f, b, check__class(ck, index)->signature, &outputs, name.buf);
    check__ctx_calls(ck, f, b, name.buf);
    check__hazards(ck, f);
    check__hazards(ck, b);
    p2s_strbuf_release(&name);
}

/* ---- .apply sites ---- */

/* The class a site calls, as its messages name it: a class of this file by its qualified name,
 * another module's as the call spells it. */
static void check__site_class_name(const Checker *ck, const P2sApplySite *site, P2sStrbuf *out)
{
    if (site->class_index == P2S_SITE_EXTERNAL)
        p2s_node_flat_text(ck->src, p2s_child(site->attribute, P2S_FIELD_OBJECT), out);
    else
        check__class_name(ck, site->class_index, out);
}

/* The class's name and what forward accepts, for a site's message: made only when one fires. */
static void check__site_texts(const Checker *ck, const P2sApplySite *site, P2sStrbuf *name, P2sStrbuf *accepted)
{
    if (name->len)
        return;
    check__site_class_name(ck, site, name);
    const char *text = p2s_signature_accepted(site->signature);
    p2s_strbuf_adds(accepted, *text ? text : "no arguments");
}

/* P2S111: positional arguments past every parameter that takes one; only when no `*xs` makes
 * the count unknown. */
static void check__too_many(Checker *ck, const P2sApplySite *site, const P2sBinding *b, P2sStrbuf *name,
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
    check__site_texts(ck, site, name, accepted);
    const char *kv[] = {"class", name->buf, "expected", expected, "given", given, "accepted", accepted->buf};
    check__emit(ck, "P2S111", p2s_span(ts_node_start_byte(first), ts_node_end_byte(last)), kv, 4);
}

/* P2S110-P2S113: the call's arguments bound to forward's signature, as Python would. */
static void check__site(Checker *ck, P2sApplySite *site)
{
    if (site->class_index != P2S_SITE_EXTERNAL)
        site->as_written = check__class(ck, site->class_index)->as_written;
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
    check__too_many(ck, site, &b, &name, &accepted);
    for (size_t i = 0; i < b.arguments.size; i++) {
        const P2sBoundArgument *arg = &b.arguments.contents[i];
        if (arg->kind != P2S_BOUND_NO_KEYWORD && arg->kind != P2S_BOUND_DUPLICATE)
            continue;
        TSNode key = p2s_child(arg->argument, P2S_FIELD_NAME);
        p2s_strbuf_reset(&text);
        p2s_node_flat_text(ck->src, key, &text);
        check__site_texts(ck, site, &name, &accepted);
        const char *kv[] = {"class", name.buf, "name", text.buf, "accepted", accepted.buf};
        if (arg->kind == P2S_BOUND_NO_KEYWORD)
            check__emit(ck, "P2S110", p2s_node_span(key), kv, 3);
        else
            check__emit(ck, "P2S113", p2s_node_span(arg->argument), kv, 3);
    }
    if (b.missing != SIZE_MAX) {
        P2sSpan missing = sig->params.contents[b.missing].name;
        p2s_strbuf_reset(&text);
        p2s_strbuf_add(&text, sig->text + missing.start, missing.end - missing.start);
        check__site_texts(ck, site, &name, &accepted);
        const char *kv[] = {"class", name.buf, "name", text.buf, "accepted", accepted.buf};
        check__emit(ck, "P2S112", p2s_node_span(args), kv, 3);
    }
    p2s_binding_release(&b);
    p2s_strbuf_release(&name);
    p2s_strbuf_release(&accepted);
    p2s_strbuf_release(&text);
}

/* ---- what is left as written ---- */

/* Each PyLayer class left as written by a finding of its own, or by a base of another module
 * (find.c): the note that says so, naming where the errors are. */
static void check__note_as_written(Checker *ck)
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
        check__class_name(ck, i, &name);
        P2sSpan base = cls->as_written_base;
        if (base.end > base.start)
            p2s_strbuf_add(&at_fault, ck->src->bytes + base.start, base.end - base.start);
        else
            p2s_strbuf_adds(&at_fault, name.buf);
        const char *kv[] = {"class", name.buf, "name", at_fault.buf};
        ck->owner = &cls->as_written;
        check__emit(ck, "P2S301", cls->name, kv, 2);
    }
    p2s_strbuf_release(&name);
    p2s_strbuf_release(&at_fault);
}

/* Name and qualified name of every class left as written, each to its class index. */
static void check__as_written_names(const Checker *ck, P2sNameSet *out)
{
    for (size_t i = 0; i < ck->found->classes.size; i++) {
        const P2sPyLayerClass *cls = check__class(ck, i);
        if (!cls->is_pylayer || !cls->as_written)
            continue;
        p2s_nameset_put(out, ck->src->bytes + cls->name.start, cls->name.end - cls->name.start, i);
        if (cls->qualname)
            p2s_nameset_put(out, cls->qualname, strlen(cls->qualname), i);
    }
}

/* A class derived from one left as written may inherit what is wrong there: it is left as
 * written too, with the note naming the base. Bases are matched by spelling, so a class of the
 * same name elsewhere in the file counts too (the safe side). Repeated until nothing changes. */
static void check__inherit_as_written(Checker *ck)
{
    P2sStrbuf name, base_text;
    p2s_strbuf_init(&name);
    p2s_strbuf_init(&base_text);
    for (bool changed = true; changed;) {
        changed = false;
        P2sNameSet names;
        p2s_nameset_init(&names);
        check__as_written_names(ck, &names);
        for (size_t i = 0; i < ck->found->classes.size; i++) {
            P2sPyLayerClass *cls = &ck->found->classes.contents[i];
            TSNode bases = p2s_child(cls->node, P2S_FIELD_SUPERCLASSES);
            uint32_t n = cls->is_pylayer && !cls->as_written && p2s_node_present(bases) ? ts_node_named_child_count(bases) : 0;
            for (uint32_t k = 0; k < n && !cls->as_written; k++) {
                TSNode base = check__unparen(ts_node_named_child(bases, k));
                uint32_t start = ts_node_start_byte(base), end = ts_node_end_byte(base);
                if (!p2s_nameset_contains(&names, ck->src->bytes + start, end - start))
                    continue;
                p2s_strbuf_reset(&name);
                p2s_strbuf_reset(&base_text);
                check__class_name(ck, i, &name);
                p2s_strbuf_add(&base_text, ck->src->bytes + start, end - start);
                const char *kv[] = {"class", name.buf, "name", base_text.buf};
                cls->as_written = true;
                ck->owner = &cls->as_written;
                check__emit(ck, "P2S301", cls->name, kv, 2);
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
static bool check__stays_put(const Checker *ck, TSNode id)
{
    TSNode use = id, parent = ts_node_parent(id);
    if (check__type_is(parent, P2S_KIND_CLASS_DEFINITION))
        return ts_node_eq(p2s_child(parent, P2S_FIELD_NAME), id);
    if (check__type_is(parent, P2S_KIND_ATTRIBUTE) && ts_node_eq(p2s_child(parent, P2S_FIELD_ATTRIBUTE), id)) {
        use = parent;
        parent = ts_node_parent(use);
    }
    if (check__type_is(parent, P2S_KIND_ATTRIBUTE) && ts_node_eq(p2s_child(parent, P2S_FIELD_OBJECT), use))
        return check__text_is(ck, p2s_child(parent, P2S_FIELD_ATTRIBUTE), "apply", 5);
    return check__type_is(parent, P2S_KIND_ARGUMENT_LIST) && check__type_is(ts_node_parent(parent), P2S_KIND_CLASS_DEFINITION);
}

/* The first class left as written that the file passes around (an alias, an argument, a
 * container), so that an unresolved `.apply` may be its: SIZE_MAX when there is none. Every
 * identifier spelled like one counts, whatever it is bound to (the safe side). */
static size_t check__escaping(const Checker *ck, TSNode any)
{
    P2sNameSet names;
    p2s_nameset_init(&names);
    check__as_written_names(ck, &names);
    size_t found = SIZE_MAX;
    for (TSNode up = ts_node_parent(any); p2s_node_present(up); up = ts_node_parent(any))
        any = up;
    TSTreeCursor cursor = ts_tree_cursor_new(any);
    bool more = names.size > 0;
    while (more && found == SIZE_MAX) {
        TSNode node = ts_tree_cursor_current_node(&cursor);
        size_t index;
        if (check__type_is(node, P2S_KIND_IDENTIFIER) &&
            p2s_nameset_get(&names, ck->src->bytes + ts_node_start_byte(node),
                            ts_node_end_byte(node) - ts_node_start_byte(node), &index) &&
            !check__stays_put(ck, node))
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

/* A `.apply` the finder could not tie to a class (a parameter, `self.layer_cls`, a name from
 * another module): it goes through the runtime, which decides when it runs. Worth a note. It is
 * left as written when a class left as written may reach it (escaping: check__escaping). */
static void check__dynamic_site(Checker *ck, P2sApplySite *site, size_t escaping)
{
    P2sStrbuf object, name;
    p2s_strbuf_init(&object);
    p2s_strbuf_init(&name);
    p2s_node_flat_text(ck->src, p2s_child(site->attribute, P2S_FIELD_OBJECT), &object);
    ck->owner = &site->as_written;
    if (escaping == SIZE_MAX) {
        const char *kv[] = {"object", object.buf};
        check__emit(ck, "P2S300", p2s_node_span(site->attribute), kv, 1);
    } else {
        check__class_name(ck, escaping, &name);
        const char *kv[] = {"object", object.buf, "class", name.buf};
        site->as_written = true;
        check__emit(ck, "P2S302", p2s_node_span(site->attribute), kv, 2);
    }
    p2s_strbuf_release(&object);
    p2s_strbuf_release(&name);
}

/* Source order, so the report reads top to bottom; stable, so one line's diagnostics keep the
 * order the checks produced them in. */
/* Where a diagnostic sorts: at its start, but a class's P2S301 at the class's end, so the note
 * follows the findings in the class that caused it. */
static size_t check__sort_key(const Checker *ck, const P2sDiag *d)
{
    if (strcmp(d->code, "P2S301") != 0)
        return d->span.start;
    for (size_t i = 0; i < ck->found->classes.size; i++) {
        const P2sPyLayerClass *cls = &ck->found->classes.contents[i];
        if (cls->name.start == d->span.start)
            return ts_node_end_byte(cls->node);
    }
    return d->span.start;
}

static void check__sort(const Checker *ck, P2sDiagSink *sink)
{
    size_t *keys = p2s_calloc(sink->items.size + 1, sizeof *keys);
    for (size_t i = 0; i < sink->items.size; i++)
        keys[i] = check__sort_key(ck, &sink->items.contents[i]);
    for (size_t i = 1; i < sink->items.size; i++) {
        P2sDiag d = sink->items.contents[i];
        size_t key = keys[i], k = i;
        for (; k > 0 && keys[k - 1] > key; k--) {
            sink->items.contents[k] = sink->items.contents[k - 1];
            keys[k] = keys[k - 1];
        }
        sink->items.contents[k] = d;
        keys[k] = key;
    }
    p2s_free(keys);
}

size_t p2s_check(const P2sSource *src, P2sFindings *found,
                 const P2sRules *rules, P2sDiagSink *sink)
{
    P2sDiagSink local;
    p2s_diag_sink_init(&local);
    Checker ck;
    memset(&ck, 0, sizeof ck);
    ck.src = src;
    ck.found = found;
    ck.rules = rules;
    ck.sink = &local;
    check__index_classes(&ck);
    for (size_t i = 0; i < 2 * (found->classes.size + 1); i++)
        array_push(&ck.methods, NULL);
    for (size_t i = 0; i < found->classes.size; i++)
        if (found->classes.contents[i].is_pylayer)
            check__pylayer(&ck, i);
    check__note_as_written(&ck);
    check__inherit_as_written(&ck);
    size_t escaping = SIZE_MAX;
    for (size_t i = 0; i < found->sites.size; i++) {
        if (found->sites.contents[i].class_index == P2S_SITE_DYNAMIC) {
            escaping = check__escaping(&ck, found->sites.contents[i].attribute);
            break;
        }
    }
    for (size_t i = 0; i < found->sites.size; i++) {
        P2sApplySite *site = &found->sites.contents[i];
        if (site->class_index == P2S_SITE_DYNAMIC)
            check__dynamic_site(&ck, site, escaping);
        else
            check__site(&ck, site);
    }
    check__sort(&ck, &local);
    p2s_suppress_filter(&local, 0, src, rules);
    size_t errors = local.errors;
    p2s_diag_sink_move(sink, &local);
    array_delete(&ck.emitted);
    array_delete(&ck.subclassed);
    array_delete(&ck.applied);
    for (size_t i = 0; i < ck.methods.size; i++) {
        if (!ck.methods.contents[i])
            continue;
        check__method_release(ck.methods.contents[i]);
        p2s_free(ck.methods.contents[i]);
    }
    array_delete(&ck.methods);
    p2s_nameset_release(&ck.by_qualname);
    p2s_nameset_release(&ck.by_name);
    return errors;
}
