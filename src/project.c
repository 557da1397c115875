/* project.c — the project root, import roots and module names of a user's project. */
#include "project.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alloc.h"
#include "strbuf.h"

/* realpath() through our allocator; NULL when path does not resolve. */
static char *project__resolve(const char *path)
{
    char *resolved = realpath(path, NULL);
    char *own = resolved ? p2s_strdup(resolved) : NULL;
    free(resolved);  /* from realpath, not ours */
    return own;
}

static char *project__dirname(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return p2s_strdup(".");
    return p2s_strndup(path, slash == path ? 1 : (size_t)(slash - path));
}

static void project__add_root(P2sProject *self, const char *path)
{
    char *root = project__resolve(path);
    struct stat st;
    if (!root || stat(root, &st) != 0 || !S_ISDIR(st.st_mode)) {
        p2s_free(root);
        return;
    }
    for (size_t i = 0; i < self->roots.size; i++)
        if (strcmp(self->roots.contents[i], root) == 0) {
            p2s_free(root);
            return;
        }
    /* Deepest first: the first root that holds a file names it. */
    array_push(&self->roots, root);
    for (size_t i = self->roots.size - 1; i > 0 && strlen(self->roots.contents[i - 1]) < strlen(root); i--) {
        self->roots.contents[i] = self->roots.contents[i - 1];
        self->roots.contents[i - 1] = root;
    }
}

void p2s_project_init(P2sProject *self, const char *start_dir, const P2sConfig *config)
{
    memset(self, 0, sizeof *self);
    if (config && config->path) {
        char *dir = project__dirname(config->path);
        self->root = project__resolve(dir);
        p2s_free(dir);
    } else {
        char *pyproject = p2s_config_nearest_pyproject(start_dir);
        self->root = pyproject ? project__dirname(pyproject) : NULL;
        p2s_free(pyproject);
    }
    if (!self->root)
        return;
    if (config && config->has_src) {
        for (size_t i = 0; i < config->src.size; i++)
            project__add_root(self, config->src.contents[i]);
        return;
    }
    P2sStrbuf src;
    p2s_strbuf_init(&src);
    p2s_strbuf_addf(&src, "%s/src", self->root);
    project__add_root(self, self->root);
    project__add_root(self, src.buf);
    p2s_strbuf_release(&src);
}

/* Whether path lies strictly below dir. */
static bool project__below(const char *dir, const char *path)
{
    size_t n = strlen(dir);
    if (n == 1 && dir[0] == '/')
        return path[0] == '/' && path[1];
    return strncmp(path, dir, n) == 0 && path[n] == '/';
}

/* Packages above a root: walks up while the directory holds an __init__.py. */
char *p2s_project_package_prefix(const char *dir)
{
    char *path = realpath(dir, NULL);
    P2sStrbuf prefix;
    p2s_strbuf_init(&prefix);
    if (!path)
        return p2s_strbuf_detach(&prefix, NULL);
    P2sStrbuf probe;
    p2s_strbuf_init(&probe);
    size_t len = strlen(path);
    for (;;) {
        p2s_strbuf_reset(&probe);
        p2s_strbuf_addf(&probe, "%.*s/__init__.py", (int)len, path);
        if (len <= 1 || access(probe.buf, F_OK) != 0)
            break;
        size_t start = len;
        while (start > 0 && path[start - 1] != '/')
            start--;
        P2sStrbuf next;
        p2s_strbuf_init(&next);
        p2s_strbuf_add(&next, path + start, len - start);
        if (prefix.len)
            p2s_strbuf_addf(&next, ".%s", prefix.buf);
        p2s_strbuf_release(&prefix);
        prefix = next;
        len = start > 1 ? start - 1 : 1;
    }
    p2s_strbuf_release(&probe);
    free(path);  /* from realpath */
    return p2s_strbuf_detach(&prefix, NULL);
}

