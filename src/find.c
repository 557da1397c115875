/* find.c — scopes, bindings, PyLayer classes and `.apply` sites.
 *
 * One walk over the tree records every scope (module, class body, function, lambda) with the
 * names it binds, every class, and every `X.apply` attribute. Resolution then follows Python's
 * rules: a name is looked up in its own scope, then in enclosing scopes (class scopes are not
 * visible from nested functions). Code that runs at once (module level, class bodies) sees the
 * last binding before it; code that runs later (function bodies) needs every binding of the name
 * in the resolving scope to agree, so a rebound or shadowed name is never mistaken for PyLayer. */
#include "find.h"

#include <stdint.h>
#include <string.h>

#include "parse.h"
#include "strbuf.h"
#include "untranspile.h"

#define FIND_ALIAS_DEPTH 8
#define FIND_NO_SCOPE SIZE_MAX
#define FIND_NONE SIZE_MAX

typedef enum { SCOPE_MODULE, SCOPE_CLASS, SCOPE_FUNCTION } ScopeKind;
typedef enum { BIND_MODULE, BIND_CLASS, BIND_ALIAS, BIND_OTHER } BindKind;

/* A big module has a binding per name per scope, alive all through finding: kept small (what
 * only one kind needs shares one word; an alias's expression lives in Finder.alias_values). */
typedef struct {
    P2sSpan name;
    size_t previous;       /* the scope's binding of the same name before this one, or FIND_NONE */
    size_t position;       /* the name is bound once execution passes this offset */
    BindKind kind;
    union {
        char *target;      /* BIND_MODULE: the qualified name it stands for, owned */
        size_t class_index;  /* BIND_CLASS */
        size_t alias;      /* BIND_ALIAS: the expression it was assigned, in Finder.alias_values */
    } as;
} Binding;

typedef struct {
    ScopeKind kind;
    TSNode owner;          /* module, class_definition, function_definition or lambda */
    size_t parent;
    size_t class_index;    /* SCOPE_CLASS */
    Array(Binding) bindings;
    P2sNameSet last;       /* name -> its last binding, whose `previous` chain has the others */
    Array(size_t) names;   /* the first binding of each name, in source order */
} Scope;

typedef struct {
    TSNode attribute;
    TSNode parent;         /* kept from the walk: ts_node_parent walks down from the root */
    size_t scope;
} Candidate;

typedef struct {
    const P2sSource *src;
    const TSTree *tree;
    const P2sRules *rules;
    const P2sModule *module;
    P2sFindings *out;
    Array(Scope) scopes;
    Array(size_t) stack;           /* scopes being walked */
    Array(size_t) class_scope;     /* class index -> its scope */
    Array(size_t) class_outer;     /* class index -> the scope its name is bound in */
    Array(Candidate) candidates;
    Array(TSNode) alias_values;
    bool records_misses;           /* false while a phase whose misses the run never reads */
    bool records_export_misses;    /* exports' misses, kept by name too */
    P2sMissWhere miss_where;       /* what the phase that runs looks names up for */
} Finder;

typedef enum { MEANING_NONE, MEANING_QUAL, MEANING_CLASS } MeaningKind;

typedef struct {
    MeaningKind kind;
    char *qual;            /* MEANING_QUAL, owned */
    size_t class_index;    /* MEANING_CLASS */
} Meaning;

static bool find__text_is(const Finder *f, TSNode node, const char *text)
{
    size_t n = strlen(text);
    uint32_t start = ts_node_start_byte(node), end = ts_node_end_byte(node);
    return end - start == n && memcmp(f->src->bytes + start, text, n) == 0;
}

static bool find__type_is(TSNode node, const char *type)
{
    return strcmp(ts_node_type(node), type) == 0;
}

static size_t find__current_scope(const Finder *f)
{
    return f->stack.contents[f->stack.size - 1];
}

static size_t find__new_scope(Finder *f, ScopeKind kind, TSNode owner, size_t parent)
{
    Scope s = {0};
    s.kind = kind;
    s.owner = owner;
    s.parent = parent;
    s.class_index = SIZE_MAX;
    array_push(&f->scopes, s);
    return f->scopes.size - 1;
}

static void find__bind(Finder *f, size_t scope, TSNode name, size_t position, BindKind kind)
{
    Scope *sc = &f->scopes.contents[scope];
    Binding b = {0};
    b.name = p2s_node_span(name);
    b.position = position;
    b.kind = kind;
    const char *text = f->src->bytes + b.name.start;
    size_t len = b.name.end - b.name.start, index = sc->bindings.size;
    if (!p2s_nameset_get(&sc->last, text, len, &b.previous)) {
        b.previous = FIND_NONE;
        if (sc->names.capacity == 0)  /* most scopes bind a name or two */
            array_reserve(&sc->names, 2);
        array_push(&sc->names, index);
    }
    if (sc->bindings.capacity == 0)
        array_reserve(&sc->bindings, 2);
    p2s_nameset_put(&sc->last, text, len, index);
    array_push(&sc->bindings, b);
}

