/* fuzz_transpile.c — libFuzzer target over the whole in-memory pipeline
 * (validate -> parse -> find -> plan -> emit -> verify), checking its invariants:
 *   1. no crash, leak or undefined behaviour (the sanitizers the target is built with);
 *   2. p2s_transpile never reports an internal error, and its output reparses without an
 *      ERROR or MISSING node when the input had none;
 *   3. the plan is sorted, disjoint and inside the input, and every byte outside the planned
 *      edits is copied unchanged (checked against the output byte by byte, not by calling emit);
 *   4. user lines keep their numbers: every line end copied from the input lands on the line
 *      it had, except after the one own-line runtime import that note P2S090 announces;
 *   5. transpiling the output again changes nothing;
 *   6. every diagnostic span lies inside the input, and the text and JSON printers accept it.
 * A broken invariant prints what broke and aborts, so libFuzzer keeps the input as a crasher.
 * Built by `make fuzz` (clang -fsanitize=fuzzer) and by `make fuzz-replay` with replay_main.c
 * (any C compiler), which runs the seed corpus and tests/fuzz/regressions/ through it. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "diag_json.h"
#include "diag_text.h"
#include "find.h"
#include "parse.h"
#include "plan.h"
#include "rules.h"
#include "source.h"
#include "transpile.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static P2sRules fuzz__rules;

/* The plan of the run being checked, captured by wrapping p2s_plan_build at link time
 * (-Wl,--wrap=p2s_plan_build), so the harness sees exactly what p2s_transpile emitted from
 * without re-running (or depending on the signatures of) the stages before it. */
static P2sPlan fuzz__plan;
static bool fuzz__plan_captured;
static bool fuzz__capturing;

/* Declared from plan.h's own prototype: if p2s_plan_build's signature changes, the definition
 * below stops compiling instead of being called with the wrong arguments. */
__typeof__(p2s_plan_build) __real_p2s_plan_build, __wrap_p2s_plan_build;

P2sPlanStatus __wrap_p2s_plan_build(const P2sSource *src, const P2sFindings *found, const P2sRules *rules,
                                    bool with_tail, P2sDiagSink *sink, P2sPlan *out)
{
    P2sPlanStatus status = __real_p2s_plan_build(src, found, rules, with_tail, sink, out);
    if (status == P2S_PLAN_MADE && fuzz__capturing) {
        p2s_plan_release(&fuzz__plan);
        p2s_plan_init(&fuzz__plan);
        for (size_t i = 0; i < out->edits.size; i++) {
            const P2sEdit *e = &out->edits.contents[i];
            p2s_plan_add(&fuzz__plan, e->start, e->end, e->text, strlen(e->text));
        }
        p2s_strbuf_add(&fuzz__plan.tail, out->tail.buf, out->tail.len);
        fuzz__plan_captured = true;
    }
    return status;
}

#define FUZZ_CHECK(cond, ...)                                                  \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "fuzz_transpile: invariant broken: " __VA_ARGS__); \
            fputc('\n', stderr);                                               \
            abort();                                                           \
        }                                                                      \
    } while (0)

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    P2sStrbuf err;
    p2s_alloc_init();
    p2s_strbuf_init(&err);
    if (p2s_rules_load_default(&fuzz__rules, &err) < 0) {
        fprintf(stderr, "fuzz_transpile: cannot load the default rules: %s\n", err.buf);
        abort();
    }
    p2s_strbuf_release(&err);
    p2s_plan_init(&fuzz__plan);
    return 0;
}

static size_t fuzz__newlines(const char *s, size_t n)
{
    size_t count = 0;
    for (size_t i = 0; i < n; i++)
        count += s[i] == '\n';
    return count;
}

static bool fuzz__has_code(const P2sDiagSink *sink, const char *code)
{
    for (size_t i = 0; i < sink->items.size; i++)
        if (strcmp(sink->items.contents[i].code, code) == 0)
            return true;
    return false;
}

