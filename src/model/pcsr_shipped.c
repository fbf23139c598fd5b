/* src/model/pcsr_shipped.c: the shipped ParamSpMM decider and the search's PCSR preset
 * (pcsr_shipped.h). The ParamSpMM paper picks ⟨W, F, V, S⟩ with its forests instead of
 * searching; our search still sweeps PCSR configurations, so the decider only chooses the
 * first one it measures (the branch's preset), where the default rule would otherwise be. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "model_files.h"
#include "pcsr_shipped.h"

static pthread_mutex_t shipped_lock = PTHREAD_MUTEX_INITIALIZER;
static int shipped_searched, shipped_ok;
static sdi_paramspmm_deciders shipped;
static char shipped_note[320];

static void search_decider(void)
{
    char path[512], why[256];
    if (!sdi_model_find("paramspmm.json", path, sizeof path, why, sizeof why)) {
        snprintf(shipped_note, sizeof shipped_note, "%.240s: the PCSR default", why);
        return;
    }
    if (sdi_paramspmm_deciders_load(path, &shipped) == SD_OK) {
        shipped_ok = 1;
        snprintf(shipped_note, sizeof shipped_note, "decider %.280s", path);
        return;
    }
    snprintf(shipped_note, sizeof shipped_note, "unusable decider (%.240s): the PCSR default",
             sd_last_error());
    sdi_log(0, "warning: %s: PCSR starts from its default", sd_last_error());
    sdi_error_clear();
}

const sdi_paramspmm_deciders *sdi_paramspmm_shipped(char *note, size_t note_cap)
{
    pthread_mutex_lock(&shipped_lock);
    if (!shipped_searched) {
        search_decider();
        shipped_searched = 1;
    }
    if (note != NULL && note_cap > 0)
        snprintf(note, note_cap, "%s", shipped_note);
    const sdi_paramspmm_deciders *d = shipped_ok ? &shipped : NULL;
    pthread_mutex_unlock(&shipped_lock);
    return d;
}

void sdi_paramspmm_shipped_reload(void)
{
    pthread_mutex_lock(&shipped_lock);
    sdi_paramspmm_deciders_free(&shipped);
    shipped_searched = shipped_ok = 0;
    shipped_note[0] = '\0';
    pthread_mutex_unlock(&shipped_lock);
}

sd_status sdi_paramspmm_preset(const sd_csr *a, int k, const sdi_spmm_stats *st,
                               const sdi_paramspmm_deciders *d, sdi_spmm_config *out,
                               int *decided, char *why, size_t why_cap)
{
#define SD_FREE_ALL ((void)0)
    char note[320] = "";
    *decided = 0;
    if (why != NULL && why_cap > 0)
        why[0] = '\0';
    SD_TRY(sdi_spmm_config_default(SDI_SPMM_PCSR, k, st, out));
    if (d == NULL)
        d = sdi_paramspmm_shipped(note, sizeof note);
    else
        snprintf(note, sizeof note, "the given decider");
    if (d == NULL) {
        if (why != NULL && why_cap > 0)
            snprintf(why, why_cap, "%s", note);
        return SD_OK;
    }
    double x[SDI_PSPMM_NFEAT];
    SD_TRY(sdi_paramspmm_features(a, x));
    sdi_paramspmm_params p;
    sdi_paramspmm_decide(sdi_paramspmm_deciders_for(d, k), x, &p);
    /* The sweep's own configuration with these parameters: the same fields as the
     * candidates the later rounds measure, so the preset is never measured twice. */
    sdi_spmm_config *all = NULL;
    int nall = 0;
    SD_TRY(sdi_spmm_enumerate_pcsr(a, k, 0, &all, &nall));
    int hit = -1;
    for (int i = 0; i < nall && hit < 0; i++)
        if (all[i].pcsr_group == 32 && all[i].warps == p.w && all[i].coarsen == p.f &&
            all[i].pcsr_v == p.v && all[i].pcsr_s == p.s)
            hit = i;
    if (hit >= 0) {
        *out = all[hit];
        *decided = 1;
    }
    sdi_free(all);
    if (why != NULL && why_cap > 0)
        snprintf(why, why_cap, "%.200s: <W %d, F %d, V %d, S %d>%s", note, p.w, p.f, p.v, p.s,
                 hit >= 0 ? "" : " is not in the PCSR sweep for this K: the PCSR default");
    return SD_OK;
#undef SD_FREE_ALL
}

sd_status sdi_paramspmm_task_preset(const sdi_task *t, sdi_plan *p)
{
    /* ParamSpMM's decider picks the PCSR branch's first configuration when a
     * paramspmm.json is on the models' path. */
    int decided = 0;
    char why[320];
    sdi_spmm_config c;
    sd_status s = sdi_paramspmm_preset(t->a, t->k, t->spmm, NULL, &c, &decided, why, sizeof why);
    if (s != SD_OK) {
        char msg[256];
        snprintf(msg, sizeof msg, "%s", sd_last_error()); /* SDI_ERR rewrites the message */
        return SDI_ERR(SD_ERR_UNSUPPORTED, "pcsr preset: %s", msg);
    }
    sdi_log(decided ? 1 : 2, "pcsr preset: %s", why);
    p->p.spmm = c;
    p->k = c.k;
    return SD_OK;
}
