/* src/gen/gen.h: deterministic synthetic matrix generators (by seed), the test and
 * benchmark families, and the paper-60 "twin" generator. */
#ifndef SDI_GEN_H
#define SDI_GEN_H

#include "../core/core.h"

/* Value modes for generated entries. */
typedef enum {
    SDI_VALUES_UNIFORM = 0, /* pseudo-random in [-1, 1) (multiples of 2^-23) */
    SDI_VALUES_SMALL_INT,   /* pseudo-random integers in {-2, ..., 2} (exact FP32 sums) */
    SDI_VALUES_ONES
} sdi_values_mode;

/* Generates a canonical CSR from a spec "family:key=value,key=value" (see gen.c for
 * the families and keys; `sparseditto gen --help` lists them). Every family accepts
 * values=uniform|int|ones (default uniform; filled by sdi_gen_values with the same seed).
 * Deterministic in (spec, seed), whatever the number of OpenMP threads.
 * SD_ERR_INVALID_ARG names a bad family, key or value; SD_ERR_IO / SD_ERR_PARSE come
 * from the twin table file. On failure *out is zeroed. */
SDI_HIDDEN sd_status sdi_gen(const char *spec, uint64_t seed, sd_csr *out);
/* Validates a spec as sdi_gen would (family, keys, ranges, a twin's table row) without
 * building the matrix: cheap enough to check a whole benchmark list before a run. */
SDI_HIDDEN sd_status sdi_gen_check(const char *spec);
/* spec with ",file=TABLE" added when it is a twin spec without a file= key (TABLE: the
 * paper60.tsv the caller knows, e.g. the shared matrices'); any other spec copied as is.
 * A new string (sdi_free), or NULL when out of host memory. */
SDI_HIDDEN char *sdi_gen_spec_with_table(const char *spec, const char *table);
/* Fills vals with seeded values in the given mode (the pattern is untouched). Entry k
 * gets a value that depends only on (seed, k). */
SDI_HIDDEN void sdi_gen_values(sd_csr *a, sdi_values_mode mode, uint64_t seed);
/* Fills a dense vector/matrix of n floats with seeded values in the given mode. */
SDI_HIDDEN void sdi_gen_dense(float *x, int64_t n, sdi_values_mode mode, uint64_t seed);
/* Parses "uniform", "int" or "ones"; SD_ERR_INVALID_ARG otherwise. */
SDI_HIDDEN sd_status sdi_gen_values_mode_parse(const char *text, sdi_values_mode *out);
/* Help text listing every family with its keys. */
SDI_HIDDEN const char *sdi_gen_help(void);

/* ------------------------------------------------------------------ twins
 * A twin matches one row of paper60.tsv (name rows cols nnz density mean_row max_row
 * cv_row square): rows, cols and nnz exactly, the longest row exactly, the population
 * CV of the row lengths approximately (it is tuned, see twin.c). */
typedef struct {
    char name[128];
    int32_t rows, cols;
    int64_t nnz;
    int64_t max_row;
    double cv_row;
} sdi_twin_target;

/* Reads every data row of a paper60.tsv file; *out (count entries) is owned by the
 * caller and released with sdi_free. SD_ERR_IO / SD_ERR_PARSE (1-based line). */
SDI_HIDDEN sd_status sdi_twin_read_table(const char *path, sdi_twin_target **out, int *count);
/* The targets of a twin generated with scale= s (0 < s ≤ 1): rows and cols scaled and
 * rounded (at least 1; square stays square), the mean row length kept (at most cols/4),
 * max_row capped by the scaled cols and by what the CV target allows (see twin.c); the
 * CV target is kept. s = 1 returns the row unchanged. */
SDI_HIDDEN sd_status sdi_twin_scale(const sdi_twin_target *t, double scale,
                                    sdi_twin_target *out);

/* ==================================================================
 * Internal to src/gen: random numbers, the spec parameters and the builders.
 * ================================================================== */

/* Random numbers: src/core/rng.h (sdi_rng, sdi_hash3, sdi_rng_normal, ...). */
#include "../core/rng.h"

/* Stream ids (any distinct constants). */
enum {
    SDI_STREAM_LENGTHS = 1,
    SDI_STREAM_COLUMNS,
    SDI_STREAM_VALUES,
    SDI_STREAM_DENSE,
    SDI_STREAM_SPLIT,
    SDI_STREAM_PAIRS,
    SDI_STREAM_EDGES,
    SDI_STREAM_POINTS,
    SDI_STREAM_PERMUTE
};

