/* scope.c — find's walk: scopes, bindings, classes and `.apply` candidates; name resolution.
 *
 * One walk over the tree records every scope (module, class body, function, lambda) with the
 * names it binds, every class, and every `X.apply` attribute. Resolution then follows Python's
 * rules: a name is looked up in its own scope, then in enclosing scopes (class scopes are not
 * visible from nested functions). Code that runs at once (module level, class bodies) sees the
 * last binding before it; code that runs later (function bodies) needs every binding of the name
 * in the resolving scope to agree, so a rebound or shadowed name is never mistaken for PyLayer. */
#include "scope.h"

#include <string.h>

#include "parse.h"
#include "strbuf.h"

bool p2s_scope_text_is(const P2sFinder *f, TSNode node, const char *text)
{
    size_t n = strlen(text);
    uint32_t start = ts_node_start_byte(node), end = ts_node_end_byte(node);
    return end - start == n && memcmp(f->src->bytes + start, text, n) == 0;
}

bool p2s_scope_type_is(TSNode node, const char *type)
{
    return strcmp(ts_node_type(node), type) == 0;
}

static size_t scope__current_scope(const P2sFinder *f)
{
    return f->stack.contents[f->stack.size - 1];
}

size_t p2s_scope_new(P2sFinder *f, P2sScopeKind kind, TSNode owner, size_t parent)
{
    P2sScope s = {0};
    s.kind = kind;
    s.owner = owner;
    s.parent = parent;
    s.class_index = SIZE_MAX;
    array_push(&f->scopes, s);
    return f->scopes.size - 1;
}

static void scope__bind(P2sFinder *f, size_t scope, TSNode name, size_t position, P2sBindKind kind)
{
    P2sScope *sc = &f->scopes.contents[scope];
    P2sScopeBinding b = {0};
    b.name = p2s_node_span(name);
    b.position = position;
    b.kind = kind;
    const char *text = f->src->bytes + b.name.start;
    size_t len = b.name.end - b.name.start, index = sc->bindings.size;
    if (!p2s_nameset_get(&sc->last, text, len, &b.previous)) {
        b.previous = P2S_NO_BINDING;
        if (sc->names.capacity == 0)  /* most scopes bind a name or two */
            array_reserve(&sc->names, 2);
        array_push(&sc->names, index);
    }
    if (sc->bindings.capacity == 0)
        array_reserve(&sc->bindings, 2);
    p2s_nameset_put(&sc->last, text, len, index);
    array_push(&sc->bindings, b);
}

/* The last binding of name in a scope (P2S_NO_BINDING if none); follow `previous` for the others. */
size_t p2s_scope_last_binding(const P2sFinder *f, const P2sScope *sc, P2sSpan name)
{
    size_t index;
    return p2s_nameset_get(&sc->last, f->src->bytes + name.start, name.end - name.start, &index) ? index : P2S_NO_BINDING;
}

static void scope__bind_module(P2sFinder *f, size_t scope, TSNode name, size_t position,
                               const char *target, size_t target_len)
{
    scope__bind(f, scope, name, position, P2S_BIND_MODULE);
    P2sScopeBinding *b = array_back(&f->scopes.contents[scope].bindings);
    b->as.target = p2s_strndup(target, target_len);
}

/* Every identifier a target pattern binds (a, (b, c), [d, *e]); attributes and subscripts bind
 * nothing. */
static void scope__bind_pattern(P2sFinder *f, size_t scope, TSNode pattern, size_t position)
{
    const char *type = ts_node_type(pattern);
    if (strcmp(type, "identifier") == 0) {
        scope__bind(f, scope, pattern, position, P2S_BIND_OTHER);
        return;
    }
    if (strcmp(type, "attribute") == 0 || strcmp(type, "subscript") == 0)
        return;
    uint32_t n = ts_node_named_child_count(pattern);
    for (uint32_t i = 0; i < n; i++)
        scope__bind_pattern(f, scope, ts_node_named_child(pattern, i), position);
}

/* The absolute module an import names: `from ..ops import X` inside module pkg.sub.m names
 * pkg.ops. Without a module context a relative import keeps its dots and matches nothing. */