/* The last binding of name in a scope (FIND_NONE if none); follow `previous` for the others. */
static size_t find__last_binding(const Finder *f, const Scope *sc, P2sSpan name)
{
    size_t index;
    return p2s_nameset_get(&sc->last, f->src->bytes + name.start, name.end - name.start, &index) ? index : FIND_NONE;
}

static void find__bind_module(Finder *f, size_t scope, TSNode name, size_t position,
                              const char *target, size_t target_len)
{
    find__bind(f, scope, name, position, BIND_MODULE);
    Binding *b = array_back(&f->scopes.contents[scope].bindings);
    b->as.target = p2s_strndup(target, target_len);
}

/* Every identifier a target pattern binds (a, (b, c), [d, *e]); attributes and subscripts bind
 * nothing. */
static void find__bind_pattern(Finder *f, size_t scope, TSNode pattern, size_t position)
{
    const char *type = ts_node_type(pattern);
    if (strcmp(type, "identifier") == 0) {
        find__bind(f, scope, pattern, position, BIND_OTHER);
        return;
    }
    if (strcmp(type, "attribute") == 0 || strcmp(type, "subscript") == 0)
        return;
    uint32_t n = ts_node_named_child_count(pattern);
    for (uint32_t i = 0; i < n; i++)
        find__bind_pattern(f, scope, ts_node_named_child(pattern, i), position);
}

/* The absolute module an import names: `from ..ops import X` inside module pkg.sub.m names
 * pkg.ops. Without a module context a relative import keeps its dots and matches nothing. */