/* prefix.a.b for rel `a/b.py`; the package's own name for `a/__init__.py`. */
static char *project__name_below(const char *package_prefix, const char *rel, bool *is_package)
{
    P2sStrbuf name;
    p2s_strbuf_init(&name);
    p2s_strbuf_adds(&name, package_prefix);
    size_t n = strlen(rel) - 3;  /* without ".py" */
    const char *base = strrchr(rel, '/');
    base = base ? base + 1 : rel;
    *is_package = strcmp(base, "__init__.py") == 0;
    if (*is_package)
        n = base == rel ? 0 : (size_t)(base - rel - 1);
    if (n && name.len)
        p2s_strbuf_addch(&name, '.');
    for (size_t i = 0; i < n; i++)
        p2s_strbuf_addch(&name, rel[i] == '/' ? '.' : rel[i]);
    return p2s_strbuf_detach(&name, NULL);
}

char *p2s_project_module_name(const P2sProject *self, const char *path, bool *is_package)
{
    for (size_t i = 0; i < self->roots.size; i++) {
        const char *root = self->roots.contents[i];
        if (strcmp(root, self->root) == 0 || !project__below(root, path))
            continue;
        return project__name_below("", path + strlen(root) + (strlen(root) > 1), is_package);
    }
    return NULL;
}

char *p2s_project_name_file(const P2sProject *self, const char *abs_root, const char *package_prefix,
                            const char *rel, bool *is_package)
{
    char *name = NULL;
    if (self && abs_root) {
        P2sStrbuf path;
        p2s_strbuf_init(&path);
        p2s_strbuf_addf(&path, "%s/%s", strcmp(abs_root, "/") == 0 ? "" : abs_root, rel);
        name = p2s_project_module_name(self, path.buf, is_package);
        p2s_strbuf_release(&path);
    }
    return name ? name : project__name_below(package_prefix, rel, is_package);
}

char *p2s_project_crawl_module_name(const char *path, char **crawl_root, bool *is_package)
{
    char *dir = project__dirname(path);
    char *prefix = p2s_project_package_prefix(dir);
    const char *base = strrchr(path, '/');
    char *name = project__name_below(prefix, base ? base + 1 : path, is_package);
    *crawl_root = project__resolve(dir);
    /* One directory up per package in the prefix. */
    for (const char *p = prefix; *crawl_root && *prefix && p; p = strchr(p + 1, '.')) {
        char *up = project__dirname(*crawl_root);
        p2s_free(*crawl_root);
        *crawl_root = up;
    }
    p2s_free(prefix);
    p2s_free(dir);
    return name;
}

/* root/a/b.py or root/a/b/__init__.py for name "a.b", when a regular file. */
static char *project__locate_below(const char *root, const char *name, size_t len, bool *is_package)
{
    P2sStrbuf path;
    p2s_strbuf_init(&path);
    for (int package = 0; package < 2; package++) {
        p2s_strbuf_reset(&path);
        p2s_strbuf_addf(&path, "%s/", strcmp(root, "/") == 0 ? "" : root);
        for (size_t i = 0; i < len; i++)
            p2s_strbuf_addch(&path, name[i] == '.' ? '/' : name[i]);
        p2s_strbuf_adds(&path, package ? "/__init__.py" : ".py");
        struct stat st;
        if (stat(path.buf, &st) == 0 && S_ISREG(st.st_mode)) {
            *is_package = package;
            return p2s_strbuf_detach(&path, NULL);
        }
    }
    p2s_strbuf_release(&path);
    return NULL;
}

char *p2s_project_locate(const P2sProject *self, const char *first_root, const char *name, size_t len,
                         bool *is_package)
{
    char *found = first_root ? project__locate_below(first_root, name, len, is_package) : NULL;
    for (size_t i = 0; !found && i < self->roots.size; i++)
        found = project__locate_below(self->roots.contents[i], name, len, is_package);
    return found;
}

char *p2s_project_absolute(const char *path)
{
    char *dir = project__dirname(path);
    char *resolved = project__resolve(dir);
    const char *base = strrchr(path, '/');
    char *abs = NULL;
    if (resolved) {
        P2sStrbuf full;
        p2s_strbuf_init(&full);
        p2s_strbuf_addf(&full, "%s/%s", strcmp(resolved, "/") == 0 ? "" : resolved, base ? base + 1 : path);
        abs = p2s_strbuf_detach(&full, NULL);
    }
    p2s_free(resolved);
    p2s_free(dir);
    return abs;
}

void p2s_project_release(P2sProject *self)
{
    p2s_free(self->root);
    p2s_strings_release(&self->roots);
    memset(self, 0, sizeof *self);
}