static void scope__import_prefix(const P2sFinder *f, TSNode module_name, P2sStrbuf *out)
{
    P2sSpan m = p2s_node_span(module_name);
    const char *text = f->src->bytes + m.start;
    size_t len = m.end - m.start;
    if (!p2s_scope_type_is(module_name, "relative_import") || !f->module || !f->module->name) {
        p2s_strbuf_add(out, text, len);
        return;
    }
    size_t dots = 0;
    while (dots < len && text[dots] == '.')
        dots++;
    const char *name = f->module->name;
    size_t keep = strlen(name);
    /* The package of a plain module is its parent; each dot past the first climbs one more. */
    size_t climbs = dots - 1 + (f->module->is_package ? 0 : 1);
    for (size_t i = 0; i < climbs; i++) {
        while (keep > 0 && name[keep - 1] != '.')
            keep--;
        if (keep > 0)
            keep--;
    }
    p2s_strbuf_add(out, name, keep);
    if (len > dots) {
        if (keep > 0)
            p2s_strbuf_addch(out, '.');
        p2s_strbuf_add(out, text + dots, len - dots);
    }
}

static void scope__bind_import(P2sFinder *f, TSNode stmt)
{
    size_t scope = scope__current_scope(f);
    size_t position = ts_node_end_byte(stmt);
    const char *bytes = f->src->bytes;
    bool from = p2s_scope_type_is(stmt, "import_from_statement");
    TSNode module = p2s_child(stmt, P2S_FIELD_MODULE_NAME);
    P2sStrbuf prefix;
    p2s_strbuf_init(&prefix);
    if (from) {
        scope__import_prefix(f, module, &prefix);
        p2s_strbuf_addch(&prefix, '.');
    }
    uint32_t n = ts_node_named_child_count(stmt);
    for (uint32_t i = 0; i < n; i++) {
        TSNode item = ts_node_named_child(stmt, i);
        if (from && ts_node_eq(item, module))
            continue;
        TSNode dotted = item, alias = {0};
        if (p2s_scope_type_is(item, "aliased_import")) {
            dotted = p2s_child(item, P2S_FIELD_NAME);
            alias = p2s_child(item, P2S_FIELD_ALIAS);
        } else if (!p2s_scope_type_is(item, "dotted_name")) {
            continue;  /* wildcard: binds names we cannot see */
        }
        P2sSpan d = p2s_node_span(dotted);
        P2sStrbuf target;
        p2s_strbuf_init(&target);
        p2s_strbuf_add(&target, prefix.buf, prefix.len);
        if (p2s_node_present(alias)) {
            p2s_strbuf_add(&target, bytes + d.start, d.end - d.start);
            scope__bind_module(f, scope, alias, position, target.buf, target.len);
        } else if (from) {
            p2s_strbuf_add(&target, bytes + d.start, d.end - d.start);
            scope__bind_module(f, scope, dotted, position, target.buf, target.len);
        } else {
            /* `import a.b.c` binds `a` to the package a. */
            TSNode head = ts_node_named_child(dotted, 0);
            P2sSpan h = p2s_node_span(head);
            scope__bind_module(f, scope, head, position, bytes + h.start, h.end - h.start);
        }
        p2s_strbuf_release(&target);
    }
    p2s_strbuf_release(&prefix);
}

static void scope__bind_assignment(P2sFinder *f, TSNode assign)
{
    size_t scope = scope__current_scope(f);
    size_t position = ts_node_end_byte(assign);
    TSNode left = p2s_child(assign, P2S_FIELD_LEFT);
    TSNode right = p2s_child(assign, P2S_FIELD_RIGHT);
    if (!p2s_node_present(left))
        return;
    if (p2s_scope_type_is(left, "identifier") && p2s_node_present(right) &&
        (p2s_scope_type_is(right, "identifier") || p2s_scope_type_is(right, "attribute")) &&
        p2s_scope_type_is(assign, "assignment")) {
        scope__bind(f, scope, left, position, P2S_BIND_ALIAS);
        array_back(&f->scopes.contents[scope].bindings)->as.alias = f->alias_values.size;
        array_push(&f->alias_values, right);
        return;
    }
    scope__bind_pattern(f, scope, left, position);
}

