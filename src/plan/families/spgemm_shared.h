/* src/plan/families/spgemm_shared.h: what the four SpGEMM families (spgemm_csr_hash.c,
 * spgemm_smem_tiled_hash.c, spgemm_hybrid.c, spgemm_dense_stripe.c) share: the preset's
 * common part, the θ_H sweep whose entries every family applies to its own preset, legality,
 * the dataflow word, atomics, and the edits of a winning plan. Lowering is
 * sdi_spgemm_lower_plan (src/lower/spgemm_units.h). */
#ifndef SDI_PLAN_FAMILIES_SPGEMM_SHARED_H
#define SDI_PLAN_FAMILIES_SPGEMM_SHARED_H

#include <stdbool.h>

#include "../family.h"
#include "../spgemm.h"

/* A plan of SpGEMM family `id` whose configuration is the common preset (threads 256,
 * group tables up to 2^12, CTA tables up to 2^14, load 50, B's values gathered, no forced
 * kind) edited by the family's `preset` (its own fields). */
SDI_HIDDEN sd_status sdi_spgemm_family_defaults(int id, void (*preset)(sdi_spgemm_config *c),
                                                sdi_plan *out);

/* The family's sweep at `level` (0: the preset's variant only; 1: a small sweep; 2: a wide
 * one) from its preset plan, appended to out without repeats and with illegal entries left
 * out. small_edits: on small products (Σu < 4·10⁶) the family runs one phase up to 4096
 * products, one launch a stage, C at the upper bound and B = Aᵀ read through the
 * permutation before the entry's own edits (csr_hash keeps its two phases). */
SDI_HIDDEN sd_status sdi_spgemm_family_sweep(const sdi_task *t, const sdi_plan *preset,
                                             bool small_edits, int level, sdi_plan_list *out);

/* Hooks every SpGEMM entry uses as they are. */
SDI_HIDDEN sd_status sdi_spgemm_family_check(const sdi_task *t, const sdi_plan *p);
SDI_HIDDEN const char *sdi_spgemm_family_dataflow(const sdi_plan *p);
SDI_HIDDEN bool sdi_spgemm_family_uses_atomics(const sdi_plan *p);
/* The winner's edits (the entries' `edits` hook): schedules `best` on the task's rows
 * (t->sg_rows, t->sg_lim or t->gpu's limits) and returns sdi_spgemm_winner_edits of it. */
SDI_HIDDEN int sdi_spgemm_family_edits(const sdi_task *t, const sdi_plan *best, sdi_plan_edit *out,
                                       int cap);

/* Group hash tables above 2^SDI_SG_EDIT_GH slots go to CTA tables in the winner's edits. */
#define SDI_SG_EDIT_GH 10
/* Edits of one winner at most. */
#define SDI_SG_MAX_EDITS 4

/* The edits of a winning plan `best` whose schedule (as built for the task's rows) is s,
 * each with its mark as the configuration's line shows it ("wb=off", "wb=on", "load=100",
 * "gh=10", "cta>512"); at most cap (SDI_SG_MAX_EDITS hold any). The task's sg_rows and its
 * limits (t->sg_lim, else t->gpu's) decide the CTA-team edit. */
SDI_HIDDEN int sdi_spgemm_winner_edits(const sdi_task *t, const sdi_plan *best,
                                       const sdi_sg_schedule *s, sdi_plan_edit *out, int cap);

#endif /* SDI_PLAN_FAMILIES_SPGEMM_SHARED_H */
