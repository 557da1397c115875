/* replay_main.c — runs files through the fuzz target without libFuzzer, so `make check` can
 * replay the corpus and the regression inputs with any compiler (the sanitizer build).
 * Usage: fuzz_replay FILE|DIR... ; prints `fuzz-replay: N inputs` and exits 0, or aborts in
 * the target on the first broken invariant. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static unsigned long replay__count;

static int replay__file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return -1;
    }
    size_t cap = 4096, len = 0;
    unsigned char *buf = malloc(cap);
    size_t n;
    while (buf && (n = fread(buf + len, 1, cap - len, f)) > 0) {
        len += n;
        if (len == cap) {
            unsigned char *grown = realloc(buf, cap * 2);
            if (!grown) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = grown;
            cap *= 2;
        }
    }
    fclose(f);
    if (!buf) {
        fprintf(stderr, "%s: out of memory\n", path);
        return -1;
    }
    if (getenv("FUZZ_REPLAY_VERBOSE"))
        fprintf(stderr, "fuzz-replay: %s\n", path);
    LLVMFuzzerTestOneInput(buf, len);
    free(buf);
    replay__count++;
    return 0;
}

static int replay__path(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        perror(path);
        return -1;
    }
    if (!S_ISDIR(st.st_mode))
        return replay__file(path);
    DIR *dir = opendir(path);
    if (!dir) {
        perror(path);
        return -1;
    }
    int rc = 0;
    struct dirent *e;
    while ((e = readdir(dir)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        size_t n = strlen(path) + strlen(e->d_name) + 2;
        char *child = malloc(n);
        if (!child) {
            rc = -1;
            break;
        }
        snprintf(child, n, "%s/%s", path, e->d_name);
        if (replay__path(child) < 0)
            rc = -1;
        free(child);
    }
    closedir(dir);
    return rc;
}

int main(int argc, char **argv)
{
    int rc = 0;
    LLVMFuzzerInitialize(&argc, &argv);
    for (int i = 1; i < argc; i++)
        if (replay__path(argv[i]) < 0)
            rc = 1;
    printf("fuzz-replay: %lu inputs\n", replay__count);
    return rc;
}
