/* src/tune/record.c: the search record (sdi_tune_result_json): ranking, trials, baseline,
 * winner, times by stage — what `sparseditto compile --json` prints, the kernel cache keeps
 * beside an entry and the benchmark scripts read (their keys stay). A plan of ours also
 * appears as its plan JSON (sdi_plan_json) beside its one-line configuration. */
#include <string.h>

#include "tune.h"

void sdi_tune_result_free(sdi_tune_result *r)
{
    if (r == NULL)
        return;
    sdi_candidate_release(&r->best);
    sdi_free(r->baseline);
    r->baseline = NULL;
}

void sdi_tune_result_json(const sdi_tune_result *r, sdi_json *j)
{
    char buf[SDI_PLAN_TEXT];
    sdi_json_begin_object(j);
    sdi_json_key(j, "winner");
    sdi_json_begin_object(j);
    sdi_candidate_family(&r->best, buf, sizeof buf);
    sdi_json_key(j, "family");
    sdi_json_string(j, buf);
    sdi_candidate_describe(&r->best, buf, sizeof buf);
    sdi_json_key(j, "config");
    sdi_json_string(j, buf);
    if (r->best.kind == SDI_CAND_PLAN) {
        sdi_json_key(j, "plan");
        sdi_plan_json(&r->best.plan, j);
    }
    sdi_json_key(j, "vendor");
    sdi_json_bool(j, r->winner_is_vendor);
    sdi_json_key(j, "vendor_graph"); /* cuSPARSE's fallback replayed as a graph */
    sdi_json_bool(j, r->winner_vendor_graph);
    sdi_json_key(j, "agent");
    sdi_json_bool(j, r->winner_is_agent);
    sdi_json_key(j, "time");
    sdi_timing_json(j, &r->best_t);
    sdi_json_key(j, "roofline_frac");
    sdi_json_number(j, r->best_roofline);
    if (r->op == SD_OP_SPGEMM) {
        sdi_json_key(j, "peak_bytes");
        sdi_json_int(j, r->best_peak_bytes);
    }
    sdi_json_end_object(j);
    if (r->op == SD_OP_SPGEMM) {
        sdi_json_key(j, "product");
        sdi_json_string(j, r->general_b ? "A*B" : r->aat ? "A*At" : "A*A");
        sdi_json_key(j, "products");
        sdi_json_number(j, r->products);
        sdi_json_key(j, "nnz_c");
        sdi_json_int(j, r->nnz_c);
        sdi_json_key(j, "cusparse_failure");
        sdi_json_string(j, r->vendor_failure);
    }
    if (r->ours_trial >= 0) {
        sdi_json_key(j, "ours_best");
        sdi_json_begin_object(j);
        sdi_json_key(j, "family");
        sdi_json_string(j, r->trials[r->ours_trial].family);
        sdi_json_key(j, "config");
        sdi_json_string(j, r->trials[r->ours_trial].config);
        if (sdi_plan_family(&r->ours_plan) != NULL) {
            sdi_json_key(j, "plan");
            sdi_plan_json(&r->ours_plan, j);
        }
        sdi_json_key(j, "time");
        sdi_timing_json(j, &r->trials[r->ours_trial].t);
        sdi_json_end_object(j);
    }
    if (r->baseline != NULL && r->vendor_best >= 0) {
        const sdi_variant_result *v = &r->baseline->v[r->vendor_best];
        sdi_json_key(j, "cusparse_best");
        sdi_json_begin_object(j);
        sdi_json_key(j, "variant");
        sdi_json_string(j, v->name);
        sdi_json_key(j, "time");
        sdi_timing_json(j, &v->timing);
        if (r->vendor_graph_t.mean_us > 0) {
            sdi_json_key(j, "graph_time"); /* replayed as a graph by its executor */
            sdi_timing_json(j, &r->vendor_graph_t);
        }
        sdi_json_end_object(j);
        if (r->ours_trial >= 0) {
            const sdi_timing *o = &r->trials[r->ours_trial].t;
            sdi_json_key(j, "speedup_ours");
            sdi_json_number(j, v->timing.mean_us / o->mean_us);
            sdi_json_key(j, "speedup_ours_pipelined");
            sdi_json_number(j, v->timing.pipelined_us / o->pipelined_us);
        }
        sdi_json_key(j, "speedup");
        sdi_json_number(j, v->timing.mean_us / r->best_t.mean_us);
    }
    sdi_json_key(j, "roofline_us");
    sdi_json_number(j, r->roofline_us);
    sdi_json_key(j, "diagnosis");
    sdi_json_string(j, r->diagnosis);
    sdi_json_key(j, "compile_ms");
    sdi_json_begin_object(j);
    sdi_json_key(j, "analysis");
    sdi_json_number(j, r->ms_analysis);
    sdi_json_key(j, "rank");
    sdi_json_number(j, r->ms_rank);
    sdi_json_key(j, "synthesis");
    sdi_json_number(j, r->ms_synthesis);
    sdi_json_key(j, "nvrtc");
    sdi_json_number(j, r->ms_compile);
    sdi_json_key(j, "measure");
    sdi_json_number(j, r->ms_measure);
    sdi_json_key(j, "cusparse");
    sdi_json_number(j, r->ms_baseline);
    sdi_json_key(j, "total");
    sdi_json_number(j, r->ms_total);
    sdi_json_end_object(j);
    sdi_json_key(j, "features");
    sdi_json_begin_object(j);
    for (int i = 0; i < SD_NUM_FEATURES; i++) {
        sdi_json_key(j, sd_feature_name(i));
        sdi_json_number(j, r->features.values[i]);
    }
    sdi_json_end_object(j);
    sdi_json_key(j, "shape_class");
    sdi_json_string(j, sd_shape_class_name(r->features.shape_class));
    sdi_json_key(j, "ranking");
    sdi_ranking_json(&r->ranking, j);
    sdi_json_key(j, "trials");
    sdi_json_begin_array(j);
    for (int i = 0; i < r->ntrials; i++) {
        const sdi_trial *tr = &r->trials[i];
        sdi_json_begin_object(j);
        sdi_json_key(j, "round");
        sdi_json_int(j, tr->round);
        sdi_json_key(j, "family");
        sdi_json_string(j, tr->family);
        sdi_json_key(j, "config");
        sdi_json_string(j, tr->config);
        sdi_json_key(j, "status");
        sdi_json_string(j, sd_status_string(tr->status));
        if (tr->edit_src > 0) { /* only on edits: other records stay as they were */
            sdi_json_key(j, "edit_of");
            sdi_json_int(j, tr->edit_src - 1);
            sdi_json_key(j, "edit");
            sdi_json_string(j, tr->edit);
        }
        if (tr->status == SD_OK) {
            sdi_json_key(j, "time");
            sdi_timing_json(j, &tr->t);
            sdi_json_key(j, "roofline_frac");
            sdi_json_number(j, tr->roofline_frac);
            if (tr->measured == SDI_MEASURED_SCREENED) {
                sdi_json_key(j, "screened");
                sdi_json_bool(j, true);
            }
            if (tr->measured == SDI_MEASURED_BRIEF) {
                sdi_json_key(j, "brief");
                sdi_json_bool(j, true);
            }
            if (tr->retimed) { /* only on finalists: other records stay as they were */
                sdi_json_key(j, "retimed");
                sdi_json_begin_object(j);
                sdi_json_key(j, "search_mean_us");
                sdi_json_number(j, tr->search_mean_us);
                sdi_json_key(j, "round_mean_us");
                sdi_json_begin_array(j);
                for (int q = 0; q < 2; q++)
                    sdi_json_number(j, tr->round_mean_us[q]);
                sdi_json_end_array(j);
                sdi_json_end_object(j);
            }
        } else {
            sdi_json_key(j, "detail");
            sdi_json_string(j, tr->detail);
        }
        sdi_json_key(j, "nvrtc_ms");
        sdi_json_number(j, tr->compile_ms);
        if (tr->peak_bytes > 0) {
            sdi_json_key(j, "peak_bytes");
            sdi_json_int(j, tr->peak_bytes);
        }
        sdi_json_end_object(j);
    }
    sdi_json_end_array(j);
    if (r->baseline != NULL) {
        sdi_json_key(j, "cusparse");
        sdi_baseline_json(r->baseline, j);
    }
    sdi_json_end_object(j);
}

