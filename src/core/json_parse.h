/* src/core/json_parse.h: a small JSON reader (DOM) for plans, cache records, model
 * weights and corpora written by sdi_json. */
#ifndef SDI_JSON_PARSE_H
#define SDI_JSON_PARSE_H

#include <stdbool.h>

#include "sdi.h"

typedef enum { SDI_JNULL, SDI_JBOOL, SDI_JNUMBER, SDI_JSTRING, SDI_JARRAY, SDI_JOBJECT } sdi_jtype;

typedef struct sdi_jvalue sdi_jvalue;
struct sdi_jvalue {
    sdi_jtype type;
    bool boolean;
    double number;
    char *string;       /* SDI_JSTRING: NUL-terminated, UTF-8 */
    int n;              /* SDI_JARRAY / SDI_JOBJECT: element count */
    char **keys;        /* SDI_JOBJECT: n keys */
    sdi_jvalue *items;  /* n elements (values of an object) */
};

/* Parses text[0..len) (len < 0: NUL-terminated). SD_ERR_PARSE names the byte offset
 * and what was expected. Nesting deeper than 64 levels is rejected. */
SDI_HIDDEN sd_status sdi_json_parse(const char *text, long len, sdi_jvalue *out);
SDI_HIDDEN void sdi_jvalue_free(sdi_jvalue *v);
/* Member of an object by key, or NULL (also when v is not an object). */
SDI_HIDDEN const sdi_jvalue *sdi_jget(const sdi_jvalue *v, const char *key);
/* Typed getters with a default for absent or mistyped members. */
SDI_HIDDEN double sdi_jget_number(const sdi_jvalue *v, const char *key, double dflt);
SDI_HIDDEN const char *sdi_jget_string(const sdi_jvalue *v, const char *key, const char *dflt);

#endif /* SDI_JSON_PARSE_H */
