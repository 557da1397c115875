/* Unit tests: the caller's settings merged over the configuration file (settings.h), the one
 * merge the command line and the language server share. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc.h"
#include "settings.h"

/* A pyproject.toml with text in a fresh directory; returns its path (caller frees). */
static char *write_config(const char *text)
{
    char dir[] = "/tmp/p2s-settings-XXXXXX";
    assert_non_null(mkdtemp(dir));
    P2sStrbuf path;
    p2s_strbuf_init(&path);
    p2s_strbuf_addf(&path, "%s/pyproject.toml", dir);
    FILE *f = fopen(path.buf, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return p2s_strbuf_detach(&path, NULL);
}

static void remove_config(char *path)
{
    unlink(path);
    *strrchr(path, '/') = '\0';
    rmdir(path);
    p2s_free(path);
}

static P2sSeverity severity(const P2sRules *rules, const char *code)
{
    return p2s_rules_diag(rules, code)->severity;
}

static void test_settings_caller_select_replaces_the_configurations_selection(void **state)
{
    (void)state;
    char *path = write_config("[tool.pylayer2static]\nselect = [\"P2S2\"]\nignore = [\"P2S201\"]\n"
                              "warn = [\"P2S101\"]\n");
    P2sSettings settings = {0};
    P2sConfig config;
    P2sRules rules = {0};
    P2sStrbuf err;
    p2s_strbuf_init(&err);

    /* the configuration alone: its select and ignore, its warn */
    assert_int_equal(p2s_settings_load(&settings, path, &config, &rules, &err), 0);
    assert_true(p2s_rules_code_enabled(&rules, "P2S202"));
    assert_false(p2s_rules_code_enabled(&rules, "P2S201"));
    assert_false(p2s_rules_code_enabled(&rules, "P2S110"));
    assert_int_equal(severity(&rules, "P2S101"), P2S_WARNING);
    p2s_rules_release(&rules);
    p2s_config_release(&config);

    /* the caller's select replaces select and ignore; its ignore and warn add up */
    array_push(&settings.select, p2s_strdup("P2S1,P2S201"));
    settings.select_given = true;
    array_push(&settings.ignore, p2s_strdup("P2S110"));
    array_push(&settings.warn, p2s_strdup("P2S105"));
    memset(&rules, 0, sizeof rules);
    assert_int_equal(p2s_settings_load(&settings, path, &config, &rules, &err), 0);
    assert_true(p2s_rules_code_enabled(&rules, "P2S201"));
    assert_false(p2s_rules_code_enabled(&rules, "P2S202"));
    assert_true(p2s_rules_code_enabled(&rules, "P2S111"));
    assert_false(p2s_rules_code_enabled(&rules, "P2S110"));
    assert_int_equal(severity(&rules, "P2S101"), P2S_WARNING);
    assert_int_equal(severity(&rules, "P2S105"), P2S_WARNING);
    assert_int_equal(severity(&rules, "P2S106"), P2S_ERROR);
    p2s_rules_release(&rules);
    p2s_config_release(&config);

    p2s_settings_release(&settings);
    p2s_strbuf_release(&err);
    remove_config(path);
}

static void test_settings_name_the_configuration_and_spell_errors_as_the_caller(void **state)
{
    (void)state;
    P2sSettings settings = {0};
    P2sConfig config;
    P2sRules rules = {0};
    P2sStrbuf err;
    p2s_strbuf_init(&err);
    settings.config = p2s_strdup("/elsewhere/pyproject.toml");
    char *path = p2s_settings_config_path(&settings, "/any");
    assert_string_equal(path, "/elsewhere/pyproject.toml");
    p2s_free(path);
    settings.no_config = true;
    assert_null(p2s_settings_config_path(&settings, "/any"));

    array_push(&settings.ignore, p2s_strdup("P2S9X"));
    assert_int_equal(p2s_settings_load(&settings, NULL, &config, &rules, &err), -1);
    assert_string_equal(err.buf, "ignore: unknown rule selector 'P2S9X': expected ALL or a prefix of a code such as P2S1 or P2S105 (docs/rules.md)");
    p2s_rules_release(&rules);
    p2s_config_release(&config);

    settings.command_line = true;
    p2s_strbuf_reset(&err);
    memset(&rules, 0, sizeof rules);
    assert_int_equal(p2s_settings_load(&settings, NULL, &config, &rules, &err), -1);
    assert_string_equal(err.buf, "pylayer2static: error: --ignore: unknown rule selector 'P2S9X': expected ALL or a prefix of a code such as P2S1 or P2S105 (docs/rules.md)");
    p2s_rules_release(&rules);
    p2s_config_release(&config);

    p2s_settings_release(&settings);
    p2s_strbuf_release(&err);
}

static void test_settings_walk_adds_excludes_up_and_the_callers_jobs_win(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        const char *caller[2];     /* the caller's excludes (NULL ends) */
        unsigned caller_jobs;
        const char *config[2];     /* the configuration's */
        unsigned config_jobs;
        const char *excludes;      /* merged, space-separated */
        unsigned jobs;
    } cases[] = {
        {"neither says", {NULL}, 0, {NULL}, 0, "", 0},
        {"the configuration alone", {NULL}, 0, {"gen_*.py", NULL}, 3, "gen_*.py", 3},
        {"the caller's first, then the configuration's; -j wins", {"a/*", NULL}, 5, {"gen_*.py", NULL}, 3,
         "a/* gen_*.py", 5},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        P2sStringList caller = {0};
        P2sConfig config = {0};
        for (size_t i = 0; cases[c].caller[i]; i++)
            array_push(&caller, cases[c].caller[i]);
        for (size_t i = 0; cases[c].config[i]; i++)
            array_push(&config.exclude, p2s_strdup(cases[c].config[i]));
        config.jobs = cases[c].config_jobs;
        P2sWalkSettings walk;
        p2s_settings_walk(&caller, cases[c].caller_jobs, &config, &walk);
        P2sStrbuf got;
        p2s_strbuf_init(&got);
        for (size_t i = 0; i < walk.excludes.size; i++)
            p2s_strbuf_addf(&got, "%s%s", i ? " " : "", walk.excludes.contents[i]);
        if (strcmp(got.buf, cases[c].excludes) != 0 || walk.jobs != cases[c].jobs)
            fail_msg("%s: excludes '%s' jobs %u", cases[c].name, got.buf, walk.jobs);
        p2s_strbuf_release(&got);
        array_delete(&walk.excludes);
        array_delete(&caller);
        p2s_config_release(&config);
    }
}

