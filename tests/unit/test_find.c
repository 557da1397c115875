/* Unit tests: PyLayer detection and `.apply` resolution through scopes and import forms. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include <stdlib.h>

#include "alloc.h"
#include "externals.h"
#include "find.h"
#include "parse.h"

typedef struct {
    const char *name;
    const char *source;
    const char *pylayers;   /* names of PyLayer classes, in order, each followed by '!' when it gets a builder */
    size_t sites;
} FindCase;

#define BODY_IN(ind) ind "@staticmethod\n" ind "def forward(ctx, x):\n" ind "    return x\n" \
                     ind "@staticmethod\n" ind "def backward(ctx, g):\n" ind "    return g\n"
#define BODY BODY_IN("    ")

static const FindCase cases[] = {
    {"from_import", "from paddle.autograd import PyLayer\nclass A(PyLayer):\n" BODY "A.apply(1)\n", "A!", 1},
    {"alias", "from paddle.autograd import PyLayer as PL\nclass A(PL):\n" BODY, "A!", 0},
    {"module_attr", "import paddle\nclass A(paddle.autograd.PyLayer):\n" BODY, "A!", 0},
    {"submodule_alias", "import paddle.autograd as ag\nclass A(ag.PyLayer):\n" BODY, "A!", 0},
    {"py_layer_module", "import paddle\nclass A(paddle.autograd.py_layer.PyLayer):\n" BODY, "A!", 0},
    {"from_package", "from paddle import autograd\nclass A(autograd.PyLayer):\n" BODY, "A!", 0},
    {"transitive", "from paddle.autograd import PyLayer\nclass A(PyLayer):\n" BODY "class B(A):\n    pass\nB.apply(2)\n",
     "A!B!", 1},
    {"nested_in_class", "from paddle.autograd import PyLayer\nclass O:\n    class I(PyLayer):\n" BODY_IN("        ") "O.I.apply(1)\n",
     "I!", 1},
    {"nested_in_function", "from paddle.autograd import PyLayer\ndef make():\n    class L(PyLayer):\n" BODY_IN("        ")
     "    return L.apply(1)\n", "L", 1},
    {"not_paddle", "from torch.autograd import Function as PyLayer\nclass A(PyLayer):\n" BODY "A.apply(1)\n", "", 0},
    {"rebound_before_class", "from paddle.autograd import PyLayer\nPyLayer = object\nclass A(PyLayer):\n" BODY, "", 0},
    {"rebound_after_class", "from paddle.autograd import PyLayer\nclass A(PyLayer):\n" BODY "PyLayer = object\n", "A!", 0},
    /* a parameter is not the class: the call goes through the runtime (a dynamic site) */
    {"shadowed_in_function",
     "from paddle.autograd import PyLayer\nclass A(PyLayer):\n" BODY "def f(A):\n    return A.apply(1)\n", "A!", 1},
    {"no_sites_in_a_file_without_pylayer", "import pandas as pd\ndef f(df):\n    return df.apply(len)\n", "", 0},
    {"class_name_rebound", "from paddle.autograd import PyLayer\nclass A(PyLayer):\n" BODY "A = 3\ndef f():\n    return A.apply(1)\n",
     "A", 1},
    {"alias_of_class", "from paddle.autograd import PyLayer\nclass A(PyLayer):\n" BODY "B = A\ny = B.apply(1)\n", "A!", 1},
    {"value_and_assignment_target",
     "from paddle.autograd import PyLayer\nclass A(PyLayer):\n" BODY "f = A.apply\nA.apply = None\n", "A!", 1},
    {"decorated_forward_gets_no_builder",
     "from paddle.autograd import PyLayer\nclass A(PyLayer):\n    @staticmethod\n    @trace\n    def forward(ctx, x):\n"
     "        return x\n    @staticmethod\n    def backward(ctx, g):\n        return g\n", "A", 0},
    {"forward_only_gets_a_builder",
     "from paddle.autograd import PyLayer\nclass A(PyLayer):\n    @staticmethod\n    def forward(ctx, x):\n"
     "        return x\nA.apply(1)\n", "A!", 1},
    {"try_except_import",
     "try:\n    from paddle.autograd import PyLayer\nexcept ImportError:\n    from paddle.autograd.py_layer import PyLayer\n"
     "def f():\n    class A(PyLayer):\n        pass\n    return A\n", "A", 0},
};

