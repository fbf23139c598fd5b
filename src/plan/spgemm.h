/* src/plan/spgemm.h: SpGEMM plans: the configuration of one candidate (bins, accumulators,
 * capacities, phases, launch fusion, θ_H; spgemm_config.c), the host binning that turns the
 * rows' upper bounds u(i) and column spans into bins and launch shapes (spgemm_schedule.c,
 * spgemm_schedule_verify.c), and the search's SpGEMM helpers. The families themselves
 * (presets, sweeps, edits, lowering) are src/plan/families/spgemm_*.c. Pure host code:
 * testable on the CPU. */
#ifndef SDI_PLAN_SPGEMM_H
#define SDI_PLAN_SPGEMM_H

#include <stdbool.h>
#include <stdint.h>

#include "../analysis/gpu.h"
#include "../core/core.h"
#include "../core/json_parse.h"
#include "../kernels/spgemm_abi.cuh"
#include "../runtime/sg_program.h"
#include "../analysis/plan_stats.h"


/* Plan families (ids of the table entries src/plan/families/spgemm_*.c): presets of which
 * accumulators a plan may use and how it runs them; θ_H (threads, load, phases, fusion) is
 * swept inside each. Every family keeps the CTA dense and global-stripe fallbacks, so every
 * product completes. */
typedef enum {
    SDI_SPGEMM_HASH = 0, /* "csr_hash": group/CTA hash tables by capacity, two phases */
    SDI_SPGEMM_TILED,    /* "smem_tiled_hash": tiny lists + hash tables, one phase for
                            small rows, launches fused */
    SDI_SPGEMM_HYBRID,   /* "hybrid": every accumulator; dense stripes where spans are
                            narrow; one phase where the staging is cheap */
    SDI_SPGEMM_DENSE,    /* "dense_stripe": dense stripes first (banded / diagonal) */
    SDI_SPGEMM_NFAMILIES
} sdi_spgemm_family;

/* One SpGEMM candidate. memset to zero before filling (the struct is hashed). */
typedef struct {
    int32_t family;          /* sdi_spgemm_family */
    int32_t threads;         /* T: threads per CTA of the row kernels (128, 256, 512) */
    int32_t tiny_max;        /* 0, 8 or 32: rows with u(i) ≤ this use thread-local lists */
    int32_t ghash_max_lcap;  /* group hash tables 2^6 … 2^this (0 = none; ≤ 12) */
    int32_t chash_max_lcap;  /* CTA hash tables up to 2^this (0 = none; ≤ 14) */
    int32_t load_pct;        /* a table of C slots holds rows whose bound is ≤ C·load/100 */
    int32_t gdense_max_lw;   /* group dense stripes up to 2^this columns (0 = none; ≤ 11) */
    int32_t dense_pct;       /* prefer a dense stripe when span ≤ dense_pct/100 × bound */
    int32_t one_phase_max_u; /* rows (bins) with u ≤ this run one phase into staging */
    int32_t fuse;            /* 0: a launch per bin; 1: bins of a phase with similar shared
                                memory share a launch; 2: one launch per phase */
    int32_t out_ub;          /* 1: when every row is one-phase and Σu fits, C is allocated
                                at Σu before the kernels (no host wait before compaction) */
    int32_t bt_gather;       /* B = Aᵀ: 1 gathers its values once per call; 0 reads them
                                through the permutation in every product */
    int32_t force_kind;      /* tests: -1 = the rules; else every row with products goes
                                to this kind (with force_p and force_g) */
    int32_t force_p;         /* UT for TINY, log2 size for hash and dense kinds */
    int32_t force_g;         /* lanes per row of group kinds */
    int32_t min_lanes;       /* group kinds get at least this many lanes per row (0, 8,
                                16 or 32; more lanes = more loads in flight per row) */
    int64_t ws_budget;       /* bytes for staging + global stripes (0 = a quarter of the
                                device memory) */
    int64_t chunk_rows;      /* global stripes: rows in flight at most (0 = by budget) */
    int32_t fast_compile;    /* NVRTC --Ofast-compile of the units: 0 = as the environment
                                says, 1..3 = min / mid / max (the search's candidates under
                                SPARSEDITTO_SEARCH_FAST), -1 = full optimisation (its winner
                                rebuilt) */
    int32_t warp_brow;       /* CTA rounds of entries whose B rows average at least this many
                                products give each warp whole B rows (SG_WARP_BROW in
                                spgemm_team.cuh): 0 = the template's threshold (32), -1 =
                                never, else this threshold. 0 is the default so that a
                                cached record from before the field reads as before */
    int32_t cta_u;           /* rows with more products than this get a CTA accumulator (CTA
                                stripe or table) instead of a lane group's (0 = none: the
                                rules alone; a record from before the field reads 0). On
                                small products a row is a chain of dependent loads: a warp
                                takes ~25 rounds for 3,000 products where a CTA takes ~3
                                (the search's edit: sdi_sg_cta_threshold) */
} sdi_spgemm_config;