static void scope__bind_parameters(P2sFinder *f, size_t scope, TSNode params)
{
    uint32_t n = p2s_signature_param_count(params);
    for (uint32_t i = 0; i < n; i++)
        scope__bind_pattern(f, scope, p2s_signature_param_target(params, i), 0);
}

/* What the walk does with a node, by its symbol (looked up once per grammar symbol). */
typedef enum {
    KIND_OTHER, KIND_MODULE, KIND_IMPORT, KIND_CLASS, KIND_FUNCTION, KIND_LAMBDA, KIND_BLOCK,
    KIND_DECORATED, KIND_ASSIGNMENT, KIND_FOR, KIND_NAMED_EXPRESSION, KIND_AS_PATTERN,
    KIND_EXCEPT, KIND_GLOBAL, KIND_ATTRIBUTE,
    KIND_EXPRESSION,  /* binds nothing by itself; skipped when its text has no "apply" */
} NodeKind;

static const struct {
    const char *type;
    NodeKind kind;
} scope__kind_names[] = {
    {"module", KIND_MODULE}, {"import_statement", KIND_IMPORT}, {"import_from_statement", KIND_IMPORT},
    {"class_definition", KIND_CLASS}, {"function_definition", KIND_FUNCTION}, {"lambda", KIND_LAMBDA},
    {"block", KIND_BLOCK}, {"decorated_definition", KIND_DECORATED}, {"assignment", KIND_ASSIGNMENT},
    {"augmented_assignment", KIND_ASSIGNMENT}, {"for_statement", KIND_FOR},
    {"named_expression", KIND_NAMED_EXPRESSION}, {"as_pattern", KIND_AS_PATTERN},
    {"except_clause", KIND_EXCEPT}, {"global_statement", KIND_GLOBAL}, {"nonlocal_statement", KIND_GLOBAL},
    {"attribute", KIND_ATTRIBUTE},
    {"call", KIND_EXPRESSION}, {"argument_list", KIND_EXPRESSION}, {"string", KIND_EXPRESSION},
    {"concatenated_string", KIND_EXPRESSION}, {"binary_operator", KIND_EXPRESSION},
    {"comparison_operator", KIND_EXPRESSION}, {"boolean_operator", KIND_EXPRESSION},
    {"not_operator", KIND_EXPRESSION}, {"unary_operator", KIND_EXPRESSION}, {"subscript", KIND_EXPRESSION},
    {"list", KIND_EXPRESSION}, {"tuple", KIND_EXPRESSION}, {"dictionary", KIND_EXPRESSION},
    {"set", KIND_EXPRESSION}, {"list_comprehension", KIND_EXPRESSION},
    {"dictionary_comprehension", KIND_EXPRESSION}, {"set_comprehension", KIND_EXPRESSION},
    {"generator_expression", KIND_EXPRESSION}, {"conditional_expression", KIND_EXPRESSION},
    {"keyword_argument", KIND_EXPRESSION}, {"decorator", KIND_EXPRESSION}, {"await", KIND_EXPRESSION},
    /* parameter lists too: their names are bound from the node itself (scope__bind_parameters),
     * and only an `apply` in a default value matters to the walk */
    {"parameters", KIND_EXPRESSION}, {"lambda_parameters", KIND_EXPRESSION},
};

/* One node on the walk's path from the root. */
typedef struct {
    TSNode node;
    NodeKind kind;
    size_t opens;     /* class or function: the scope its body opens */
    bool pushed;      /* this node pushed a scope on the stack */
    bool skips;       /* the walk goes round what is under it (scope__skips) */
} Frame;

typedef Array(Frame) Frames;
typedef Array(unsigned char) KindTable;   /* grammar symbol -> NodeKind */

static void scope__kind_table(const TSLanguage *language, KindTable *kinds)
{
    uint32_t count = ts_language_symbol_count(language);
    for (uint32_t sym = 0; sym < count; sym++) {
        const char *name = ts_language_symbol_name(language, (TSSymbol)sym);
        unsigned char kind = KIND_OTHER;
        for (size_t i = 0; name && i < sizeof scope__kind_names / sizeof scope__kind_names[0]; i++)
            if (strcmp(name, scope__kind_names[i].type) == 0)
                kind = (unsigned char)scope__kind_names[i].kind;
        array_push(kinds, kind);
    }
}

