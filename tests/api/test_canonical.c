/*
 * Tests for api/canonical: api_canonical_check() says "these bytes are what the tree pipeline
 * (parse, validate, default, canonicalize, print) writes for them" without building a tree, so
 * koord manager can store a NodeMetric report as it came. Its one obligation is the implication
 * "yes => the pipeline gives the same bytes and no error or warning"; every test below checks
 * that implication against the pipeline itself, not against expected strings. Beyond that, it
 * must say yes to the reports agents send (Go's field order, canonical quantities), or the
 * manager's fast path never runs: the canonical forms of the example NodeMetric and of a
 * generated 30-pod report are accepted; what canonical encoding rewrites (order, whitespace,
 * quantities such as "1000m", omitted zero values, nulls) and what validation refuses are not;
 * the quick quantity rule agrees with quantity_parse() + quantity_format() over many values;
 * and single-byte corruptions of a report never get a wrong yes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "api/api.h"
#include "api/quantity.h"
#include "api/schema.h"
#include "base/base.h"
#include "base/strbuf.h"
#include "codec/codec.h"
#include "testutil.h"

static const struct api_schema *status_schema(void)
{
    return kind("slo.koordinator.sh/v1alpha1", "NodeMetric")->status;
}

/* The pipeline's bytes for text into out: false when it does not parse or validation finds
 * anything (an error or a warning). */
static bool pipeline(const struct api_schema *s, const char *text, size_t len, struct strbuf *out)
{
    struct field_errors errs = FIELD_ERRORS_INIT;
    cJSON *v = NULL;
    bool ok = false;

    strbuf_reset(out);
    if (json_parse(text, len, NULL, &v, NULL) < 0)
        return false;
    api_validate(s, v, "", 0, &errs);
    if (!errs.n && api_default(s, v, 0) == 0 && api_canonicalize(s, v) == 0 &&
        json_print(v, out) == 0)
        ok = true;
    field_errors_release(&errs);
    cJSON_Delete(v);
    return ok;
}

/* The check's answer, after asserting the implication for it. */
static bool checked(const struct api_schema *s, const char *text, size_t len)
{
    struct strbuf out = STRBUF_INIT;
    bool yes = api_canonical_check(s, text, len, 0);

    if (yes && (!pipeline(s, text, len, &out) || out.len != len || memcmp(out.buf, text, len)))
        fail_msg("canonical check said yes to\n  %.*s\nbut the pipeline gives\n  %s", (int)len,
                 text, out.buf ? out.buf : "(an error)");
    strbuf_release(&out);
    return yes;
}

static bool checked_str(const struct api_schema *s, const char *text)
{
    return checked(s, text, strlen(text));
}

/* A report as koordlet writes it (Go's field order), with pods pods, through the pipeline. */
static void report(int pods, struct strbuf *out)
{
    struct strbuf sb = STRBUF_INIT;

    strbuf_addstr(&sb, "{\"updateTime\":\"2026-11-24T10:00:00Z\",\"nodeMetric\":{\"nodeUsage\":"
                       "{\"resources\":{\"cpu\":\"7500m\",\"memory\":\"30720Mi\"}},"
                       "\"aggregatedNodeUsages\":[");
    for (int d = 0; d < 2; d++)
        strbuf_addf(&sb,
                    "%s{\"usage\":{\"avg\":{\"resources\":{\"cpu\":\"%dm\"}},\"p99\":{"
                    "\"resources\":{\"cpu\":\"%dm\",\"memory\":\"%dMi\"}}},\"duration\":\"%s\"}",
                    d ? "," : "", 7000 + d, 8000 + d, 29000 + d, d ? "10m0s" : "5m0s");
    strbuf_addstr(&sb, "],\"systemUsage\":{\"resources\":{\"cpu\":\"500m\",\"memory\":\"2Gi\"}}},"
                       "\"podsMetric\":[");
    for (int i = 0; i < pods; i++)
        strbuf_addf(&sb,
                    "%s{\"namespace\":\"team-%d\",\"name\":\"web-%d\",\"podUsage\":{\"resources\":"
                    "{\"cpu\":\"%dm\",\"memory\":\"%dMi\"}},\"priority\":\"%s\",\"qos\":\"%s\"}",
                    i ? "," : "", i % 3, i, 100 + 13 * i, 128 + 7 * i,
                    i % 3 ? "koord-prod" : "koord-batch", i % 3 ? "LS" : "BE");
    strbuf_addstr(&sb, "]}");
    assert_true(pipeline(status_schema(), sb.buf, sb.len, out));
    strbuf_release(&sb);
}

