/* src/tune/impl_cache.h: an implementation to and from a kernel-cache entry
 * (docs/ARCHITECTURE.md "Cache"). The entry holds the plan JSON, whose "impl" member is the
 * implementation's record (kind, operator, K, the configuration in its JSON form or the
 * cuSPARSE variant, with a format number), and the compiled code as blobs: "cubin" (SpMV,
 * SpMM), or for SpGEMM each launch unit's source and cubin ("sg_src_<u>", "sg_cubin_<u>",
 * their count "sg_units"), the scan ("cubin_scan") and the operand preparation
 * ("cubin_prep"). Nothing is stored as struct bytes. */
#ifndef SDI_IMPL_CACHE_H
#define SDI_IMPL_CACHE_H

#include "../cache/cache.h"
#include "impl.h"

/* The record's layout; a record of another number is rebuilt, never read. */
#define SDI_IMPL_RECORD_FORMAT 1

/* Writes the record of im (general_b: SpGEMM with a general B) as one JSON object. */
SDI_HIDDEN void sdi_impl_record_json(const sdi_impl *im, int general_b, sdi_json *j);
/* Reads a record into a fresh (unbuilt) *out, and whether it is for a general B.
 * SD_ERR_PARSE names what is missing or unknown. */
SDI_HIDDEN sd_status sdi_impl_record_read(const sdi_jvalue *v, sdi_impl *out, int *general_b);

#define SDI_IMPL_MAX_BLOBS (3 + 2 * SDI_SG_MAX_LAUNCHES + 2)
/* The blobs of a built implementation; they borrow from im and from ctx's memo, so they
 * live as long as both. */
typedef struct {
    sdi_cache_blob blobs[SDI_IMPL_MAX_BLOBS];
    int n;
    int32_t sg_units; /* the "sg_units" blob's value */
} sdi_impl_blobs;
/* The compiled code of a built im as blobs (what cannot be had is left out and the entry
 * is rebuilt on load: a SpGEMM entry has all its units or none). Never fails. */
SDI_HIDDEN void sdi_impl_entry_blobs(sd_context *ctx, sdi_impl *im, sdi_impl_blobs *out);

/* Rebuilds the implementation an entry holds for op on a (and b, a general B of SpGEMM, or
 * NULL), seeding ctx's memo with the entry's cubins so that no NVRTC runs. *used = false
 * (SD_OK) when the entry does not fit the task or cannot be rebuilt: the caller searches.
 * Errors only when the context broke. */
SDI_HIDDEN sd_status sdi_impl_from_entry(sd_context *ctx, const sd_csr *a, const sd_csr *b, sd_op op,
                                         const sdi_cache_entry *e, sdi_impl *im, bool *used);

#endif /* SDI_IMPL_CACHE_H */