/* The frame `up` levels above the top (0: the node itself), or NULL. */
static const Frame *scope__frame(const Frames *frames, size_t up)
{
    return up < frames->size ? &frames->contents[frames->size - 1 - up] : NULL;
}

static void scope__enter_class(P2sFinder *f, Frames *frames)
{
    Frame *self = &frames->contents[frames->size - 1];
    TSNode node = self->node;
    size_t outer = scope__current_scope(f);
    P2sPyLayerClass cls = {0};
    cls.forward_outputs = P2S_COUNT_UNKNOWN;
    TSNode name = p2s_child(node, P2S_FIELD_NAME);
    cls.node = node;
    cls.name = p2s_node_span(name);
    /* A builder can name the class from module scope only when it is a direct child of the
     * module, or of the body of such a class. */
    size_t up = 1;
    const Frame *parent = scope__frame(frames, up);
    if (parent && parent->kind == KIND_DECORATED)
        parent = scope__frame(frames, ++up);
    const Frame *owner = scope__frame(frames, up + 1);
    const P2sScope *os = &f->scopes.contents[outer];
    if (os->kind == P2S_SCOPE_MODULE && parent && parent->kind == KIND_MODULE) {
        cls.qualname = p2s_strndup(f->src->bytes + cls.name.start, cls.name.end - cls.name.start);
    } else if (os->kind == P2S_SCOPE_CLASS && parent && parent->kind == KIND_BLOCK && owner &&
               ts_node_eq(owner->node, os->owner) && f->out->classes.contents[os->class_index].qualname) {
        P2sStrbuf q;
        p2s_strbuf_init(&q);
        p2s_strbuf_addf(&q, "%s.%.*s", f->out->classes.contents[os->class_index].qualname,
                        (int)(cls.name.end - cls.name.start), f->src->bytes + cls.name.start);
        cls.qualname = p2s_strbuf_detach(&q, NULL);
    }
    array_push(&f->out->classes, cls);
    size_t index = f->out->classes.size - 1;
    scope__bind(f, outer, name, ts_node_end_byte(node), P2S_BIND_CLASS);
    array_back(&f->scopes.contents[outer].bindings)->as.class_index = index;
    size_t inner = p2s_scope_new(f, P2S_SCOPE_CLASS, node, outer);
    f->scopes.contents[inner].class_index = index;
    array_push(&f->class_scope, inner);
    array_push(&f->class_outer, outer);
    self->opens = inner;
}

