/* Unit tests: the export rounds of resolution across modules (resolve.h). Each case is data:
 * modules with what they export and miss at first and what they export once found again,
 * the external set the rounds leave, and which modules each round found again. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "resolve.h"

typedef struct {
    const char *module;
    const char *exports;       /* "A B=pkg.ops.B": own A, B re-exporting pkg.ops.B */
    const char *misses;        /* qualified names, space-separated; "q:b" (a base), "q:s" (a call)
                                  or "q:e" (an export) tags what it was missed for */
    const char *found_again;   /* exports once found again (its misses then cleared) */
    bool unread;               /* no facts: not read or not parsed */
    const char *export_misses; /* "B=pkg.ops.B": B missed pkg.ops.B; NULL for none */
    unsigned refind_for;       /* P2sMissWhere bits worth finding it again for; 0: every miss */
} ModuleCase;

typedef struct {
    const char *name;
    ModuleCase modules[4];
    const char *external;      /* the set after the rounds: "q=signature" in sorted order */
    const char *refinds;       /* per round, the modules found again: "b;c" */
} ResolveCase;

static const ResolveCase CASES[] = {
    {"own exports join the set qualified by their module; nothing is found again",
     {{"pkg.ops", "X Y", "", NULL, false, NULL, 0}, {"", "Top", "", NULL, false, NULL, 0}},
     "Top=ctx, Top.x pkg.ops.X=ctx, pkg.ops.X.x pkg.ops.Y=ctx, pkg.ops.Y.x", ""},
    {"a package that re-exports a class it missed is found again and takes the target's signature",
     {{"pkg", "", "pkg.ops.X", "X=pkg.ops.X", false, NULL, 0}, {"pkg.ops", "X", "", NULL, false, NULL, 0}},
     "pkg.X=ctx, pkg.ops.X.x pkg.ops.X=ctx, pkg.ops.X.x", "pkg"},
    {"a chain of subclasses across modules settles one round per link",
     {{"c", "", "b.B", "C", false, NULL, 0}, {"b", "", "a.A", "B", false, NULL, 0}, {"a", "A", "", NULL, false, NULL, 0}},
     "a.A=ctx, a.A.x b.B=ctx, b.B.x c.C=ctx, c.C.x", "b;c"},
    {"a module is found again only when it missed a name that appeared",
     {{"a", "A", "", NULL, false, NULL, 0}, {"b", "", "other.Y a.Z", "B", false, NULL, 0}},
     "a.A=ctx, a.A.x", ""},
    {"a module without facts neither exports nor is found again",
     {{"a", "A", "", NULL, false, NULL, 0}, {"b", "B", "a.A", "B2", true, NULL, 0}},
     "a.A=ctx, a.A.x", ""},
    {"a re-export of a name that appeared joins the set, its module not found again",
     {{"pkg", "", "pkg.ops.X:e", NULL, false, "X=pkg.ops.X", P2S_MISS_BASE}, {"pkg.ops", "X", "", NULL, false, NULL, 0}},
     "pkg.X=ctx, pkg.ops.X.x pkg.ops.X=ctx, pkg.ops.X.x", ""},
    {"a module found again only for its bases is not for a call",
     {{"a", "A", "", NULL, false, NULL, 0}, {"b", "", "a.A:s", "B", false, NULL, P2S_MISS_BASE},
      {"c", "", "a.A:b", "C", false, NULL, P2S_MISS_BASE}},
     "a.A=ctx, a.A.x c.C=ctx, c.C.x", "c"},
    {"a re-export listed before its target takes the target's signature all the same",
     {{"pkg", "X=pkg.ops.X", "", NULL, false, NULL, 0}, {"pkg.ops", "X", "", NULL, false, NULL, 0}},
     "pkg.X=ctx, pkg.ops.X.x pkg.ops.X=ctx, pkg.ops.X.x", ""},
};

/* A module as the rounds see it: its facts, rebuilt when it is found again. */
typedef struct {
    const ModuleCase *data;
    P2sStrings exports, targets;
    P2sSignatures signatures;
    P2sNameSet misses;
    P2sStrings export_miss_names, export_miss_targets;
} Module;

typedef struct {
    Module modules[4];
    size_t count;
    P2sStrbuf refinds;
} World;