static void test_settings_for_reads_each_configuration_once_and_a_broken_one_falls_back(void **state)
{
    (void)state;
    char *good = write_config("[tool.pylayer2static]\nignore = [\"P2S201\"]\n");
    char *broken = write_config("[tool.pylayer2static]\nselect = 3\n");
    P2sSettings settings = {0};
    P2sSettingsCache cache = {0};
    const P2sFileSettings *first, *again, *none, *bad, *bad_again;
    P2sStrbuf err;
    p2s_strbuf_init(&err);

    assert_int_equal(p2s_settings_for(&settings, &cache, good, &first, &err), 0);
    assert_string_equal(first->config_path, good);
    assert_false(p2s_rules_code_enabled(&first->rules, "P2S201"));
    assert_int_equal(p2s_settings_for(&settings, &cache, good, &again, &err), 0);
    assert_ptr_equal(again, first);
    assert_int_equal(p2s_settings_for(&settings, &cache, NULL, &none, &err), 0);
    assert_ptr_not_equal(none, first);
    assert_null(none->config_path);
    assert_true(p2s_rules_code_enabled(&none->rules, "P2S201"));
    assert_int_equal(err.len, 0);

    /* broken: the reason once, then the built-in rules and no configuration, kept */
    assert_int_equal(p2s_settings_for(&settings, &cache, broken, &bad, &err), -1);
    assert_non_null(strstr(err.buf, "expected a string"));
    assert_int_equal(bad->config.select.size, 0);
    assert_true(p2s_rules_code_enabled(&bad->rules, "P2S201"));
    p2s_strbuf_reset(&err);
    assert_int_equal(p2s_settings_for(&settings, &cache, broken, &bad_again, &err), 0);
    assert_ptr_equal(bad_again, bad);
    assert_int_equal(err.len, 0);
    assert_int_equal(cache.size, 3);

    p2s_settings_cache_release(&cache);
    assert_int_equal(cache.size, 0);
    p2s_strbuf_release(&err);
    remove_config(good);
    remove_config(broken);
}

int main(void)
{
    p2s_alloc_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_settings_caller_select_replaces_the_configurations_selection),
        cmocka_unit_test(test_settings_name_the_configuration_and_spell_errors_as_the_caller),
        cmocka_unit_test(test_settings_walk_adds_excludes_up_and_the_callers_jobs_win),
        cmocka_unit_test(test_settings_for_reads_each_configuration_once_and_a_broken_one_falls_back),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
