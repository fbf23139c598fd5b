/* src/runtime/sg_program.c: what a SpGEMM program owns and how it reads: freeing a
 * schedule and its compile units, the accumulators' names and sizes, the schedule's
 * one-line description and JSON. The executor and the reports need these without the
 * planner (src/plan builds schedules, src/lower their units). */
#include <stdio.h>
#include <string.h>

#include "sg_program.h"

static const char *const kind_names[SDI_SG_NKINDS] = {"tiny", "ghash", "gdense", "chash",
                                                      "cdense", "global", "copy"};

const char *sdi_sg_kind_name(int kind)
{
    return kind >= 0 && kind < SDI_SG_NKINDS ? kind_names[kind] : "unknown";
}

int64_t sdi_sg_kind_size(int kind, int p)
{
    if (kind == SDI_SG_TINY)
        return p;
    if (kind == SDI_SG_CDENSE || kind == SDI_SG_GDENSE)
        return sdi_sg_stripe_cols(p);
    return (int64_t)1 << p;
}

void sdi_sg_schedule_free(sdi_sg_schedule *s)
{
    if (s == NULL)
        return;
    sdi_free(s->binrows);
    sdi_free(s->ub);
    memset(s, 0, sizeof *s);
}

void sdi_sg_lowered_free(sdi_sg_lowered *l)
{
    if (l == NULL)
        return;
    for (int u = 0; u < l->nunits && l->units != NULL; u++) {
        sdi_free(l->units[u].source);
        sdi_free(l->units[u].link_source);
        for (int q = 0; q < l->units[u].nparts; q++)
            sdi_free(l->units[u].parts[q]);
    }
    sdi_free(l->units);
    sdi_free(l->unit_of);
    memset(l, 0, sizeof *l);
}

const char *sdi_sg_lowered_kernel(const sdi_sg_lowered *low, int l)
{
    if (low == NULL || l < 0 || l >= low->nkernels || low->unit_of == NULL)
        return NULL;
    return low->units[low->unit_of[l]].name;
}

void sdi_sg_schedule_describe(const sdi_sg_schedule *s, char *buf, size_t cap)
{
    if (buf == NULL || cap == 0)
        return;
    size_t o = 0;
    buf[0] = '\0';
    for (int b = 0; b < s->nbins && o + 1 < cap; b++) {
        const sdi_sg_bin *bn = &s->bins[b];
        char shape[48]; /* "w%lld/%lldslots" at its widest */
        if (bn->kind == SDI_SG_GLOBAL && s->gparts > 0)
            snprintf(shape, sizeof shape, "w%lldx%dparts", (long long)s->gwidth, s->gparts);
        else if (bn->kind == SDI_SG_GLOBAL)
            snprintf(shape, sizeof shape, "w%lld/%lldslots", (long long)s->gwidth,
                     (long long)s->gslots);
        else if (bn->g > 0)
            snprintf(shape, sizeof shape, "g%d/%lld", bn->g, (long long)sdi_sg_kind_size(bn->kind, bn->p));
        else
            snprintf(shape, sizeof shape, "%lld", (long long)sdi_sg_kind_size(bn->kind, bn->p));
        int w = snprintf(buf + o, cap - o, "%s%s%s:%d%s", o > 0 ? " " : "",
                         sdi_sg_kind_name(bn->kind), shape, bn->nrows, bn->one_phase ? "(1p)" : "");
        if (w < 0)
            break;
        o += (size_t)w;
    }
    if (o + 1 < cap) {
        int st1 = 0, st2 = 0;
        for (int l = 0; l < s->nlaunches; l++) {
            if (s->launches[l].stage == 1)
                st1++;
            else
                st2++;
        }
        snprintf(buf + o, cap - o, "%slaunches %d+scan+%d%s", o > 0 ? " | " : "", st1, st2,
                 s->out_ub ? " ub-out" : s->eager_cap > 0 ? " eager-out" : "");
    }
}

void sdi_sg_schedule_json(const sdi_sg_schedule *s, sdi_json *j)
{
    sdi_json_begin_object(j);
    sdi_json_key(j, "bins");
    sdi_json_begin_array(j);
    for (int b = 0; b < s->nbins; b++) {
        const sdi_sg_bin *bn = &s->bins[b];
        sdi_json_begin_object(j);
        sdi_json_key(j, "kind");
        sdi_json_string(j, sdi_sg_kind_name(bn->kind));
        sdi_json_key(j, "lanes");
        sdi_json_int(j, bn->g);
        sdi_json_key(j, "size");
        sdi_json_int(j, bn->kind == SDI_SG_GLOBAL ? s->gwidth : sdi_sg_kind_size(bn->kind, bn->p));
        sdi_json_key(j, "rows");
        sdi_json_int(j, bn->nrows);
        sdi_json_key(j, "one_phase");
        sdi_json_bool(j, bn->one_phase != 0);
        sdi_json_key(j, "threads");
        sdi_json_int(j, bn->threads);
        sdi_json_key(j, "u_max");
        sdi_json_int(j, bn->u_max);
        sdi_json_key(j, "span_max");
        sdi_json_int(j, bn->span_max);
        sdi_json_end_object(j);
    }
    sdi_json_end_array(j);
    sdi_json_key(j, "launches_stage1");
    int st1 = 0, st2 = 0;
    for (int l = 0; l < s->nlaunches; l++) {
        if (s->launches[l].stage == 1)
            st1++;
        else
            st2++;
    }
    sdi_json_int(j, st1);
    sdi_json_key(j, "launches_stage2");
    sdi_json_int(j, st2);
    sdi_json_key(j, "out_ub");
    sdi_json_bool(j, s->out_ub != 0);
    sdi_json_key(j, "out_eager"); /* C at a bound of nnz(C): no wait before stage 2 */
    sdi_json_int(j, s->eager_cap);
    sdi_json_key(j, "staging_entries");
    sdi_json_int(j, s->ub_total);
    sdi_json_key(j, "global_slots");
    sdi_json_int(j, s->gslots);
    sdi_json_key(j, "global_parts");
    sdi_json_int(j, s->gparts);
    sdi_json_key(j, "global_width");
    sdi_json_int(j, s->gwidth);
    sdi_json_key(j, "empty_rows");
    sdi_json_int(j, s->nempty);
    /* each launch with its residency: a launch holds the shared memory of its largest
     * segment, so a fused launch runs every segment at that occupancy */
    sdi_json_key(j, "launches");
    sdi_json_begin_array(j);
    for (int l = 0; l < s->nlaunches; l++) {
        const sdi_sg_launch *L = &s->launches[l];
        sdi_json_begin_object(j);
        sdi_json_key(j, "stage");
        sdi_json_int(j, L->stage);
        sdi_json_key(j, "threads");
        sdi_json_int(j, L->threads);
        sdi_json_key(j, "segments");
        sdi_json_int(j, L->nsegs);
        sdi_json_key(j, "blocks");
        sdi_json_int(j, L->blocks);
        sdi_json_key(j, "smem");
        sdi_json_int(j, L->smem);
        sdi_json_key(j, "resident_ctas");
        sdi_json_int(j, L->resident);
        sdi_json_key(j, "resident_warps");
        sdi_json_int(j, (int64_t)L->resident * L->threads / 32);
        sdi_json_end_object(j);
    }
    sdi_json_end_array(j);
    sdi_json_end_object(j);
}
