/* src/cli/cmd_worker.c: `sparseditto worker` (hidden): the candidate worker process the
 * tuner starts (isolate/worker.h says why a subcommand): requests on --fd-in, replies on
 * --fd-out, one JSON object per line; or --once REQUEST --out REPLY for a single request
 * (how ncu profiles a candidate). Thin: the loop and the handler live in the library. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "isolate/worker_handler.h"

static const sdc_option worker_options[] = {
    {"fd-in", 0, true, "file descriptor the requests arrive on"},
    {"fd-out", 0, true, "file descriptor the replies go to"},
    {"once", 0, true, "handle the single request in this file"},
    {"out", 0, true, "with --once: write the reply here"},
};
#define W_NOPTS ((int)(sizeof worker_options / sizeof worker_options[0]))
enum { W_FDIN, W_FDOUT, W_ONCE, W_OUT };

int cmd_worker(int argc, char **argv)
{
    sdc_args args;
    int rc = sdc_parse(argc, argv, worker_options, W_NOPTS, 0, 0, &args);
    if (rc != SDC_EXIT_OK)
        return rc;
    if (args.help) {
        sdc_print_help("worker (--fd-in N --fd-out M | --once REQUEST --out REPLY)",
                       "Internal: the isolated process in which the tuner compiles, loads,\n"
                       "validates and times untrusted candidates (LLM-written kernels, or\n"
                       "built-in ones with SPARSEDITTO_ISOLATE=1). Not meant to be run by hand.",
                       worker_options, W_NOPTS);
        return SDC_EXIT_OK;
    }
    if (args.present[W_ONCE]) {
        if (!args.present[W_OUT])
            return sdc_usage_error("worker: --once needs --out");
        return sdi_worker_once(args.value[W_ONCE], args.value[W_OUT]);
    }
    long long in = 0, out = 1;
    if (!args.present[W_FDIN] || !args.present[W_FDOUT])
        return sdc_usage_error("worker: --fd-in and --fd-out (or --once) are required");
    if ((rc = sdc_parse_int(args.value[W_FDIN], "--fd-in", 0, 1 << 20, &in)) != SDC_EXIT_OK ||
        (rc = sdc_parse_int(args.value[W_FDOUT], "--fd-out", 0, 1 << 20, &out)) != SDC_EXIT_OK)
        return rc;
    return sdi_worker_main((int)in, (int)out);
}
