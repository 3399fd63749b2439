/*
 * device_cache_test.c - the launchers' per-device cache of one int
 * (kernels/device_cache.h; flash_smem_once and hop_sm_count use it): an
 * empty cache reads 0, a stored value reads back for its device only,
 * devices outside 0 .. OPP__DEVICE_CACHE_SLOTS - 1 never cache (and never
 * touch the array), and threads storing at once leave every slot readable.
 * CPU only.
 * Run (Bazel): bazel test //tests:device_cache_test --test_output=all
 */
#include <pthread.h>
#include <string.h>

#include "kernels/device_cache.h"
#include "tests/test_util.h"

// An empty cache reads 0 (nothing cached) on every device.
static void test_device_cache_empty_reads_zero(void **state) {
    (void)state;
    static int cache[OPP__DEVICE_CACHE_SLOTS];
    for (int dev = 0; dev < OPP__DEVICE_CACHE_SLOTS; ++dev) {
        assert_int_equal(opp__device_cache_get(cache, dev), 0);
    }
}

// A stored value reads back for its device, and only for it.
static void test_device_cache_set_reads_back_per_device(void **state) {
    (void)state;
    static int cache[OPP__DEVICE_CACHE_SLOTS];
    opp__device_cache_set(cache, 0, 132);
    opp__device_cache_set(cache, OPP__DEVICE_CACHE_SLOTS - 1, 7);
    assert_int_equal(opp__device_cache_get(cache, 0), 132);
    assert_int_equal(opp__device_cache_get(cache, OPP__DEVICE_CACHE_SLOTS - 1), 7);
    for (int dev = 1; dev < OPP__DEVICE_CACHE_SLOTS - 1; ++dev) {
        assert_int_equal(opp__device_cache_get(cache, dev), 0);
    }
}

// Devices out of range: nothing stored, 0 read, the array (and its
// neighbours in memory) untouched.
static void test_device_cache_out_of_range_never_caches(void **state) {
    (void)state;
    int mem[OPP__DEVICE_CACHE_SLOTS + 2];
    memset(mem, 0, sizeof mem);
    int *cache = mem + 1;
    const int devs[] = {-1, -2, OPP__DEVICE_CACHE_SLOTS, OPP__DEVICE_CACHE_SLOTS + 1, 1 << 30};
    for (size_t i = 0; i < sizeof devs / sizeof devs[0]; ++i) {
        opp__device_cache_set(cache, devs[i], 5);
        assert_int_equal(opp__device_cache_get(cache, devs[i]), 0);
    }
    for (int i = 0; i < OPP__DEVICE_CACHE_SLOTS + 2; ++i) {
        assert_int_equal(mem[i], 0);
    }
}

#define THREADS 8

static int shared_cache[OPP__DEVICE_CACHE_SLOTS];

/* Each thread stores value dev + 1 in every slot, as launchers on several
 * host threads that miss at once do (the same value per device). */
static void *store_all(void *arg) {
    (void)arg;
    for (int round = 0; round < 1000; ++round) {
        for (int dev = 0; dev < OPP__DEVICE_CACHE_SLOTS; ++dev) {
            if (opp__device_cache_get(shared_cache, dev) == 0) {
                opp__device_cache_set(shared_cache, dev, dev + 1);
            }
        }
    }
    return NULL;
}

// Threads missing and storing at once: every slot ends with its value.
static void test_device_cache_concurrent_stores(void **state) {
    (void)state;
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; ++i) {
        assert_int_equal(pthread_create(&t[i], NULL, store_all, NULL), 0);
    }
    for (int i = 0; i < THREADS; ++i) {
        assert_int_equal(pthread_join(t[i], NULL), 0);
    }
    for (int dev = 0; dev < OPP__DEVICE_CACHE_SLOTS; ++dev) {
        assert_int_equal(opp__device_cache_get(shared_cache, dev), dev + 1);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_device_cache_empty_reads_zero),
        cmocka_unit_test(test_device_cache_set_reads_back_per_device),
        cmocka_unit_test(test_device_cache_out_of_range_never_caches),
        cmocka_unit_test(test_device_cache_concurrent_stores),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
