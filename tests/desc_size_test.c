/*
 * desc_size_test.c - descriptors that can grow (lib/oppacked.h,
 * "Descriptors"; lib/desc_size.c): struct_size set by the *_init macros,
 * checked first by every function that takes a descriptor, a descriptor
 * never initialised (all 0xAB, all zero, fields set by hand) refused with
 * BAD_PARAM_NOT_INITIALISED, a newer header with NOT_SUPPORTED_VERSION,
 * and an older, smaller header (simulated by a struct that is a prefix of
 * today's) accepted with the defaults for every field it lacks - even when
 * the memory past its end holds garbage.
 * CPU only: every call here fails or succeeds before any CUDA call.
 * Run (Bazel): bazel test //tests:desc_size_test --test_output=all
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tests/test_util.h"

#define NOT_INIT_PACKED "not initialised with opp_attention_desc_init"
#define NOT_INIT_A24    "not initialised with opp_attention24_desc_init"

/* What a caller built against an older oppacked.h would have: today's
 * struct up to its last field without a default (max_seqlen_kv). */
typedef struct old_attention_desc {
    size_t struct_size;
    opp_dtype_t q_dtype, k_dtype, v_dtype, out_dtype;
    int32_t batch, num_heads, kv_num_heads, head_size, v_head_size;
    int64_t total_q, total_kv;
    int32_t max_seqlen_q, max_seqlen_kv;
} old_attention_desc_t;

typedef struct old_attention24_desc {
    size_t struct_size;
    opp_dtype_t q_dtype, k_dtype, v_dtype, out_dtype;
    int32_t input_rank, batch, num_heads, kv_num_heads, head_size, v_head_size;
    int32_t q_seqlen, kv_seqlen;
} old_attention24_desc_t;

_Static_assert(sizeof(old_attention_desc_t) == OPP_ATTENTION_DESC_MIN_SIZE,
               "the old packed header is the smallest accepted");
_Static_assert(sizeof(old_attention24_desc_t) == OPP_ATTENTION24_DESC_MIN_SIZE,
               "the old Attention-24 header is the smallest accepted");
_Static_assert(offsetof(old_attention_desc_t, max_seqlen_kv) ==
                   offsetof(opp_attention_desc_t, max_seqlen_kv),
               "the old struct is a prefix of today's");
_Static_assert(offsetof(old_attention24_desc_t, kv_seqlen) ==
                   offsetof(opp_attention24_desc_t, kv_seqlen),
               "the old struct is a prefix of today's");

// --- fixtures

static void fill_packed(opp_attention_desc_t *d) {
    d->q_dtype = d->k_dtype = d->v_dtype = d->out_dtype = OPP_DTYPE_F16;
    d->batch = 2;
    d->num_heads = 4;
    d->kv_num_heads = 2;
    d->head_size = 64;
    d->total_q = d->total_kv = 10;
    d->max_seqlen_q = d->max_seqlen_kv = 7;
}

static void fill_a24(opp_attention24_desc_t *d) {
    d->q_dtype = d->k_dtype = d->v_dtype = d->out_dtype = OPP_DTYPE_BF16;
    d->batch = 2;
    d->num_heads = 4;
    d->head_size = 64;
    d->q_seqlen = 3;
    d->kv_seqlen = 9;
}

static const int32_t k_cu[3] = {0, 3, 10};

/* Every function that takes a packed descriptor returns want with a message
 * containing text. The pointers are fake but aligned: nothing reaches them. */
static void expect_packed_everywhere(const opp_attention_desc_t *d, opp_status_t want,
                                     const char *text) {
    static _Alignas(256) char fake[256];
    const opp_varlen_t varlen = {(const int32_t *)fake, (const int32_t *)fake};
    size_t ws = 12345;
    const char *name = "unchanged";
    assert_opp_status(opp_attention_claim_check(d), want, text);
    assert_opp_status(opp_attention_desc_check(d), want, text);
    assert_opp_status(opp_varlen_check(d, k_cu, 3, k_cu, 3), want, text);
    assert_opp_status(opp_attention_kernel_query(d, 90, &name), want, text);
    assert_null(name);
    assert_opp_status(opp_packed_attention_workspace_size(d, &ws), want, text);
    assert_int_equal(ws, 12345);
    assert_opp_status(opp_packed_attention_fwd(d, &varlen, fake, fake, fake, fake, fake, 256, NULL),
                      want, text);
    assert_opp_status(opp_packed_attention_fwd_lse(d, &varlen, fake, fake, fake, fake,
                                                   (float *)fake, fake, 256, NULL),
                      want, text);
}

