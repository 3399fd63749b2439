/*
 * desc_size.c - the *_init functions of the public descriptors and the
 * loaders that read a caller's descriptor by its struct_size
 * (lib/internal/desc_size.h; the rules: lib/oppacked.h, "Descriptors").
 *
 * A descriptor's struct_size is the sizeof its caller's compiler saw. A
 * value that no *_init could have written (0, garbage, below the struct's
 * *_MIN_SIZE, not a multiple of 8) means the descriptor was never
 * initialised; a plausible value above this library's sizeof means a newer
 * header. The loaders copy the caller's first struct_size bytes over the
 * defaults, so a field an older header does not have takes its default.
 * Pure host code: no CUDA, no libm.
 */
#include <stdint.h>
#include <string.h>

#include "lib/internal/check.h"
#include "lib/internal/desc_size.h"

/* struct_size values are multiples of this (sizeof of a struct that holds a
 * size_t and int64 fields). */
#define DESC_SIZE_ALIGN 8
/* Above this, a struct_size is garbage rather than a newer header. */
#define DESC_SIZE_PLAUSIBLE_MAX 4096

// --- defaults

static opp_attention_desc_t attention_defaults(void) {
    opp_attention_desc_t d;
    memset(&d, 0, sizeof d); /* padding bytes too */
    d.q_dtype = d.k_dtype = d.v_dtype = d.out_dtype = OPP_DTYPE_UNDEFINED;
    d.scale = 0.0f;
    d.is_causal = 0;
    d.softcap = 0.0f;
    d.algo = OPP_ALGO_AUTO;
    return d;
}

static opp_attention24_desc_t attention24_defaults(void) {
    opp_attention24_desc_t d;
    memset(&d, 0, sizeof d);
    d.q_dtype = d.k_dtype = d.v_dtype = d.out_dtype = OPP_DTYPE_UNDEFINED;
    d.input_rank = 4;
    d.algo = OPP_ALGO_AUTO;
    return d;
}

/* Writes struct_size and the first min(struct_size, lib_size) bytes of the
 * defaults (struct_size itself included) to desc. */
static void init_sized(void *desc, void *defaults, size_t lib_size, size_t struct_size) {
    if (desc == NULL || struct_size < sizeof(size_t)) {
        return;
    }
    memcpy(defaults, &struct_size, sizeof struct_size); /* struct_size is the first field */
    memcpy(desc, defaults, struct_size < lib_size ? struct_size : lib_size);
}

// --- loading

/* The caller's struct_size of desc, validated. `type` and `init` name the
 * struct and its init function in messages. */
static opp_status_t check_size(const void *desc, size_t lib_size, size_t min_size, const char *type,
                               const char *init, size_t *size) {
    OPP_RETURN_IF(desc == NULL, OPP_STATUS_BAD_PARAM_NULL_POINTER, "desc is NULL");
    size_t s;
    memcpy(&s, desc, sizeof s);
    const int aligned = s % DESC_SIZE_ALIGN == 0;
    OPP_RETURN_IF(aligned && s > lib_size && s <= DESC_SIZE_PLAUSIBLE_MAX,
                  OPP_STATUS_NOT_SUPPORTED_VERSION,
                  "desc->struct_size = %zu is larger than this library's %s (%zu bytes, "
                  "liboppacked %s): the caller was built against a newer oppacked.h, or desc "
                  "was not initialised with %s",
                  s, type, lib_size, opp_version_string(), init);
    OPP_RETURN_IF(!aligned || s < min_size || s > lib_size, OPP_STATUS_BAD_PARAM_NOT_INITIALISED,
                  "desc->struct_size = %zu is not a size %s sets (a multiple of %d from %zu to "
                  "%zu): desc was not initialised with %s",
                  s, init, DESC_SIZE_ALIGN, min_size, lib_size, init);
    *size = s;
    return OPP_STATUS_SUCCESS;
}

opp_status_t opp__attention_desc_load(const opp_attention_desc_t *desc,
                                      opp_attention_desc_t *local) {
    size_t size = 0;
    OPP_TRY(check_size(desc, sizeof *local, OPP_ATTENTION_DESC_MIN_SIZE, "opp_attention_desc_t",
                       "opp_attention_desc_init", &size));
    *local = attention_defaults();
    memcpy(local, desc, size);
    local->struct_size = sizeof *local;
    return OPP_STATUS_SUCCESS;
}

opp_status_t opp__attention24_desc_load(const opp_attention24_desc_t *desc,
                                        opp_attention24_desc_t *local) {
    size_t size = 0;
    OPP_TRY(check_size(desc, sizeof *local, OPP_ATTENTION24_DESC_MIN_SIZE, "opp_attention24_desc_t",
                       "opp_attention24_desc_init", &size));
    *local = attention24_defaults();
    memcpy(local, desc, size);
    local->struct_size = sizeof *local;
    return OPP_STATUS_SUCCESS;
}

// --- public entry

void opp_attention_desc_init_sized(opp_attention_desc_t *desc, size_t struct_size) {
    opp_attention_desc_t d = attention_defaults();
    init_sized(desc, &d, sizeof d, struct_size);
}

void(opp_attention_desc_init)(opp_attention_desc_t *desc) {
    opp_attention_desc_init_sized(desc, sizeof *desc);
}

void opp_attention24_desc_init_sized(opp_attention24_desc_t *desc, size_t struct_size) {
    opp_attention24_desc_t d = attention24_defaults();
    init_sized(desc, &d, sizeof d, struct_size);
}

void(opp_attention24_desc_init)(opp_attention24_desc_t *desc) {
    opp_attention24_desc_init_sized(desc, sizeof *desc);
}
