/* tests/cpu/test_json.c: the JSON reader: writer round trip, escapes, errors, no leaks
 * under allocation failures. */
#include "core/core.h"
#include "core/json_parse.h"
#include "sdt.h"

static void test_round_trip(void)
{
    sdi_json j;
    sdi_json_init(&j, 2);
    sdi_json_begin_object(&j);
    sdi_json_key(&j, "name");
    sdi_json_string(&j, "tab\there \"q\" \\ \x01");
    sdi_json_key(&j, "n");
    sdi_json_number(&j, -1.25e-7);
    sdi_json_key(&j, "list");
    sdi_json_begin_array(&j);
    sdi_json_int(&j, 1);
    sdi_json_bool(&j, false);
    sdi_json_null(&j);
    sdi_json_begin_object(&j);
    sdi_json_end_object(&j);
    sdi_json_end_array(&j);
    sdi_json_end_object(&j);
    SDT_OK(sdi_json_finish(&j));
    sdi_jvalue v;
    SDT_OK(sdi_json_parse(j.buf, -1, &v));
    SDT_CHECK(v.type == SDI_JOBJECT && v.n == 3, "object of 3");
    SDT_CHECK(strcmp(sdi_jget_string(&v, "name", ""), "tab\there \"q\" \\ \x01") == 0,
              "string '%s'", sdi_jget_string(&v, "name", ""));
    SDT_CHECK(sdi_jget_number(&v, "n", 0) == -1.25e-7, "number");
    const sdi_jvalue *l = sdi_jget(&v, "list");
    SDT_CHECK(l && l->type == SDI_JARRAY && l->n == 4, "list");
    if (l && l->n == 4) {
        SDT_CHECK(l->items[0].number == 1 && l->items[1].type == SDI_JBOOL &&
                      !l->items[1].boolean && l->items[2].type == SDI_JNULL &&
                      l->items[3].type == SDI_JOBJECT && l->items[3].n == 0,
                  "list items");
    }
    SDT_CHECK(sdi_jget(&v, "absent") == NULL, "absent key");
    SDT_CHECK(sdi_jget_number(&v, "name", 7) == 7, "mistyped default");
    sdi_jvalue_free(&v);
    sdi_json_free(&j);
}

static void test_unicode_escape(void)
{
    sdi_jvalue v;
    SDT_OK(sdi_json_parse("\"a\\u00e9\\u20ac\"", -1, &v));
    SDT_CHECK(v.string && strcmp(v.string, "a\xc3\xa9\xe2\x82\xac") == 0, "utf8");
    sdi_jvalue_free(&v);
}

static void test_errors(void)
{
    const char *bad[] = {"", "{", "[1,", "{\"a\" 1}", "{\"a\":}", "[1 2]", "tru", "\"abc",
                         "{\"a\":1}x", "[\"\\q\"]", "1e", "{1:2}", "[\"a\nb\"]"};
    long long base = sdi_alloc_live_bytes();
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        sdi_jvalue v;
        SDT_STATUS(sdi_json_parse(bad[i], -1, &v), SD_ERR_PARSE);
        SDT_CHECK(v.type == SDI_JNULL && v.n == 0, "zeroed output for '%s'", bad[i]);
        SDT_CHECK(strstr(sd_last_error(), "byte") != NULL, "message '%s'", sd_last_error());
    }
    char deep[200];
    memset(deep, '[', sizeof deep - 1);
    deep[sizeof deep - 1] = '\0';
    sdi_jvalue v;
    SDT_STATUS(sdi_json_parse(deep, -1, &v), SD_ERR_PARSE);
    SDT_CHECK(sdi_alloc_live_bytes() == base, "leak %lld", sdi_alloc_live_bytes() - base);
}

static void test_alloc_failures(void)
{
    const char *text = "{\"a\":[1,2,{\"b\":\"xyz\",\"c\":[true,null]}],\"d\":\"e\"}";
    long long base = sdi_alloc_live_bytes();
    int ok = 0;
    for (long n = 0; n < 100 && !ok; n++) {
        sdi_jvalue v;
        sdi_alloc_fail_after(n);
        sd_status s = sdi_json_parse(text, -1, &v);
        sdi_alloc_fail_after(-1);
        if (s == SD_OK) {
            ok = 1;
            sdi_jvalue_free(&v);
        } else {
            SDT_CHECK(s == SD_ERR_OUT_OF_MEMORY, "status %s at %ld", sd_status_string(s), n);
        }
        SDT_CHECK(sdi_alloc_live_bytes() == base, "leak at %ld", n);
    }
    SDT_CHECK(ok, "never succeeded");
}

/* sdi_json_take hands the text over, or nothing (and no leak) when the writer failed. */
static void test_take(void)
{
    long long base = sdi_alloc_live_bytes();
    int ok = 0;
    for (long n = 0; n < 20 && !ok; n++) {
        sdi_json j;
        char *text = (char *)1;
        sdi_alloc_fail_after(n);
        sdi_json_init(&j, 0);
        sdi_json_begin_object(&j);
        sdi_json_key(&j, "k");
        sdi_json_string(&j, "a value long enough to grow the buffer more than once, past its first size");
        sdi_json_end_object(&j);
        sd_status s = sdi_json_take(&j, &text);
        sdi_alloc_fail_after(-1);
        if (s == SD_OK) {
            ok = 1;
            SDT_CHECK(text != NULL && strncmp(text, "{\"k\":\"a value", 12) == 0, "text %s", text ? text : "(null)");
            sdi_free(text);
        } else {
            SDT_CHECK(s == SD_ERR_OUT_OF_MEMORY && text == NULL, "status %s at %ld", sd_status_string(s), n);
            sdi_error_clear();
        }
        SDT_CHECK(sdi_alloc_live_bytes() == base, "leak at %ld", n);
    }
    SDT_CHECK(ok, "never succeeded");
    sdi_json j;
    char *text = NULL;
    sdi_json_init(&j, 0);
    sdi_json_begin_object(&j);
    SDT_STATUS(sdi_json_take(&j, &text), SD_ERR_INTERNAL); /* an unclosed object */
    SDT_CHECK(text == NULL, "no text for an unclosed object");
    sdi_error_clear();
}

int main(void)
{
    sdt_init("test_json");
    SDT_RUN(test_round_trip);
    SDT_RUN(test_unicode_escape);
    SDT_RUN(test_errors);
    SDT_RUN(test_alloc_failures);
    SDT_RUN(test_take);
    return sdt_finish();
}
