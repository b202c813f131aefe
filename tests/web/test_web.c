/*
 * Tests for web/web: the embedded assets are the files of web/ and of the charting library,
 * byte for byte, found by path (every one, and nothing else), with a content type from the
 * name and a quoted ETag that differs between different files.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/base.h"
#include "web/web.h"

/* The file at KOORD_SOURCE_DIR/rel, whole; *ret_len its size. */
static char *read_source(const char *rel, size_t *ret_len)
{
    char path[512];
    FILE *f;
    long n;
    char *s;

    snprintf(path, sizeof(path), "%s/%s", KOORD_SOURCE_DIR, rel);
    f = fopen(path, "rb");
    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    n = ftell(f);
    rewind(f);
    s = xmalloc((size_t)n + 1);
    assert_int_equal(fread(s, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *ret_len = (size_t)n;
    return s;
}

static void assert_same_as(const char *path, const char *rel)
{
    const struct web_asset *a = web_asset_find(path);
    size_t len;
    char *s = read_source(rel, &len);

    assert_non_null(a);
    assert_int_equal(a->len, len);
    assert_memory_equal(a->data, s, len);
    assert_int_equal(a->data[a->len], 0);
    free(s);
}

static void test_contents(void **state)
{
    (void)state;
    assert_same_as("uplot/uPlot.iife.min.js", "web/node_modules/uplot/dist/uPlot.iife.min.js");
    assert_same_as("uplot/uPlot.min.css", "web/node_modules/uplot/dist/uPlot.min.css");
    assert_same_as("ui/index.html", "web/ui/index.html");
    assert_same_as("ui/app.js", "web/ui/app.js");
    assert_same_as("report/report.js", "web/report/report.js");
    assert_same_as("uplot/LICENSE", "web/node_modules/uplot/LICENSE");
}

static void test_lookup(void **state)
{
    size_t n = web_asset_count();

    (void)state;
    assert_true(n >= 5);
    /* Every asset is found by its own path (the table is sorted for the binary search). */
    for (size_t i = 0; i < n; i++) {
        const struct web_asset *a = web_asset_at(i);
        assert_non_null(a);
        assert_ptr_equal(web_asset_find(a->path), a);
        if (i)
            assert_true(strcmp(web_asset_at(i - 1)->path, a->path) < 0);
    }
    assert_null(web_asset_at(n));
    assert_null(web_asset_find("ui/missing.js"));
    assert_null(web_asset_find("/ui/index.html")); /* paths have no leading slash */
    assert_null(web_asset_find("ui/index.htm"));
    assert_null(web_asset_find(""));
    assert_null(web_asset_find(NULL));
    assert_null(web_asset_find("node_modules/uplot/package.json"));
}

static void test_types_and_etags(void **state)
{
    const struct web_asset *html = web_asset_find("ui/index.html");
    const struct web_asset *js = web_asset_find("uplot/uPlot.iife.min.js");
    const struct web_asset *css = web_asset_find("uplot/uPlot.min.css");

    (void)state;
    assert_string_equal(html->content_type, "text/html; charset=utf-8");
    assert_string_equal(js->content_type, "text/javascript; charset=utf-8");
    assert_string_equal(css->content_type, "text/css; charset=utf-8");
    assert_string_equal(web_asset_find("uplot/LICENSE")->content_type, "text/plain; charset=utf-8");
    for (size_t i = 0; i < web_asset_count(); i++) {
        const char *e = web_asset_at(i)->etag;
        assert_int_equal(e[0], '"');
        assert_int_equal(e[strlen(e) - 1], '"');
        assert_true(strlen(e) > 16);
        for (size_t j = 0; j < i; j++)
            assert_string_not_equal(web_asset_at(j)->etag, e);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_contents),
        cmocka_unit_test(test_lookup),
        cmocka_unit_test(test_types_and_etags),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
