/*
 * Tests for apiserver/tokens: kube-apiserver's --token-auth-file format (CSV with a quoted
 * group list), its malformed lines named by number, and lookups that match only whole tokens.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "apiserver/tokens.h"
#include "base/base.h"
#include "base/strbuf.h"

static struct api_tokens *parse_ok(const char *text)
{
    struct api_tokens *t = NULL;
    struct strbuf why = STRBUF_INIT;

    assert_int_equal(api_tokens_parse(text, strlen(text), &t, &why), 0);
    assert_int_equal(why.len, 0);
    strbuf_release(&why);
    return t;
}

static void parse_fails(const char *text, int want, const char *msg)
{
    struct api_tokens *t = NULL;
    struct strbuf why = STRBUF_INIT;

    assert_int_equal(api_tokens_parse(text, strlen(text), &t, &why), want);
    assert_null(t);
    assert_string_equal(why.buf, msg);
    strbuf_release(&why);
}

static void test_users_and_groups(void **state)
{
    struct api_tokens *t = parse_ok("# comment\n"
                                    "\n"
                                    "abc,alice,1001,\"dev,ops\"\r\n"
                                    "xyz,bob,1002\n"
                                    "q\"\"t,\"carol, jr\",1003,\n"
                                    "last,dave,1004,admins");
    const struct api_token_user *u;
    (void)state;

    u = api_tokens_lookup(t, "abc");
    assert_non_null(u);
    assert_string_equal(u->user, "alice");
    assert_string_equal(u->uid, "1001");
    assert_string_equal(u->groups[0], "dev");
    assert_string_equal(u->groups[1], "ops");
    assert_null(u->groups[2]);

    u = api_tokens_lookup(t, "xyz");
    assert_non_null(u);
    assert_string_equal(u->user, "bob");
    assert_null(u->groups[0]);

    /* "" outside quotes is two quotes toggling: the token is qt; quoted commas stay. */
    u = api_tokens_lookup(t, "qt");
    assert_non_null(u);
    assert_string_equal(u->user, "carol, jr");
    assert_null(u->groups[0]);

    u = api_tokens_lookup(t, "last");
    assert_non_null(u);
    assert_string_equal(u->groups[0], "admins");
    assert_null(u->groups[1]);
    api_tokens_free(t);
}

static void test_lookup_whole_token(void **state)
{
    struct api_tokens *t = parse_ok("secret,alice,1\n");
    (void)state;

    assert_non_null(api_tokens_lookup(t, "secret"));
    assert_null(api_tokens_lookup(t, "secre"));
    assert_null(api_tokens_lookup(t, "secrets"));
    assert_null(api_tokens_lookup(t, "Secret"));
    assert_null(api_tokens_lookup(t, ""));
    assert_null(api_tokens_lookup(t, NULL));
    assert_null(api_tokens_lookup(NULL, "secret"));
    api_tokens_free(t);

    t = parse_ok("");
    assert_null(api_tokens_lookup(t, "secret"));
    api_tokens_free(t);
}

static void test_malformed(void **state)
{
    (void)state;
    parse_fails("a,b,c\nonly,two\n", -EINVAL, "line 2: want token,user,uid[,\"groups\"]");
    parse_fails(",user,1\n", -EINVAL, "line 1: want token,user,uid[,\"groups\"]");
    parse_fails("tok,,1\n", -EINVAL, "line 1: want token,user,uid[,\"groups\"]");
    parse_fails("# c\ntok,a,1\ntok,b,2\n", -EINVAL, "line 3: duplicate token (first on line 2)");
    /* The earliest repeat is named, whichever token sorts first. */
    parse_fails("zz,a,1\naa,b,2\nzz,c,3\naa,d,4\n", -EINVAL,
                "line 3: duplicate token (first on line 1)");
    parse_fails("m,a,1\nm,b,2\nm,c,3\n", -EINVAL, "line 2: duplicate token (first on line 1)");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_users_and_groups),
        cmocka_unit_test(test_lookup_whole_token),
        cmocka_unit_test(test_malformed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
