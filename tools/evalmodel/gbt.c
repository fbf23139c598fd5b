/* tools/evalmodel/gbt.c: gradient-boosted regression trees (rankers.h) with squared loss:
 * F_0 = mean(y); round m fits one CART tree (forest.c, no bootstrap, every feature tried
 * at each split) to the residuals y − F_{m−1} of a row subsample and adds ν times it.
 * Deterministic in the seed (the subsample and the forest's stream). */
#include <math.h>
#include <string.h>

#include "core/rng.h"
#include "rankers.h"

sdi_gbt_opts sdi_gbt_opts_default(void)
{
    sdi_gbt_opts o;
    memset(&o, 0, sizeof o);
    o.seed = 1;
    o.rounds = 80;
    o.max_depth = 3;
    o.min_leaf = 3;
    o.shrink = 0.1;
    o.subsample = 0.8;
    return o;
}

void sdi_gbt_free(sdi_gbt *g)
{
    if (g == NULL)
        return;
    for (int i = 0; i < g->nrounds && g->trees != NULL; i++)
        sdi_forest_free(&g->trees[i]);
    sdi_free(g->trees);
    memset(g, 0, sizeof *g);
}

double sdi_gbt_predict(const sdi_gbt *g, const double *x)
{
    double f = g->base;
    for (int i = 0; i < g->nrounds; i++)
        f += g->shrink * sdi_forest_predict(&g->trees[i], x);
    return f;
}

sd_status sdi_gbt_fit(const double *X, const double *y, int n, int p, const sdi_gbt_opts *opts,
                      sdi_gbt *out)
{
    double *F = NULL, *Xs = NULL, *rs = NULL;
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        sdi_free(F);                                                                       \
        sdi_free(Xs);                                                                      \
        sdi_free(rs);                                                                      \
        sdi_gbt_free(out);                                                                 \
    } while (0)
    memset(out, 0, sizeof *out);
    sdi_gbt_opts o = opts != NULL ? *opts : sdi_gbt_opts_default();
    if (n < 1 || p < 1 || o.rounds < 0 || o.max_depth < 1 || o.min_leaf < 1 ||
        !(o.shrink > 0 && o.shrink <= 1) || !(o.subsample > 0 && o.subsample <= 1))
        return SDI_ERR(SD_ERR_INVALID_ARG, "gbt: n %d, p %d, rounds %d, depth %d, min_leaf %d, "
                       "shrink %g, subsample %g out of range", n, p, o.rounds, o.max_depth,
                       o.min_leaf, o.shrink, o.subsample);
    for (int i = 0; i < n; i++)
        if (!isfinite(y[i]))
            return SDI_ERR(SD_ERR_INVALID_ARG, "gbt: target %d is not finite", i);
    out->nfeat = p;
    out->shrink = o.shrink;
    double s = 0;
    for (int i = 0; i < n; i++)
        s += y[i];
    out->base = s / n;
    out->trees = sdi_calloc(o.rounds > 0 ? (size_t)o.rounds : 1, sizeof *out->trees);
    SD_CHECK_ALLOC(out->trees, "boosted trees");
    F = sdi_malloc_array((size_t)n, sizeof *F);
    SD_CHECK_ALLOC(F, "boosting scores");
    Xs = sdi_malloc_array((size_t)n * (size_t)p, sizeof *Xs);
    SD_CHECK_ALLOC(Xs, "boosting sample");
    rs = sdi_malloc_array((size_t)n, sizeof *rs);
    SD_CHECK_ALLOC(rs, "boosting residuals");
    for (int i = 0; i < n; i++)
        F[i] = out->base;
    sdi_rng rng;
    sdi_rng_seed(&rng, o.seed, 0x6b7 /* stream: boosting subsamples */, 0);
    sdi_forest_opts fo = sdi_forest_opts_default();
    fo.ntrees = 1;
    fo.bootstrap = 0;
    fo.mtry = p;
    fo.max_depth = o.max_depth;
    fo.min_leaf = o.min_leaf;
    for (int m = 0; m < o.rounds; m++) {
        int ns = 0;
        for (int i = 0; i < n; i++)
            if (o.subsample >= 1 || sdi_rng_uniform(&rng) < o.subsample) {
                memcpy(Xs + (size_t)ns * p, X + (size_t)i * p, sizeof(double) * (size_t)p);
                rs[ns++] = y[i] - F[i];
            }
        if (ns == 0) { /* a tiny n and an unlucky draw: take every row */
            for (int i = 0; i < n; i++)
                rs[i] = y[i] - F[i];
            memcpy(Xs, X, sizeof(double) * (size_t)n * (size_t)p);
            ns = n;
        }
        fo.seed = o.seed * 1000003ull + (unsigned long long)m;
        SD_TRY(sdi_forest_fit(Xs, rs, ns, p, 0, &fo, &out->trees[m]));
        out->nrounds = m + 1;
        for (int i = 0; i < n; i++)
            F[i] += o.shrink * sdi_forest_predict(&out->trees[m], X + (size_t)i * p);
    }
    sdi_free(F);
    sdi_free(Xs);
    sdi_free(rs);
    return SD_OK;
#undef SD_FREE_ALL
}
