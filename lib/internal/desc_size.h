/*
 * desc_size.h - reading a caller's descriptor whatever header it was built
 * against (lib/desc_size.c; the rules are in lib/oppacked.h, "Descriptors").
 *
 * Every public function that takes a descriptor first copies it with one of
 * these loaders into a full, library-sized local copy, and reads only that
 * copy afterwards: the caller's first struct_size bytes, the defaults of
 * *_init for every field at or past struct_size. Pure host code.
 */
#ifndef OPP_INTERNAL_DESC_SIZE_H
#define OPP_INTERNAL_DESC_SIZE_H

#include "lib/oppacked.h"

#ifdef __cplusplus
extern "C" {
#endif

/*! opp__attention_desc_load() :
 * Checks desc (NULL, then struct_size) and copies it into *local, whose
 * struct_size is then sizeof(opp_attention_desc_t).
 * @return : SUCCESS, BAD_PARAM_NULL_POINTER ("desc is NULL"),
 *           BAD_PARAM_NOT_INITIALISED or NOT_SUPPORTED_VERSION. */
opp_status_t opp__attention_desc_load(const opp_attention_desc_t *desc,
                                      opp_attention_desc_t *local);

/*! opp__attention24_desc_load() : the same for opp_attention24_desc_t.
 * @return : as opp__attention_desc_load(). */
opp_status_t opp__attention24_desc_load(const opp_attention24_desc_t *desc,
                                        opp_attention24_desc_t *local);

#ifdef __cplusplus
}
#endif
#endif /* OPP_INTERNAL_DESC_SIZE_H */
