/* tools/evalmodel/importance.c: permutation importance of the energy model's 36 feature inputs
 * per operator: on a corpus's tasks of one operator, the column of feature j
 * is shuffled across the tasks (the other inputs kept), the ranking is redone, and the
 * regret (geomean time of the top choice / the fastest measured template) and top-1 are
 * compared with the unshuffled ones. A feature the model relies on raises the regret
 * when shuffled; one it ignores (or that is constant for the operator, like the
 * SpGEMM-only features for SpMV) leaves it unchanged. Deterministic in the seed. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/rng.h"
#include "importance.h"

/* Regret and top-1 of the model's choices on n tasks with inputs X (n × NIN). */
static void choose_all(const sdi_energy_model *m, const sdi_corpus *c, const int *task,
                       int n, const double *X, sd_op op, double *regret, double *top1)
{
    double E[SDI_RANK_MAX_TEMPLATES], lreg = 0;
    int hits = 0;
    for (int i = 0; i < n; i++) {
        const sdi_corpus_task *t = &c->tasks[task[i]];
        sdi_energy_eval(m, X + (size_t)i * SDI_EM_NIN, op, E, NULL);
        int ch = -1, best = -1;
        for (int s = 0; s < m->ntemp[op]; s++) {
            if (!(t->us[s] > 0) || !isfinite(t->us[s]))
                continue;
            if (ch < 0 || E[s] < E[ch])
                ch = s;
            if (best < 0 || t->us[s] < t->us[best])
                best = s;
        }
        lreg += log(t->us[ch] / t->us[best]);
        hits += t->us[ch] == t->us[best];
    }
    *regret = n > 0 ? exp(lreg / n) : 1.0;
    *top1 = n > 0 ? (double)hits / n : 0.0;
}

static bool measured(const sdi_corpus_task *t, int ntemp)
{
    for (int s = 0; s < ntemp; s++)
        if (t->us[s] > 0 && isfinite(t->us[s]))
            return true;
    return false;
}

sd_status sdi_energy_importance_compute(const sdi_energy_model *m, const sdi_corpus *c,
                                        int repeats, unsigned long long seed,
                                        sdi_energy_importance *out)
{
    if (m == NULL || c == NULL || out == NULL || repeats < 1)
        return SDI_ERR(SD_ERR_INVALID_ARG, "importance: NULL argument or repeats < 1");
    memset(out, 0, sizeof *out);
    out->repeats = repeats;
    int *task = NULL, *perm = NULL;
    double *X = NULL, *Xp = NULL;
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        sdi_free(task);                                                                    \
        sdi_free(perm);                                                                    \
        sdi_free(X);                                                                       \
        sdi_free(Xp);                                                                      \
    } while (0)
    size_t cap = c->ntasks > 0 ? (size_t)c->ntasks : 1;
    task = sdi_malloc_array(cap, sizeof *task);
    perm = sdi_malloc_array(cap, sizeof *perm);
    X = sdi_malloc_array(cap * SDI_EM_NIN, sizeof *X);
    Xp = sdi_malloc_array(cap * SDI_EM_NIN, sizeof *Xp);
    SD_CHECK_ALLOC(task, "importance tasks");
    SD_CHECK_ALLOC(perm, "importance permutation");
    SD_CHECK_ALLOC(X, "importance inputs");
    SD_CHECK_ALLOC(Xp, "importance inputs");
    for (int op = 0; op < SDI_EM_NOP; op++) {
        size_t n = 0; /* size_t: GCC 13 -O3 otherwise doubts the memcpy bound below */
        for (int t = 0; t < c->ntasks; t++) {
            const sdi_corpus_task *k = &c->tasks[t];
            if ((int)k->op != op || !measured(k, m->ntemp[op]))
                continue;
            const sdi_corpus_record *r = &c->records[k->record];
            sdi_energy_inputs(m, r->features, r->shape, k->op, k->k, X + (size_t)n * SDI_EM_NIN);
            task[n++] = t;
        }
        out->ntasks[op] = (int)n;
        if (n == 0)
            continue;
        choose_all(m, c, task, (int)n, X, (sd_op)op, &out->base_regret[op], &out->base_top1[op]);
        for (int j = 0; j < SDI_EM_NFEAT; j++) {
            sdi_rng rng;
            sdi_rng_seed(&rng, seed, 0x1e7 /* stream: importance */, (uint64_t)(op * 64 + j));
            double sum_reg = 0, sum_top1 = 0;
            for (int rep = 0; rep < repeats; rep++) {
                for (size_t i = 0; i < n; i++)
                    perm[i] = (int)i;
                sdi_rng_shuffle_int(&rng, perm, (int)n);
                memcpy(Xp, X, n * SDI_EM_NIN * sizeof *X);
                for (size_t i = 0; i < n; i++)
                    Xp[i * SDI_EM_NIN + j] = X[(size_t)perm[i] * SDI_EM_NIN + j];
                double reg, t1;
                choose_all(m, c, task, (int)n, Xp, (sd_op)op, &reg, &t1);
                sum_reg += log(reg);
                sum_top1 += t1;
            }
            out->regret[op][j] = exp(sum_reg / repeats);
            out->top1[op][j] = sum_top1 / repeats;
        }
    }
    SD_FREE_ALL;
    return SD_OK;
