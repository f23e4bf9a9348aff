/*
 * replay: the main of a fuzz harness outside libFuzzer (the plain and the
 * sanitizer builds): runs LLVMFuzzerTestOneInput once per file named on
 * the command line, a directory standing for every file in it (not
 * recursive). Exits 0 when every input ran (a crash or a sanitizer report
 * ends it before), 1 when an argument cannot be read or no input was found
 * (an empty corpus would test nothing).
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static int run_file(const char *path)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        perror(path);
        return -1;
    }
    size_t cap = 1 << 16, len = 0;
    uint8_t *buf = xmalloc(cap);
    size_t n;
    while ((n = fread(buf + len, 1, cap - len, fp)) > 0) {
        len += n;
        if (len == cap) {
            cap *= 2;
            buf = xrealloc(buf, cap);
        }
    }
    fclose(fp);
    LLVMFuzzerTestOneInput(buf, len);
    xfree(buf);
    return 0;
}

int main(int argc, char **argv)
{
    size_t inputs = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            perror(argv[i]);
            return 1;
        }
        if (!S_ISDIR(st.st_mode)) {
            if (run_file(argv[i]))
                return 1;
            inputs++;
            continue;
        }
        DIR *d = opendir(argv[i]);
        if (!d) {
            perror(argv[i]);
            return 1;
        }
        struct dirent *de;
        while ((de = readdir(d)) != NULL) {
            if (de->d_name[0] == '.')
                continue;
            size_t plen = strlen(argv[i]) + strlen(de->d_name) + 2;
            char *p = xmalloc(plen);
            snprintf(p, plen, "%s/%s", argv[i], de->d_name);
            struct stat fs;
            int rc = stat(p, &fs) == 0 && S_ISREG(fs.st_mode) ? run_file(p) : 1;
            xfree(p);
            if (rc < 0) {
                closedir(d);
                return 1;
            }
            inputs += rc == 0;
        }
        closedir(d);
    }
    printf("%zu inputs ran\n", inputs);
    return inputs ? 0 : 1;
}
