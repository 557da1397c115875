/* Unit tests: atomic output and its failure paths. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alloc.h"
#include "dir_entries.h"
#include "io.h"
#include "output.h"

typedef struct {
    char dir[64];
    char path[128];
} Fixture;

static int setup(void **state)
{
    Fixture *f = calloc(1, sizeof *f);
    strcpy(f->dir, "/tmp/p2s-output-XXXXXX");
    if (!mkdtemp(f->dir))
        return -1;
    snprintf(f->path, sizeof f->path, "%s/out.py", f->dir);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    Fixture *f = *state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->dir);
    int rc = system(cmd);
    free(f);
    p2s_io_faults_clear();
    return rc == 0 ? 0 : -1;
}

static void write_raw(const char *path, const char *text)
{
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs(text, fp);
    fclose(fp);
}

static char *read_all(const char *path)
{
    static char buf[256];
    FILE *fp = fopen(path, "r");
    if (!fp)
        return NULL;
    size_t n = fread(buf, 1, sizeof buf - 1, fp);
    buf[n] = '\0';
    fclose(fp);
    return buf;
}

static void test_output_writes_new_file_with_umask_mode(void **state)
{
    Fixture *f = *state;
    P2sStrbuf err;
    p2s_strbuf_init(&err);
    assert_int_equal(p2s_output_write_file(f->path, "new\n", 4, &err), 0);
    assert_string_equal(read_all(f->path), "new\n");
    struct stat st;
    assert_int_equal(stat(f->path, &st), 0);
    mode_t mask = umask(0);
    umask(mask);
    assert_int_equal(st.st_mode & 0777, 0666 & ~mask);
    assert_int_equal(p2s_test_entries_in(f->dir), 1);
    p2s_strbuf_release(&err);
}

static void test_output_keeps_mode_of_replaced_file(void **state)
{
    Fixture *f = *state;
    P2sStrbuf err;
    p2s_strbuf_init(&err);
    write_raw(f->path, "old\n");
    chmod(f->path, 0751);
    assert_int_equal(p2s_output_write_file(f->path, "new\n", 4, &err), 0);
    struct stat st;
    stat(f->path, &st);
    assert_int_equal(st.st_mode & 0777, 0751);
    p2s_strbuf_release(&err);
}

/* Each failing step leaves the old destination and no temp file. */
static void check_failure_leaves_destination(Fixture *f, P2sIoOp op, int err_no, const char *words)
{
    P2sStrbuf err;
    p2s_strbuf_init(&err);
    write_raw(f->path, "old\n");
    p2s_io_fault_set(op, err_no, 1);
    assert_int_equal(p2s_output_write_file(f->path, "new contents\n", 13, &err), -1);
    p2s_io_faults_clear();
    assert_non_null(strstr(err.buf, words));
    assert_string_equal(read_all(f->path), "old\n");
    assert_int_equal(p2s_test_entries_in(f->dir), 1);
    p2s_strbuf_release(&err);
}

static void test_output_leaves_destination_untouched_when_write_fails(void **state)
{
    check_failure_leaves_destination(*state, P2S_IO_WRITE, ENOSPC, "No space left");
}

static void test_output_leaves_destination_untouched_when_fsync_fails(void **state)
{
    check_failure_leaves_destination(*state, P2S_IO_FSYNC, EIO, "Input/output error");
}

static void test_output_leaves_destination_untouched_when_rename_fails(void **state)
{
    check_failure_leaves_destination(*state, P2S_IO_RENAME, EXDEV, "cannot replace");
}

static void test_output_reports_missing_directory(void **state)
{
    Fixture *f = *state;
    P2sStrbuf err;
    char path[160];
    p2s_strbuf_init(&err);
    snprintf(path, sizeof path, "%s/missing/out.py", f->dir);
    assert_int_equal(p2s_output_write_file(path, "x", 1, &err), -1);
    assert_non_null(strstr(err.buf, "No such file or directory"));
    p2s_strbuf_release(&err);
}

