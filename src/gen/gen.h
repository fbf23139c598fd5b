/* src/gen/gen.h: deterministic synthetic matrix generators (by seed), the test and
 * benchmark families, and the paper-60 "twin" generator. */
#ifndef SDI_GEN_H
#define SDI_GEN_H

#include "../core/core.h"

/* Value modes for generated entries. */
typedef enum {
    SDI_VALUES_UNIFORM = 0, /* pseudo-random in [-1, 1) */
    SDI_VALUES_SMALL_INT,   /* pseudo-random integers in {-2, ..., 2} (exact FP32 sums) */
    SDI_VALUES_ONES
} sdi_values_mode;

/* Generates a canonical CSR from a spec "family:key=value,key=value" (see gen.c for
 * the families and keys; `sparseditto gen --help` lists them). Deterministic in
 * (spec, seed). SD_ERR_INVALID_ARG names a bad family, key or value. */
SDI_HIDDEN sd_status sdi_gen(const char *spec, uint64_t seed, sd_csr *out);
/* Fills vals with seeded values in the given mode (the pattern is untouched). */
SDI_HIDDEN void sdi_gen_values(sd_csr *a, sdi_values_mode mode, uint64_t seed);
/* Fills a dense vector/matrix of n floats with seeded values in the given mode. */
SDI_HIDDEN void sdi_gen_dense(float *x, int64_t n, sdi_values_mode mode, uint64_t seed);
/* Help text listing every family with its keys. */
SDI_HIDDEN const char *sdi_gen_help(void);

#endif /* SDI_GEN_H */
