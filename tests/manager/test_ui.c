/*
 * Tests for manager/ui/ui: the login form's decoding (the token as the browser sent it, bad
 * escapes refused, never cut short by a %00), and the dashboard's paths. The routes,
 * authentication and the live stream are tested end to end in a browser
 * (tests/e2e/test_manager_dashboard.sh).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "manager/ui/ui.c"

static bool form(const char *body, struct strbuf *out)
{
    strbuf_reset(out);
    return form_value(body, strlen(body), "token", out);
}

static void test_form_value(void **state)
{
    struct strbuf v = STRBUF_INIT;

    (void)state;
    assert_true(form("token=abc.def-ghi_jkl", &v));
    assert_string_equal(v.buf, "abc.def-ghi_jkl");
    assert_true(form("x=1&token=a%2Bb%3D%3d+c&y=2", &v));
    assert_string_equal(v.buf, "a+b== c");
    assert_true(form("token=", &v));
    assert_string_equal(v.buf, "");
    /* Another field whose name starts with "token" is not it. */
    assert_false(form("tokens=abc", &v));
    assert_false(form("", &v));
    assert_false(form("token", &v));
    /* Truncated or non-hex escapes, and a NUL, are refused rather than guessed at. */
    assert_false(form("token=ab%2", &v));
    assert_false(form("token=ab%", &v));
    assert_false(form("token=ab%zz", &v));
    assert_false(form("token=ab%00cd", &v));
    /* The body is not NUL-terminated: only len bytes count. */
    strbuf_reset(&v);
    assert_true(form_value("token=abcdef", 9, "token", &v));
    assert_string_equal(v.buf, "abc");
    strbuf_release(&v);
}

static void test_paths(void **state)
{
    (void)state;
    assert_true(ui_server_path("/ui"));
    assert_true(ui_server_path("/ui/"));
    assert_true(ui_server_path("/ui/api/stream"));
    assert_false(ui_server_path("/uix"));
    assert_false(ui_server_path("/apis/metrics.koordinator.sh/v1alpha1"));
    assert_false(ui_server_path("/"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_form_value),
        cmocka_unit_test(test_paths),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
