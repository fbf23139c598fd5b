/* src/cli/args.c: option parsing, usage errors and status → exit code mapping. */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int sdc_exit_code(sd_status s)
{
    switch (s) {
    case SD_OK: return SDC_EXIT_OK;
    case SD_ERR_INVALID_ARG:
    case SD_ERR_IO:
    case SD_ERR_PARSE:
    case SD_ERR_UNSUPPORTED:
    case SD_ERR_VALIDATION: return SDC_EXIT_INPUT;
    case SD_ERR_OUT_OF_MEMORY:
    case SD_ERR_NO_DEVICE:
    case SD_ERR_CUDA:
    case SD_ERR_COMPILE:
    case SD_ERR_CACHE: return SDC_EXIT_ENV;
    case SD_ERR_INTERNAL: return SDC_EXIT_INTERNAL;
    }
    return SDC_EXIT_INTERNAL;
}

int sdc_fail(sd_status s)
{
    const char *msg = sd_last_error();
    msg = (msg != NULL && msg[0]) ? msg : sd_status_string(s);
    fprintf(stderr, "sparseditto: %s\n", msg);
    sdc_json_note_failure(sd_status_string(s), (int)s, msg);
    return sdc_exit_code(s);
}

int sdc_usage_error(const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "sparseditto: %s\n", msg);
    sdc_json_note_failure("usage error", -1, msg);
    return SDC_EXIT_USAGE;
}

int sdc_opt_index(const sdc_option *opts, int nopts, const char *name)
{
    for (int i = 0; i < nopts; i++)
        if (strcmp(opts[i].name, name) == 0)
            return i;
    return -1;
}

int sdc_parse(int argc, char **argv, const sdc_option *opts, int nopts, int min_pos,
              int max_pos, sdc_args *out)
{
    memset(out, 0, sizeof *out);
    sdc_json_detect(argc, argv, opts, nopts);
    if (nopts > SDC_MAX_OPTIONS)
        return sdc_usage_error("internal: too many options");
    bool only_pos = false;
    for (int a = 1; a < argc; a++) {
        char *arg = argv[a];
        if (only_pos || arg[0] != '-' || arg[1] == '\0') {
            if (out->npos >= SDC_MAX_POSITIONALS || out->npos >= max_pos)
                return sdc_usage_error("%s: unexpected argument '%s'", argv[0], arg);
            out->pos[out->npos++] = arg;
            continue;
        }
        if (strcmp(arg, "--") == 0) {
            only_pos = true;
            continue;
        }
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            out->help = true;
            continue;
        }
        int idx = -1;
        const char *inline_value = NULL;
        char name[64];
        if (arg[1] == '-') {
            const char *eq = strchr(arg + 2, '=');
            size_t n = eq ? (size_t)(eq - (arg + 2)) : strlen(arg + 2);
            if (n >= sizeof name)
                return sdc_usage_error("%s: unknown option '%s'", argv[0], arg);
            memcpy(name, arg + 2, n);
            name[n] = '\0';
            idx = sdc_opt_index(opts, nopts, name);
            inline_value = eq ? eq + 1 : NULL;
        } else if (arg[2] == '\0') {
            for (int i = 0; i < nopts; i++)
                if (opts[i].short_name == arg[1])
                    idx = i;
        }
        if (idx < 0)
            return sdc_usage_error("%s: unknown option '%s' (see sparseditto %s --help)",
                                   argv[0], arg, argv[0]);
        out->present[idx] = true;
        if (opts[idx].has_value) {
            if (inline_value == NULL) {
                if (a + 1 >= argc)
                    return sdc_usage_error("%s: option '%s' needs a value", argv[0], arg);
                inline_value = argv[++a];
            }
            out->value[idx] = inline_value;
        } else if (inline_value != NULL) {
            return sdc_usage_error("%s: option '--%s' takes no value", argv[0], opts[idx].name);
        }
    }
    if (!out->help && out->npos < min_pos)
        return sdc_usage_error("%s: missing argument (see sparseditto %s --help)", argv[0],
                               argv[0]);
    return SDC_EXIT_OK;
}

void sdc_print_help(const char *usage, const char *summary, const sdc_option *opts, int nopts)
{
    printf("usage: sparseditto %s\n\n%s\n", usage, summary);
    if (nopts > 0)
        printf("\noptions:\n");
    for (int i = 0; i < nopts; i++) {
        char left[64];
        if (opts[i].short_name)
            snprintf(left, sizeof left, "-%c, --%s%s", opts[i].short_name, opts[i].name,
                     opts[i].has_value ? " V" : "");
        else
            snprintf(left, sizeof left, "    --%s%s", opts[i].name, opts[i].has_value ? " V" : "");
        printf("  %-24s %s\n", left, opts[i].help);
    }
    printf("  %-24s %s\n", "-h, --help", "this help");
}

/* An integer written with a decimal exponent ("2e7", "1.5e6", as the corpus's real-valued
 * size bands and the docs write sizes) is accepted when it names an integer exactly; doubles
 * hold every integer up to 2^53, far above any limit an option takes. */
static bool parse_exponent_int(const char *text, long long *out)
{
    if (strpbrk(text, "eE") == NULL || strpbrk(text, "xXpP") != NULL)
        return false; /* hexadecimal floats, "inf" and "nan" are not sizes */
    char *end = NULL;
    errno = 0;
    const double d = strtod(text, &end);
    if (errno != 0 || end == text || *end != '\0' || !(d >= -9007199254740992.0) ||
        !(d <= 9007199254740992.0) || d != (double)(long long)d)
        return false;
    *out = (long long)d;
    return true;
}

int sdc_parse_int(const char *text, const char *opt, long long lo, long long hi, long long *out)
{
    char *end = NULL;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    const bool plain = errno == 0 && end != text && *end == '\0';
    if ((!plain && !parse_exponent_int(text, &v)) || v < lo || v > hi)
        return sdc_usage_error("%s: '%s' is not an integer in [%lld, %lld]", opt, text, lo, hi);
    *out = v;
    return SDC_EXIT_OK;
}
