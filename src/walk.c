/* walk.c — the files of a source tree, as tree mode and the workspace index see them: each
 * directory's names sorted (every run sees files in one order), `.gitignore` rules read per
 * directory and dropped on leaving it, excludes and the output directory skipped, symlinked
 * files read through and symlinked directories not followed (a link may make a loop). */
#include "walk.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc.h"
#include "diag.h"
#include "source.h"
#include "strbuf.h"

char *p2s_walk_join(const char *a, const char *b)
{
    P2sStrbuf s;
    p2s_strbuf_init(&s);
    if (*a && *b)
        p2s_strbuf_addf(&s, "%s/%s", a, b);
    else
        p2s_strbuf_adds(&s, *a ? a : b);
    return p2s_strbuf_detach(&s, NULL);
}

/* The walk's state: what it skips, and what it found. */
typedef struct {
    const char *root;
    const P2sStringList *excludes;
    const struct stat *skip_dir;    /* the output directory, when inside the tree; NULL */
    P2sIgnoreRules ignore;
    P2sWalkEntries *out;
} Walk;

bool p2s_walk_excluded(const P2sStringList *excludes, const P2sIgnoreRules *ignore, const char *rel, bool is_dir)
{
    const char *base = strrchr(rel, '/');
    base = base ? base + 1 : rel;
    if (is_dir && (strcmp(base, ".git") == 0 || strcmp(base, "__pycache__") == 0))
        return true;
    if (!is_dir) {
        size_t n = strlen(base);
        if (n > 4 && strcmp(base + n - 4, ".pyc") == 0)
            return true;
    }
    for (size_t i = 0; excludes && i < excludes->size; i++) {
        const char *glob = excludes->contents[i];
        if (p2s_glob_match(glob, rel) || (!strchr(glob, '/') && p2s_glob_match(glob, base)))
            return true;
    }
    return ignore && p2s_ignore_match(ignore, rel, is_dir);
}

static int walk__compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void walk__read_gitignore(Walk *w, const char *dir_path, const char *rel)
{
    char *path = p2s_walk_join(dir_path, ".gitignore");
    P2sDiagSink sink;
    P2sSource src;
    p2s_diag_sink_init(&sink);
    if (access(path, F_OK) == 0 && p2s_source_read_path(&src, path, path, P2S_SOURCE_LIMIT, &sink) == 0) {
        p2s_ignore_add(&w->ignore, rel, src.bytes, src.len);
        p2s_source_release(&src);
    }
    p2s_diag_sink_release(&sink);
    p2s_free(path);
}

static void walk__found(Walk *w, const char *rel, off_t size, const char *error)
{
    size_t n = strlen(rel);
    P2sWalkEntry e = {p2s_strdup(rel), size, !error && n > 3 && strcmp(rel + n - 3, ".py") == 0,
                      error ? p2s_strdup(error) : NULL};
    array_push(w->out, e);
}

static void walk__walk(Walk *w, const char *rel)
{
    char *dir_path = p2s_walk_join(w->root, rel);
    size_t rules_before = w->ignore.size;
    DIR *dir = opendir(dir_path);
    if (!dir) {
        P2sStrbuf why;
        p2s_strbuf_init(&why);
        p2s_strbuf_addf(&why, "cannot read directory: %s", strerror(errno));
        walk__found(w, *rel ? rel : ".", 0, why.buf);
        p2s_strbuf_release(&why);
        p2s_free(dir_path);
        return;
    }
    walk__read_gitignore(w, dir_path, rel);
    P2sStrings names = {0};
    for (struct dirent *d; (d = readdir(dir));)
        if (strcmp(d->d_name, ".") != 0 && strcmp(d->d_name, "..") != 0)
            array_push(&names, p2s_strdup(d->d_name));
    closedir(dir);
    qsort(names.contents, names.size, sizeof(char *), walk__compare_names);
    for (size_t i = 0; i < names.size; i++) {
        char *child_rel = p2s_walk_join(rel, names.contents[i]);
        char *child_path = p2s_walk_join(w->root, child_rel);
        struct stat st;
        if (lstat(child_path, &st) < 0) {
            P2sStrbuf why;
            p2s_strbuf_init(&why);
            p2s_strbuf_addf(&why, "cannot stat: %s", strerror(errno));
            walk__found(w, child_rel, 0, why.buf);
            p2s_strbuf_release(&why);
        } else if (S_ISDIR(st.st_mode)) {
            bool is_out = w->skip_dir && st.st_dev == w->skip_dir->st_dev && st.st_ino == w->skip_dir->st_ino;
            if (!is_out && !p2s_walk_excluded(w->excludes, &w->ignore, child_rel, true))
                walk__walk(w, child_rel);
        } else if (S_ISLNK(st.st_mode)) {
            /* A link to a file is read through; a link to a directory is not followed (loops). */
            struct stat target;
            if (stat(child_path, &target) == 0 && S_ISREG(target.st_mode) &&
                !p2s_walk_excluded(w->excludes, &w->ignore, child_rel, false))
                walk__found(w, child_rel, target.st_size, NULL);
        } else if (S_ISREG(st.st_mode) && !p2s_walk_excluded(w->excludes, &w->ignore, child_rel, false)) {
            walk__found(w, child_rel, st.st_size, NULL);
        }
        p2s_free(child_rel);
        p2s_free(child_path);
    }
    p2s_strings_release(&names);
    p2s_ignore_truncate(&w->ignore, rules_before);
    p2s_free(dir_path);
}

void p2s_walk(const char *root, const P2sStringList *excludes, const struct stat *skip_dir, P2sWalkEntries *out)
{
    Walk w = {root, excludes, skip_dir, {0}, out};
    walk__walk(&w, "");
    p2s_ignore_release(&w.ignore);
}

void p2s_walk_release(P2sWalkEntries *entries)
{
    for (size_t i = 0; i < entries->size; i++) {
        p2s_free(entries->contents[i].rel);
        p2s_free(entries->contents[i].error);
    }
    array_delete(entries);
}

