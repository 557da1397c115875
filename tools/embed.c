/* embed.c — writes a C file that holds a data file's bytes: `embed SYMBOL IN OUT` defines
 * `const char SYMBOL[]` (NUL-terminated) and `const size_t SYMBOL_len`. Build-time only. */
#include <stdio.h>

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: embed SYMBOL IN OUT\n");
        return 2;
    }
    FILE *in = fopen(argv[2], "rb");
    if (!in) {
        perror(argv[2]);
        return 1;
    }
    FILE *out = fopen(argv[3], "w");
    if (!out) {
        perror(argv[3]);
        fclose(in);
        return 1;
    }
    fprintf(out, "/* generated from %s by tools/embed.c; do not edit */\n#include <stddef.h>\n", argv[2]);
    fprintf(out, "const char %s[] = {", argv[1]);
    size_t n = 0;
    int c;
    while ((c = fgetc(in)) != EOF) {
        fprintf(out, "%s%d,", n % 20 == 0 ? "\n    " : "", c);
        n++;
    }
    fprintf(out, "\n    0\n};\nconst size_t %s_len = %zu;\n", argv[1], n);
    int failed = ferror(in) || fclose(out) != 0;
    fclose(in);
    return failed ? 1 : 0;
}
