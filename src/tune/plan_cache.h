/* src/tune/plan_cache.h: a search's winner to and from a kernel-cache entry
 * (docs/ARCHITECTURE.md "Cache"). The entry's plan JSON holds, as its "record" member, what
 * rebuilds the winner: a plan of ours as its plan JSON (sdi_plan_json), a cuSPARSE variant
 * by name, an agent kernel by its fields, with the operator, K, the product's shape and a
 * format number. The compiled code travels as blobs: "cubin" (SpMV, SpMM), or for SpGEMM
 * each launch unit's source and cubin ("sg_src_<u>", "sg_cubin_<u>", their count
 * "sg_units"), the scan ("cubin_scan") and the operand preparation ("cubin_prep"). Nothing
 * is stored as struct bytes. */
#ifndef SDI_PLAN_CACHE_H
#define SDI_PLAN_CACHE_H

#include "../cache/cache.h"
#include "candidate.h"

/* The record's layout. 2: the plan JSON of a plan (format 1, "impl", held the operator's
 * configuration struct in its own JSON form). An entry whose record is of another number,
 * or missing, is rebuilt by a search, never read. */
#define SDI_PLAN_RECORD_FORMAT 2

/* Writes the record of c (general_b: SpGEMM with a general B) as one JSON object. */
SDI_HIDDEN void sdi_plan_record_json(const sdi_candidate *c, int general_b, sdi_json *j);
/* Reads a record into a fresh (unbuilt) *out, and whether it is for a general B.
 * SD_ERR_PARSE names what is missing, unknown or of another format. */
SDI_HIDDEN sd_status sdi_plan_record_read(const sdi_jvalue *v, sdi_candidate *out, int *general_b);

#define SDI_PLAN_MAX_BLOBS (3 + 2 * SDI_SG_MAX_LAUNCHES + 2)
/* The blobs of a built candidate; they borrow from c and from ctx's memo, so they live
 * as long as both. */
typedef struct {
    sdi_cache_blob blobs[SDI_PLAN_MAX_BLOBS];
    int n;
    int32_t sg_units; /* the "sg_units" blob's value */
} sdi_plan_blobs;
/* The compiled code of a built c as blobs (what cannot be had is left out and the entry
 * is rebuilt on load: a SpGEMM entry has all its units or none). Never fails. */
SDI_HIDDEN void sdi_plan_entry_blobs(sd_context *ctx, const sdi_candidate *c, sdi_plan_blobs *out);

/* Rebuilds the winner an entry holds for op on a (and b, a general B of SpGEMM, or NULL)
 * into *c, built, seeding ctx's memo with the entry's cubins so that no NVRTC runs. A
 * SpGEMM winner owns the device operands it creates (c->exe). *used = false (SD_OK) when
 * the entry does not fit the task or cannot be rebuilt — a record of another format
 * included: the caller searches. Errors only when the context broke. */
SDI_HIDDEN sd_status sdi_plan_from_entry(sd_context *ctx, const sd_csr *a, const sd_csr *b, sd_op op,
                                         const sdi_cache_entry *e, sdi_candidate *c, bool *used);

#endif /* SDI_PLAN_CACHE_H */