static void expect_a24_everywhere(const opp_attention24_desc_t *d, opp_status_t want,
                                  const char *text) {
    static _Alignas(256) char fake[256];
    size_t ws = 12345;
    const char *name = "unchanged";
    assert_opp_status(opp_attention24_desc_check(d), want, text);
    assert_opp_status(opp_attention24_kernel_query(d, 90, &name), want, text);
    assert_null(name);
    assert_opp_status(opp_attention24_nonpad_workspace_size(d, &ws), want, text);
    assert_int_equal(ws, 12345);
    assert_opp_status(opp_attention24_nonpad_fwd(d, (const int64_t *)fake, fake, fake, fake, fake,
                                                 fake, 256, NULL),
                      want, text);
    assert_opp_status(opp_attention24_nonpad_fwd_lse(d, (const int64_t *)fake, fake, fake, fake,
                                                     fake, (float *)fake, fake, 256, NULL),
                      want, text);
}

// --- init

// The init macros set struct_size to the caller's sizeof and the documented defaults.
static void test_desc_size_init_sets_struct_size_and_defaults(void **state) {
    (void)state;
    opp_attention_desc_t d;
    memset(&d, 0xAB, sizeof d);
    opp_attention_desc_init(&d);
    assert_int_equal(d.struct_size, sizeof(opp_attention_desc_t));
    assert_int_equal(d.algo, OPP_ALGO_AUTO);
    assert_int_equal(d.q_dtype, OPP_DTYPE_UNDEFINED);
    assert_int_equal(d.out_row_stride, 0);
    opp_attention24_desc_t a;
    memset(&a, 0xAB, sizeof a);
    opp_attention24_desc_init(&a);
    assert_int_equal(a.struct_size, sizeof(opp_attention24_desc_t));
    assert_int_equal(a.input_rank, 4);
    assert_int_equal(a.algo, OPP_ALGO_AUTO);
    /* the functions behind the macros (for bindings) give the same bytes */
    opp_attention_desc_t f;
    memset(&f, 0x5C, sizeof f);
    (opp_attention_desc_init)(&f);
    opp_attention_desc_init(&d);
    assert_memory_equal(&f, &d, sizeof d);
    opp_attention24_desc_t g;
    memset(&g, 0x5C, sizeof g);
    (opp_attention24_desc_init)(&g);
    assert_memory_equal(&g, &a, sizeof a);
    opp_attention_desc_init(NULL); /* documented no-ops */
    opp_attention24_desc_init(NULL);
}

// init_sized writes no byte at or past the caller's struct_size.
static void test_desc_size_init_sized_stays_within_struct_size(void **state) {
    (void)state;
    unsigned char buf[sizeof(opp_attention_desc_t)];
    memset(buf, 0xAB, sizeof buf);
    opp_attention_desc_init_sized((opp_attention_desc_t *)(void *)buf, 80);
    for (size_t i = 80; i < sizeof buf; ++i) {
        assert_int_equal(buf[i], 0xAB);
    }
    size_t s;
    memcpy(&s, buf, sizeof s);
    assert_int_equal(s, 80);
    unsigned char buf24[sizeof(opp_attention24_desc_t)];
    memset(buf24, 0xAB, sizeof buf24);
    opp_attention24_desc_init_sized((opp_attention24_desc_t *)(void *)buf24,
                                    OPP_ATTENTION24_DESC_MIN_SIZE);
    for (size_t i = OPP_ATTENTION24_DESC_MIN_SIZE; i < sizeof buf24; ++i) {
        assert_int_equal(buf24[i], 0xAB);
    }
}

// --- never initialised

// Every byte 0xAB: every entry says "not initialised", before any other fault.
static void test_desc_size_all_0xab_not_initialised(void **state) {
    (void)state;
    opp_attention_desc_t d;
    memset(&d, 0xAB, sizeof d);
    expect_packed_everywhere(&d, OPP_STATUS_BAD_PARAM_NOT_INITIALISED, NOT_INIT_PACKED);
    opp_attention24_desc_t a;
    memset(&a, 0xAB, sizeof a);
    expect_a24_everywhere(&a, OPP_STATUS_BAD_PARAM_NOT_INITIALISED, NOT_INIT_A24);
}

// All zero (e.g. "= {0}"), even with every other field then set validly: not initialised.
static void test_desc_size_zeroed_not_initialised(void **state) {
    (void)state;
    opp_attention_desc_t d;
    memset(&d, 0, sizeof d);
    expect_packed_everywhere(&d, OPP_STATUS_BAD_PARAM_NOT_INITIALISED, NOT_INIT_PACKED);
    fill_packed(&d);
    d.algo = OPP_ALGO_EXACT;
    expect_packed_everywhere(&d, OPP_STATUS_BAD_PARAM_NOT_INITIALISED, NOT_INIT_PACKED);
    d.struct_size = sizeof d; /* the same fields, initialised: accepted */
    assert_opp_ok(opp_attention_desc_check(&d));
    opp_attention24_desc_t a;
    memset(&a, 0, sizeof a);
    expect_a24_everywhere(&a, OPP_STATUS_BAD_PARAM_NOT_INITIALISED, NOT_INIT_A24);
    fill_a24(&a);
    a.input_rank = 4;
    expect_a24_everywhere(&a, OPP_STATUS_BAD_PARAM_NOT_INITIALISED, NOT_INIT_A24);
    a.struct_size = sizeof a;
    assert_opp_ok(opp_attention24_desc_check(&a));
}

