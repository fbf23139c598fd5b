/* src/plan/family.h: the family interface (docs/ARCHITECTURE.md "Families"). A family is
 * one way of computing an operator: a representation (layout) with a decomposition of the
 * work, and the space of parameters swept inside it. Every family of every operator is one
 * file under src/plan/families/ that defines one sdi_family; the table (families.c) lists
 * them. Nothing outside a family's file switches over families: the search, reports,
 * diagnosis and lowering reach a family through its entry. */
#ifndef SDI_PLAN_FAMILY_H
#define SDI_PLAN_FAMILY_H

#include <stdbool.h>

#include "../analysis/gpu.h"
#include "../analysis/plan_stats.h"
#include "../runtime/lowered.h"
#include "plan.h"

/* What a family reads of the task. Filled once per task (the search's analysis, the
 * offline planner) and passed to every hook; the statistics a family's `stats` bits name
 * are non-NULL. */
typedef struct sdi_task {
    int32_t op; /* sd_op */
    int32_t k;  /* SpMM: K; 1 otherwise */
    const sd_csr *a;           /* the matrix (A of SpGEMM) */
    const sdi_gpu_props *gpu;  /* the target (never NULL) */
    const sd_features *features; /* the 36 features (ranking hooks); may be NULL offline */
    const sdi_spmv_stats *spmv;  /* SDI_STATS_SPMV */
    const sdi_spmm_stats *spmm;  /* SDI_STATS_SPMM */
    const sdi_sg_rowinfo *sg_rows; /* SDI_STATS_SG_ROWS: u(i), lo(i), hi(i) of C's rows */
    const sdi_sg_summary *sg;      /* SDI_STATS_SG_ROWS: their summary */
    const sdi_sg_limits *sg_lim;   /* SpGEMM: the GPU's limits for binning */
    /* Optional: a learned first choice (model/, which plan/ does not include). A family
     * whose defaults hook consults it (pcsr: ParamSpMM's decider) passes its rule's plan
     * in *p; the callback may replace it by another legal plan of the family. An error is
     * the defaults hook's. NULL: the rule's plan stands. */
    sd_status (*preset)(const struct sdi_task *t, sdi_plan *p);
} sdi_task;

/* Statistics a family reads (sdi_family.stats). */
enum {
    SDI_STATS_SPMV = 1u << 0,
    SDI_STATS_SPMM = 1u << 1,
    SDI_STATS_SG_ROWS = 1u << 2,
};

/* What the diagnosis of a search may ask of a family (sdi_family.diag). */
enum {
    SDI_DIAG_ROW_GROUPS = 1u << 0,    /* a winner of this family is row-grouped: imbalance
                                         (row_cv > 1) calls for the IMBALANCE families */
    SDI_DIAG_FOR_IMBALANCE = 1u << 1, /* tried when row groups meet imbalance */
    SDI_DIAG_FOR_LAUNCH = 1u << 2,    /* tried when the best is launch-bound */
    SDI_DIAG_FOR_PADDING = 1u << 3,   /* tried when the best pads its values (> 1.3 × nnz) */
};

/* A growable list of plans (sdi_plan_list_push; free with sdi_plan_list_free). */
typedef struct {
    sdi_plan *v;
    int n, cap;
} sdi_plan_list;
SDI_HIDDEN sd_status sdi_plan_list_push(sdi_plan_list *l, const sdi_plan *p);
SDI_HIDDEN void sdi_plan_list_free(sdi_plan_list *l);

/* An edit of a winning plan (sdi_family.edits): the edited plan and its mark in the
 * search record ("wb=off", "load=100", "gh=10", "cta>512"). */
typedef struct {
    sdi_plan plan;
    char mark[16];
} sdi_plan_edit;

typedef struct sdi_family {
    const char *name;          /* label, unique within the operator ("csr_vec", "pcsr") */
    int32_t op;                /* sd_op */
    int32_t id;                /* the value of the operator's family / template field */
    const char *layout;        /* R: the representation ("csr", "sell", "bsr", "hash", …) */
    const char *decomposition; /* S: how the work is cut ("row_groups", "merge_path", …) */
    uint32_t stats;            /* SDI_STATS_* the hooks read */
    uint32_t diag;             /* SDI_DIAG_* */

    /* Ranking: the family's place among those serving a V_o label of the ranking (lower
     * first; ties in table order), or −1 when it serves no such label. */
    int (*rank)(const sdi_task *t, const char *label);
    /* Optional: whether the family leads the branches whatever the ranking says (a
     * synthesis alternative the structure calls for). NULL = never. */
    bool (*leads)(const sdi_task *t);

    /* θ_H. defaults: the family's first choice for the task (SD_ERR_UNSUPPORTED when the
     * family does not apply; the message names why). sweep: legal plans of a sweep level
     * (1 small, 2 wide) appended to out. check: legality (SD_ERR_UNSUPPORTED /
     * SD_ERR_INVALID_ARG name the field or bound). */
    sd_status (*defaults)(const sdi_task *t, sdi_plan *out);
    sd_status (*sweep)(const sdi_task *t, int level, sdi_plan_list *out);
    sd_status (*check)(const sdi_task *t, const sdi_plan *p);

    /* Lowering: the plan for the task's matrix → a launch program with its host formats
     * (runtime/lowered.h). On failure *out is zeroed. */
    sd_status (*lower)(const sdi_task *t, const sdi_plan *p, sdi_lowered *out);
    /* The compile requests alone (template + macros; no format built): what a plan's
     * kernels are, for precompilation and the offline planner. NULL = lower. */
    sd_status (*source)(const sdi_task *t, const sdi_plan *p, sdi_lowered *out);

    /* Properties of a plan of this family. */
    const char *(*dataflow)(const sdi_plan *p);              /* S's dataflow word */
    bool (*uses_atomics)(const sdi_plan *p);                 /* float atomics: not bitwise
                                                                reproducible */
    bool (*vo_label)(const sdi_plan *p, char *buf, size_t cap); /* the V_o label it
                                                                instantiates, if any */
    /* Optional: edits of a winning plan worth measuring (at most cap). NULL = none. */
    int (*edits)(const sdi_task *t, const sdi_plan *best, sdi_plan_edit *out, int cap);
} sdi_family;

/* ------------------------------------------------------------------ the table */
SDI_HIDDEN int sdi_family_count(void);
SDI_HIDDEN const sdi_family *sdi_family_at(int index); /* NULL out of range */
/* The index of op's family by name or by the operator's id; −1 when none. */
SDI_HIDDEN int sdi_family_find(int op, const char *name);
SDI_HIDDEN int sdi_family_of(int op, int id);
/* The entry of a plan (NULL for an index out of range). */
SDI_HIDDEN const sdi_family *sdi_plan_family(const sdi_plan *p);

/* A plan of family `index` for the task: its defaults, with op, k and family set. */
SDI_HIDDEN sd_status sdi_plan_default(const sdi_task *t, int index, sdi_plan *out);
/* Legality of p for the task through its family. */
SDI_HIDDEN sd_status sdi_plan_check(const sdi_task *t, const sdi_plan *p);
/* Lowers p through its family (checked first). */
SDI_HIDDEN sd_status sdi_plan_lower(const sdi_task *t, const sdi_plan *p, sdi_lowered *out);

#endif /* SDI_PLAN_FAMILY_H */