SDI_HIDDEN void sdi_sg_limits_from_props(const sdi_gpu_props *p, sdi_sg_limits *out);
/* CTAs of `threads` threads and `smem` bytes of dynamic shared memory that one SM holds at
 * once, by threads, CTAs and shared memory (registers are known only after compiling: an
 * upper bound). */
SDI_HIDDEN int32_t sdi_sg_resident_ctas(const sdi_sg_limits *lim, int threads, int64_t smem);

/* ------------------------------------------------------------------ functions */
/* The family's table name ("csr_hash", …; "unknown" out of range). */
SDI_HIDDEN const char *sdi_spgemm_family_name(int f);
/* -1 when unknown. */
SDI_HIDDEN int sdi_spgemm_family_from_name(const char *name);

/* The family's preset (θ_H at its defaults), through the family's entry. */
SDI_HIDDEN sd_status sdi_spgemm_config_default(int family, sdi_spgemm_config *out);
struct sdi_plan;
/* The plan of configuration c: op SpGEMM, k 1, the table index of c's family, c as its
 * parameters (a plan of a preset, an edit or a configuration read back). SD_ERR_INVALID_ARG
 * for an unknown family. */
SDI_HIDDEN sd_status sdi_spgemm_plan_of(const sdi_spgemm_config *c, struct sdi_plan *out);
/* Field ranges and combinations; SD_ERR_INVALID_ARG names the field. */
SDI_HIDDEN sd_status sdi_spgemm_config_check(const sdi_spgemm_config *c);
/* One line, e.g. "hybrid T=256 tiny=32 gh=6..12 ch=14 load=50 gd=11 dense=400 one=512 fuse=1".
 * A buffer of SDI_SPGEMM_CONFIG_TEXT holds any configuration's line: every field at its
 * widest (-2147483648) makes 289 characters. */
#define SDI_SPGEMM_CONFIG_TEXT 320
SDI_HIDDEN void sdi_spgemm_config_describe(const sdi_spgemm_config *c, char *buf, size_t cap);
SDI_HIDDEN void sdi_spgemm_config_json(const sdi_spgemm_config *c, sdi_json *j);
/* Reads what sdi_spgemm_config_json wrote, exactly (src/plan/config_json.c); SD_ERR_PARSE
 * names the field that is missing or out of range. */
SDI_HIDDEN sd_status sdi_spgemm_config_from_json(const sdi_jvalue *v, sdi_spgemm_config *out);

/* Rows with more products than this are "heavy": when so few exist that one CTA per
 * row cannot fill the GPU (≤ 2 per SM), they go to global stripes in parts mode, where
 * several CTAs share each row. */
#define SDI_SG_HEAVY_U 65536

