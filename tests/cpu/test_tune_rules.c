/* tests/cpu/test_tune_rules.c: the search's decision rules that need no GPU (tune.h):
 * when cuSPARSE's best variant runs instead of our winner (faster per execution or
 * pipelined), when that fallback runs replayed as a graph, the screening factor and the
 * brief protocol's threshold. */
#include "tune/tune.h"
#include "sdt.h"

static sdi_timing timing(double mean_us, double pipelined_us)
{
    sdi_timing t;
    memset(&t, 0, sizeof t);
    t.mean_us = t.median_us = t.min_us = mean_us;
    t.pipelined_us = pipelined_us;
    return t;
}

static void test_vendor_wins(void)
{
    sdi_timing ours, vend;
    ours = timing(10, 8), vend = timing(12, 9);
    SDT_CHECK(!sdi_tune_vendor_wins(&ours, &vend), "ours faster in both: ours runs");
    ours = timing(10, 8), vend = timing(9, 9);
    SDT_CHECK(sdi_tune_vendor_wins(&ours, &vend), "cuSPARSE faster per execution: it runs");
    /* cage8 SpMM K = 8 on the H200: ours 6.79 / 5.30 us, cuSPARSE 7.99 / 5.12 us */
    ours = timing(6.79, 5.30), vend = timing(7.99, 5.12);
    SDT_CHECK(sdi_tune_vendor_wins(&ours, &vend), "cuSPARSE faster pipelined only: it runs");
    ours = timing(10, 8), vend = timing(10, 8);
    SDT_CHECK(!sdi_tune_vendor_wins(&ours, &vend), "a tie keeps ours");
    /* brief-timed executions carry pipelined = mean; an unmeasured 0 decides nothing */
    ours = timing(10, 0), vend = timing(12, 5);
    SDT_CHECK(!sdi_tune_vendor_wins(&ours, &vend), "our pipelined time unknown: per execution decides");
    ours = timing(10, 8), vend = timing(0, 0);
    SDT_CHECK(!sdi_tune_vendor_wins(&ours, &vend), "cuSPARSE unmeasured: ours runs");
}

/* The fallback's graph replay only where it is no slower than cuSPARSE's own calls in
 * either time; then it, and any plan of ours beating it, is below 1.0x in neither. */
static void test_vendor_replays(void)
{
    sdi_timing graph, plain, ours;
    graph = timing(6, 4.5), plain = timing(8.6, 4.8);
    SDT_CHECK(sdi_tune_vendor_replays(&graph, &plain), "replay faster in both: replayed");
    /* GD06_Java SpMM K = 8 on the H200: replay 6.06 / 5.12 us, calls 8.60 / 4.81 us */
    graph = timing(6.06, 5.12), plain = timing(8.60, 4.81);
    SDT_CHECK(!sdi_tune_vendor_replays(&graph, &plain), "replay slower pipelined: plain calls");
    graph = timing(9, 4), plain = timing(8.6, 4.8);
    SDT_CHECK(!sdi_tune_vendor_replays(&graph, &plain), "replay slower per execution: plain calls");
    graph = timing(0, 0), plain = timing(8.6, 4.8);
    SDT_CHECK(!sdi_tune_vendor_replays(&graph, &plain), "replay not measured: plain calls");
    graph = timing(8.6, 4.8), plain = timing(8.6, 4.8);
    SDT_CHECK(sdi_tune_vendor_replays(&graph, &plain), "a tie replays");
    /* The decision chain keeps every winner at or under the plain calls in both times:
     * our plan 6.49 / 4.91 us beats the replay per execution but not the calls pipelined. */
    graph = timing(6.06, 5.12), plain = timing(8.60, 4.81), ours = timing(6.49, 4.91);
    const sdi_timing *vt = sdi_tune_vendor_replays(&graph, &plain) ? &graph : &plain;
    const sdi_timing *win = sdi_tune_vendor_wins(&ours, vt) ? vt : &ours;
    SDT_CHECK(win == &plain, "GD06_Java's chain ends at cuSPARSE's own calls");
    SDT_CHECK(!sdi_tune_vendor_wins(win, &plain), "the winner is no slower than the baseline");
}

/* SpGEMM's final rounds take the winner and the closest valid candidates timed in full. */
static void test_finalists(void)
{
    sdi_trial tr[7];
    memset(tr, 0, sizeof tr);
    const double us[7] = {60, 70, 75, 90, 65, 62, 50};
    for (int i = 0; i < 7; i++)
        tr[i].t = timing(us[i], us[i]);
    tr[4].measured = SDI_MEASURED_BRIEF;    /* 65 us, but brief */
    tr[5].status = SD_ERR_VALIDATION;       /* 62 us, but invalid */
    tr[6].measured = SDI_MEASURED_SCREENED; /* 50 us? a screened single execution */
    int fin[3];
    int n = sdi_tune_finalists(tr, 7, 0, 1.3, 3, fin);
    SDT_CHECK(n == 3 && fin[0] == 0 && fin[1] == 1 && fin[2] == 2,
              "winner 0, then 70 and 75 us within 78 us: %d [%d %d %d]", n, fin[0], fin[1], fin[2]);
    n = sdi_tune_finalists(tr, 7, 0, 1.2, 3, fin);
    SDT_CHECK(n == 2 && fin[1] == 1, "within 72 us: only 70 us (%d)", n);
    n = sdi_tune_finalists(tr, 7, 3, 1.3, 2, fin);
    SDT_CHECK(n == 2 && fin[0] == 3 && fin[1] == 0, "cap 2 from trial 3: the fastest other (%d)", n);
    n = sdi_tune_finalists(tr, 7, 0, 1.0, 3, fin);
    SDT_CHECK(n == 1, "nothing within 1.0x: the winner alone (%d)", n);
    SDT_CHECK(sdi_tune_finalists(tr, 7, -1, 1.3, 3, fin) == 0, "no winner: none");
}

static void test_screen_and_brief(void)
{
    SDT_CHECK(sdi_tune_screen_factor(10) == SDI_TUNE_SCREEN, "short executions screened at 8x");
    SDT_CHECK(sdi_tune_screen_factor(SDI_TUNE_SCREEN_LONG_US) == SDI_TUNE_SCREEN_LONG,
              "executions of a millisecond or more screened at 1.5x");
    sdi_tune_options o;
    memset(&o, 0, sizeof o);
    SDT_CHECK(sdi_tune_brief_us(&o) == SDI_TUNE_BRIEF_US, "0 = the default threshold");
    o.brief_us = 3;
    SDT_CHECK(sdi_tune_brief_us(&o) == 3, "a given threshold is taken");
    o.brief_us = -1;
    SDT_CHECK(sdi_tune_brief_us(&o) == 0, "negative = no brief protocol");
}

int main(void)
{
    sdt_init("test_tune_rules");
    SDT_RUN(test_vendor_wins);
    SDT_RUN(test_vendor_replays);
    SDT_RUN(test_finalists);
    SDT_RUN(test_screen_and_brief);
    return sdt_finish();
}