// struct_size values no init could write: below the minimum, unaligned, huge.
static void test_desc_size_implausible_sizes_not_initialised(void **state) {
    (void)state;
    const size_t bad[] = {1,
                          8,
                          OPP_ATTENTION_DESC_MIN_SIZE - 8,
                          OPP_ATTENTION_DESC_MIN_SIZE + 4,
                          sizeof(opp_attention_desc_t) - 1,
                          4104,
                          SIZE_MAX};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        opp_attention_desc_t d;
        opp_attention_desc_init(&d);
        fill_packed(&d);
        d.struct_size = bad[i];
        assert_opp_status(opp_attention_desc_check(&d), OPP_STATUS_BAD_PARAM_NOT_INITIALISED,
                          NOT_INIT_PACKED);
    }
    const size_t bad24[] = {1,
                            8,
                            OPP_ATTENTION24_DESC_MIN_SIZE - 8,
                            OPP_ATTENTION24_DESC_MIN_SIZE + 4,
                            sizeof(opp_attention24_desc_t) - 1,
                            4104,
                            SIZE_MAX};
    for (size_t i = 0; i < sizeof bad24 / sizeof bad24[0]; ++i) {
        opp_attention24_desc_t a;
        opp_attention24_desc_init(&a);
        fill_a24(&a);
        a.struct_size = bad24[i];
        assert_opp_status(opp_attention24_desc_check(&a), OPP_STATUS_BAD_PARAM_NOT_INITIALISED,
                          NOT_INIT_A24);
    }
}

// A larger, plausible struct_size (a newer header than the library): NOT_SUPPORTED_VERSION.
static void test_desc_size_newer_header_not_supported(void **state) {
    (void)state;
    opp_attention_desc_t d;
    opp_attention_desc_init(&d);
    fill_packed(&d);
    d.struct_size = sizeof d + 8;
    expect_packed_everywhere(&d, OPP_STATUS_NOT_SUPPORTED_VERSION, "newer oppacked.h");
    opp_attention24_desc_t a;
    opp_attention24_desc_init(&a);
    fill_a24(&a);
    a.struct_size = sizeof a + 64;
    expect_a24_everywhere(&a, OPP_STATUS_NOT_SUPPORTED_VERSION, "newer oppacked.h");
}

// --- an older header

// An old, smaller packed struct is accepted; the fields it lacks take their defaults,
// whatever the memory after it holds.
static void test_desc_size_old_packed_header_takes_defaults(void **state) {
    (void)state;
    /* the old caller's struct, followed by garbage where today's fields lie */
    union {
        opp_attention_desc_t full;
        unsigned char bytes[sizeof(opp_attention_desc_t)];
    } mem;
    memset(mem.bytes, 0xAB, sizeof mem.bytes);
    old_attention_desc_t *old = (old_attention_desc_t *)(void *)mem.bytes;
    opp_attention_desc_init_sized((opp_attention_desc_t *)(void *)old, sizeof *old);
    old->q_dtype = old->k_dtype = old->v_dtype = old->out_dtype = OPP_DTYPE_F16;
    old->batch = 2;
    old->num_heads = 4;
    old->kv_num_heads = 2;
    old->head_size = 64;
    old->total_q = old->total_kv = 10;
    old->max_seqlen_q = old->max_seqlen_kv = 7;
    const opp_attention_desc_t *as_new = &mem.full;
    /* today's caller with the same fields and defaults */
    opp_attention_desc_t now;
    opp_attention_desc_init(&now);
    fill_packed(&now);
    assert_opp_ok(opp_attention_claim_check(as_new));
    assert_opp_ok(opp_attention_desc_check(as_new));
    assert_opp_ok(opp_varlen_check(as_new, k_cu, 3, k_cu, 3));
    size_t ws_old = 0, ws_now = 1;
    assert_opp_ok(opp_packed_attention_workspace_size(as_new, &ws_old));
    assert_opp_ok(opp_packed_attention_workspace_size(&now, &ws_now));
    assert_int_equal(ws_old, ws_now);
    const char *name_old = NULL, *name_now = NULL;
    assert_opp_ok(opp_attention_kernel_query(as_new, 90, &name_old));
    assert_opp_ok(opp_attention_kernel_query(&now, 90, &name_now));
    assert_string_equal(name_old, name_now); /* algo AUTO: the FAST kernel on sm_90 */
    /* the check read the garbage nowhere: with today's size it would */
    mem.full.struct_size = sizeof mem.full;
    assert_opp_status(opp_attention_desc_check(&mem.full), OPP_STATUS_BAD_PARAM_SCALE, "scale");
}

