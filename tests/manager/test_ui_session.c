/*
 * Tests for manager/ui/session: a session is found by its id until its fixed expiry and not
 * after; ids are 64 lower-case hex characters, different each time; a malformed, unknown or
 * deleted id finds nothing; a full table drops its oldest session; and the cookie is picked
 * out of a Cookie header among others, by exact name.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "base/base.h"
#include "manager/ui/session.h"

static void test_lifecycle(void **state)
{
    struct ui_sessions *s = ui_sessions_new(10, 1000);
    char id[UI_SESSION_ID_LEN + 1], id2[UI_SESSION_ID_LEN + 1], user[64];
    int64_t expires = 0;

    (void)state;
    assert_int_equal(ui_sessions_create(s, "system:serviceaccount:default:viewer", 5000, id), 0);
    assert_int_equal(strlen(id), UI_SESSION_ID_LEN);
    assert_int_equal(strspn(id, "0123456789abcdef"), UI_SESSION_ID_LEN);
    assert_int_equal(ui_sessions_lookup(s, id, 5999, user, sizeof(user), &expires), 0);
    assert_string_equal(user, "system:serviceaccount:default:viewer");
    assert_int_equal(expires, 6000);
    /* A short buffer gets a truncated, terminated name. */
    assert_int_equal(ui_sessions_lookup(s, id, 5000, user, 7, NULL), 0);
    assert_string_equal(user, "system");
    /* Fixed expiry: looking it up does not extend it; at 6000 it is gone, and stays gone. */
    assert_int_equal(ui_sessions_lookup(s, id, 6000, user, sizeof(user), NULL), -ENOENT);
    assert_int_equal(ui_sessions_count(s), 0);
    assert_int_equal(ui_sessions_lookup(s, id, 5500, user, sizeof(user), NULL), -ENOENT);

    assert_int_equal(ui_sessions_create(s, "a", 0, id), 0);
    assert_int_equal(ui_sessions_create(s, "b", 0, id2), 0);
    assert_string_not_equal(id, id2);
    assert_int_equal(ui_sessions_lookup(s, id2, 1, user, sizeof(user), NULL), 0);
    assert_string_equal(user, "b");
    assert_int_equal(ui_sessions_delete(s, id), 0);
    assert_int_equal(ui_sessions_delete(s, id), -ENOENT);
    assert_int_equal(ui_sessions_lookup(s, id, 1, user, sizeof(user), NULL), -ENOENT);
    assert_int_equal(ui_sessions_lookup(s, id2, 1, user, sizeof(user), NULL), 0);
    ui_sessions_free(s);
}

static void test_malformed_ids(void **state)
{
    struct ui_sessions *s = ui_sessions_new(0, 0);
    char id[UI_SESSION_ID_LEN + 1], user[16], upper[UI_SESSION_ID_LEN + 1];

    (void)state;
    assert_int_equal(ui_sessions_create(s, "u", 0, id), 0);
    /* Default TTL: an hour. */
    assert_int_equal(ui_sessions_lookup(s, id, 3599999, user, sizeof(user), NULL), 0);
    assert_int_equal(ui_sessions_lookup(s, NULL, 0, user, sizeof(user), NULL), -ENOENT);
    assert_int_equal(ui_sessions_lookup(s, "", 0, user, sizeof(user), NULL), -ENOENT);
    assert_int_equal(ui_sessions_lookup(s, "abc", 0, user, sizeof(user), NULL), -ENOENT);
    /* The same id in upper case is not the id. */
    for (size_t i = 0; i <= UI_SESSION_ID_LEN; i++)
        upper[i] = (char)(id[i] >= 'a' && id[i] <= 'f' ? id[i] - 32 : id[i]);
    if (strcmp(upper, id))
        assert_int_equal(ui_sessions_lookup(s, upper, 0, user, sizeof(user), NULL), -ENOENT);
    /* One character changed. */
    id[10] = id[10] == '0' ? '1' : '0';
    assert_int_equal(ui_sessions_lookup(s, id, 0, user, sizeof(user), NULL), -ENOENT);
    ui_sessions_free(s);
}

static void test_full_table(void **state)
{
    struct ui_sessions *s = ui_sessions_new(3, 1000);
    char ids[5][UI_SESSION_ID_LEN + 1], user[16];

    (void)state;
    /* Created at 0, 10, 20: the table is full; the fourth pushes out the oldest (0). */
    for (int i = 0; i < 3; i++)
        assert_int_equal(ui_sessions_create(s, "u", i * 10, ids[i]), 0);
    assert_int_equal(ui_sessions_create(s, "u", 30, ids[3]), 0);
    assert_int_equal(ui_sessions_count(s), 3);
    assert_int_equal(ui_sessions_lookup(s, ids[0], 30, user, sizeof(user), NULL), -ENOENT);
    for (int i = 1; i < 4; i++)
        assert_int_equal(ui_sessions_lookup(s, ids[i], 30, user, sizeof(user), NULL), 0);
    /* At 1015 the one from 10 has expired: it goes first, the others stay. */
    assert_int_equal(ui_sessions_create(s, "u", 1015, ids[4]), 0);
    assert_int_equal(ui_sessions_lookup(s, ids[2], 1015, user, sizeof(user), NULL), 0);
    assert_int_equal(ui_sessions_lookup(s, ids[3], 1015, user, sizeof(user), NULL), 0);
    assert_int_equal(ui_sessions_lookup(s, ids[4], 1015, user, sizeof(user), NULL), 0);
    ui_sessions_free(s);
}

static void test_cookie(void **state)
{
    char buf[80];

    (void)state;
    assert_string_equal(ui_session_cookie("koord_ui_session=abc", buf, sizeof(buf)), "abc");
    assert_string_equal(ui_session_cookie("a=1; koord_ui_session=abc ; b=2", buf, sizeof(buf)),
                        "abc");
    assert_string_equal(ui_session_cookie("a=1;koord_ui_session=x;", buf, sizeof(buf)), "x");
    /* Names that merely contain or extend it are other cookies. */
    assert_null(ui_session_cookie("xkoord_ui_session=abc", buf, sizeof(buf)));
    assert_null(ui_session_cookie("koord_ui_session2=abc", buf, sizeof(buf)));
    assert_null(ui_session_cookie("koord_ui_session", buf, sizeof(buf)));
    assert_null(ui_session_cookie("", buf, sizeof(buf)));
    assert_null(ui_session_cookie(NULL, buf, sizeof(buf)));
    /* Too long for the buffer: absent, not truncated into another id. */
    assert_null(ui_session_cookie("koord_ui_session=0123456789", buf, 5));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lifecycle),
        cmocka_unit_test(test_malformed_ids),
        cmocka_unit_test(test_full_table),
        cmocka_unit_test(test_cookie),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