#undef SD_FREE_ALL
}

/* Regret increase of feature j for op, in percent (0 when the op has no tasks). */
static double increase(const sdi_energy_importance *imp, int op, int j)
{
    if (imp->ntasks[op] == 0 || !(imp->base_regret[op] > 0))
        return 0.0;
    return 100.0 * (imp->regret[op][j] / imp->base_regret[op] - 1.0);
}

void sdi_energy_importance_json(const sdi_energy_importance *imp, sdi_json *j)
{
    sdi_json_begin_object(j);
    sdi_json_key(j, "repeats");
    sdi_json_int(j, imp->repeats);
    sdi_json_key(j, "operators");
    sdi_json_begin_object(j);
    for (int op = 0; op < SDI_EM_NOP; op++) {
        sdi_json_key(j, sdi_op_name((sd_op)op));
        sdi_json_begin_object(j);
        sdi_json_key(j, "tasks");
        sdi_json_int(j, imp->ntasks[op]);
        sdi_json_key(j, "regret");
        sdi_json_number(j, imp->base_regret[op]);
        sdi_json_key(j, "top1");
        sdi_json_number(j, imp->base_top1[op]);
        sdi_json_key(j, "features");
        sdi_json_begin_array(j);
        for (int f = 0; f < SDI_EM_NFEAT; f++) {
            sdi_json_begin_object(j);
            sdi_json_key(j, "name");
            sdi_json_string(j, sdi_energy_input_name(f));
            sdi_json_key(j, "regret_permuted");
            sdi_json_number(j, imp->regret[op][f]);
            sdi_json_key(j, "regret_increase_pct");
            sdi_json_number(j, increase(imp, op, f));
            sdi_json_key(j, "top1_permuted");
            sdi_json_number(j, imp->top1[op][f]);
            sdi_json_end_object(j);
        }
        sdi_json_end_array(j);
        sdi_json_end_object(j);
    }
    sdi_json_end_object(j);
    sdi_json_end_object(j);
}

sd_status sdi_energy_importance_markdown(const sdi_energy_importance *imp, const char *title,
                                         char **md)
{
    *md = NULL;
    size_t cap = 16384, len = 0;
    char *buf = sdi_malloc(cap);
    if (buf == NULL)
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "importance: out of host memory for the table");
#define PUT(...) (len += (size_t)snprintf(buf + len, len < cap ? cap - len : 0, __VA_ARGS__))
    PUT("%s\n\nRegret increase (%%) when the feature's column is shuffled across the tasks "
        "of an operator (mean of %d shuffles; the regret is the geomean of time(top choice) / "
        "time(fastest measured)). Unshuffled:", title, imp->repeats);
    for (int op = 0; op < SDI_EM_NOP; op++)
        PUT(" %s regret %.4f, top-1 %.3f (%d tasks)%s", sdi_op_name((sd_op)op),
            imp->base_regret[op], imp->base_top1[op], imp->ntasks[op], op + 1 < SDI_EM_NOP ? ";" : ".");
    PUT("\n\n| feature | spmv | spmm | spgemm |\n|---|---:|---:|---:|\n");
    for (int f = 0; f < SDI_EM_NFEAT; f++)
        PUT("| %s | %.2f | %.2f | %.2f |\n", sdi_energy_input_name(f), increase(imp, 0, f),
            increase(imp, 1, f), increase(imp, 2, f));
#undef PUT
    if (len >= cap) { /* 36 rows of short numbers: far below cap */
        sdi_free(buf);
        return SDI_ERR(SD_ERR_INTERNAL, "importance: table longer than %zu bytes", cap);
    }
    *md = buf;
    return SD_OK;
}
