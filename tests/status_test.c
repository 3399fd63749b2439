/*
 * status_test.c - CPU tests of the status list (names, descriptions,
 * pinned values, categories), the thread-local last-error buffer, element
 * type names and sizes, and the runtime version (lib/status.c,
 * lib/dtype.c, lib/version.c).
 */
#include <pthread.h>
#include <string.h>

#include "lib/internal/check.h"
#include "tests/test_util.h"

// --- status names, descriptions, values

typedef struct status_row {
    opp_status_t status;
    int value;
    const char *name;
} status_row_t;

/* Written out by hand (not from OPP_STATUS_MAP) so that it pins every value
 * and name independently of the list it checks. */
static const status_row_t k_statuses[] = {
    {OPP_STATUS_SUCCESS, 0, "SUCCESS"},
    {OPP_STATUS_BAD_PARAM, 1000, "BAD_PARAM"},
    {OPP_STATUS_BAD_PARAM_NULL_POINTER, 1001, "BAD_PARAM_NULL_POINTER"},
    {OPP_STATUS_BAD_PARAM_MISALIGNED, 1002, "BAD_PARAM_MISALIGNED"},
    {OPP_STATUS_BAD_PARAM_NUM_HEADS, 1003, "BAD_PARAM_NUM_HEADS"},
    {OPP_STATUS_BAD_PARAM_KV_NUM_HEADS, 1004, "BAD_PARAM_KV_NUM_HEADS"},
    {OPP_STATUS_BAD_PARAM_KV_HEADS_NOT_DIVIDING, 1005, "BAD_PARAM_KV_HEADS_NOT_DIVIDING"},
    {OPP_STATUS_BAD_PARAM_HEAD_SIZE, 1006, "BAD_PARAM_HEAD_SIZE"},
    {OPP_STATUS_BAD_PARAM_V_HEAD_SIZE, 1007, "BAD_PARAM_V_HEAD_SIZE"},
    {OPP_STATUS_BAD_PARAM_BATCH, 1008, "BAD_PARAM_BATCH"},
    {OPP_STATUS_BAD_PARAM_TOTAL, 1009, "BAD_PARAM_TOTAL"},
    {OPP_STATUS_BAD_PARAM_MAX_SEQLEN, 1010, "BAD_PARAM_MAX_SEQLEN"},
    {OPP_STATUS_BAD_PARAM_SCALE, 1011, "BAD_PARAM_SCALE"},
    {OPP_STATUS_BAD_PARAM_SOFTCAP, 1012, "BAD_PARAM_SOFTCAP"},
    {OPP_STATUS_BAD_PARAM_IS_CAUSAL, 1013, "BAD_PARAM_IS_CAUSAL"},
    {OPP_STATUS_BAD_PARAM_DTYPE, 1014, "BAD_PARAM_DTYPE"},
    {OPP_STATUS_BAD_PARAM_DTYPE_MISMATCH, 1015, "BAD_PARAM_DTYPE_MISMATCH"},
    {OPP_STATUS_BAD_PARAM_STRIDE, 1016, "BAD_PARAM_STRIDE"},
    {OPP_STATUS_BAD_PARAM_ALGO, 1017, "BAD_PARAM_ALGO"},
    {OPP_STATUS_BAD_PARAM_SEQLENS_COUNT, 1018, "BAD_PARAM_SEQLENS_COUNT"},
    {OPP_STATUS_BAD_PARAM_SEQLENS_COUNT_MISMATCH, 1019, "BAD_PARAM_SEQLENS_COUNT_MISMATCH"},
    {OPP_STATUS_BAD_PARAM_SEQLENS_START, 1020, "BAD_PARAM_SEQLENS_START"},
    {OPP_STATUS_BAD_PARAM_SEQLENS_DECREASING, 1021, "BAD_PARAM_SEQLENS_DECREASING"},
    {OPP_STATUS_BAD_PARAM_SEQLENS_TOTAL, 1022, "BAD_PARAM_SEQLENS_TOTAL"},
    {OPP_STATUS_BAD_PARAM_WORKSPACE, 1023, "BAD_PARAM_WORKSPACE"},
    {OPP_STATUS_BAD_PARAM_SHAPE, 1024, "BAD_PARAM_SHAPE"},
    {OPP_STATUS_BAD_PARAM_MASK, 1025, "BAD_PARAM_MASK"},
    {OPP_STATUS_BAD_PARAM_NONPAD, 1026, "BAD_PARAM_NONPAD"},
    {OPP_STATUS_BAD_PARAM_QK_MATMUL_OUTPUT_MODE, 1027, "BAD_PARAM_QK_MATMUL_OUTPUT_MODE"},
    {OPP_STATUS_BAD_PARAM_SOFTMAX_PRECISION, 1028, "BAD_PARAM_SOFTMAX_PRECISION"},
    {OPP_STATUS_BAD_PARAM_PAST, 1029, "BAD_PARAM_PAST"},
    {OPP_STATUS_BAD_PARAM_NOT_INITIALISED, 1030, "BAD_PARAM_NOT_INITIALISED"},
    {OPP_STATUS_NOT_SUPPORTED, 2000, "NOT_SUPPORTED"},
    {OPP_STATUS_NOT_SUPPORTED_DTYPE, 2001, "NOT_SUPPORTED_DTYPE"},
    {OPP_STATUS_NOT_SUPPORTED_HEAD_SIZE, 2002, "NOT_SUPPORTED_HEAD_SIZE"},
    {OPP_STATUS_NOT_SUPPORTED_ARCH, 2003, "NOT_SUPPORTED_ARCH"},
    {OPP_STATUS_NOT_SUPPORTED_ALGO, 2004, "NOT_SUPPORTED_ALGO"},
    {OPP_STATUS_NOT_SUPPORTED_FEATURE, 2005, "NOT_SUPPORTED_FEATURE"},
    {OPP_STATUS_NOT_SUPPORTED_VERSION, 2006, "NOT_SUPPORTED_VERSION"},
    {OPP_STATUS_CUDA_ERROR, 3000, "CUDA_ERROR"},
    {OPP_STATUS_CUBLAS_ERROR, 3001, "CUBLAS_ERROR"},
    {OPP_STATUS_HOST_ALLOC_FAILED, 3002, "HOST_ALLOC_FAILED"},
    {OPP_STATUS_NO_DEVICE, 3003, "NO_DEVICE"},
    {OPP_STATUS_INTERNAL_ERROR, 9000, "INTERNAL_ERROR"},
};
#define NUM_STATUSES (sizeof k_statuses / sizeof k_statuses[0])