static void test_accepts_reports(void **state)
{
    struct strbuf sb = STRBUF_INIT, text = STRBUF_INIT;
    cJSON **docs = NULL, *status;
    size_t n = 0;
    (void)state;

    report(30, &sb);
    assert_true(checked(status_schema(), sb.buf, sb.len));
    /* The example NodeMetric (every status field upstream has), in its canonical form. */
    assert_int_equal(
        codec_read_file(KOORD_SOURCE_DIR "/examples/reference/nodemetric.yaml", 1 << 20, &text), 0);
    assert_int_equal(yaml_parse_stream(text.buf, text.len, NULL, &docs, &n, NULL), 0);
    assert_int_equal(n, 1);
    status = cJSON_GetObjectItemCaseSensitive(docs[0], "status");
    strbuf_reset(&text);
    assert_int_equal(json_print(status, &text), 0);
    assert_true(pipeline(status_schema(), text.buf, text.len, &sb));
    assert_true(checked(status_schema(), sb.buf, sb.len));
    codec_docs_free(docs, n);
    strbuf_release(&sb);
    strbuf_release(&text);
}

static void test_refuses(void **state)
{
    static const char *const no[] = {
        /* what canonical encoding writes differently */
        "{ \"updateTime\":\"2026-11-24T10:00:00Z\"}",
        "{\"nodeMetric\":{},\"updateTime\":\"2026-11-24T10:00:00Z\"}",
        "{\"updateTime\":\"2026-11-24T10:00:00.5Z\"}",
        "{\"nodeMetric\":{\"nodeUsage\":{\"resources\":{\"cpu\":\"1000m\"}}}}",
        "{\"nodeMetric\":{\"nodeUsage\":{\"resources\":{\"memory\":\"2048Mi\"}}}}",
        "{\"nodeMetric\":{\"nodeUsage\":{\"resources\":{\"cpu\":2}}}}",
        "{\"nodeMetric\":{\"nodeUsage\":{\"resources\":{\"cpu\":\"0m\"}}}}",
        "{\"podsMetric\":[]}",
        "{\"podsMetric\":[{\"name\":\"a\",\"podUsage\":{},\"priority\":\"\"}]}",
        "{\"podsMetric\":[{\"name\":\"a\"}]}",
        "{\"updateTime\":null}",
        "{\"nodeMetric\":{\"aggregatedNodeUsages\":[{\"usage\":{}}]}}",
        "{\"podsMetric\":[{\"name\":\"caf\\u00e9\",\"podUsage\":{}}]}",
        "{\"podsMetric\":[{\"name\":\"x\\\"y\",\"podUsage\":{}}]}",
        /* what validation refuses or warns about */
        "{\"unknown\":1}",
        "{\"nodeMetric\":{\"nodeUsage\":{\"resources\":{\"c pu\":\"1\"}}}}",
        "{\"nodeMetric\":{\"nodeUsage\":{\"resources\":{\"cpu\":\"1\",\"cpu\":\"2\"}}}}",
        "{\"nodeMetric\":{\"nodeUsage\":{\"resources\":{\"cpu\":\"lots\"}}}}",
        ("{\"nodeMetric\":{\"aggregatedNodeUsages\":[{\"usage\":{\"p42\":{}},"
         "\"duration\":\"5m0s\"}]}}"),
        "{\"nodeMetric\":{\"numaUsages\":[{\"numaNodeID\":4294967296}]}}",
        "{\"podsMetric\":[{\"name\":\"a\",\"podUsage\":{},\"qos\":\"GOLD\"}]}",
        "{\"updateTime\":\"yesterday\"}",
        /* not JSON, or more than one value */
        "{\"updateTime\":\"2026-11-24T10:00:00Z\"",
        "{\"updateTime\":\"2026-11-24T10:00:00Z\"}x",
        "",
    };
    (void)state;

    for (size_t i = 0; i < ARRAY_SIZE(no); i++)
        if (checked_str(status_schema(), no[i]))
            fail_msg("said yes to %s", no[i]);
    /* and yes to the canonical forms of the first few */
    assert_true(checked_str(status_schema(), "{\"updateTime\":\"2026-11-24T10:00:00Z\"}"));
    assert_true(checked_str(status_schema(),
                            "{\"nodeMetric\":{\"nodeUsage\":{\"resources\":{\"cpu\":\"1\"}}}}"));
    assert_true(checked_str(
        status_schema(), "{\"nodeMetric\":{\"nodeUsage\":{\"resources\":{\"memory\":\"2Gi\"}}}}"));
    assert_true(checked_str(status_schema(), "{}"));
}