/* A source parsed and found in, with what that needs; released by found_release. */
typedef struct {
    P2sSource src;
    P2sDiagSink sink;
    P2sRules rules;
    P2sStrbuf err;
    TSTree *tree;
    P2sFindings found;
} Found;

/* Parses `source` (it must parse cleanly) and finds in it as `module` (NULL: a lone file). */
static void find_in(Found *f, const char *name, const char *source, const P2sModule *module)
{
    p2s_strbuf_init(&f->err);
    p2s_diag_sink_init(&f->sink);
    assert_int_equal(p2s_rules_load_default(&f->rules, &f->err), 0);
    p2s_source_from_bytes(&f->src, name, source, strlen(source));
    f->tree = p2s_parse(&f->src, &f->sink);
    assert_int_equal(f->sink.errors, 0);
    p2s_find(&f->src, f->tree, &f->rules, module, &f->found);
}

static void found_release(Found *f)
{
    p2s_findings_release(&f->found);
    ts_tree_delete(f->tree);
    p2s_source_release(&f->src);
    p2s_rules_release(&f->rules);
    p2s_diag_sink_release(&f->sink);
    p2s_strbuf_release(&f->err);
}

static void run_case(const FindCase *c)
{
    Found f;
    P2sStrbuf got;
    p2s_strbuf_init(&got);
    find_in(&f, c->name, c->source, NULL);
    for (size_t i = 0; i < f.found.classes.size; i++) {
        const P2sPyLayerClass *cls = &f.found.classes.contents[i];
        if (!cls->is_pylayer)
            continue;
        p2s_strbuf_add(&got, f.src.bytes + cls->name.start, cls->name.end - cls->name.start);
        if (cls->builder)
            p2s_strbuf_addch(&got, '!');
    }
    if (strcmp(got.buf, c->pylayers) != 0 || f.found.sites.size != c->sites)
        fail_msg("%s: PyLayers '%s' (want '%s'), %zu sites (want %zu)", c->name, got.buf, c->pylayers,
                 f.found.sites.size, c->sites);
    found_release(&f);
    p2s_strbuf_release(&got);
}

static void test_find_resolves_pylayers_through_imports_and_scopes(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        run_case(&cases[i]);
}

static void test_find_recognises_its_own_marker(void **state)
{
    (void)state;
    Found f;
    find_in(&f, "m.py", "import paddle\nx = 1\n# pylayer2static 0.1.0\n", NULL);
    assert_true(f.found.already_transpiled);
    assert_int_equal(f.found.runtime_import_at, 13);
    found_release(&f);
}

/* Which imports a module's findings send a lone file's run to read (P2sFindings.misses),
 * by what the run reads of the module. */
typedef struct {
    const char *name;
    P2sModuleRead read;
    const char *source;
    const char *misses;     /* sorted, comma-separated */
    const char *export_misses;  /* name=target, sorted, comma-separated: a reached module's
                                   re-exports, followed only when the run reads the name */
} MissCase;

#define MISS_IMPORTS "import paddle\nfrom pkg.base import Base\nfrom pkg.layers import Q\nfrom pkg import unused\n" \
                     "class Mine(Base):\n    pass\n"
#define MISS_ALL "paddle,pkg.base.Base,pkg.layers.Q,pkg.unused"

