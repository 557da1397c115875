/* Unit tests: the import scan and the import order (imports.h). Each case is data: a source
 * with its module's name, and the names the scan reads, in order; nodes with what each
 * imports, and the order that results. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "imports.h"
#include "strbuf.h"

typedef struct {
    const char *name;
    const char *source;
    const char *module;
    bool is_package;
    const char *names;      /* what the scan reads, space-separated */
} ScanCase;

static const ScanCase SCANS[] = {
    {"import: the module", "import a.b.c\n", "m", false, "a.b.c"},
    {"import with aliases and several names", "import a as x, b.c as y\n", "m", false, "a b.c"},
    {"from: each name below the module", "from a.b import c, d as e\n", "m", false, "a.b.c a.b.d"},
    {"relative imports from a module climb from its package", "from . import x\nfrom ..q import y\n",
     "top.pkg.mod", false, "top.pkg.x top.q.y"},
    {"relative imports from a package's __init__ start at the package", "from .ops import D\n", "top.pkg", true,
     "top.pkg.ops.D"},
    {"a relative import above the top package is left out", "from ... import x\nimport z\n", "top.mod", false,
     "z"},
    {"a top-level module has no package to import from", "from . import x\n", "mod", false, ""},
    {"bracketed names span lines, with comments", "from a import (\n    b,  # first\n    c as d,\n)\n", "m",
     false, "a.b a.c"},
    {"a backslash continues the line", "from a \\\n    import b\nimport \\\n c\n", "m", false, "a.b c"},
    {"imports after a `;`, indented ones too", "import p; import q as r\ndef f():\n    from s import t\n", "m",
     false, "p q s.t"},
    {"`*` names the module", "from a.b import *\n", "m", false, "a.b"},
    {"names that only begin with a keyword are no statements", "from_x = 1\nimporter = 2\nx = 1; import y\n",
     "m", false, ""},
    {"blanks around dots", "import a . b\nfrom . c import d\n", "p.m", false, "a.b p.c.d"},
    {"a CRLF file and one without a final newline", "import a\r\nfrom b import c", "m", false, "a b.c"},
    {"an import cut short reads what is there", "import\nfrom a import\nfrom\nimport b.\n", "m", false, "b"},
};

static void test_imports_scan_cases(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof SCANS / sizeof SCANS[0]; i++) {
        const ScanCase *c = &SCANS[i];
        P2sStrings names = {0};
        p2s_imports_scan(c->source, strlen(c->source), c->module, c->is_package, &names);
        P2sStrbuf got;
        p2s_strbuf_init(&got);
        for (size_t k = 0; k < names.size; k++)
            p2s_strbuf_addf(&got, "%s%s", k ? " " : "", names.contents[k]);
        if (strcmp(got.buf, c->names) != 0)
            fail_msg("%s: read '%s', expected '%s'", c->name, got.buf, c->names);
        p2s_strbuf_release(&got);
        p2s_strings_release(&names);
    }
}

typedef struct {
    const char *name;
    size_t n;
    const char *imports[6];  /* per node: the nodes it imports, space-separated digits */
    size_t roots[6];
    size_t order[6];
} OrderCase;

static const OrderCase ORDERS[] = {
    {"a chain comes out imports first, whatever the roots' order", 4, {"", "0", "1", "2"}, {3, 1, 0, 2},
     {0, 1, 2, 3}},
    {"independent nodes keep the roots' order", 3, {"", "", ""}, {2, 0, 1}, {2, 0, 1}},
    {"a node imported by two comes before both", 3, {"2", "2", ""}, {0, 1, 2}, {2, 0, 1}},
    {"a cycle: the node reached last comes first, then the rest after their imports", 4, {"1", "0", "1", ""},
     {2, 3, 0, 1}, {0, 1, 2, 3}},
    {"a node that imports itself", 2, {"0", "0"}, {1, 0}, {0, 1}},
};

static void test_imports_order_cases(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof ORDERS / sizeof ORDERS[0]; i++) {
        const OrderCase *c = &ORDERS[i];
        P2sIndices imports[6] = {{0}};
        for (size_t v = 0; v < c->n; v++)
            for (const char *p = c->imports[v]; *p; p++)
                if (*p != ' ')
                    array_push(&imports[v], (size_t)(*p - '0'));
        size_t order[6];
        p2s_imports_order(c->n, c->roots, imports, order);
        for (size_t k = 0; k < c->n; k++)
            if (order[k] != c->order[k])
                fail_msg("%s: position %zu holds %zu, expected %zu", c->name, k, order[k], c->order[k]);
        for (size_t v = 0; v < c->n; v++)
            array_delete(&imports[v]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_imports_scan_cases),
        cmocka_unit_test(test_imports_order_cases),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
