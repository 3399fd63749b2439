/*
 * workspace.h - the bump allocator that carves the caller's device
 * workspace into named regions (STYLE.md section 8). With base == NULL it
 * only counts, so *_workspace_size() and *_fwd() run the same layout code
 * (counting vs materialising). Every region starts 256-byte aligned.
 * Host code only; never dereferences the (device) pointers it hands out.
 */
#ifndef OPP_INTERNAL_WORKSPACE_H
#define OPP_INTERNAL_WORKSPACE_H

#include <stddef.h>

#define OPP__WORKSPACE_ALIGN 256

typedef struct opp__bump {
    char *base;  /* device workspace, or NULL when counting */
    size_t used; /* bytes taken so far (end of the last region) */
} opp__bump_t;

/* Takes the next region of `bytes` bytes, 256-byte aligned.
 * @return : its device address, or NULL when counting. */
static inline void *opp__bump_take(opp__bump_t *bump, size_t bytes) {
    const size_t offset =
        (bump->used + (OPP__WORKSPACE_ALIGN - 1)) & ~(size_t)(OPP__WORKSPACE_ALIGN - 1);
    bump->used = offset + bytes;
    return bump->base != NULL ? bump->base + offset : NULL;
}

/* Total bytes of the layout so far, rounded up to the alignment. */
static inline size_t opp__bump_total(const opp__bump_t *bump) {
    return (bump->used + (OPP__WORKSPACE_ALIGN - 1)) & ~(size_t)(OPP__WORKSPACE_ALIGN - 1);
}

#endif /* OPP_INTERNAL_WORKSPACE_H */