static void find__import_prefix(const Finder *f, TSNode module_name, P2sStrbuf *out)
{
    P2sSpan m = p2s_node_span(module_name);
    const char *text = f->src->bytes + m.start;
    size_t len = m.end - m.start;
    if (!find__type_is(module_name, "relative_import") || !f->module || !f->module->name) {
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

static void find__bind_import(Finder *f, TSNode stmt)
{
    size_t scope = find__current_scope(f);
    size_t position = ts_node_end_byte(stmt);
    const char *bytes = f->src->bytes;
    bool from = find__type_is(stmt, "import_from_statement");
    TSNode module = p2s_child(stmt, P2S_FIELD_MODULE_NAME);
    P2sStrbuf prefix;
    p2s_strbuf_init(&prefix);
    if (from) {
        find__import_prefix(f, module, &prefix);
        p2s_strbuf_addch(&prefix, '.');
    }
    uint32_t n = ts_node_named_child_count(stmt);
    for (uint32_t i = 0; i < n; i++) {
        TSNode item = ts_node_named_child(stmt, i);
        if (from && ts_node_eq(item, module))
            continue;
        TSNode dotted = item, alias = {0};
        if (find__type_is(item, "aliased_import")) {
            dotted = p2s_child(item, P2S_FIELD_NAME);
            alias = p2s_child(item, P2S_FIELD_ALIAS);
        } else if (!find__type_is(item, "dotted_name")) {
            continue;  /* wildcard: binds names we cannot see */
        }
        P2sSpan d = p2s_node_span(dotted);
        P2sStrbuf target;
        p2s_strbuf_init(&target);
        p2s_strbuf_add(&target, prefix.buf, prefix.len);
        if (p2s_node_present(alias)) {
            p2s_strbuf_add(&target, bytes + d.start, d.end - d.start);
            find__bind_module(f, scope, alias, position, target.buf, target.len);
        } else if (from) {
            p2s_strbuf_add(&target, bytes + d.start, d.end - d.start);
            find__bind_module(f, scope, dotted, position, target.buf, target.len);
        } else {
            /* `import a.b.c` binds `a` to the package a. */
            TSNode head = ts_node_named_child(dotted, 0);
            P2sSpan h = p2s_node_span(head);
            find__bind_module(f, scope, head, position, bytes + h.start, h.end - h.start);
        }
        p2s_strbuf_release(&target);
    }
    p2s_strbuf_release(&prefix);
}

static void find__bind_assignment(Finder *f, TSNode assign)
{
    size_t scope = find__current_scope(f);
    size_t position = ts_node_end_byte(assign);
    TSNode left = p2s_child(assign, P2S_FIELD_LEFT);
    TSNode right = p2s_child(assign, P2S_FIELD_RIGHT);
    if (!p2s_node_present(left))
        return;
    if (find__type_is(left, "identifier") && p2s_node_present(right) &&
        (find__type_is(right, "identifier") || find__type_is(right, "attribute")) &&
        find__type_is(assign, "assignment")) {
        find__bind(f, scope, left, position, BIND_ALIAS);
        array_back(&f->scopes.contents[scope].bindings)->as.alias = f->alias_values.size;
        array_push(&f->alias_values, right);
        return;
    }
    find__bind_pattern(f, scope, left, position);
}

static void find__bind_parameters(Finder *f, size_t scope, TSNode params)
{
    uint32_t n = p2s_signature_param_count(params);
    for (uint32_t i = 0; i < n; i++)
        find__bind_pattern(f, scope, p2s_signature_param_target(params, i), 0);
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
} find__kind_names[] = {
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
    /* parameter lists too: their names are bound from the node itself (find__bind_parameters),
     * and only an `apply` in a default value matters to the walk */
    {"parameters", KIND_EXPRESSION}, {"lambda_parameters", KIND_EXPRESSION},
};

/* One node on the walk's path from the root. */
typedef struct {
    TSNode node;
    NodeKind kind;
    size_t opens;     /* class or function: the scope its body opens */
    bool pushed;      /* this node pushed a scope on the stack */
    bool skips;       /* the walk goes round what is under it (find__skips) */
} Frame;

typedef Array(Frame) Frames;
typedef Array(unsigned char) KindTable;   /* grammar symbol -> NodeKind */

static void find__kind_table(const TSLanguage *language, KindTable *kinds)
{
    uint32_t count = ts_language_symbol_count(language);
    for (uint32_t sym = 0; sym < count; sym++) {
        const char *name = ts_language_symbol_name(language, (TSSymbol)sym);
        unsigned char kind = KIND_OTHER;
        for (size_t i = 0; name && i < sizeof find__kind_names / sizeof find__kind_names[0]; i++)
            if (strcmp(name, find__kind_names[i].type) == 0)
                kind = (unsigned char)find__kind_names[i].kind;
        array_push(kinds, kind);
    }
}

/* The frame `up` levels above the top (0: the node itself), or NULL. */
static const Frame *find__frame(const Frames *frames, size_t up)
{
    return up < frames->size ? &frames->contents[frames->size - 1 - up] : NULL;
}

static void find__enter_class(Finder *f, Frames *frames)
{
    Frame *self = &frames->contents[frames->size - 1];
    TSNode node = self->node;
    size_t outer = find__current_scope(f);
    P2sPyLayerClass cls = {0};
    cls.forward_outputs = P2S_COUNT_UNKNOWN;
    TSNode name = p2s_child(node, P2S_FIELD_NAME);
    cls.node = node;
    cls.name = p2s_node_span(name);
    /* A builder can name the class from module scope only when it is a direct child of the
     * module, or of the body of such a class. */
    size_t up = 1;
    const Frame *parent = find__frame(frames, up);
    if (parent && parent->kind == KIND_DECORATED)
        parent = find__frame(frames, ++up);
    const Frame *owner = find__frame(frames, up + 1);
    const Scope *os = &f->scopes.contents[outer];
    if (os->kind == SCOPE_MODULE && parent && parent->kind == KIND_MODULE) {
        cls.qualname = p2s_strndup(f->src->bytes + cls.name.start, cls.name.end - cls.name.start);
    } else if (os->kind == SCOPE_CLASS && parent && parent->kind == KIND_BLOCK && owner &&
               ts_node_eq(owner->node, os->owner) && f->out->classes.contents[os->class_index].qualname) {
        P2sStrbuf q;
        p2s_strbuf_init(&q);
        p2s_strbuf_addf(&q, "%s.%.*s", f->out->classes.contents[os->class_index].qualname,
                        (int)(cls.name.end - cls.name.start), f->src->bytes + cls.name.start);
        cls.qualname = p2s_strbuf_detach(&q, NULL);
    }
    array_push(&f->out->classes, cls);
    size_t index = f->out->classes.size - 1;
    find__bind(f, outer, name, ts_node_end_byte(node), BIND_CLASS);
    array_back(&f->scopes.contents[outer].bindings)->as.class_index = index;
    size_t inner = find__new_scope(f, SCOPE_CLASS, node, outer);
    f->scopes.contents[inner].class_index = index;
    array_push(&f->class_scope, inner);
    array_push(&f->class_outer, outer);
    self->opens = inner;
}

static void find__enter(Finder *f, Frames *frames)
{
    Frame *self = &frames->contents[frames->size - 1];
    TSNode node = self->node;
    size_t scope = find__current_scope(f);
    switch (self->kind) {
    case KIND_IMPORT:
        find__bind_import(f, node);
        break;
    case KIND_CLASS:
        find__enter_class(f, frames);
        break;
    case KIND_FUNCTION:
        find__bind(f, scope, p2s_child(node, P2S_FIELD_NAME), ts_node_end_byte(node), BIND_OTHER);
        self->opens = find__new_scope(f, SCOPE_FUNCTION, node, scope);
        break;
    case KIND_LAMBDA: {
        size_t inner = find__new_scope(f, SCOPE_FUNCTION, node, scope);
        TSNode params = p2s_child(node, P2S_FIELD_PARAMETERS);
        if (p2s_node_present(params))
            find__bind_parameters(f, inner, params);
        array_push(&f->stack, inner);
        self->pushed = true;
        break;
    }
    case KIND_BLOCK: {
        const Frame *parent = find__frame(frames, 1);
        if (parent && (parent->kind == KIND_CLASS || parent->kind == KIND_FUNCTION) &&
            parent->opens != FIND_NO_SCOPE) {
            array_push(&f->stack, parent->opens);
            self->pushed = true;
        }
        /* A function's parameters matter only to what its body holds: a body the walk goes
         * round has no name looked up in it, so they are bound only when the body is walked. */
        if (parent && parent->kind == KIND_FUNCTION && !self->skips)
            find__bind_parameters(f, parent->opens, p2s_child(parent->node, P2S_FIELD_PARAMETERS));
        break;
    }
    case KIND_ASSIGNMENT:
        find__bind_assignment(f, node);
        break;
    case KIND_FOR:
        find__bind_pattern(f, scope, p2s_child(node, P2S_FIELD_LEFT), ts_node_start_byte(node));
        break;
    case KIND_NAMED_EXPRESSION:
        find__bind(f, scope, p2s_child(node, P2S_FIELD_NAME), ts_node_end_byte(node), BIND_OTHER);
        break;
    case KIND_AS_PATTERN:
    case KIND_EXCEPT: {
        TSNode alias = p2s_child(node, P2S_FIELD_ALIAS);
        if (p2s_node_present(alias))
            find__bind_pattern(f, scope, alias,
                               self->kind == KIND_EXCEPT ? ts_node_start_byte(node) : ts_node_end_byte(node));
        break;
    }
    case KIND_GLOBAL: {
        /* `global X` in a function makes X a module name there: X is not resolved there. */
        uint32_t n = ts_node_named_child_count(node);
        for (uint32_t i = 0; i < n; i++)
            find__bind(f, scope, ts_node_named_child(node, i), 0, BIND_OTHER);
        break;
    }
    case KIND_ATTRIBUTE: {
        TSNode attr = p2s_child(node, P2S_FIELD_ATTRIBUTE);
        if (p2s_node_present(attr) && find__text_is(f, attr, "apply")) {
            Candidate c = {node, find__frame(frames, 1)->node, scope};
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

static bool find__text_has(const Finder *f, TSNode node, const char *word)
{
    uint32_t start = ts_node_start_byte(node), end = ts_node_end_byte(node);
    return memmem(f->src->bytes + start, end - start, word, strlen(word)) != NULL;
}

/* Subtrees the walk goes round, because nothing in them can matter:
 * - an expression (most of a file's nodes) whose text holds no "apply": it binds no name that
 *   matters and holds no `.apply` site (a walrus inside is not seen; it cannot make a class a
 *   PyLayer);
 * - a function body with neither "apply" nor "class" in it: its names are its own, and only a
 *   `.apply` site or a class (a PyLayer made in a function) in it could make them matter. */
static bool find__skips(const Finder *f, const Frames *frames)
{
    const Frame *frame = find__frame(frames, 0);
    if (frame->kind == KIND_EXPRESSION)
        return !find__text_has(f, frame->node, "apply");
    const Frame *parent = find__frame(frames, 1);
    if (frame->kind == KIND_BLOCK && parent && parent->kind == KIND_FUNCTION)
        return !find__text_has(f, frame->node, "apply") && !find__text_has(f, frame->node, "class");
    return false;
}

static void find__push_frame(const Finder *f, Frames *frames, TSNode node, const KindTable *kinds)
{
    TSSymbol sym = ts_node_symbol(node);
    Frame frame = {node, sym < kinds->size ? (NodeKind)kinds->contents[sym] : KIND_OTHER, FIND_NO_SCOPE, false, false};
    array_push(frames, frame);
    array_back(frames)->skips = find__skips(f, frames);
}

/* Leaves the top node: its scope, if it pushed one, ends with it. */
static void find__pop_frame(Finder *f, Frames *frames)
{
    if (frames->contents[frames->size - 1].pushed)
        f->stack.size--;
    frames->size--;
}

static void find__walk(Finder *f, TSNode root)
{
    KindTable kinds = {0};
    Frames frames = {0};
    find__kind_table(ts_tree_language(f->tree), &kinds);
    TSTreeCursor cursor = ts_tree_cursor_new(root);
    find__push_frame(f, &frames, root, &kinds);
    find__enter(f, &frames);
    for (;;) {
        if (!find__frame(&frames, 0)->skips && ts_tree_cursor_goto_first_child(&cursor)) {
            find__push_frame(f, &frames, ts_tree_cursor_current_node(&cursor), &kinds);
            find__enter(f, &frames);
            continue;
        }
        for (;;) {
            find__pop_frame(f, &frames);
            if (ts_tree_cursor_goto_next_sibling(&cursor)) {
                find__push_frame(f, &frames, ts_tree_cursor_current_node(&cursor), &kinds);
                find__enter(f, &frames);
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

static void find__meaning_release(Meaning *m)
{
    p2s_free(m->qual);
    m->qual = NULL;
    m->kind = MEANING_NONE;
}

static Meaning find__resolve(const Finder *f, TSNode expr, size_t scope, size_t position, int depth);

/* A PyLayer class that another module of the tree defines. */
static bool find__is_external(const Finder *f, const Meaning *m)
{
    if (m->kind != MEANING_QUAL || !f->module || !f->module->external)
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

static bool find__meaning_is_pylayer_base(const Finder *f, const Meaning *m)
{
    if (m->kind == MEANING_QUAL)
        return p2s_rules_is_pylayer_base(f->rules, m->qual, strlen(m->qual)) || find__is_external(f, m);
    if (m->kind == MEANING_CLASS)
        return f->out->classes.contents[m->class_index].is_pylayer;
    return false;
}

static Meaning find__binding_meaning(const Finder *f, const Binding *b, size_t scope, int depth)
{
    Meaning m = {MEANING_NONE, NULL, 0};
    switch (b->kind) {
    case BIND_MODULE:
        m.kind = MEANING_QUAL;
        m.qual = p2s_strdup(b->as.target);
        break;
    case BIND_CLASS:
        m.kind = MEANING_CLASS;
        m.class_index = b->as.class_index;
        break;
    case BIND_ALIAS:
        if (depth < FIND_ALIAS_DEPTH) {
            TSNode value = f->alias_values.contents[b->as.alias];
            m = find__resolve(f, value, scope, ts_node_start_byte(value), depth + 1);
        }
        break;
    case BIND_OTHER:
        break;
    }
    return m;
}

static bool find__meanings_agree(const Finder *f, const Meaning *a, const Meaning *b)
{
    if (a->kind != b->kind)
        return false;
    if (a->kind == MEANING_CLASS)
        return a->class_index == b->class_index;
    if (a->kind == MEANING_QUAL)
        return strcmp(a->qual, b->qual) == 0 ||
               (find__meaning_is_pylayer_base(f, a) && find__meaning_is_pylayer_base(f, b));
    return false;
}

/* Looks name up from scope at position (see the header comment for the rules). */
static Meaning find__lookup(const Finder *f, P2sSpan name, size_t scope, size_t position, int depth)
{
    Meaning none = {MEANING_NONE, NULL, 0};
    bool from_function = false;
    for (size_t s = scope; s != FIND_NO_SCOPE; s = f->scopes.contents[s].parent) {
        const Scope *sc = &f->scopes.contents[s];
        if (sc->kind == SCOPE_CLASS && from_function)
            continue;
        bool every_binding = from_function || sc->kind == SCOPE_FUNCTION;
        const Binding *last = NULL;
        size_t count = 0;
        Meaning agreed = none;
        bool agree = true;
        for (size_t i = find__last_binding(f, sc, name); i != FIND_NONE; i = sc->bindings.contents[i].previous) {
            const Binding *b = &sc->bindings.contents[i];
            count++;
            if (!every_binding) {
                if (!last && b->position <= position)
                    last = b;
                continue;
            }
            Meaning m = find__binding_meaning(f, b, s, depth);
            if (count == 1) {
                agreed = m;
                continue;
            }
            if (!find__meanings_agree(f, &agreed, &m))
                agree = false;
            find__meaning_release(&m);
        }
        if (count > 0 && every_binding) {
            if (!agree)
                find__meaning_release(&agreed);
            return agreed;
        }
        if (last)
            return find__binding_meaning(f, last, s, depth);
        /* Not bound here before this point: a class body then reads the enclosing scope; the
         * module has nothing more to offer. */
        if (count > 0 && sc->kind == SCOPE_MODULE)
            return none;
        if (sc->kind == SCOPE_FUNCTION)
            from_function = true;
    }
    return none;
}

static Meaning find__resolve(const Finder *f, TSNode expr, size_t scope, size_t position, int depth)
{
    Meaning none = {MEANING_NONE, NULL, 0};
    if (find__type_is(expr, "identifier"))
        return find__lookup(f, p2s_node_span(expr), scope, position, depth);
    if (find__type_is(expr, "parenthesized_expression") && ts_node_named_child_count(expr) == 1)
        return find__resolve(f, ts_node_named_child(expr, 0), scope, position, depth);
    if (!find__type_is(expr, "attribute"))
        return none;
    TSNode object = p2s_child(expr, P2S_FIELD_OBJECT);
    TSNode attr = p2s_child(expr, P2S_FIELD_ATTRIBUTE);
    Meaning m = find__resolve(f, object, scope, position, depth);
    P2sSpan a = p2s_node_span(attr);
    if (m.kind == MEANING_QUAL) {
        P2sStrbuf q;
        p2s_strbuf_init(&q);
        p2s_strbuf_addf(&q, "%s.%.*s", m.qual, (int)(a.end - a.start), f->src->bytes + a.start);
        find__meaning_release(&m);
        m.kind = MEANING_QUAL;
        m.qual = p2s_strbuf_detach(&q, NULL);
        return m;
    }
    if (m.kind == MEANING_CLASS) {
        /* Outer.Inner: a class bound in Outer's body. */
        size_t scope_index = f->class_scope.contents[m.class_index];
        const Scope *body = &f->scopes.contents[scope_index];
        size_t last = find__last_binding(f, body, a);
        if (last == FIND_NONE)
            return none;
        return find__binding_meaning(f, &body->bindings.contents[last], scope_index, depth);
    }
    return none;
}

/* Another module's PyLayer as the external set knows it, or NULL. */
static const P2sExternal *find__external(const Finder *f, const Meaning *m)
{
    if (m->kind != MEANING_QUAL || !f->module || !f->module->external)
        return NULL;
    return p2s_externals_get(f->module->external, m->qual, strlen(m->qual));
}

/* Another module's PyLayer that is left as written (tree mode). */
static bool find__is_as_written(const Finder *f, const Meaning *m)
{
    const P2sExternal *e = find__external(f, m);
    return e && e->as_written;
}

/* Remembers that this module depends on another module's PyLayer (for --depfile, and a site's
 * qualified name); its index in externals_used, or SIZE_MAX when m is none. */
static size_t find__note_external(Finder *f, const Meaning *m)
{
    if (!find__is_external(f, m))
        return SIZE_MAX;
    for (size_t i = 0; i < f->out->externals_used.size; i++)
        if (strcmp(f->out->externals_used.contents[i], m->qual) == 0)
            return i;
    array_push(&f->out->externals_used, p2s_strdup(m->qual));
    return f->out->externals_used.size - 1;
}

/* Marks PyLayer classes until nothing changes: a base may be a PyLayer found on a later pass. */
static void find__mark_pylayers(Finder *f)
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
                Meaning m = find__resolve(f, base, f->class_outer.contents[i], ts_node_start_byte(cls->node), 0);
                if (find__meaning_is_pylayer_base(f, &m) && !(m.kind == MEANING_CLASS && m.class_index == i)) {
                    cls->is_pylayer = true;
                    changed = true;
                    find__note_external(f, &m);
                }
                find__meaning_release(&m);
            }
        }
    }
}

/* A PyLayer derived from another module's PyLayer left as written is left as written too. */
static void find__inherit_as_written(Finder *f)
{
    for (size_t i = 0; i < f->out->classes.size; i++) {
        P2sPyLayerClass *cls = &f->out->classes.contents[i];
        TSNode bases = p2s_child(cls->node, P2S_FIELD_SUPERCLASSES);
        uint32_t n = cls->is_pylayer && p2s_node_present(bases) ? ts_node_named_child_count(bases) : 0;
        for (uint32_t k = 0; k < n && !cls->as_written; k++) {
            TSNode base = ts_node_named_child(bases, k);
            Meaning m = find__resolve(f, base, f->class_outer.contents[i], ts_node_start_byte(cls->node), 0);
            if (find__is_as_written(f, &m)) {
                cls->as_written = true;
                cls->as_written_base = p2s_node_span(base);
            }
            find__meaning_release(&m);
        }
    }
}

/* The function_definition `name` directly in the class body (the last one), or NULL node;
 * *stmt receives its statement there (its decorated_definition, or itself); *only_staticmethod
 * tells whether its decorators are exactly `@staticmethod`. */
static TSNode find__method(const Finder *f, TSNode cls, const char *name, TSNode *stmt_out, bool *only_staticmethod)
{
    TSNode found = {0};
    TSNode body = p2s_child(cls, P2S_FIELD_BODY);
    uint32_t n = ts_node_named_child_count(body);
    for (uint32_t i = 0; i < n; i++) {
        TSNode stmt = ts_node_named_child(body, i);
        TSNode def = stmt;
        if (find__type_is(stmt, "decorated_definition"))
            def = p2s_child(stmt, P2S_FIELD_DEFINITION);
        if (!find__type_is(def, "function_definition") ||
            !find__text_is(f, p2s_child(def, P2S_FIELD_NAME), name))
            continue;
        found = def;
        *stmt_out = stmt;
        uint32_t decorators = 0;
        bool static_seen = false;
        if (find__type_is(stmt, "decorated_definition")) {
            uint32_t m = ts_node_named_child_count(stmt);
            for (uint32_t k = 0; k < m; k++) {
                TSNode dec = ts_node_named_child(stmt, k);
                if (!find__type_is(dec, "decorator"))
                    continue;
                decorators++;
                TSNode expr = ts_node_named_child(dec, 0);
                if (find__text_is(f, expr, "staticmethod"))
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
static TSNode find__inherited_method(const Finder *f, size_t index, const char *name, TSNode *stmt,
                                     size_t *owner, bool *plain, int depth)
{
    const P2sPyLayerClass *cls = &f->out->classes.contents[index];
    TSNode own = find__method(f, cls->node, name, stmt, plain);
    if (p2s_node_present(own))
        *owner = index;
    if (p2s_node_present(own) || depth >= FIND_ALIAS_DEPTH)
        return own;
    TSNode bases = p2s_child(cls->node, P2S_FIELD_SUPERCLASSES);
    uint32_t n = p2s_node_present(bases) ? ts_node_named_child_count(bases) : 0;
    for (uint32_t k = 0; k < n; k++) {
        Meaning m = find__resolve(f, ts_node_named_child(bases, k), f->class_outer.contents[index],
                                  ts_node_start_byte(cls->node), 0);
        TSNode got = {0};
        if (m.kind == MEANING_CLASS && m.class_index != index)
            got = find__inherited_method(f, m.class_index, name, stmt, owner, plain, depth + 1);
        find__meaning_release(&m);
        if (p2s_node_present(got))
            return got;
    }
    return own;
}

/* True when the module binds this name exactly once, so `Name` at module end is the class. */
static bool find__bound_once_at_module(const Finder *f, P2sSpan name)
{
    const Scope *module = &f->scopes.contents[0];
    size_t last = find__last_binding(f, module, name);
    return last != FIND_NONE && module->bindings.contents[last].previous == FIND_NONE;
}

/* A parameter name that would shadow what the builder needs (the class, the runtime). */
static bool find__params_shadow(const Finder *f, const P2sSignature *sig, P2sSpan head)
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

static void find__decide_builder(Finder *f, size_t index)
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
static bool find__uses_pylayer(const Finder *f)
{
    if (f->out->pylayer_count > 0)
        return true;
    for (size_t s = 0; s < f->scopes.size; s++) {
        const Scope *sc = &f->scopes.contents[s];
        for (size_t i = 0; i < sc->bindings.size; i++) {
            const Binding *b = &sc->bindings.contents[i];
            if (b->kind != BIND_MODULE)
                continue;
            Meaning m = {MEANING_QUAL, b->as.target, 0};
            if (find__meaning_is_pylayer_base(f, &m))
                return true;
        }
    }
    return false;
}

static bool find__is_instance_of_local_class(const Finder *f, TSNode object, size_t scope)
{
    if (!find__type_is(object, "call"))
        return false;
    TSNode callee = p2s_child(object, P2S_FIELD_FUNCTION);
    Meaning m = find__resolve(f, callee, scope, ts_node_start_byte(object), 0);
    bool instance = m.kind == MEANING_CLASS;
    find__meaning_release(&m);
    return instance;
}

static void find__resolve_sites(Finder *f)
{
    /* Read only for a call of no known class: its imports are looked up only then. */
    enum { UNKNOWN, NO, YES } uses_pylayer = UNKNOWN;
    for (size_t i = 0; i < f->candidates.size; i++) {
        const Candidate *c = &f->candidates.contents[i];
        if (find__is_assignment_target(c->attribute, c->parent))
            continue;
        TSNode object = p2s_child(c->attribute, P2S_FIELD_OBJECT);
        Meaning m = find__resolve(f, object, c->scope, ts_node_start_byte(c->attribute), 0);
        bool local = m.kind == MEANING_CLASS && f->out->classes.contents[m.class_index].is_pylayer;
        bool external = !local && find__is_external(f, &m);
        /* A class of this file that is no PyLayer, or an instance of one, has an apply of
         * its own: left alone. */
        /* The runtime's own `_p2s.apply` (this tool's output) is no PyLayer call either. */
        bool runtime = m.kind == MEANING_QUAL && strcmp(m.qual, "pylayer2static_runtime") == 0;
        bool unknown = !local && !external && !runtime && m.kind != MEANING_CLASS;
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
        find__meaning_release(&m);
    }
}

static bool find__is_docstring(TSNode stmt)
{
    return find__type_is(stmt, "expression_statement") && ts_node_named_child_count(stmt) == 1 &&
           find__type_is(ts_node_named_child(stmt, 0), "string");
}

static bool find__is_simple_statement(TSNode stmt)
{
    static const char *const compound[] = {
        "if_statement", "for_statement", "while_statement", "try_statement", "with_statement",
        "function_definition", "class_definition", "decorated_definition", "match_statement",
    };
    for (size_t i = 0; i < sizeof compound / sizeof compound[0]; i++)
        if (find__type_is(stmt, compound[i]))
            return false;
    return true;
}

/* Where the runtime import goes: joined after the first module-level import that follows the
 * docstring and `from __future__` imports; else after the last of those; else joined before the
 * first statement when that is a simple one; else on a line of its own before it. */
static void find__runtime_import_point(Finder *f, TSNode root)
{
    uint32_t n = ts_node_named_child_count(root);
    TSNode last_header = {0};
    for (uint32_t i = 0; i < n; i++) {
        TSNode stmt = ts_node_named_child(root, i);
        if (find__type_is(stmt, "comment"))
            continue;
        if (find__type_is(stmt, "future_import_statement") ||
            (!p2s_node_present(last_header) && find__is_docstring(stmt))) {
            last_header = stmt;
            continue;
        }
        if (find__type_is(stmt, "import_statement") || find__type_is(stmt, "import_from_statement")) {
            f->out->runtime_import_at = ts_node_end_byte(stmt);
            return;
        }
        if (p2s_node_present(last_header))
            break;
        f->out->runtime_import_at = ts_node_start_byte(stmt);
        f->out->runtime_import = find__is_simple_statement(stmt) ? P2S_IMPORT_JOIN_BEFORE : P2S_IMPORT_OWN_LINE;
        return;
    }
    if (p2s_node_present(last_header)) {
        f->out->runtime_import_at = ts_node_end_byte(last_header);
    } else {
        f->out->runtime_import_at = 0;
        f->out->runtime_import = P2S_IMPORT_OWN_LINE;
    }
}

/* Module-level names that stand for a PyLayer class at the end of the module. */
static void find__exports(Finder *f)
{
    const Scope *module = &f->scopes.contents[0];
    for (size_t i = 0; i < module->names.size; i++) {
        P2sSpan name = module->bindings.contents[module->names.contents[i]].name;
        const char *text = f->src->bytes + name.start;
        Meaning m = find__lookup(f, name, 0, f->src->len, 0);
        bool local = m.kind == MEANING_CLASS && f->out->classes.contents[m.class_index].is_pylayer;
        bool external = !local && find__is_external(f, &m);
        if (!local && !external && f->records_export_misses && m.kind == MEANING_QUAL && f->module &&
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
        find__meaning_release(&m);
    }
}

void p2s_find(const P2sSource *src, TSTree *tree, const P2sRules *rules, const P2sModule *module,
              P2sFindings *out)
{
    Finder f = {0};
    memset(out, 0, sizeof *out);
    f.src = src;
    f.tree = tree;
    f.rules = rules;
    f.module = module;
    f.out = out;
    f.records_misses = true;
    f.miss_where = P2S_MISS_BASE;
    out->already_transpiled = p2s_untranspile_has_marker(src);
    TSNode root = ts_tree_root_node(tree);
    size_t module_scope = find__new_scope(&f, SCOPE_MODULE, root, FIND_NO_SCOPE);
    array_push(&f.stack, module_scope);
    find__walk(&f, root);
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
    find__runtime_import_point(&f, root);
    /* The findings outlive the scopes (check and plan read them): no spare capacity. */
    array_shrink(&out->classes);
    array_shrink(&out->sites);

    for (size_t i = 0; i < f.scopes.size; i++) {
        Scope *s = &f.scopes.contents[i];
        for (size_t k = 0; k < s->bindings.size; k++)
            if (s->bindings.contents[k].kind == BIND_MODULE)
                p2s_free(s->bindings.contents[k].as.target);
        array_delete(&s->bindings);
        p2s_nameset_release(&s->last);
        array_delete(&s->names);
    }
    array_delete(&f.scopes);
    array_delete(&f.stack);
    array_delete(&f.class_scope);
    array_delete(&f.class_outer);
    array_delete(&f.candidates);
    array_delete(&f.alias_values);
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