static const MissCase miss_cases[] = {
    {"lone_file_reads_for_its_bases", P2S_READ_SITES, MISS_IMPORTS, "pkg.base.Base", ""},
    {"lone_file_exports_unread", P2S_READ_SITES, "from pkg.layers import Q\nfrom pkg import unused\n", "", ""},
    /* a call of a class not found yet may be of any import's PyLayer (a dynamic site) */
    {"lone_file_unknown_callee", P2S_READ_SITES, MISS_IMPORTS "def f(x):\n    return Q.apply(x)\n", MISS_ALL, ""},
    /* its bases always; its exports by name, for the run to follow those it reads */
    {"reached_module_reads_for_its_exports", P2S_READ_EXPORTS, MISS_IMPORTS, "pkg.base.Base",
     "Base=pkg.base.Base,Q=pkg.layers.Q,paddle=paddle,unused=pkg.unused"},
    {"reached_module_calls_unread", P2S_READ_EXPORTS,
     "def f(x):\n    from pkg.layers import Q\n    return Q.apply(x)\n", "", ""},
    {"tree_reads_all", P2S_READ_ALL, MISS_IMPORTS, MISS_ALL,
     "Base=pkg.base.Base,Q=pkg.layers.Q,paddle=paddle,unused=pkg.unused"},
    /* resolving a use of Paddle's recompute looks up no other module's PyLayer */
    {"paddle_api_uses_miss_nothing", P2S_READ_ALL,
     "def f(layer, x):\n    from pkg import fleet\n    from paddle.distributed import fleet\n"
     "    return fleet.utils.recompute(layer, x)\n", "", ""},
};

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void run_miss_case(const MissCase *c)
{
    Found f;
    P2sStrbuf got;
    P2sExternals none;
    p2s_strbuf_init(&got);
    p2s_externals_init(&none);
    P2sModule module = {"pkg.model", false, &none, c->read};
    find_in(&f, c->name, c->source, &module);
    const char **names = p2s_calloc(f.found.misses.size + 1, sizeof *names);
    size_t n = 0;
    for (size_t s = 0; s < f.found.misses.capacity; s++)
        if (f.found.misses.slots[s].name)
            names[n++] = f.found.misses.slots[s].name;
    qsort(names, n, sizeof *names, compare_names);
    for (size_t i = 0; i < n; i++) {
        if (i)
            p2s_strbuf_addch(&got, ',');
        p2s_strbuf_add(&got, names[i], strlen(names[i]));
    }
    if (strcmp(got.buf, c->misses) != 0)
        fail_msg("%s: misses '%s' (want '%s')", c->name, got.buf, c->misses);
    p2s_free(names);
    const P2sStrings *targets = &f.found.export_miss_targets;
    assert_int_equal(f.found.export_miss_names.size, targets->size);
    char **pairs = p2s_calloc(targets->size + 1, sizeof *pairs);
    for (size_t i = 0; i < targets->size; i++) {
        P2sStrbuf pair;
        p2s_strbuf_init(&pair);
        p2s_strbuf_addf(&pair, "%s=%s", f.found.export_miss_names.contents[i], targets->contents[i]);
        pairs[i] = p2s_strbuf_detach(&pair, NULL);
    }
    qsort(pairs, targets->size, sizeof *pairs, compare_names);
    p2s_strbuf_reset(&got);
    for (size_t i = 0; i < targets->size; i++) {
        if (i)
            p2s_strbuf_addch(&got, ',');
        p2s_strbuf_adds(&got, pairs[i]);
        p2s_free(pairs[i]);
    }
    p2s_free(pairs);
    if (strcmp(got.buf, c->export_misses) != 0)
        fail_msg("%s: export misses '%s' (want '%s')", c->name, got.buf, c->export_misses);
    found_release(&f);
    p2s_externals_release(&none);
    p2s_strbuf_release(&got);
}

static void test_find_misses_only_what_the_run_reads(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof miss_cases / sizeof miss_cases[0]; i++)
        run_miss_case(&miss_cases[i]);
}

/* Whether a module uses one of Paddle's PyLayer-backed APIs (the rules' paddle_pylayer_apis),
 * and where the runtime import goes. */
typedef struct {
    const char *name;
    const char *source;
    bool uses;
    P2sImportPlacement placement;
    size_t at;                  /* runtime_import_at */
    bool has_runtime_import;
    size_t sites;
} ApiCase;

#define JOIN_AFTER P2S_IMPORT_JOIN_AFTER
#define JOIN_BEFORE P2S_IMPORT_JOIN_BEFORE
#define OWN_LINE P2S_IMPORT_OWN_LINE