static void test_output_fd_reports_write_errors(void **state)
{
    (void)state;
    P2sStrbuf err;
    p2s_strbuf_init(&err);
    FILE *full = fopen("/dev/full", "w");
    assert_non_null(full);
    assert_int_equal(p2s_output_write_fd(fileno(full), "standard output", "x", 1, &err), -1);
    assert_non_null(strstr(err.buf, "standard output"));
    fclose(full);
    p2s_strbuf_release(&err);
}

typedef struct {
    P2sOutputBatch batch;
    char path[160];
    const char *text;
    int rc;
} ThreadWrite;

static void *write_in_thread(void *arg)
{
    ThreadWrite *w = arg;
    P2sStrbuf err;
    p2s_strbuf_init(&err);
    w->rc = p2s_output_batch_write(&w->batch, w->path, w->text, strlen(w->text), &err);
    p2s_strbuf_release(&err);
    return NULL;
}

/* Temp files written on several threads, joined into one batch and renamed by it: every file
 * whole and with the umask's mode, no temp file left. */
static void test_output_batches_written_on_threads_flush_through_one(void **state)
{
    Fixture *f = *state;
    ThreadWrite w[4];
    pthread_t threads[4];
    for (int i = 0; i < 4; i++) {
        p2s_output_batch_init(&w[i].batch);
        snprintf(w[i].path, sizeof w[i].path, "%s/out%d.py", f->dir, i);
        w[i].text = i % 2 ? "odd\n" : "even\n";
        assert_int_equal(pthread_create(&threads[i], NULL, write_in_thread, &w[i]), 0);
    }
    P2sOutputBatch all;
    p2s_output_batch_init(&all);
    for (int i = 0; i < 4; i++) {
        pthread_join(threads[i], NULL);
        assert_int_equal(w[i].rc, 0);
        assert_null(read_all(w[i].path));   /* not renamed yet */
        p2s_output_batch_take(&all, &w[i].batch);
        assert_int_equal(w[i].batch.pending.size, 0);
    }
    assert_int_equal(p2s_test_entries_in(f->dir), 4);   /* the four temp files */
    P2sStrbuf err;
    p2s_strbuf_init(&err);
    assert_int_equal(p2s_output_batch_flush(&all, &err), 0);
    mode_t mask = umask(0);
    umask(mask);
    for (int i = 0; i < 4; i++) {
        assert_string_equal(read_all(w[i].path), w[i].text);
        struct stat st;
        assert_int_equal(stat(w[i].path, &st), 0);
        assert_int_equal(st.st_mode & 0777, 0666 & ~mask);   /* no thread saw another's umask */
        p2s_output_batch_release(&w[i].batch);
    }
    assert_int_equal(p2s_test_entries_in(f->dir), 4);   /* the outputs, no temp file */
    assert_int_equal(p2s_cleanup_count(), 0);
    p2s_output_batch_release(&all);
    p2s_strbuf_release(&err);
}

int main(void)
{
    p2s_alloc_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_output_writes_new_file_with_umask_mode, setup, teardown),
        cmocka_unit_test_setup_teardown(test_output_keeps_mode_of_replaced_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_output_leaves_destination_untouched_when_write_fails, setup, teardown),
        cmocka_unit_test_setup_teardown(test_output_leaves_destination_untouched_when_fsync_fails, setup, teardown),
        cmocka_unit_test_setup_teardown(test_output_leaves_destination_untouched_when_rename_fails, setup, teardown),
        cmocka_unit_test_setup_teardown(test_output_reports_missing_directory, setup, teardown),
        cmocka_unit_test(test_output_fd_reports_write_errors),
        cmocka_unit_test_setup_teardown(test_output_batches_written_on_threads_flush_through_one, setup, teardown),
    };
    return cmocka_run_group_tests_name("output", tests, NULL, NULL);
}
