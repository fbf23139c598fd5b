/* src/core/hash.c: pattern hashing with XXH3-128 (libxxhash-dev, used header-only so
 * the library carries no run-time dependency on libxxhash). */
#include <stdio.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "core.h"

sdi_hash128 sdi_hash_bytes(const void *data, size_t len, uint64_t seed)
{
    XXH128_hash_t h = XXH3_128bits_withSeed(data, len, seed);
    return (sdi_hash128){h.low64, h.high64};
}

sdi_hash128 sdi_pattern_hash(const sd_csr *a)
{
    XXH3_state_t st;
    XXH3_128bits_reset(&st);
    int32_t dims[2] = {a->rows, a->cols};
    XXH3_128bits_update(&st, dims, sizeof dims);
    XXH3_128bits_update(&st, &a->nnz, sizeof a->nnz);
    if (a->rowptr != NULL)
        XXH3_128bits_update(&st, a->rowptr, ((size_t)a->rows + 1) * sizeof *a->rowptr);
    if (a->nnz > 0 && a->colind != NULL)
        XXH3_128bits_update(&st, a->colind, (size_t)a->nnz * sizeof *a->colind);
    XXH128_hash_t h = XXH3_128bits_digest(&st);
    return (sdi_hash128){h.low64, h.high64};
}

void sdi_hash_hex(sdi_hash128 h, char out[33])
{
    snprintf(out, 33, "%016llx%016llx", (unsigned long long)h.hi, (unsigned long long)h.lo);
}