/* The quick rule for "<digits><suffix>" agrees with parsing and formatting. */
static void test_quantity_forms(void **state)
{
    static const int64_t values[] = {
        0,          1,       5,       999,      1000,      1001,           1023,    1024,
        1500,       2048,    3000,    4096,     10240,     512000,         1000000, 1048576,
        1073741824, 7500000, 1024000, 25600000, 999999999, 123456789012345};
    static const char *const suffixes[] = {"",  "m",  "k",  "M",  "G",  "T",  "P",  "E", "n",
                                           "u", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "e3"};
    char text[96], in[64], out[QUANTITY_STR_MAX];
    struct quantity q;
    (void)state;

    for (size_t i = 0; i < ARRAY_SIZE(values); i++) {
        for (size_t j = 0; j < ARRAY_SIZE(suffixes); j++) {
            bool want;

            (void)snprintf(in, sizeof(in), "%lld%s", (long long)values[i], suffixes[j]);
            (void)snprintf(text, sizeof(text), "\"%s\"", in);
            want = quantity_parse(in, &q) == 0 && quantity_format(&q, out) == strlen(in) &&
                   !strcmp(out, in);
            if (api_canonical_check(&api_quantity, text, strlen(text), 0) != want)
                fail_msg("%s: the check says %s, parse and format say %s", in, want ? "no" : "yes",
                         want ? "canonical" : "not canonical");
        }
    }
}

/* Every byte of a small report replaced by characters that change its meaning or its form:
 * a yes must always be right (checked() fails the test otherwise). */
static void test_corruptions(void **state)
{
    static const char subst[] = {'0', '9', '"', ',', '}', ']', ' ', 'm', '\\', 'x'};
    struct strbuf sb = STRBUF_INIT;
    size_t yes = 0;
    (void)state;

    report(3, &sb);
    for (size_t i = 0; i < sb.len; i++) {
        char keep = sb.buf[i];
        for (size_t k = 0; k < ARRAY_SIZE(subst); k++) {
            sb.buf[i] = subst[k];
            yes += checked(status_schema(), sb.buf, sb.len);
        }
        sb.buf[i] = keep;
        yes += checked(status_schema(), sb.buf, i); /* cut short */
    }
    /* Some corruptions are canonical reports too (another digit in a quantity). */
    assert_true(yes > 0);
    strbuf_release(&sb);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_accepts_reports),
        cmocka_unit_test(test_refuses),
        cmocka_unit_test(test_quantity_forms),
        cmocka_unit_test(test_corruptions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
