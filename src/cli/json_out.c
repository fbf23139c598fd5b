/* src/cli/json_out.c: with --json, standard output carries JSON in every outcome: the
 * command's document, or when a command fails without one an error object
 * {"error": {"status", "code", "exit_code", "message"}} that main prints as the command
 * returns. Human text (tables, progress, the one-line error) goes to stderr. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "core/core.h"

static bool g_json_mode;  /* the command takes --json and was given it */
static bool g_document;   /* a JSON document went to stdout */
static bool g_failed;     /* the first failure below is recorded */
static char g_status[64]; /* sd_status_string, or "usage error" */
static int g_code = -1;   /* the sd_status; -1 for a usage error */
static char g_message[2048];

void sdc_json_detect(int argc, char **argv, const sdc_option *opts, int nopts)
{
    if (sdc_opt_index(opts, nopts, "json") < 0)
        return;
    /* Before the parse, so a usage error is reported as JSON too. */
    for (int a = 1; a < argc && strcmp(argv[a], "--") != 0; a++)
        if (strcmp(argv[a], "--json") == 0)
            g_json_mode = true;
}

void sdc_json_note_failure(const char *status, int code, const char *message)
{
    if (g_failed) /* the first failure is the cause; later ones follow from it */
        return;
    g_failed = true;
    snprintf(g_status, sizeof g_status, "%s", status);
    g_code = code;
    snprintf(g_message, sizeof g_message, "%s", message);
}

void sdc_print_json(const char *doc)
{
    printf("%s\n", doc);
    g_document = true;
}

void sdc_json_printed(void) { g_document = true; }

int sdc_json_finish(int rc)
{
    if (!g_json_mode || rc == SDC_EXIT_OK || g_document)
        return rc;
    sdi_json j;
    sdi_json_init(&j, 0);
    sdi_json_begin_object(&j);
    sdi_json_key(&j, "error");
    sdi_json_begin_object(&j);
    sdi_json_key(&j, "status");
    sdi_json_string(&j, g_failed ? g_status : "error");
    sdi_json_key(&j, "code");
    if (g_failed && g_code >= 0)
        sdi_json_int(&j, g_code);
    else
        sdi_json_null(&j);
    sdi_json_key(&j, "exit_code");
    sdi_json_int(&j, rc);
    sdi_json_key(&j, "message");
    /* A failure printed without sdc_fail: the library's last error is its likely cause
     * (errors the library recovers from are cleared). */
    const char *last = sd_last_error();
    if (g_failed) {
        sdi_json_string(&j, g_message);
    } else if (last != NULL && last[0] != '\0') {
        sdi_json_string(&j, last);
    } else {
        char m[96];
        snprintf(m, sizeof m, "failed with exit code %d (the cause is on stderr)", rc);
        sdi_json_string(&j, m);
    }
    sdi_json_end_object(&j);
    sdi_json_end_object(&j);
    if (sdi_json_finish(&j) == SD_OK)
        printf("%s\n", j.buf);
    else /* out of memory: still one parseable object */
        printf("{\"error\":{\"status\":\"out of memory\",\"code\":null,\"exit_code\":%d,"
               "\"message\":\"out of host memory\"}}\n",
               rc);
    sdi_json_free(&j);
    return rc;
}
