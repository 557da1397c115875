/* dir_entries.h — for the unit tests that check which files a test left behind. */
#ifndef P2S_TEST_DIR_ENTRIES_H
#define P2S_TEST_DIR_ENTRIES_H

#include <dirent.h>
#include <string.h>

/* How many entries dir holds, . and .. aside. */
static inline int p2s_test_entries_in(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            n++;
    closedir(d);
    return n;
}

#endif