// A struct_size that ends inside the optional fields: those within it are read, the rest default.
static void test_desc_size_partial_optional_fields(void **state) {
    (void)state;
    opp_attention_desc_t d;
    opp_attention_desc_init(&d);
    fill_packed(&d);
    d.is_causal = 7; /* within 80 bytes: read, and invalid */
    memset(&d.softcap, 0xFF, sizeof d.softcap);
    d.algo = (opp_algo_t)99;
    d.struct_size = offsetof(opp_attention_desc_t, softcap);
    assert_int_equal(d.struct_size % 8, 0);
    assert_opp_status(opp_attention_desc_check(&d), OPP_STATUS_BAD_PARAM_IS_CAUSAL,
                      "is_causal = 7");
    d.is_causal = 1; /* softcap (NaN bytes) and algo (99) lie past 80 bytes: defaults */
    assert_opp_ok(opp_attention_desc_check(&d));
    d.struct_size = sizeof d; /* the whole struct: softcap is read */
    assert_opp_status(opp_attention_desc_check(&d), OPP_STATUS_BAD_PARAM_SOFTCAP, "softcap");
}

// The same for the Attention-24 descriptor: an old header gets scale, causal, softcap, algo
// defaults.
static void test_desc_size_old_attention24_header_takes_defaults(void **state) {
    (void)state;
    union {
        opp_attention24_desc_t full;
        unsigned char bytes[sizeof(opp_attention24_desc_t)];
    } mem;
    memset(mem.bytes, 0xAB, sizeof mem.bytes);
    old_attention24_desc_t *old = (old_attention24_desc_t *)(void *)mem.bytes;
    opp_attention24_desc_init_sized((opp_attention24_desc_t *)(void *)old, sizeof *old);
    assert_int_equal(old->input_rank, 4);
    old->q_dtype = old->k_dtype = old->v_dtype = old->out_dtype = OPP_DTYPE_BF16;
    old->batch = 2;
    old->num_heads = 4;
    old->head_size = 64;
    old->q_seqlen = 3;
    old->kv_seqlen = 9;
    opp_attention24_desc_t now;
    opp_attention24_desc_init(&now);
    fill_a24(&now);
    assert_opp_ok(opp_attention24_desc_check(&mem.full));
    size_t ws_old = 0, ws_now = 1;
    assert_opp_ok(opp_attention24_nonpad_workspace_size(&mem.full, &ws_old));
    assert_opp_ok(opp_attention24_nonpad_workspace_size(&now, &ws_now));
    assert_int_equal(ws_old, ws_now);
    const char *name_old = NULL, *name_now = NULL;
    assert_opp_ok(opp_attention24_kernel_query(&mem.full, 80, &name_old));
    assert_opp_ok(opp_attention24_kernel_query(&now, 80, &name_now));
    assert_string_equal(name_old, name_now);
    mem.full.struct_size = sizeof mem.full;
    assert_opp_status(opp_attention24_desc_check(&mem.full), OPP_STATUS_BAD_PARAM_SCALE, "scale");
}

// The checks never write the caller's descriptor.
static void test_desc_size_descriptor_never_written(void **state) {
    (void)state;
    opp_attention_desc_t d, copy;
    opp_attention_desc_init(&d);
    fill_packed(&d);
    d.struct_size = OPP_ATTENTION_DESC_MIN_SIZE;
    memcpy(&copy, &d, sizeof d);
    assert_opp_ok(opp_attention_desc_check(&d));
    assert_opp_ok(opp_varlen_check(&d, k_cu, 3, k_cu, 3));
    assert_memory_equal(&d, &copy, sizeof d);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_desc_size_init_sets_struct_size_and_defaults),
        cmocka_unit_test(test_desc_size_init_sized_stays_within_struct_size),
        cmocka_unit_test(test_desc_size_all_0xab_not_initialised),
        cmocka_unit_test(test_desc_size_zeroed_not_initialised),
        cmocka_unit_test(test_desc_size_implausible_sizes_not_initialised),
        cmocka_unit_test(test_desc_size_newer_header_not_supported),
        cmocka_unit_test(test_desc_size_old_packed_header_takes_defaults),
        cmocka_unit_test(test_desc_size_partial_optional_fields),
        cmocka_unit_test(test_desc_size_old_attention24_header_takes_defaults),
        cmocka_unit_test(test_desc_size_descriptor_never_written),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
