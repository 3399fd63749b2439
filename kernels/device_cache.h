/*
 * device_cache.h - host side: a per-device cache of one int, for the
 * launchers' once-per-device lookups and settings (a kernel's dynamic
 * shared memory limit, the multiprocessor count), keyed by the CUDA device
 * index. The caller owns the storage:
 *   static int cache[OPP__DEVICE_CACHE_SLOTS];   (zero: nothing cached)
 * Thread-safe through relaxed atomics: two threads that miss at once both
 * look the value up and store the same one. A device index outside
 * 0 .. OPP__DEVICE_CACHE_SLOTS - 1 never caches (it looks up every time).
 */
#ifndef OPP_KERNELS_DEVICE_CACHE_H
#define OPP_KERNELS_DEVICE_CACHE_H

/* Devices a cache holds (indices 0 .. OPP__DEVICE_CACHE_SLOTS - 1). */
#define OPP__DEVICE_CACHE_SLOTS 64

/* @return device dev's cached value, 0 when none is cached (or dev is out
 * of range). cache: OPP__DEVICE_CACHE_SLOTS ints. */
static inline int opp__device_cache_get(const int *cache, int dev) {
    return dev >= 0 && dev < OPP__DEVICE_CACHE_SLOTS
               ? __atomic_load_n(&cache[dev], __ATOMIC_RELAXED)
               : 0;
}

/* Caches value (non-zero) for device dev; nothing when dev is out of range. */
static inline void opp__device_cache_set(int *cache, int dev, int value) {
    if (dev >= 0 && dev < OPP__DEVICE_CACHE_SLOTS) {
        __atomic_store_n(&cache[dev], value, __ATOMIC_RELAXED);
    }
}

#endif /* OPP_KERNELS_DEVICE_CACHE_H */
