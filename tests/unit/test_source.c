/* Unit tests: source reading, encoding validation, line map. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "alloc.h"
#include "io.h"
#include "source.h"

static int validate_text(const char *text, size_t len, P2sDiagSink *sink)
{
    P2sSource src;
    p2s_source_from_bytes(&src, "t.py", text, len);
    int rc = p2s_source_validate(&src, sink);
    p2s_source_release(&src);
    return rc;
}

static const char *first_code(const P2sDiagSink *sink)
{
    return sink->items.size ? sink->items.contents[0].code : "";
}

static void test_source_positions_count_code_points_and_all_line_endings(void **state)
{
    (void)state;
    const char text[] = "a\r\nb\rc\n\xC3\xA9x";
    P2sSource src;
    size_t line, col;
    p2s_source_from_bytes(&src, "t.py", text, sizeof text - 1);
    assert_int_equal(p2s_source_line_count(&src), 4);
    p2s_source_position(&src, 3, &line, &col);
    assert_int_equal(line, 2);
    assert_int_equal(col, 1);
    p2s_source_position(&src, 5, &line, &col);
    assert_int_equal(line, 3);
    p2s_source_position(&src, 9, &line, &col);  /* 'x' after a 2-byte é */
    assert_int_equal(line, 4);
    assert_int_equal(col, 2);
    P2sSpan l1 = p2s_source_line_span(&src, 1);
    assert_int_equal(l1.end - l1.start, 1);
    /* 0-based line indices: a line's ending belongs to it, past the end is the last line */
    static const struct {
        size_t offset, index;
    } indices[] = {{0, 0}, {2, 0}, {3, 1}, {4, 1}, {5, 2}, {6, 2}, {7, 3}, {10, 3}, {99, 3}};
    for (size_t i = 0; i < sizeof indices / sizeof *indices; i++)
        if (p2s_source_line_index(&src, indices[i].offset) != indices[i].index)
            fail_msg("offset %zu: line %zu", indices[i].offset, p2s_source_line_index(&src, indices[i].offset));
    p2s_source_release(&src);
}

static void test_source_bom_is_not_a_column(void **state)
{
    (void)state;
    const char text[] = "\xEF\xBB\xBFx = 1\n";
    P2sSource src;
    size_t line, col;
    p2s_source_from_bytes(&src, "t.py", text, sizeof text - 1);
    p2s_source_position(&src, 3, &line, &col);
    assert_int_equal(col, 1);
    p2s_source_release(&src);
}

static void test_source_rejects_nul_bytes(void **state)
{
    (void)state;
    P2sDiagSink sink;
    p2s_diag_sink_init(&sink);
    assert_int_equal(validate_text("a\0b\n", 4, &sink), -1);
    assert_string_equal(first_code(&sink), "P2S002");
    assert_int_equal(sink.items.contents[0].span.start, 1);
    p2s_diag_sink_release(&sink);
}

static void test_source_rejects_invalid_utf8_overlong_and_surrogates(void **state)
{
    (void)state;
    static const char *const bad[] = {"\xFF", "\xC0\x80", "\xED\xA0\x80", "\xF4\x90\x80\x80", "\xE2\x82"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        P2sDiagSink sink;
        p2s_diag_sink_init(&sink);
        assert_int_equal(validate_text(bad[i], strlen(bad[i]), &sink), -1);
        assert_string_equal(first_code(&sink), "P2S003");
        p2s_diag_sink_release(&sink);
    }
}

static void test_source_accepts_utf8_cookies_and_rejects_others(void **state)
{
    (void)state;
    static const struct { const char *text; int rc; } cases[] = {
        {"# -*- coding: utf-8 -*-\n", 0},
        {"#!/usr/bin/env python\n# vim: set fileencoding=UTF8 :\n", 0},
        {"# coding=utf-8-unix\n", 0},
        {"# -*- coding: latin-1 -*-\n", -1},
        {"\n# coding: cp1252\n", -1},
        {"x = 1\n# coding: latin-1\n", 0},  /* only lines 1-2, and line 2 only after a comment line */
        {"# no cookie\nimport os\n# coding: latin-1\n", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        P2sDiagSink sink;
        p2s_diag_sink_init(&sink);
        assert_int_equal(validate_text(cases[i].text, strlen(cases[i].text), &sink), cases[i].rc);
        if (cases[i].rc)
            assert_string_equal(first_code(&sink), "P2S004");
        p2s_diag_sink_release(&sink);
    }
}

static void test_source_read_stops_at_the_limit(void **state)
{
    (void)state;
    int fd = open("/dev/zero", O_RDONLY);
    assert_true(fd >= 0);
    P2sDiagSink sink;
    P2sSource src = {0};
    p2s_diag_sink_init(&sink);
    assert_int_equal(p2s_source_read_fd(&src, fd, "zero", 1 << 20, &sink), -1);
    assert_non_null(strstr(sink.items.contents[0].message, "larger than"));
    close(fd);
    p2s_diag_sink_release(&sink);
}

static void test_source_read_reports_io_errors(void **state)
{
    (void)state;
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    assert_int_equal(write(fds[1], "x", 1), 1);
    close(fds[1]);
    p2s_io_fault_set(P2S_IO_READ, 5 /* EIO */, 1);
    P2sDiagSink sink;
    P2sSource src = {0};
    p2s_diag_sink_init(&sink);
    assert_int_equal(p2s_source_read_fd(&src, fds[0], "pipe", 1 << 20, &sink), -1);
    assert_non_null(strstr(sink.items.contents[0].message, "cannot read"));
    p2s_io_faults_clear();
    close(fds[0]);
    p2s_diag_sink_release(&sink);
}

int main(void)
{
    p2s_alloc_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_source_positions_count_code_points_and_all_line_endings),
        cmocka_unit_test(test_source_bom_is_not_a_column),
        cmocka_unit_test(test_source_rejects_nul_bytes),
        cmocka_unit_test(test_source_rejects_invalid_utf8_overlong_and_surrogates),
        cmocka_unit_test(test_source_accepts_utf8_cookies_and_rejects_others),
        cmocka_unit_test(test_source_read_stops_at_the_limit),
        cmocka_unit_test(test_source_read_reports_io_errors),
    };
    return cmocka_run_group_tests_name("source", tests, NULL, NULL);
}