/* forward's signature of an own export, told apart by its text: "ctx, Q.x". */
static P2sSignature *signature_of(const char *module, const char *name)
{
    P2sSignature *sig = p2s_calloc(1, sizeof *sig);
    P2sStrbuf text;
    p2s_strbuf_init(&text);
    p2s_strbuf_adds(&text, "ctx, ");
    p2s_resolve_qualify(&text, module, name);
    p2s_strbuf_adds(&text, ".x");
    sig->text = p2s_strbuf_detach(&text, NULL);
    return sig;
}

static void module_set(Module *m, const char *exports, const char *misses)
{
    p2s_strings_release(&m->exports);
    p2s_strings_release(&m->targets);
    p2s_signatures_release(&m->signatures);
    p2s_nameset_release(&m->misses);
    p2s_nameset_init(&m->misses);
    for (const char *p = exports; *p;) {
        size_t n = strcspn(p, " ");
        const char *eq = memchr(p, '=', n);
        size_t name_len = eq ? (size_t)(eq - p) : n;
        array_push(&m->exports, p2s_strndup(p, name_len));
        array_push(&m->targets, eq ? p2s_strndup(eq + 1, n - name_len - 1) : p2s_strdup(""));
        array_push(&m->signatures, eq ? NULL : signature_of(m->data->module, *array_back(&m->exports)));
        p += n + (p[n] == ' ');
    }
    for (const char *p = misses; *p;) {
        size_t n = strcspn(p, " ");
        const char *colon = memchr(p, ':', n);
        size_t where = !colon ? 0 : colon[1] == 'b' ? P2S_MISS_BASE : colon[1] == 's' ? P2S_MISS_SITE : P2S_MISS_EXPORT;
        p2s_nameset_put(&m->misses, p, colon ? (size_t)(colon - p) : n, where);
        p += n + (p[n] == ' ');
    }
}

static void module_set_export_misses(Module *m, const char *pairs)
{
    p2s_strings_release(&m->export_miss_names);
    p2s_strings_release(&m->export_miss_targets);
    for (const char *p = pairs ? pairs : ""; *p;) {
        size_t n = strcspn(p, " ");
        const char *eq = memchr(p, '=', n);
        array_push(&m->export_miss_names, p2s_strndup(p, (size_t)(eq - p)));
        array_push(&m->export_miss_targets, p2s_strndup(eq + 1, n - (size_t)(eq - p) - 1));
        p += n + (p[n] == ' ');
    }
}

static bool world_facts(void *ctx, size_t i, P2sModuleFacts *out)
{
    const Module *m = &((World *)ctx)->modules[i];
    if (m->data->unread)
        return false;
    *out = (P2sModuleFacts){m->data->module, &m->exports, &m->targets, &m->signatures, &m->misses, m->data->refind_for,
                            &m->export_miss_names, &m->export_miss_targets, NULL, NULL};
    return true;
}