/* Invariant 6: spans inside the input; both printers run over every diagnostic. */
static void fuzz__check_diagnostics(const P2sSource *src, const P2sDiagSink *sink)
{
    P2sStrbuf text;
    p2s_strbuf_init(&text);
    cJSON *array = cJSON_CreateArray();
    size_t errors = 0;
    for (size_t i = 0; i < sink->items.size; i++) {
        const P2sDiag *d = &sink->items.contents[i];
        FUZZ_CHECK(d->message != NULL, "diagnostic %zu has no message", i);
        if (d->has_span)
            FUZZ_CHECK(d->span.start <= d->span.end && d->span.end <= src->len,
                       "diagnostic %s span [%zu, %zu) outside the input (%zu bytes)", d->code,
                       d->span.start, d->span.end, src->len);
        errors += d->severity == P2S_ERROR;
        p2s_diag_text_format(src, d, i % 2 == 0, &text);
        p2s_diag_json_add(array, src->name, src, d);
    }
    FUZZ_CHECK(errors == sink->errors, "sink counts %zu errors, holds %zu", sink->errors, errors);
    char *json = cJSON_PrintUnformatted(array);
    FUZZ_CHECK(json != NULL, "JSON printer returned NULL");
    cJSON *back = cJSON_Parse(json);
    FUZZ_CHECK(back != NULL && cJSON_GetArraySize(back) == (int)sink->items.size,
               "JSON diagnostics do not read back");
    cJSON_Delete(back);
    p2s_free(json);
    cJSON_Delete(array);
    p2s_strbuf_release(&text);
}

/* Invariants 3 and 4: the plan against the output, byte by byte. */
static void fuzz__check_plan(const P2sSource *src, const P2sPlan *plan, const P2sStrbuf *out,
                             bool own_line_import)
{
    size_t at = 0, o = 0;
    long shift = 0;  /* newlines added so far, net */
    for (size_t i = 0; i < plan->edits.size; i++) {
        const P2sEdit *e = &plan->edits.contents[i];
        FUZZ_CHECK(e->start <= e->end && e->end <= src->len, "edit %zu [%zu, %zu) outside the input",
                   i, e->start, e->end);
        FUZZ_CHECK(e->start >= at, "edit %zu at %zu overlaps the previous one ending at %zu", i,
                   e->start, at);
        size_t gap = e->start - at;
        /* A line end copied from the input must stay on its line: the line numbers of user
         * code (tracebacks, coverage) do not move. An edit may move a token within a
         * statement, as `(X\n).apply(` -> `_p2s.apply((X\n), ` does, as long as the line
         * ends around it land where they were. */
        FUZZ_CHECK(!memchr(src->bytes + at, '\n', gap) || shift == 0 || (own_line_import && shift == 1),
                   "before edit %zu at %zu, the input's lines moved by %ld", i, e->start, shift);
        FUZZ_CHECK(o + gap <= out->len && memcmp(out->buf + o, src->bytes + at, gap) == 0,
                   "bytes [%zu, %zu) outside the edits changed", at, e->start);
        o += gap;
        size_t n = strlen(e->text);
        FUZZ_CHECK(o + n <= out->len && memcmp(out->buf + o, e->text, n) == 0,
                   "edit %zu's text is not in the output at %zu", i, o);
        o += n;
        shift += (long)fuzz__newlines(e->text, n) - (long)fuzz__newlines(src->bytes + e->start, e->end - e->start);
        at = e->end;
    }
    size_t rest = src->len - at;
    FUZZ_CHECK(!memchr(src->bytes + at, '\n', rest) || shift == 0 || (own_line_import && shift == 1),
               "after the last edit, the input's lines moved by %ld", shift);
    FUZZ_CHECK(o + rest <= out->len && memcmp(out->buf + o, src->bytes + at, rest) == 0,
               "bytes [%zu, %zu) after the last edit changed", at, src->len);
    o += rest;
    FUZZ_CHECK(out->len - o == plan->tail.len && memcmp(out->buf + o, plan->tail.buf, plan->tail.len) == 0,
               "the output does not end with the planned tail");
}