/* Rows with more products than this are "long" for a lane group: when few exist (≤ 4 per
 * SM), a group of ≤ 32 lanes working through one of them alone may outlast the rest of
 * the launch, so the csr_hash and hybrid families give them a CTA accumulator instead;
 * smem_tiled_hash and dense_stripe keep the group kinds, and the search measures both.
 * (The suspected cause of the adder_dcop twins' 0.86x: one row of 8,487 products in a
 * warp's dense stripe, the other 1,812 rows short; not yet measured on a GPU.) */
#define SDI_SG_WARP_U 4096

/* The search's CTA-team edit (cta_u): the smallest threshold of SDI_SG_CTA_MIN_U (256), 512,
 * … 4096 products above which the rows number at most `slots` (CTAs resident at once: one
 * wave), and at least one; 0 when even 4096 leaves more rows than that. */
#define SDI_SG_CTA_MIN_U 256
SDI_HIDDEN int32_t sdi_sg_cta_threshold(const sdi_sg_rowinfo *ri, int64_t slots);

/* Flags of sdi_sg_classify, decided by sdi_sg_schedule_build from the row counts. */
enum {
    SDI_SG_SPLIT_HEAVY = 1, /* heavy rows (> SDI_SG_HEAVY_U) go to the global stripes */
    SDI_SG_FEW_LONG = 2,    /* long rows (> SDI_SG_WARP_U) are few: CTA kinds (see above) */
};

/* The accumulator one row gets under c (u > 0): kind, lanes g and size p; flags are
 * SDI_SG_SPLIT_HEAVY | SDI_SG_FEW_LONG. Exposed for the tests. */
SDI_HIDDEN void sdi_sg_classify(const sdi_spgemm_config *c, const sdi_sg_limits *lim, int32_t n,
                                int64_t u, int64_t span, int flags, int32_t *kind, int32_t *g,
                                int32_t *p);

/* Shared memory per CTA of a kind for `threads` threads in a phase. */
SDI_HIDDEN int64_t sdi_sg_smem_bytes(int kind, int g, int p, int threads, int phase);
/* Threads per CTA a bin can use: T, or fewer groups when the tables would not fit. */
SDI_HIDDEN int32_t sdi_sg_bin_threads(int kind, int g, int p, int threads, const sdi_sg_limits *lim);

/* Bins every row, orders binrows, decides one-phase bins within the workspace budget,
 * sizes the global stripes and builds the launches of both stages. On failure *out is
 * zeroed. SD_ERR_UNSUPPORTED when a row of B is too long for int32 rounds. */
SDI_HIDDEN sd_status sdi_sg_schedule_build(const sdi_spgemm_config *c, const sdi_sg_limits *lim,
                                           const sdi_sg_rowinfo *ri, sdi_sg_schedule *out);
/* Checks a schedule's invariants (every row with products in exactly one bin, bounds fit
 * capacities, spans fit stripes, segments cover their bins, shared memory within the
 * limit). SD_ERR_INTERNAL names the first violation. Used by tests and debug builds. */
SDI_HIDDEN sd_status sdi_sg_schedule_verify(const sdi_spgemm_config *c, const sdi_sg_limits *lim,
                                            const sdi_sg_rowinfo *ri, const sdi_sg_schedule *s);


/* Binning internals shared by the schedule's files (and the tests). */
/* Row i's column span (0 without products), at most n. */
SDI_HIDDEN int64_t sdi_sg_row_span(const sdi_sg_rowinfo *ri, int32_t i);
/* Does a row (u, span) fit the accumulator (kind, p)? Structural safety only: hash tables
 * must hold the bound, stripes the span, lists u (gwidth < 0: any global width). */
SDI_HIDDEN int sdi_sg_row_fits(int kind, int p, int64_t u, int64_t span, int64_t gwidth);
/* Rows one CTA of a bin serves. */
SDI_HIDDEN int64_t sdi_sg_rows_per_cta(int kind, int g, int threads);
/* A bound of nnz(C): no row of C holds more entries than its products or its span. */
SDI_HIDDEN int64_t sdi_sg_c_bound(const sdi_sg_rowinfo *ri);