static void world_refind(void *ctx, const size_t *indices, size_t n)
{
    World *w = ctx;
    if (w->refinds.len)
        p2s_strbuf_addch(&w->refinds, ';');
    for (size_t k = 0; k < n; k++) {
        Module *m = &w->modules[indices[k]];
        p2s_strbuf_addf(&w->refinds, "%s%s", k ? "," : "", m->data->module);
        module_set(m, m->data->found_again ? m->data->found_again : m->data->exports, "");
        module_set_export_misses(m, NULL);
    }
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The set as "q=signature ...", sorted by name. */
static void describe(const P2sExternals *external, P2sStrbuf *out)
{
    P2sStrings names = {0};
    for (size_t s = 0; s < external->index.capacity; s++)
        if (external->index.slots[s].name)
            array_push(&names, p2s_strdup(external->index.slots[s].name));
    qsort(names.contents, names.size, sizeof(char *), compare_names);
    for (size_t i = 0; i < names.size; i++) {
        const char *q = names.contents[i];
        const P2sExternal *e = p2s_externals_get(external, q, strlen(q));
        p2s_strbuf_addf(out, "%s%s=%s", i ? " " : "", q, e->signature ? e->signature->text : "");
    }
    p2s_strings_release(&names);
}

/* The modules of `cases` (up to 4, or to the first without a name) with their first facts. */
static void world_init(World *w, const ModuleCase *cases)
{
    memset(w, 0, sizeof *w);
    p2s_strbuf_init(&w->refinds);
    while (w->count < 4 && cases[w->count].module) {
        Module *m = &w->modules[w->count];
        m->data = &cases[w->count++];
        module_set(m, m->data->exports, m->data->misses);
        module_set_export_misses(m, m->data->export_misses);
    }
}

static void world_release(World *w)
{
    for (size_t i = 0; i < w->count; i++) {
        p2s_strings_release(&w->modules[i].exports);
        p2s_strings_release(&w->modules[i].targets);
        p2s_signatures_release(&w->modules[i].signatures);
        p2s_nameset_release(&w->modules[i].misses);
        p2s_strings_release(&w->modules[i].export_miss_names);
        p2s_strings_release(&w->modules[i].export_miss_targets);
    }
    p2s_strbuf_release(&w->refinds);
}

static void test_resolve_rounds_as_tabled(void **state)
{
    (void)state;
    for (size_t c = 0; c < sizeof CASES / sizeof *CASES; c++) {
        const ResolveCase *rc = &CASES[c];
        World w;
        world_init(&w, rc->modules);
        P2sExternals external;
        p2s_externals_init(&external);
        p2s_resolve_exports(&external, w.count, world_facts, world_refind, &w);
        P2sStrbuf got;
        p2s_strbuf_init(&got);
        describe(&external, &got);
        if (strcmp(got.buf, rc->external) != 0 || strcmp(w.refinds.buf, rc->refinds) != 0)
            fail_msg("%s:\n  set     %s\n  want    %s\n  refinds %s\n  want    %s", rc->name, got.buf, rc->external,
                     w.refinds.buf, rc->refinds);
        p2s_strbuf_release(&got);
        p2s_externals_release(&external);
        world_release(&w);
    }
}

/* Tree mode fills a set module by module as they are found, imports first
 * (p2s_resolve_add_exports): what it adds is what a round adds of those modules. */
static void test_resolve_add_exports_adds_what_a_round_adds(void **state)
{
    (void)state;
    static const ModuleCase modules[] = {{"pkg.ops", "X Y", "", NULL, false, NULL, 0},
                                         {"pkg", "X=pkg.ops.X", "", NULL, false, "Z=pkg.ops.Y W=pkg.ops.W", 0},
                                         {NULL, NULL, NULL, NULL, false, NULL, 0}};
    World w;
    world_init(&w, modules);
    P2sExternals one_by_one, rounds;
    p2s_externals_init(&one_by_one);
    p2s_externals_init(&rounds);
    for (size_t i = 0; i < w.count; i++) {
        P2sModuleFacts facts;
        assert_true(world_facts(&w, i, &facts));
        p2s_resolve_add_exports(&one_by_one, &facts);
    }
    p2s_resolve_exports(&rounds, w.count, world_facts, world_refind, &w);
    P2sStrbuf got, want;
    p2s_strbuf_init(&got);
    p2s_strbuf_init(&want);
    describe(&one_by_one, &got);
    describe(&rounds, &want);
    assert_string_equal(got.buf, "pkg.X=ctx, pkg.ops.X.x pkg.Z=ctx, pkg.ops.Y.x pkg.ops.X=ctx, pkg.ops.X.x "
                                 "pkg.ops.Y=ctx, pkg.ops.Y.x");
    assert_string_equal(got.buf, want.buf);
    p2s_strbuf_release(&got);
    p2s_strbuf_release(&want);
    p2s_externals_release(&one_by_one);
    p2s_externals_release(&rounds);
    world_release(&w);
}

/* Leaving as written across modules: a (Broken left as written), pkg re-exporting it, c
 * subclassing pkg's name (left as written once checked again), d using c's class, e using
 * only a fine class. */
typedef struct {
    const char *module, *exports, *as_written, *uses, *as_written_again;
} WrittenCase;

static const WrittenCase WRITTEN[] = {
    {"a", "Broken Fine", "a.Broken", "", NULL},
    {"pkg", "B=a.Broken", "", "", NULL},
    {"c", "C", "", "pkg.B", "c.C"},
    {"d", "", "", "c.C", ""},
    {"e", "", "", "a.Fine", ""},
};
#define WRITTEN_COUNT (sizeof WRITTEN / sizeof *WRITTEN)

typedef struct {
    Module modules[WRITTEN_COUNT];
    P2sStrings as_written[WRITTEN_COUNT], uses[WRITTEN_COUNT];
    P2sStrbuf again;
} WrittenWorld;

static void split_into(P2sStrings *out, const char *words)
{
    p2s_strings_release(out);
    for (const char *p = words; *p;) {
        size_t n = strcspn(p, " ");
        array_push(out, p2s_strndup(p, n));
        p += n + (p[n] == ' ');
    }
}

static bool written_facts(void *ctx, size_t i, P2sModuleFacts *out)
{
    WrittenWorld *w = ctx;
    const Module *m = &w->modules[i];
    *out = (P2sModuleFacts){0};
    out->module = WRITTEN[i].module;
    out->exports = &m->exports;
    out->export_targets = &m->targets;
    out->as_written = &w->as_written[i];
    out->uses = &w->uses[i];
    return true;
}

static void written_again(void *ctx, const size_t *indices, size_t n)
{
    WrittenWorld *w = ctx;
    p2s_strbuf_addf(&w->again, "%s", w->again.len ? ";" : "");
    for (size_t k = 0; k < n; k++) {
        const WrittenCase *c = &WRITTEN[indices[k]];
        p2s_strbuf_addf(&w->again, "%s%s", k ? "," : "", c->module);
        split_into(&w->as_written[indices[k]], c->as_written_again ? c->as_written_again : "");
    }
}

static void test_resolve_as_written_marks_across_modules_until_nothing_changes(void **state)
{
    (void)state;
    ModuleCase data[WRITTEN_COUNT];
    WrittenWorld w;
    memset(&w, 0, sizeof w);
    p2s_strbuf_init(&w.again);
    for (size_t i = 0; i < WRITTEN_COUNT; i++) {
        data[i] = (ModuleCase){WRITTEN[i].module, WRITTEN[i].exports, "", NULL, false, NULL, 0};
        w.modules[i].data = &data[i];
        module_set(&w.modules[i], WRITTEN[i].exports, "");
        split_into(&w.as_written[i], WRITTEN[i].as_written);
        split_into(&w.uses[i], WRITTEN[i].uses);
    }
    P2sExternals external;
    p2s_externals_init(&external);
    p2s_resolve_as_written(&external, WRITTEN_COUNT, written_facts, written_again, &w);
    P2sStrbuf marked;
    p2s_strbuf_init(&marked);
    for (const char *const *q = (const char *const[]){"a.Broken", "pkg.B", "c.C", "a.Fine", NULL}; *q; q++) {
        const P2sExternal *e = p2s_externals_get(&external, *q, strlen(*q));
        p2s_strbuf_addf(&marked, "%s%s", marked.len ? " " : "", e && e->as_written ? *q : "-");
    }
    /* c is checked again for pkg.B (a re-export of a.Broken), then d for c.C; e never */
    assert_string_equal(marked.buf, "a.Broken pkg.B c.C -");
    assert_string_equal(w.again.buf, "c;d");
    p2s_strbuf_release(&marked);
    p2s_externals_release(&external);
    for (size_t i = 0; i < WRITTEN_COUNT; i++) {
        p2s_strings_release(&w.modules[i].exports);
        p2s_strings_release(&w.modules[i].targets);
        p2s_signatures_release(&w.modules[i].signatures);
        p2s_nameset_release(&w.modules[i].misses);
        p2s_strings_release(&w.as_written[i]);
        p2s_strings_release(&w.uses[i]);
    }
    p2s_strbuf_release(&w.again);
}

static void test_resolve_qualify_leaves_a_top_level_name_bare(void **state)
{
    (void)state;
    P2sStrbuf q;
    p2s_strbuf_init(&q);
    p2s_resolve_qualify(&q, "", "X");
    assert_string_equal(q.buf, "X");
    p2s_strbuf_reset(&q);
    p2s_resolve_qualify(&q, "pkg.ops", "Outer.Inner");
    assert_string_equal(q.buf, "pkg.ops.Outer.Inner");
    p2s_strbuf_release(&q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_resolve_rounds_as_tabled),
        cmocka_unit_test(test_resolve_add_exports_adds_what_a_round_adds),
        cmocka_unit_test(test_resolve_as_written_marks_across_modules_until_nothing_changes),
        cmocka_unit_test(test_resolve_qualify_leaves_a_top_level_name_bare),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