/* Invariant 2, independently of the pipeline's own verification. */
static void fuzz__check_reparses(const P2sStrbuf *out)
{
    P2sSource again;
    P2sDiagSink sink;
    p2s_source_from_bytes(&again, "<output>", out->buf, out->len);
    p2s_diag_sink_init(&sink);
    FUZZ_CHECK(p2s_source_validate(&again, &sink) == 0, "the output is not valid UTF-8 text");
    TSTree *tree = p2s_parse(&again, &sink);
    FUZZ_CHECK(sink.errors == 0, "the output does not reparse: %s",
               sink.items.size ? sink.items.contents[0].message : "?");
    ts_tree_delete(tree);
    p2s_diag_sink_release(&sink);
    p2s_source_release(&again);
}

/* Invariant 5. */
static void fuzz__check_idempotent(const P2sStrbuf *out)
{
    P2sSource again;
    P2sDiagSink sink;
    P2sStrbuf second;
    bool changed = true;
    p2s_source_from_bytes(&again, "<output>", out->buf, out->len);
    p2s_diag_sink_init(&sink);
    p2s_strbuf_init(&second);
    P2sTranspileStatus st = p2s_transpile(&again, &fuzz__rules, &sink, &second, &changed);
    FUZZ_CHECK(p2s_transpile_made_output(st), "the output does not transpile again (status %d)", (int)st);
    FUZZ_CHECK(!changed && second.len == out->len && memcmp(second.buf, out->buf, out->len) == 0,
               "transpiling the output again changes it");
    p2s_strbuf_release(&second);
    p2s_diag_sink_release(&sink);
    p2s_source_release(&again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    P2sSource src;
    P2sDiagSink sink;
    P2sStrbuf out;
    bool changed = false;
    p2s_source_from_bytes(&src, "fuzz.py", (const char *)data, size);
    p2s_diag_sink_init(&sink);
    p2s_strbuf_init(&out);

    fuzz__plan_captured = false;
    fuzz__capturing = true;
    P2sTranspileStatus status = p2s_transpile(&src, &fuzz__rules, &sink, &out, &changed);
    fuzz__capturing = false;
    fuzz__check_diagnostics(&src, &sink);
    FUZZ_CHECK(status != P2S_TRANSPILE_INTERNAL_ERROR, "internal error: %s",
               sink.items.size ? sink.items.contents[sink.items.size - 1].message : "?");
    if (status == P2S_TRANSPILE_INPUT_ERROR) {
        FUZZ_CHECK(sink.errors > 0, "input error without an error diagnostic");
        FUZZ_CHECK(out.len == 0, "input error with %zu bytes of output", out.len);
        goto done;
    }
    /* Contract errors still make an output (the classes at fault left as written). */
    FUZZ_CHECK((sink.errors == 0) == (status == P2S_TRANSPILE_OK), "status %d with %zu error diagnostics",
               (int)status, sink.errors);
    FUZZ_CHECK(changed || (out.len == src.len && memcmp(out.buf, src.bytes, src.len) == 0),
               "unchanged output differs from the input");

    FUZZ_CHECK(fuzz__plan_captured, "p2s_transpile succeeded without building a plan");
    FUZZ_CHECK(p2s_plan_is_empty(&fuzz__plan) == !changed, "plan emptiness disagrees with 'changed'");
    if (changed) {
        fuzz__check_plan(&src, &fuzz__plan, &out, fuzz__has_code(&sink, "P2S090"));
        fuzz__check_reparses(&out);
        fuzz__check_idempotent(&out);
    }
done:
    p2s_plan_release(&fuzz__plan);
    p2s_plan_init(&fuzz__plan);
    p2s_strbuf_release(&out);
    p2s_diag_sink_release(&sink);
    p2s_source_release(&src);
    return 0;
}
