/* src/cli/cmd_cache.c: `sparseditto cache [--dir D] [--json] [--clear WHAT]`: what the
 * on-disk caches hold (kernel entries, compiled kernel variants, folders of other library
 * versions), and clearing them. Nothing evicts on its own, so this is how a user bounds it. */
#include <stdio.h>
#include <string.h>

#include "cache/cache.h"
#include "cli.h"

static const sdc_option cache_options[] = {
    {"dir", 0, true, "the cache directory (default $SPARSEDITTO_CACHE, $XDG_CACHE_HOME/sparseditto, ~/.cache/sparseditto)"},
    {"json", 0, false, "print one JSON object on stdout"},
    {"clear", 0, true, "remove entries, jit, stale (other library versions) or all"},
};
#define K_NOPTS ((int)(sizeof cache_options / sizeof cache_options[0]))
enum { K_DIR, K_JSON, K_CLEAR };

/* cleared: what --clear did (NULL without --clear), into the JSON as "cleared". */
static void print_stats(const sdi_cache_stats *st, bool json, const char *what,
                        const sdi_cache_clear_report *cleared)
{
    if (json) {
        sdi_json j;
        sdi_json_init(&j, 0);
        sdi_json_begin_object(&j);
        sdi_json_key(&j, "root");
        sdi_json_string(&j, st->root);
        const char *names[8] = {"entries", "entry_bytes", "jit", "jit_bytes", "other", "other_bytes", "stale_dirs",
                                "stale_bytes"};
        const long long v[8] = {st->entries, st->entry_bytes, st->jit, st->jit_bytes, st->other, st->other_bytes,
                                st->stale_dirs, st->stale_bytes};
        for (int i = 0; i < 8; i++) {
            sdi_json_key(&j, names[i]);
            sdi_json_int(&j, v[i]);
        }
        if (cleared != NULL) {
            sdi_json_key(&j, "cleared");
            sdi_json_begin_object(&j);
            sdi_json_key(&j, "what");
            sdi_json_string(&j, what);
            const char *cn[5] = {"removed_files", "removed_bytes", "removed_stale_dirs", "left_items", "left_bytes"};
            const long long cv[5] = {cleared->removed_files, cleared->removed_bytes, cleared->removed_dirs,
                                     cleared->left_items, cleared->left_bytes};
            for (int i = 0; i < 5; i++) {
                sdi_json_key(&j, cn[i]);
                sdi_json_int(&j, cv[i]);
            }
            sdi_json_key(&j, "left_first");
            if (cleared->left_items > 0)
                sdi_json_string(&j, cleared->left_first);
            else
                sdi_json_null(&j);
            sdi_json_end_object(&j);
        }
        sdi_json_end_object(&j);
        if (sdi_json_finish(&j) == SD_OK)
            sdc_print_json(j.buf);
        sdi_json_free(&j);
        return;
    }
    printf("cache       %s\n", st->root);
    printf("  kernels   %lld entries, %.1f MiB (plan, record, cubin each)\n", st->entries,
           st->entry_bytes / 1048576.0);
    printf("  variants  %lld compiled kernels, %.1f MiB (the JIT cache; SPARSEDITTO_JIT_CACHE=0 turns it off)\n", st->jit,
           st->jit_bytes / 1048576.0);
    printf("  other     %lld files, %.1f MiB (locks, temporaries)\n", st->other, st->other_bytes / 1048576.0);
    printf("  stale     %lld folders of other library versions, %.1f MiB\n", st->stale_dirs,
           st->stale_bytes / 1048576.0);
}

int cmd_cache(int argc, char **argv)
{
    sdc_args args;
    int rc = sdc_parse(argc, argv, cache_options, K_NOPTS, 0, 0, &args);
    if (rc != SDC_EXIT_OK)
        return rc;
    if (args.help) {
        sdc_print_help("cache [--dir D] [--json] [--clear entries|jit|stale|all]",
                       "What the on-disk caches hold: compiled kernels (one entry per matrix\n"
                       "pattern, operator and options), compiled kernel variants (the JIT cache)\n"
                       "and folders left by other library versions. The JIT cache keeps to\n"
                       "SPARSEDITTO_JIT_CACHE_MB (default 2048; 0 = no cap), least recently used\n"
                       "variants removed first; nothing else is evicted on its own. --clear removes\n"
                       "a part (the next compile rebuilds what it needs) and names what it left:\n"
                       "files the cache did not write are never removed. --dir must name an\n"
                       "existing folder.",
                       cache_options, K_NOPTS);
        return SDC_EXIT_OK;
    }
    const char *dir = args.value[K_DIR];
    if (dir != NULL && dir[0] == '\0')
        return sdc_usage_error("--dir: the path is empty");
    sdi_cache_clear_report rep;
    const char *w = NULL;
    if (args.present[K_CLEAR]) {
        w = args.value[K_CLEAR];
        unsigned what = strcmp(w, "entries") == 0 ? SDI_CACHE_CLEAR_ENTRIES
                        : strcmp(w, "jit") == 0   ? SDI_CACHE_CLEAR_JIT
                        : strcmp(w, "stale") == 0 ? SDI_CACHE_CLEAR_STALE
                        : strcmp(w, "all") == 0
                            ? SDI_CACHE_CLEAR_ENTRIES | SDI_CACHE_CLEAR_JIT | SDI_CACHE_CLEAR_STALE
                            : 0;
        if (what == 0)
            return sdc_usage_error("--clear: '%s' is not entries, jit, stale or all", w);
        sd_status s = sdi_cache_clear(dir, what, &rep);
        if (s != SD_OK)
            return sdc_fail(s);
        /* "all" promises an empty cache: with anything left it says so, and what and why. */
        fprintf(stderr, "sparseditto: cache: cleared %s", w);
        if (rep.left_items > 0 && strcmp(w, "all") == 0)
            fprintf(stderr, " but %lld item%s", rep.left_items, rep.left_items == 1 ? "" : "s");
        fprintf(stderr, ": removed %lld files (%.1f MiB)", rep.removed_files, rep.removed_bytes / 1048576.0);
        if (rep.removed_dirs > 0)
            fprintf(stderr, " with %lld folder%s of other library versions", rep.removed_dirs,
                    rep.removed_dirs == 1 ? "" : "s");
        fprintf(stderr, "\n");
        if (rep.left_items > 0)
            fprintf(stderr,
                    "sparseditto: cache: left '%s'%s (%.1f MiB): not written by the cache, so no --clear "
                    "removes %s; remove %s by hand\n",
                    rep.left_first, rep.left_items > 1 ? " and others" : "", rep.left_bytes / 1048576.0,
                    rep.left_items == 1 ? "it" : "them", rep.left_items == 1 ? "it" : "them");
    }
    sdi_cache_stats st;
    sd_status s = sdi_cache_stats_read(dir, &st);
    if (s != SD_OK)
        return sdc_fail(s);
    print_stats(&st, args.present[K_JSON], w, w != NULL ? &rep : NULL);
    return SDC_EXIT_OK;
}