static void scope__enter(P2sFinder *f, Frames *frames)
{
    Frame *self = &frames->contents[frames->size - 1];
    TSNode node = self->node;
    size_t scope = scope__current_scope(f);
    switch (self->kind) {
    case KIND_IMPORT:
        scope__bind_import(f, node);
        break;
    case KIND_CLASS:
        scope__enter_class(f, frames);
        break;
    case KIND_FUNCTION:
        scope__bind(f, scope, p2s_child(node, P2S_FIELD_NAME), ts_node_end_byte(node), P2S_BIND_OTHER);
        self->opens = p2s_scope_new(f, P2S_SCOPE_FUNCTION, node, scope);
        break;
    case KIND_LAMBDA: {
        size_t inner = p2s_scope_new(f, P2S_SCOPE_FUNCTION, node, scope);
        TSNode params = p2s_child(node, P2S_FIELD_PARAMETERS);
        if (p2s_node_present(params))
            scope__bind_parameters(f, inner, params);
        array_push(&f->stack, inner);
        self->pushed = true;
        break;
    }
    case KIND_BLOCK: {
        const Frame *parent = scope__frame(frames, 1);
        if (parent && (parent->kind == KIND_CLASS || parent->kind == KIND_FUNCTION) &&
            parent->opens != P2S_NO_SCOPE) {
            array_push(&f->stack, parent->opens);
            self->pushed = true;
        }
        /* A function's parameters matter only to what its body holds: a body the walk goes
         * round has no name looked up in it, so they are bound only when the body is walked. */
        if (parent && parent->kind == KIND_FUNCTION && !self->skips)
            scope__bind_parameters(f, parent->opens, p2s_child(parent->node, P2S_FIELD_PARAMETERS));
        break;
    }
    case KIND_ASSIGNMENT:
        scope__bind_assignment(f, node);
        break;
    case KIND_FOR:
        scope__bind_pattern(f, scope, p2s_child(node, P2S_FIELD_LEFT), ts_node_start_byte(node));
        break;
    case KIND_NAMED_EXPRESSION:
        scope__bind(f, scope, p2s_child(node, P2S_FIELD_NAME), ts_node_end_byte(node), P2S_BIND_OTHER);
        break;
    case KIND_AS_PATTERN:
    case KIND_EXCEPT: {
        TSNode alias = p2s_child(node, P2S_FIELD_ALIAS);
        if (p2s_node_present(alias))
            scope__bind_pattern(f, scope, alias,
                                self->kind == KIND_EXCEPT ? ts_node_start_byte(node) : ts_node_end_byte(node));
        break;
    }
    case KIND_GLOBAL: {
        /* `global X` in a function makes X a module name there: X is not resolved there. */
        uint32_t n = ts_node_named_child_count(node);
        for (uint32_t i = 0; i < n; i++)
            scope__bind(f, scope, ts_node_named_child(node, i), 0, P2S_BIND_OTHER);
        break;
    }
    case KIND_ATTRIBUTE: {
        TSNode attr = p2s_child(node, P2S_FIELD_ATTRIBUTE);
        if (p2s_node_present(attr) && p2s_scope_text_is(f, attr, "apply")) {
            P2sCandidate c = {node, scope__frame(frames, 1)->node, scope};
            array_push(&f->candidates, c);
        }
        break;
    }
    case KIND_OTHER:
    case KIND_MODULE:
    case KIND_DECORATED:
    case KIND_EXPRESSION:
        break;
    }
}

static bool scope__text_has(const P2sFinder *f, TSNode node, const char *word)
{
    uint32_t start = ts_node_start_byte(node), end = ts_node_end_byte(node);
    return memmem(f->src->bytes + start, end - start, word, strlen(word)) != NULL;
}

/* Subtrees the walk goes round, because nothing in them can matter:
 * - an expression (most of a file's nodes) whose text holds no "apply": it binds no name that
 *   matters and holds no `.apply` site (a walrus inside is not seen; it cannot make a class a
 *   PyLayer);
 * - a function body with neither "apply" nor "class" in it, nor one of the API words the source
 *   spells (f->api_words): its names are its own, and only a `.apply` site or a class (a PyLayer
 *   made in a function) in it could make them matter, or an import or use there of one of
 *   Paddle's PyLayer-backed APIs (find.c reads those bindings, and resolves such a use in the
 *   function's scope). */
static bool scope__skips(const P2sFinder *f, const Frames *frames)
{
    const Frame *frame = scope__frame(frames, 0);
    if (frame->kind == KIND_EXPRESSION)
        return !scope__text_has(f, frame->node, "apply");
    const Frame *parent = scope__frame(frames, 1);
    if (frame->kind != KIND_BLOCK || !parent || parent->kind != KIND_FUNCTION)
        return false;
    if (scope__text_has(f, frame->node, "apply") || scope__text_has(f, frame->node, "class"))
        return false;
    for (size_t i = 0; i < f->api_words.size; i++)
        if (scope__text_has(f, frame->node, f->api_words.contents[i]))
            return false;
    return true;
}

static void scope__push_frame(const P2sFinder *f, Frames *frames, TSNode node, const KindTable *kinds)
{
    TSSymbol sym = ts_node_symbol(node);
    Frame frame = {node, sym < kinds->size ? (NodeKind)kinds->contents[sym] : KIND_OTHER, P2S_NO_SCOPE, false, false};
    array_push(frames, frame);
    array_back(frames)->skips = scope__skips(f, frames);
}

/* Leaves the top node: its scope, if it pushed one, ends with it. */
static void scope__pop_frame(P2sFinder *f, Frames *frames)
{
    if (frames->contents[frames->size - 1].pushed)
        f->stack.size--;
    frames->size--;
}