/* Floating-point atomics: the hash tables and dense stripes (group and CTA, shared memory)
 * and the global stripes add products with atomicAdd from several lanes of a row, in an
 * order that varies run to run; only the tiny bin (a thread per row, a sorted list in
 * registers) sums in a fixed order. The scan and the compaction move integers and finished
 * values. So a SpGEMM plan is deterministic exactly when every bin of its schedule is tiny:
 * true when a bin of s with rows is of another kind. Before a schedule exists, only a plan
 * forced to the tiny kind is known not to (the families' uses_atomics hook). */
SDI_HIDDEN bool sdi_sg_schedule_uses_atomics(const sdi_sg_schedule *s);

/* ------------------------------------------------------------------ the search's helpers */
/* A CTA-size edit carried to other families. Large products sweep one edit per family;
 * when `won` (the fastest family's best) runs another CTA size than its family's preset and
 * beat that preset (preset_us) by at least SDI_SG_TRANSFER_GAIN, out receives each of the
 * nb configurations of `bests` (the other families' bests) at won's CTA size, where that
 * size is new to it and legal. Returns how many (out holds nb at most). On the
 * Belcastro_human_gene1 twin, dense_stripe went 810 -> 472 ms at T = 512 while the other
 * families' single edits were something else. */
#define SDI_SG_TRANSFER_GAIN 0.10
SDI_HIDDEN int sdi_spgemm_transfer_threads(const sdi_spgemm_config *won, double won_us,
                                           double preset_us, const sdi_spgemm_config *bests,
                                           int nb, sdi_spgemm_config *out);
/* Candidates: for each family in fam_mask (bit f; 0 = all), its sweep (the entry's sweep
 * hook: level 0 the preset's variant only, 1 a small sweep, 2 a wide one), at most cap in
 * total, round-robin over the families. Family f alone (fam_mask 1u << f) gives the first
 * cap plans of its sweep hook, in its order. *out is allocated (sdi_free); *n receives the
 * count. */
SDI_HIDDEN sd_status sdi_spgemm_enumerate(const sdi_sg_summary *sm, uint32_t fam_mask, int level,
                                          int cap, sdi_spgemm_config **out, int *n);

/* Products of more than this many multiplications: each candidate costs seconds to run,
 * so the search sweeps one configuration per family and refines only by carrying a CTA
 * size that paid to the other families (sdi_spgemm_transfer_threads), and (below) its
 * candidates are compiled at full optimisation. */
#define SDI_SG_BIG_PRODUCTS 5e8

/* SPARSEDITTO_SEARCH_FAST: the NVRTC --Ofast-compile level of a search's candidates (the
 * winner is built again with full optimisation). Unset: min, unless SPARSEDITTO_NVRTC_FAST
 * sets a level for every compile (then 0: that level, winner included, as before) or the
 * product is large (SDI_SG_BIG_PRODUCTS: 0). The H200's quick set side by side
 * (`sparseditto bench --set quick` with SPARSEDITTO_SEARCH_FAST unset and "0", clean of
 * NVRTC's own cache): kernels kept (1.54x vs 1.53x, 79 vs 75 tasks won), the SpGEMM
 * searches' NVRTC 94 -> 69 s, the set 208 -> 184 s. "0": every candidate at full
 * optimisation. A bad knob is reported here (a search without a context: the offline
 * plans). */
SDI_HIDDEN sd_status sdi_spgemm_search_fast_level(const sdi_sg_summary *sm, int *level);

/* Deterministic mode: the tiny accumulator is the only one without float atomics, so the
 * candidates are every family's preset forced to it (in table order), which fits only when
 * no row has more than 32 products (else none). At most cap into out; returns how many. */
SDI_HIDDEN int sdi_spgemm_deterministic_configs(const sdi_sg_summary *sm, sdi_spgemm_config *out,
                                                int cap);

#endif /* SDI_PLAN_SPGEMM_H */