/* ------------------------------------------------------------------ spec parameters */
#define SDI_GEN_MAX_KEYS 16
typedef struct {
    const char *family;
    int nkeys;
    const char *key[SDI_GEN_MAX_KEYS];
    const char *value[SDI_GEN_MAX_KEYS];
    uint64_t seed;
    bool check_only; /* sdi_gen_check: validate every key, build nothing (return SD_OK) */
} sdi_gen_params;

SDI_HIDDEN bool sdi_gen_has(const sdi_gen_params *p, const char *key);
/* An integer key (decimal or an integral number like 1e6) in [lo, hi], def if absent. */
SDI_HIDDEN sd_status sdi_gen_int(const sdi_gen_params *p, const char *key, int64_t def,
                                 int64_t lo, int64_t hi, int64_t *out);
SDI_HIDDEN sd_status sdi_gen_real(const sdi_gen_params *p, const char *key, double def,
                                  double lo, double hi, double *out);
/* The text of a key, or def (may be NULL) if absent. */
SDI_HIDDEN const char *sdi_gen_str(const sdi_gen_params *p, const char *key, const char *def);

/* Families (pattern only: values are filled afterwards by sdi_gen). */
SDI_HIDDEN sd_status sdi_gen_stencil2d(const sdi_gen_params *p, sd_csr *out);
SDI_HIDDEN sd_status sdi_gen_stencil3d7(const sdi_gen_params *p, sd_csr *out);
SDI_HIDDEN sd_status sdi_gen_stencil3d27(const sdi_gen_params *p, sd_csr *out);
SDI_HIDDEN sd_status sdi_gen_banded(const sdi_gen_params *p, sd_csr *out);
SDI_HIDDEN sd_status sdi_gen_blockdiag(const sdi_gen_params *p, sd_csr *out);
SDI_HIDDEN sd_status sdi_gen_uniform(const sdi_gen_params *p, sd_csr *out);
SDI_HIDDEN sd_status sdi_gen_powerlaw(const sdi_gen_params *p, sd_csr *out);
SDI_HIDDEN sd_status sdi_gen_bimodal(const sdi_gen_params *p, sd_csr *out);
SDI_HIDDEN sd_status sdi_gen_rmat(const sdi_gen_params *p, sd_csr *out);
SDI_HIDDEN sd_status sdi_gen_knn(const sdi_gen_params *p, sd_csr *out);
SDI_HIDDEN sd_status sdi_gen_twin(const sdi_gen_params *p, sd_csr *out);

/* ------------------------------------------------------------------ builders
 * Row-wise generation straight into CSR: a pass computes every row length (len, or the
 * given lens), a prefix sum places the rows, a second pass fills each row's sorted,
 * distinct columns (fill). Both passes run in parallel over rows; each row must depend
 * only on (seed, row). */
typedef struct sdi_rowgen sdi_rowgen;
struct sdi_rowgen {
    int32_t rows, cols;
    int64_t (*len)(const sdi_rowgen *g, int32_t i);
    void (*fill)(const sdi_rowgen *g, int32_t i, int32_t *cols, int64_t len);
    const int64_t *lens; /* rows entries; used instead of len when not NULL */
    const void *ctx;
    uint64_t seed;
};
SDI_HIDDEN sd_status sdi_gen_build(const sdi_rowgen *g, sd_csr *out);

/* n distinct sorted integers drawn uniformly from [lo, lo + range) (n ≤ range). */
SDI_HIDDEN void sdi_gen_sample(sdi_rng *r, int64_t lo, int64_t range, int64_t n, int32_t *out);
/* n distinct sorted columns of [0, cols): each draw falls in the window [wlo, wlo + wlen)
 * with probability p_local, anywhere otherwise (wlen ≥ 2n when p_local > 0). */
SDI_HIDDEN void sdi_gen_sample_mixed(sdi_rng *r, int64_t cols, int64_t wlo, int64_t wlen,
                                     double p_local, int64_t n, int32_t *out);
/* Splits total entries over rows of capacity cap each, as a uniform sample of total
 * distinct positions would (multivariate hypergeometric, normal-approximated for large
 * counts): lens[i] ≤ cap and Σ lens = total exactly. */
SDI_HIDDEN void sdi_gen_split(uint64_t seed, int32_t rows, int64_t cap, int64_t total,
                              int64_t *lens);
/* CSR pattern from an edge list (duplicates merged). Takes ownership of *ri and *ci
 * (freed, set to NULL, on every path). */
SDI_HIDDEN sd_status sdi_gen_from_edges(int32_t rows, int32_t cols, int64_t n, int32_t **ri,
                                        int32_t **ci, sd_csr *out);
/* Replaces a (square) by the pattern of A ∪ Aᵀ (values zero). */
SDI_HIDDEN sd_status sdi_gen_symmetrize(sd_csr *a);

#endif /* SDI_GEN_H */
