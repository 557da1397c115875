/* fuzz_rules.c — libFuzzer target for the rules loader (--rules FILE and config files use it):
 * cJSON over arbitrary bytes, then the shape checks, then the merge over the default rules.
 * Invariants: no crash, leak or undefined behaviour; a rejected file leaves the rules exactly
 * as they were (same version, bases, ctx methods, hazards and diagnostics) with a message in
 * err; an accepted one still transpiles the request's sample without an internal error, so
 * message templates from the file (`{name}` placeholders) go through p2s_rules_format.
 * Built by `make fuzz` next to fuzz_transpile; replayed by `make fuzz-replay`. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "diag_text.h"
#include "rules.h"
#include "source.h"
#include "transpile.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(cond, ...)                                              \
    do {                                                                   \
        if (!(cond)) {                                                     \
            fprintf(stderr, "fuzz_rules: invariant broken: " __VA_ARGS__); \
            fputc('\n', stderr);                                           \
            abort();                                                       \
        }                                                                  \
    } while (0)

/* The request's anchor, with a PyLayer, a ctx use and a hazard (.numpy()). */
static const char fuzz__sample[] =
    "import paddle\n"
    "from paddle.autograd import PyLayer\n"
    "\n"
    "class cus_tanh(PyLayer):\n"
    "    @staticmethod\n"
    "    def forward(ctx, x, func1, func2=paddle.square):\n"
    "        ctx.func = func2\n"
    "        y = func1(x)\n"
    "        print(y.numpy())\n"
    "        ctx.save_for_backward(y)\n"
    "        return y\n"
    "\n"
    "    @staticmethod\n"
    "    def backward(ctx, dy):\n"
    "        y, = ctx.saved_tensor()\n"
    "        return dy * (1 - ctx.func(y))\n"
    "\n"
    "z = cus_tanh.apply(paddle.ones([2]), func1=paddle.tanh)\n";

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    p2s_alloc_init();
    return 0;
}

static void fuzz__fingerprint(const P2sRules *r, P2sStrbuf *out)
{
    p2s_strbuf_addf(out, "%s|", r->version ? r->version : "");
    for (size_t i = 0; i < r->pylayer_bases.size; i++)
        p2s_strbuf_addf(out, "%s,", r->pylayer_bases.contents[i]);
    p2s_strbuf_addf(out, "|%zu|%zu|", r->ctx_methods.size, r->hazards.size);
    for (size_t i = 0; i < r->diagnostics.size; i++) {
        const P2sRuleDiag *d = &r->diagnostics.contents[i];
        p2s_strbuf_addf(out, "%s:%d:%s;", d->code, (int)d->severity, d->message ? d->message : "");
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    P2sRules rules = {0};
    P2sStrbuf err, before, after;
    p2s_strbuf_init(&err);
    p2s_strbuf_init(&before);
    p2s_strbuf_init(&after);
    FUZZ_CHECK(p2s_rules_load_default(&rules, &err) == 0, "default rules: %s", err.buf);
    fuzz__fingerprint(&rules, &before);

    if (p2s_rules_load_text(&rules, "fuzz.json", (const char *)data, size, &err) < 0) {
        FUZZ_CHECK(err.len > 0, "rejected rules without a message");
        fuzz__fingerprint(&rules, &after);
        FUZZ_CHECK(before.len == after.len && memcmp(before.buf, after.buf, before.len) == 0,
                   "rejected rules changed the loaded ones: %s", err.buf);
    } else {
        P2sSource src;
        P2sDiagSink sink;
        P2sStrbuf out, text;
        bool changed = false;
        p2s_source_from_bytes(&src, "sample.py", fuzz__sample, sizeof fuzz__sample - 1);
        p2s_diag_sink_init(&sink);
        p2s_strbuf_init(&out);
        p2s_strbuf_init(&text);
        P2sTranspileStatus st = p2s_transpile(&src, &rules, &sink, &out, &changed);
        FUZZ_CHECK(st != P2S_TRANSPILE_INTERNAL_ERROR, "accepted rules make an internal error");
        for (size_t i = 0; i < sink.items.size; i++) {
            const P2sDiag *d = &sink.items.contents[i];
            FUZZ_CHECK(!d->has_span || d->span.end <= src.len, "diagnostic span outside the sample");
            p2s_diag_text_format(&src, d, false, &text);
        }
        p2s_strbuf_release(&text);
        p2s_strbuf_release(&out);
        p2s_diag_sink_release(&sink);
        p2s_source_release(&src);
    }
    p2s_rules_release(&rules);
    p2s_strbuf_release(&err);
    p2s_strbuf_release(&before);
    p2s_strbuf_release(&after);
    return 0;
}