void p2s_scope_walk(P2sFinder *f, TSNode root)
{
    KindTable kinds = {0};
    Frames frames = {0};
    scope__kind_table(ts_tree_language(f->tree), &kinds);
    TSTreeCursor cursor = ts_tree_cursor_new(root);
    scope__push_frame(f, &frames, root, &kinds);
    scope__enter(f, &frames);
    for (;;) {
        if (!scope__frame(&frames, 0)->skips && ts_tree_cursor_goto_first_child(&cursor)) {
            scope__push_frame(f, &frames, ts_tree_cursor_current_node(&cursor), &kinds);
            scope__enter(f, &frames);
            continue;
        }
        for (;;) {
            scope__pop_frame(f, &frames);
            if (ts_tree_cursor_goto_next_sibling(&cursor)) {
                scope__push_frame(f, &frames, ts_tree_cursor_current_node(&cursor), &kinds);
                scope__enter(f, &frames);
                break;
            }
            if (!ts_tree_cursor_goto_parent(&cursor))
                goto done;
        }
    }
done:
    ts_tree_cursor_delete(&cursor);
    array_delete(&frames);
    array_delete(&kinds);
}

void p2s_scope_meaning_release(P2sMeaning *m)
{
    p2s_free(m->qual);
    m->qual = NULL;
    m->kind = P2S_MEANING_NONE;
}

/* A PyLayer class that another module of the tree defines. */
bool p2s_scope_is_external(const P2sFinder *f, const P2sMeaning *m)
{
    if (m->kind != P2S_MEANING_QUAL || !f->module || !f->module->external)
        return false;
    size_t n = strlen(m->qual);
    if (p2s_externals_get(f->module->external, m->qual, n))
        return true;
    /* Should another module turn out to export this name, this one must be found again. */
    size_t where = 0;
    if (f->records_misses) {
        p2s_nameset_get(&f->out->misses, m->qual, n, &where);
        p2s_nameset_put(&f->out->misses, m->qual, n, where | f->miss_where);
    }
    return false;
}

bool p2s_scope_is_pylayer_base(const P2sFinder *f, const P2sMeaning *m)
{
    if (m->kind == P2S_MEANING_QUAL)
        return p2s_rules_is_pylayer_base(f->rules, m->qual, strlen(m->qual)) || p2s_scope_is_external(f, m);
    if (m->kind == P2S_MEANING_CLASS)
        return f->out->classes.contents[m->class_index].is_pylayer;
    return false;
}

static P2sMeaning scope__binding_meaning(const P2sFinder *f, const P2sScopeBinding *b, size_t scope, int depth)
{
    P2sMeaning m = {P2S_MEANING_NONE, NULL, 0};
    switch (b->kind) {
    case P2S_BIND_MODULE:
        m.kind = P2S_MEANING_QUAL;
        m.qual = p2s_strdup(b->as.target);
        break;
    case P2S_BIND_CLASS:
        m.kind = P2S_MEANING_CLASS;
        m.class_index = b->as.class_index;
        break;
    case P2S_BIND_ALIAS:
        if (depth < P2S_SCOPE_ALIAS_DEPTH) {
            TSNode value = f->alias_values.contents[b->as.alias];
            m = p2s_scope_resolve(f, value, scope, ts_node_start_byte(value), depth + 1);
        }
        break;
    case P2S_BIND_OTHER:
        break;
    }
    return m;
}

static bool scope__meanings_agree(const P2sFinder *f, const P2sMeaning *a, const P2sMeaning *b)
{
    if (a->kind != b->kind)
        return false;
    if (a->kind == P2S_MEANING_CLASS)
        return a->class_index == b->class_index;
    if (a->kind == P2S_MEANING_QUAL)
        return strcmp(a->qual, b->qual) == 0 ||
               (p2s_scope_is_pylayer_base(f, a) && p2s_scope_is_pylayer_base(f, b));
    return false;
}

