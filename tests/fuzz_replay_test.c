/*
 * fuzz_replay_test.c - runs a fuzz target's LLVMFuzzerTestOneInput() (one
 * of fuzz/<name>_fuzz.c, linked in by tests/BUILD) on every file given on
 * the command line (the target's seed corpus, fuzz/corpus/<name>/) and on
 * every prefix of each, without libFuzzer: the target's oracles abort on a
 * violation, so the corpus stays a regression test in bazel test
 * //tests:all. The long runs with libFuzzer and sanitizers: fuzz/run.sh.
 * Run (Bazel): bazel test //tests:fuzz_desc_replay_test --test_output=all
 * Run (by hand): ./fuzz_desc_replay_test FILE... (e.g. the files of fuzz/corpus/desc)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Reads the whole file; NULL on failure. */
static uint8_t *read_all(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        return NULL;
    }
    uint8_t *buf = NULL;
    size_t cap = 0, n = 0;
    for (;;) {
        if (n == cap) {
            cap = cap == 0 ? 4096 : cap * 2;
            uint8_t *grown = realloc(buf, cap);
            if (grown == NULL) {
                free(buf);
                fclose(f);
                return NULL;
            }
            buf = grown;
        }
        const size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0) {
            break;
        }
    }
    const int err = ferror(f);
    fclose(f);
    if (err) {
        free(buf);
        return NULL;
    }
    *size = n;
    return buf;
}

int main(int argc, char **argv) {
    size_t files = 0, runs = 0;
    for (int i = 1; i < argc; ++i) {
        size_t size = 0;
        uint8_t *data = read_all(argv[i], &size);
        if (data == NULL) {
            fprintf(stderr, "FAILED: cannot read %s\n", argv[i]);
            return 1;
        }
        for (size_t k = 0; k <= size; ++k) { /* every prefix, the whole file last */
            LLVMFuzzerTestOneInput(data, k);
            ++runs;
        }
        free(data);
        ++files;
    }
    printf("fuzz_replay_test: %zu inputs (%zu runs with their prefixes): %s\n", files, runs,
           files > 0 ? "ok" : "FAILED (no input)");
    return files > 0 ? 0 : 1;
}