// Every enumerator keeps its pinned value and is named without the OPP_STATUS_ prefix.
static void test_status_name_every_value_pinned(void **state) {
    (void)state;
    for (size_t i = 0; i < NUM_STATUSES; ++i) {
        assert_int_equal((int)k_statuses[i].status, k_statuses[i].value);
        assert_string_equal(opp_status_name(k_statuses[i].status), k_statuses[i].name);
    }
}

// The hand-written table above covers every entry of OPP_STATUS_MAP.
static void test_status_map_table_complete(void **state) {
    (void)state;
    size_t in_map = 0;
#define COUNT_(name, value, text) ++in_map;
    OPP_STATUS_MAP(COUNT_)
#undef COUNT_
    assert_int_equal(in_map, NUM_STATUSES);
}

// opp_status_string returns each entry's description from OPP_STATUS_MAP.
static void test_status_string_every_value(void **state) {
    (void)state;
#define CHECK_STRING_(name, value, text)                             \
    assert_string_equal(opp_status_string(OPP_STATUS_##name), text); \
    assert_string_not_equal(opp_status_string(OPP_STATUS_##name), "unknown status");
    OPP_STATUS_MAP(CHECK_STRING_)
#undef CHECK_STRING_
    assert_string_equal(opp_status_string(OPP_STATUS_SUCCESS), "success");
    assert_string_equal(opp_status_string(OPP_STATUS_BAD_PARAM_SHAPE),
                        "a tensor shape is invalid or inconsistent");
}

// Values not in the list get "UNKNOWN_STATUS" / "unknown status", never NULL.
static void test_status_name_unknown_value(void **state) {
    (void)state;
    const int unknown[] = {-1, 1, 999, 1031, 1999, 2007, 3004, 8999, 9001, 123456};
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; ++i) {
        assert_string_equal(opp_status_name((opp_status_t)unknown[i]), "UNKNOWN_STATUS");
        assert_string_equal(opp_status_string((opp_status_t)unknown[i]), "unknown status");
    }
}

// OPP_STATUS_CATEGORY maps every value to its thousand, itself a listed status.
static void test_status_category_every_value(void **state) {
    (void)state;
    for (size_t i = 0; i < NUM_STATUSES; ++i) {
        const opp_status_t cat = OPP_STATUS_CATEGORY(k_statuses[i].status);
        assert_int_equal((int)cat, k_statuses[i].value / 1000 * 1000);
        assert_string_not_equal(opp_status_name(cat), "UNKNOWN_STATUS");
    }
    assert_int_equal(OPP_STATUS_CATEGORY(OPP_STATUS_SUCCESS), OPP_STATUS_SUCCESS);
    assert_int_equal(OPP_STATUS_CATEGORY(OPP_STATUS_BAD_PARAM_SEQLENS_TOTAL), OPP_STATUS_BAD_PARAM);
    assert_int_equal(OPP_STATUS_CATEGORY(OPP_STATUS_NOT_SUPPORTED_ALGO), OPP_STATUS_NOT_SUPPORTED);
    assert_int_equal(OPP_STATUS_CATEGORY(OPP_STATUS_NO_DEVICE), OPP_STATUS_CUDA_ERROR);
    assert_int_equal(OPP_STATUS_CATEGORY(OPP_STATUS_INTERNAL_ERROR), OPP_STATUS_INTERNAL_ERROR);
}

// --- last error

// Before any failure on this thread the message is "" (not NULL). Runs first.
static void test_last_error_initially_empty(void **state) {
    (void)state;
    assert_non_null(opp_last_error_message());
    assert_string_equal(opp_last_error_message(), "");
}

// opp__set_error records the message alone (no "file:line: ") and returns the status unchanged.
static void test_set_error_formats_message_without_location(void **state) {
    (void)state;
    const opp_status_t s =
        opp__set_error(OPP_STATUS_INTERNAL_ERROR, "lib/example.c", 42, "v = %d (%s)", 7, "seven");
    assert_int_equal(s, OPP_STATUS_INTERNAL_ERROR);
    assert_string_equal(opp_last_error_message(), "v = 7 (seven)");
}

// opp__clear_error empties the message; the pointer is never NULL.
static void test_clear_error_empties_message(void **state) {
    (void)state;
    opp__set_error(OPP_STATUS_BAD_PARAM, "f.c", 1, "something");
    opp__clear_error();
    assert_non_null(opp_last_error_message());
    assert_string_equal(opp_last_error_message(), "");
}

// A message longer than the buffer is truncated, NUL-terminated and ends in "...".
static void test_set_error_long_message_truncated(void **state) {
    (void)state;
    static char big[5000];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    opp__set_error(OPP_STATUS_BAD_PARAM, "lib/long.c", 7, "%s tail", big);
    const char *msg = opp_last_error_message();
    const size_t len = strlen(msg);
    assert_true(len >= 511);
    assert_true(len < sizeof big);
    assert_memory_equal(msg, "xxx", 3);
    assert_string_equal(msg + len - 4, "x...");
    assert_null(strstr(msg, "tail"));
}

// The source file name, however long, never enters the message.
static void test_set_error_ignores_file_name(void **state) {
    (void)state;
    static char file[3000];
    memset(file, 'f', sizeof file - 1);
    file[sizeof file - 1] = '\0';
    opp__set_error(OPP_STATUS_BAD_PARAM, file, 9, "after");
    assert_string_equal(opp_last_error_message(), "after");
    opp__set_error(OPP_STATUS_BAD_PARAM, NULL, 0, "no file");
    assert_string_equal(opp_last_error_message(), "no file");
}

// A failing public call records the user-facing message alone: no source file or line.
static void test_last_error_public_call_has_no_location(void **state) {
    (void)state;
    assert_int_equal(opp_attention_claim_check(NULL), OPP_STATUS_BAD_PARAM_NULL_POINTER);
    const char *msg = opp_last_error_message();
    assert_string_equal(msg, "desc is NULL");
    assert_null(strstr(msg, ".c:"));
}

// A successful call leaves the previous failure's message in place.
static void test_last_error_kept_after_success(void **state) {
    (void)state;
    opp_attention_desc_t desc;
    opp_attention_desc_init(&desc);
    assert_opp_status(opp_attention_claim_check(&desc), OPP_STATUS_BAD_PARAM_DTYPE, "q_dtype");
    desc.q_dtype = desc.k_dtype = desc.v_dtype = desc.out_dtype = OPP_DTYPE_F16;
    desc.num_heads = 1;
    desc.head_size = 8;
    assert_opp_ok(opp_attention_claim_check(&desc));
    assert_non_null(strstr(opp_last_error_message(), "q_dtype = 0 (undefined) is not set"));
}

typedef struct thread_probe {
    int num_heads;        /* in: fails claim_check with this num_heads */
    char initial[64];     /* out: message seen at thread start */
    char after[256];      /* out: message after this thread's failure */
    pthread_barrier_t *b; /* both threads fail before either reads back */
} thread_probe_t;

static void *probe_thread(void *arg) {
    thread_probe_t *p = arg;
    strncpy(p->initial, opp_last_error_message(), sizeof p->initial - 1);
    opp_attention_desc_t desc;
    opp_attention_desc_init(&desc);
    desc.q_dtype = desc.k_dtype = desc.v_dtype = desc.out_dtype = OPP_DTYPE_BF16;
    desc.num_heads = p->num_heads;
    desc.head_size = 64;
    (void)opp_attention_claim_check(&desc);
    pthread_barrier_wait(p->b);
    strncpy(p->after, opp_last_error_message(), sizeof p->after - 1);
    return NULL;
}

// The last error is per thread: new threads start at "" and never see each other's messages.
static void test_last_error_thread_local(void **state) {
    (void)state;
    opp__set_error(OPP_STATUS_BAD_PARAM, "main.c", 1, "main thread message");
    pthread_barrier_t barrier;
    assert_int_equal(pthread_barrier_init(&barrier, NULL, 2), 0);
    thread_probe_t a = {.num_heads = 0, .b = &barrier};
    thread_probe_t b = {.num_heads = -7, .b = &barrier};
    pthread_t ta, tb;
    assert_int_equal(pthread_create(&ta, NULL, probe_thread, &a), 0);
    assert_int_equal(pthread_create(&tb, NULL, probe_thread, &b), 0);
    assert_int_equal(pthread_join(ta, NULL), 0);
    assert_int_equal(pthread_join(tb, NULL), 0);
    pthread_barrier_destroy(&barrier);
    assert_string_equal(a.initial, "");
    assert_string_equal(b.initial, "");
    assert_non_null(strstr(a.after, "num_heads = 0 must be >= 1"));
    assert_non_null(strstr(b.after, "num_heads = -7 must be >= 1"));
    assert_string_equal(opp_last_error_message(), "main thread message");
}

// --- element types

// Every ONNX value 0..28 has its name; the four floating types use short names.
static void test_dtype_name_every_onnx_value(void **state) {
    (void)state;
    static const char *const names[] = {
        "undefined",      "f32",        "uint8",
        "int8",           "uint16",     "int16",
        "int32",          "int64",      "string",
        "bool",           "f16",        "f64",
        "uint32",         "uint64",     "complex64",
        "complex128",     "bf16",       "float8e4m3fn",
        "float8e4m3fnuz", "float8e5m2", "float8e5m2fnuz",
        "uint4",          "int4",       "float4e2m1",
        "float8e8m0",     "uint2",      "int2",
        "float6e2m3",     "float6e3m2",
    };
    assert_int_equal(sizeof names / sizeof names[0], 29);
    for (int v = 0; v < 29; ++v) {
        assert_string_equal(opp_dtype_name((opp_dtype_t)v), names[v]);
    }
    assert_string_equal(opp_dtype_name(OPP_DTYPE_F32), "f32");
    assert_string_equal(opp_dtype_name(OPP_DTYPE_F16), "f16");
    assert_string_equal(opp_dtype_name(OPP_DTYPE_BF16), "bf16");
    assert_string_equal(opp_dtype_name(OPP_DTYPE_F64), "f64");
    assert_string_equal(opp_dtype_name(OPP_DTYPE_UNDEFINED), "undefined");
}

// Values outside 0..28 are "invalid".
static void test_dtype_name_invalid_value(void **state) {
    (void)state;
    const int bad[] = {-1, 29, 99, 1000, -2147483647};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        assert_string_equal(opp_dtype_name((opp_dtype_t)bad[i]), "invalid");
    }
}

// Sizes: 4, 2, 2 for the storage types, 8 for f64, 0 for everything else.
static void test_dtype_size_values(void **state) {
    (void)state;
    assert_int_equal(opp_dtype_size(OPP_DTYPE_F32), 4);
    assert_int_equal(opp_dtype_size(OPP_DTYPE_F16), 2);
    assert_int_equal(opp_dtype_size(OPP_DTYPE_BF16), 2);
    assert_int_equal(opp_dtype_size(OPP_DTYPE_F64), 8);
    assert_int_equal(opp_dtype_size(OPP_DTYPE_UNDEFINED), 0);
    assert_int_equal(opp_dtype_size((opp_dtype_t)3 /* int8 */), 0);
    assert_int_equal(opp_dtype_size((opp_dtype_t)99), 0);
    assert_int_equal(opp_dtype_size((opp_dtype_t)-1), 0);
}

// --- version

// The runtime version equals the header's macros: 0.1.0 = 100.
static void test_version_matches_header(void **state) {
    (void)state;
    assert_int_equal(opp_version_number(), OPP_VERSION_NUMBER);
    assert_int_equal(opp_version_number(), 100);
    assert_string_equal(opp_version_string(), "0.1.0");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_last_error_initially_empty),
        cmocka_unit_test(test_last_error_thread_local),
        cmocka_unit_test(test_status_name_every_value_pinned),
        cmocka_unit_test(test_status_map_table_complete),
        cmocka_unit_test(test_status_string_every_value),
        cmocka_unit_test(test_status_name_unknown_value),
        cmocka_unit_test(test_status_category_every_value),
        cmocka_unit_test(test_set_error_formats_message_without_location),
        cmocka_unit_test(test_clear_error_empties_message),
        cmocka_unit_test(test_set_error_long_message_truncated),
        cmocka_unit_test(test_set_error_ignores_file_name),
        cmocka_unit_test(test_last_error_public_call_has_no_location),
        cmocka_unit_test(test_last_error_kept_after_success),
        cmocka_unit_test(test_dtype_name_every_onnx_value),
        cmocka_unit_test(test_dtype_name_invalid_value),
        cmocka_unit_test(test_dtype_size_values),
        cmocka_unit_test(test_version_matches_header),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