static const ApiCase api_cases[] = {
    {"import_by_name_used_or_not", "import os\nfrom paddle.distributed.fleet.utils import recompute\n", true, JOIN_AFTER, 9, false, 0},
    {"alias", "import os\nfrom paddle.distributed.fleet.recompute import recompute as ckpt\n", true, JOIN_AFTER, 9, false, 0},
    {"name_holding_a_word", "import os\nfrom paddle.distributed.fleet.utils.sequence_parallel_utils import ReduceScatterOp as RS\n",
     true, JOIN_AFTER, 9, false, 0},
    /* bound by the first import: the runtime import goes before it */
    {"first_import_binds_an_api", "from paddle.distributed.fleet.recompute import recompute_sequential\nimport os\n",
     true, JOIN_BEFORE, 0, false, 0},
    {"through_the_package_in_a_body", "import paddle\ndef f(layer, x):\n    return paddle.distributed.fleet.utils.recompute(layer, x)\n",
     true, JOIN_AFTER, 13, false, 0},
    {"through_fleet_in_a_method", "from paddle.distributed import fleet\nclass M:\n    def forward(self, x):\n"
     "        return fleet.recompute.recompute(self.block, x)\n", true, JOIN_AFTER, 36, false, 0},
    {"through_a_module_alias", "import paddle.distributed.fleet.utils.sequence_parallel_utils as spu\ny = spu.GatherOp\n",
     true, JOIN_AFTER, 68, false, 0},
    {"model_parallel_is_not_one", "from paddle.distributed import fleet\nclass H(fleet.meta_parallel.RowParallelLinear):\n    pass\n",
     false, JOIN_AFTER, 36, false, 0},
    {"import_in_the_function", "def f(layer, x):\n    from paddle.distributed import fleet as fl\n    return fl.utils.recompute(layer, x)\n",
     true, OWN_LINE, 0, false, 0},
    /* an `.apply` of Paddle's own PyLayer is no site, in a file with PyLayers too */
    {"paddle_pylayer_applied", "from paddle.autograd import PyLayer\n"
     "from paddle.distributed.fleet.utils import sequence_parallel_utils as spu\nclass A(PyLayer):\n" BODY
     "y = A.apply(spu.ScatterOp.apply(1))\n", true, JOIN_AFTER, 35, false, 1},
    {"runtime_imported_already", "import paddle; import pylayer2static_runtime as _p2s\nfrom paddle.distributed.fleet.utils import recompute\n",
     true, JOIN_AFTER, 13, true, 0},
    {"runtime_imported_before", "import pylayer2static_runtime as _p2s; from paddle.distributed.fleet.utils import recompute\n",
     true, JOIN_AFTER, 37, true, 0},
    {"shadowed_by_a_parameter", "from paddle.distributed import fleet\ndef f(fleet, x):\n    return fleet.utils.recompute(x)\n",
     false, JOIN_AFTER, 36, false, 0},
    {"rebound_before_use", "from paddle.distributed import fleet\nfleet = None\nfleet.utils.recompute(1)\n", false, JOIN_AFTER, 36, false, 0},
    {"another_library", "from mylib import recompute\nrecompute(1)\n", false, JOIN_AFTER, 27, false, 0},
    {"the_package_itself", "import paddle\nx = paddle.distributed.fleet.recompute\n", false, JOIN_AFTER, 13, false, 0},
    {"words_in_strings_and_comments", "import os\ns = 'fleet.utils.recompute'  # fleet.utils.recompute\n", false, JOIN_AFTER, 9, false, 0},
    {"star_import_not_followed", "from paddle.distributed.fleet.utils import *\nrecompute(1)\n", false, JOIN_AFTER, 44, false, 0},
};

static void run_api_case(const ApiCase *c)
{
    Found f;
    find_in(&f, c->name, c->source, NULL);
    if (f.found.uses_paddle_api != c->uses || f.found.runtime_import != c->placement ||
        f.found.runtime_import_at != c->at || f.found.has_runtime_import != c->has_runtime_import ||
        f.found.sites.size != c->sites)
        fail_msg("%s: uses %d (want %d), placement %d at %zu (want %d at %zu), runtime imported %d (want %d), "
                 "%zu sites (want %zu)", c->name, f.found.uses_paddle_api, c->uses, (int)f.found.runtime_import,
                 f.found.runtime_import_at, (int)c->placement, c->at, f.found.has_runtime_import,
                 c->has_runtime_import, f.found.sites.size, c->sites);
    found_release(&f);
}

static void test_find_sees_paddle_pylayer_apis_and_places_the_runtime_import(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof api_cases / sizeof api_cases[0]; i++)
        run_api_case(&api_cases[i]);
}

int main(void)
{
    p2s_alloc_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_find_resolves_pylayers_through_imports_and_scopes),
        cmocka_unit_test(test_find_recognises_its_own_marker),
        cmocka_unit_test(test_find_misses_only_what_the_run_reads),
        cmocka_unit_test(test_find_sees_paddle_pylayer_apis_and_places_the_runtime_import),
    };
    return cmocka_run_group_tests_name("find", tests, NULL, NULL);
}
