/*
 * json_write.c - JSON strings for oppbench's output, encoded by Jansson
 * (see json_write.h).
 */
#include "bench/json_write.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

int bench_json_write_string(FILE *f, const char *s) {
    json_t *str = json_string(s);
    if (str == NULL) { /* not valid UTF-8: keep the ASCII bytes */
        char *ascii = strdup(s);
        if (ascii == NULL) {
            return -1;
        }
        for (char *p = ascii; *p != '\0'; ++p) {
            if ((unsigned char)*p >= 0x80) {
                *p = '?';
            }
        }
        str = json_string(ascii);
        free(ascii);
        if (str == NULL) {
            return -1;
        }
    }
    const int rc = json_dumpf(str, f, JSON_ENCODE_ANY);
    json_decref(str);
    return rc == 0 ? 0 : -1;
}