/* Looks name up from scope at position (see the header comment for the rules). */
P2sMeaning p2s_scope_lookup(const P2sFinder *f, P2sSpan name, size_t scope, size_t position, int depth)
{
    P2sMeaning none = {P2S_MEANING_NONE, NULL, 0};
    bool from_function = false;
    for (size_t s = scope; s != P2S_NO_SCOPE; s = f->scopes.contents[s].parent) {
        const P2sScope *sc = &f->scopes.contents[s];
        if (sc->kind == P2S_SCOPE_CLASS && from_function)
            continue;
        bool every_binding = from_function || sc->kind == P2S_SCOPE_FUNCTION;
        const P2sScopeBinding *last = NULL;
        size_t count = 0;
        P2sMeaning agreed = none;
        bool agree = true;
        for (size_t i = p2s_scope_last_binding(f, sc, name); i != P2S_NO_BINDING; i = sc->bindings.contents[i].previous) {
            const P2sScopeBinding *b = &sc->bindings.contents[i];
            count++;
            if (!every_binding) {
                if (!last && b->position <= position)
                    last = b;
                continue;
            }
            P2sMeaning m = scope__binding_meaning(f, b, s, depth);
            if (count == 1) {
                agreed = m;
                continue;
            }
            if (!scope__meanings_agree(f, &agreed, &m))
                agree = false;
            p2s_scope_meaning_release(&m);
        }
        if (count > 0 && every_binding) {
            if (!agree)
                p2s_scope_meaning_release(&agreed);
            return agreed;
        }
        if (last)
            return scope__binding_meaning(f, last, s, depth);
        /* Not bound here before this point: a class body then reads the enclosing scope; the
         * module has nothing more to offer. */
        if (count > 0 && sc->kind == P2S_SCOPE_MODULE)
            return none;
        if (sc->kind == P2S_SCOPE_FUNCTION)
            from_function = true;
    }
    return none;
}

P2sMeaning p2s_scope_resolve(const P2sFinder *f, TSNode expr, size_t scope, size_t position, int depth)
{
    P2sMeaning none = {P2S_MEANING_NONE, NULL, 0};
    if (p2s_scope_type_is(expr, "identifier"))
        return p2s_scope_lookup(f, p2s_node_span(expr), scope, position, depth);
    if (p2s_scope_type_is(expr, "parenthesized_expression") && ts_node_named_child_count(expr) == 1)
        return p2s_scope_resolve(f, ts_node_named_child(expr, 0), scope, position, depth);
    if (!p2s_scope_type_is(expr, "attribute"))
        return none;
    TSNode object = p2s_child(expr, P2S_FIELD_OBJECT);
    TSNode attr = p2s_child(expr, P2S_FIELD_ATTRIBUTE);
    P2sMeaning m = p2s_scope_resolve(f, object, scope, position, depth);
    P2sSpan a = p2s_node_span(attr);
    if (m.kind == P2S_MEANING_QUAL) {
        P2sStrbuf q;
        p2s_strbuf_init(&q);
        p2s_strbuf_addf(&q, "%s.%.*s", m.qual, (int)(a.end - a.start), f->src->bytes + a.start);
        p2s_scope_meaning_release(&m);
        m.kind = P2S_MEANING_QUAL;
        m.qual = p2s_strbuf_detach(&q, NULL);
        return m;
    }
    if (m.kind == P2S_MEANING_CLASS) {
        /* Outer.Inner: a class bound in Outer's body. */
        size_t scope_index = f->class_scope.contents[m.class_index];
        const P2sScope *body = &f->scopes.contents[scope_index];
        size_t last = p2s_scope_last_binding(f, body, a);
        if (last == P2S_NO_BINDING)
            return none;
        return scope__binding_meaning(f, &body->bindings.contents[last], scope_index, depth);
    }
    return none;
}

/* Another module's PyLayer as the external set knows it, or NULL. */

void p2s_scope_release(P2sFinder *f)
{
    for (size_t i = 0; i < f->scopes.size; i++) {
        P2sScope *s = &f->scopes.contents[i];
        for (size_t k = 0; k < s->bindings.size; k++)
            if (s->bindings.contents[k].kind == P2S_BIND_MODULE)
                p2s_free(s->bindings.contents[k].as.target);
        array_delete(&s->bindings);
        p2s_nameset_release(&s->last);
        array_delete(&s->names);
    }
    array_delete(&f->scopes);
    array_delete(&f->stack);
    array_delete(&f->class_scope);
    array_delete(&f->class_outer);
    array_delete(&f->candidates);
    array_delete(&f->alias_values);
    array_delete(&f->api_words);
}
