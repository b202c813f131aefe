/*
 * Tests for sched/framework/status.c: statuses (interface.go Status: codes, reasons, Message()
 * joining them with ", ") and the cycle state (framework/cycle_state.go: write, read, replace,
 * clone for dry runs, the Skip sets).
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
#include "base/strbuf.h"
#include "sched/framework/framework.h"
#include "schedtest.h"

/* ---- statuses ---- */

static void test_code_names(void **state)
{
    (void)state;
    /* interface.go codes and their String(). */
    assert_int_equal(SCHED_SUCCESS, 0);
    assert_int_equal(SCHED_ERROR, 1);
    assert_int_equal(SCHED_UNSCHEDULABLE, 2);
    assert_int_equal(SCHED_UNRESOLVABLE, 3);
    assert_int_equal(SCHED_WAIT, 4);
    assert_int_equal(SCHED_SKIP, 5);
    assert_int_equal(SCHED_PENDING, 6);
    assert_string_equal(sched_code_name(SCHED_SUCCESS), "Success");
    assert_string_equal(sched_code_name(SCHED_ERROR), "Error");
    assert_string_equal(sched_code_name(SCHED_UNSCHEDULABLE), "Unschedulable");
    assert_string_equal(sched_code_name(SCHED_UNRESOLVABLE), "UnschedulableAndUnresolvable");
    assert_string_equal(sched_code_name(SCHED_WAIT), "Wait");
    assert_string_equal(sched_code_name(SCHED_SKIP), "Skip");
    assert_string_equal(sched_code_name(SCHED_PENDING), "Pending");
    assert_string_equal(sched_code_name((enum sched_code)7), "Unknown");
    assert_string_equal(sched_code_name((enum sched_code) - 1), "Unknown");
    /* IsRejected = Unschedulable, UnschedulableAndUnresolvable, Pending. */
    assert_false(sched_code_is_rejected(SCHED_SUCCESS));
    assert_false(sched_code_is_rejected(SCHED_ERROR));
    assert_true(sched_code_is_rejected(SCHED_UNSCHEDULABLE));
    assert_true(sched_code_is_rejected(SCHED_UNRESOLVABLE));
    assert_false(sched_code_is_rejected(SCHED_WAIT));
    assert_false(sched_code_is_rejected(SCHED_SKIP));
    assert_true(sched_code_is_rejected(SCHED_PENDING));
}

static void test_status_reasons(void **state)
{
    (void)state;
    struct sched_status st = {0};
    struct strbuf sb = STRBUF_INIT;

    /* A zeroed status is Success without reasons. */
    assert_int_equal(st.code, SCHED_SUCCESS);
    assert_int_equal(st.n, 0);
    assert_string_equal(sched_status_reason(&st, 0), "");
    sched_status_message(&st, &sb);
    assert_string_equal(sb.buf, "");

    sched_status_add(&st, "Insufficient %s", "cpu");
    sched_status_add(&st, "Insufficient %s", "memory");
    sched_status_add(&st, "%s", "");
    sched_status_add(&st, "Too many pods (%d)", 110);
    assert_int_equal(st.n, 4);
    assert_int_equal(st.code, SCHED_SUCCESS); /* add leaves the code */
    assert_string_equal(sched_status_reason(&st, 0), "Insufficient cpu");
    assert_string_equal(sched_status_reason(&st, 1), "Insufficient memory");
    assert_string_equal(sched_status_reason(&st, 2), "");
    assert_string_equal(sched_status_reason(&st, 3), "Too many pods (110)");
    assert_string_equal(sched_status_reason(&st, 4), "");
    sched_status_message(&st, &sb);
    assert_string_equal(sb.buf, "Insufficient cpu, Insufficient memory, , Too many pods (110)");
    assert_string_equal(MSG(&st), sb.buf);
    strbuf_release(&sb);
    sched_status_release(&st);
    assert_int_equal(st.n, 0);
    assert_null(st.buf);
    sched_status_release(&st); /* twice is fine */
}

static void test_status_set(void **state)
{
    (void)state;
    struct sched_status st = {0};
    struct strbuf sb = STRBUF_INIT;

    assert_int_equal(sched_status_set(&st, SCHED_UNRESOLVABLE,
                                      "node(s) had untolerated taint {%s: %s}", "k", "v"),
                     SCHED_UNRESOLVABLE);
    assert_int_equal(st.code, SCHED_UNRESOLVABLE);
    assert_int_equal(st.n, 1);
    assert_string_equal(sched_status_reason(&st, 0), "node(s) had untolerated taint {k: v}");
    /* set appends its reason to those already there and replaces the code. */
    assert_int_equal(sched_status_set(&st, SCHED_UNSCHEDULABLE, "second"), SCHED_UNSCHEDULABLE);
    assert_int_equal(st.code, SCHED_UNSCHEDULABLE);
    sched_status_message(&st, &sb);
    assert_string_equal(sb.buf, "node(s) had untolerated taint {k: v}, second");
    strbuf_release(&sb);
    sched_status_release(&st);
    assert_int_equal(st.code, SCHED_SUCCESS);

    /* A long reason. */
    {
        char big[5000];
        memset(big, 'x', sizeof(big) - 1);
        big[sizeof(big) - 1] = 0;
        sched_status_set(&st, SCHED_ERROR, "%s", big);
        sched_status_add(&st, "tail");
        assert_int_equal(strlen(sched_status_reason(&st, 0)), sizeof(big) - 1);
        assert_string_equal(sched_status_reason(&st, 1), "tail");
        sched_status_release(&st);
    }
}

static void test_status_move(void **state)
{
    (void)state;
    struct sched_status a = {0}, b = {0};

    sched_status_set(&a, SCHED_UNSCHEDULABLE, "from a");
    a.plugin = "NodePorts";
    sched_status_set(&b, SCHED_ERROR, "old b");
    sched_status_move(&b, &a);
    assert_int_equal(b.code, SCHED_UNSCHEDULABLE);
    assert_string_equal(b.plugin, "NodePorts");
    assert_int_equal(b.n, 1);
    assert_string_equal(sched_status_reason(&b, 0), "from a");
    assert_int_equal(a.code, SCHED_SUCCESS);
    assert_null(a.plugin);
    assert_null(a.buf);
    assert_int_equal(a.n, 0);
    assert_int_equal(a.len, 0);
    /* Moving an empty status empties dst. */
    sched_status_move(&b, &a);
    assert_int_equal(b.code, SCHED_SUCCESS);
    assert_int_equal(b.n, 0);
    sched_status_release(&a);
    sched_status_release(&b);
}

/* ---- cycle state ---- */

struct counted {
    int value;
    int *frees; /* incremented when freed */
};

static int clones;

static void counted_free(void *data)
{
    struct counted *c = data;

    (*c->frees)++;
    free(c);
}

static void *counted_clone(const void *data)
{
    const struct counted *c = data;
    struct counted *copy = xmalloc(sizeof(*copy));

    *copy = *c;
    clones++;
    return copy;
}

static struct counted *counted_new(int value, int *frees)
{
    struct counted *c = xmalloc(sizeof(*c));

    c->value = value;
    c->frees = frees;
    return c;
}

static const struct sched_state_type cloned_type = {"cloned", counted_free, counted_clone};
static const struct sched_state_type shared_type = {"shared", counted_free, NULL};
static const struct sched_state_type static_type = {"static", NULL, NULL};

static void test_cycle_write_read_replace(void **state)
{
    (void)state;
    struct sched_cycle *cs = sched_cycle_new();
    int frees1 = 0, frees2 = 0;
    struct counted *a = counted_new(1, &frees1), *b = counted_new(2, &frees2);
    static int plain = 42;

    assert_null(sched_cycle_read(cs, &cloned_type));
    sched_cycle_write(cs, &cloned_type, a);
    sched_cycle_write(cs, &static_type, &plain);
    assert_ptr_equal(sched_cycle_read(cs, &cloned_type), a);
    assert_ptr_equal(sched_cycle_read(cs, &static_type), &plain);
    assert_null(sched_cycle_read(cs, &shared_type));
    /* Writing the same pointer again keeps it. */
    sched_cycle_write(cs, &cloned_type, a);
    assert_int_equal(frees1, 0);
    /* Replacing frees the previous entry. */
    sched_cycle_write(cs, &cloned_type, b);
    assert_int_equal(frees1, 1);
    assert_ptr_equal(sched_cycle_read(cs, &cloned_type), b);
    sched_cycle_free(cs);
    assert_int_equal(frees2, 1);
    sched_cycle_free(NULL);
}

static void test_cycle_many_entries(void **state)
{
    (void)state;
    struct sched_state_type types[20];
    struct sched_cycle *cs = sched_cycle_new(), *c;
    int frees = 0;

    for (int i = 0; i < 20; i++) {
        types[i] = cloned_type;
        sched_cycle_write(cs, &types[i], counted_new(i, &frees));
    }
    for (int i = 0; i < 20; i++)
        assert_int_equal(((struct counted *)sched_cycle_read(cs, &types[i]))->value, i);
    c = sched_cycle_clone(cs);
    for (int i = 0; i < 20; i++)
        assert_int_equal(((struct counted *)sched_cycle_read(c, &types[i]))->value, i);
    sched_cycle_free(c);
    assert_int_equal(frees, 20);
    sched_cycle_free(cs);
    assert_int_equal(frees, 40);
}

static void test_cycle_clone(void **state)
{
    (void)state;
    struct sched_cycle *cs = sched_cycle_new(), *c;
    int frees_cloned = 0, frees_shared = 0, frees_new = 0;
    struct counted *deep = counted_new(1, &frees_cloned);
    struct counted *ro = counted_new(2, &frees_shared);
    struct counted *d2;

    sched_cycle_write(cs, &cloned_type, deep);
    sched_cycle_write(cs, &shared_type, ro);
    clones = 0;
    c = sched_cycle_clone(cs);
    assert_int_equal(clones, 1);
    /* Entries with clone are deep-copied. */
    d2 = sched_cycle_read(c, &cloned_type);
    assert_non_null(d2);
    assert_ptr_not_equal(d2, deep);
    assert_int_equal(d2->value, 1);
    d2->value = 99;
    assert_int_equal(deep->value, 1);
    /* Entries without clone are shared. */
    assert_ptr_equal(sched_cycle_read(c, &shared_type), ro);

    /* The copy frees its deep copies, never the shared entries. */
    sched_cycle_free(c);
    assert_int_equal(frees_cloned, 1);
    assert_int_equal(frees_shared, 0);
    assert_ptr_equal(sched_cycle_read(cs, &shared_type), ro);
    assert_int_equal(ro->value, 2);

    /* A copy that replaces a shared entry frees only its own value. */
    c = sched_cycle_clone(cs);
    sched_cycle_write(c, &shared_type, counted_new(3, &frees_new));
    assert_int_equal(frees_shared, 0);
    assert_int_equal(((struct counted *)sched_cycle_read(cs, &shared_type))->value, 2);
    sched_cycle_free(c);
    assert_int_equal(frees_new, 1);
    assert_int_equal(frees_shared, 0);

    /* A copy that writes the shared pointer back does not come to own it. */
    c = sched_cycle_clone(cs);
    sched_cycle_write(c, &shared_type, sched_cycle_read(c, &shared_type));
    sched_cycle_free(c);
    assert_int_equal(frees_shared, 0);

    /* The original frees everything once (the three copies freed their deep copies). */
    assert_int_equal(frees_cloned, 3);
    sched_cycle_free(cs);
    assert_int_equal(frees_cloned, 4);
    assert_int_equal(frees_shared, 1);

    /* An empty state clones. */
    cs = sched_cycle_new();
    c = sched_cycle_clone(cs);
    assert_null(sched_cycle_read(c, &cloned_type));
    sched_cycle_write(c, &static_type, &frees_new);
    assert_null(sched_cycle_read(cs, &static_type));
    sched_cycle_free(c);
    sched_cycle_free(cs);
}

static void test_cycle_skip(void **state)
{
    (void)state;
    struct sched_cycle *cs = sched_cycle_new(), *c;

    for (int id = 0; id < 64; id++) {
        assert_false(sched_cycle_skip_filter(cs, id));
        assert_false(sched_cycle_skip_score(cs, id));
    }
    sched_cycle_set_skip_filter(cs, 0);
    sched_cycle_set_skip_filter(cs, 5);
    sched_cycle_set_skip_filter(cs, 63);
    sched_cycle_set_skip_score(cs, 7);
    for (int id = 0; id < 64; id++) {
        assert_int_equal(sched_cycle_skip_filter(cs, id), id == 0 || id == 5 || id == 63);
        assert_int_equal(sched_cycle_skip_score(cs, id), id == 7);
    }
    /* The sets travel with a clone and stay apart afterwards. */
    c = sched_cycle_clone(cs);
    assert_true(sched_cycle_skip_filter(c, 63));
    assert_true(sched_cycle_skip_score(c, 7));
    sched_cycle_set_skip_filter(c, 1);
    sched_cycle_set_skip_score(c, 2);
    assert_false(sched_cycle_skip_filter(cs, 1));
    assert_false(sched_cycle_skip_score(cs, 2));
    sched_cycle_free(c);
    sched_cycle_free(cs);
}

/* A cycle's node overrides: its own NodeInfo for a node, replaced by a second, read by dry-run
 * copies, freed with the original (valgrind and ASan check the ownership). */
static void test_cycle_override_node(void **state)
{
    (void)state;
    struct sched_cycle *cs = sched_cycle_new(), *dry;
    struct sched_node_info *snap_a = sched_node_info_new("a"), *snap_b = sched_node_info_new("b");
    struct sched_node_info *o1 = sched_node_info_new("a"), *o2 = sched_node_info_new("a");

    assert_ptr_equal(sched_cycle_node(cs, snap_a), snap_a);
    assert_ptr_equal(sched_cycle_node(NULL, snap_a), snap_a);
    assert_null(sched_cycle_node(cs, NULL));
    sched_cycle_override_node(cs, o1);
    assert_ptr_equal(sched_cycle_node(cs, snap_a), o1);
    assert_ptr_equal(sched_cycle_node(cs, snap_b), snap_b);
    sched_cycle_override_node(cs, o2); /* replaces o1, which is freed */
    assert_ptr_equal(sched_cycle_node(cs, snap_a), o2);
    dry = sched_cycle_clone(cs);
    assert_ptr_equal(sched_cycle_node(dry, snap_a), o2);
    sched_cycle_free(dry);
    assert_ptr_equal(sched_cycle_node(cs, snap_a), o2);
    sched_cycle_free(cs);
    sched_node_info_free(snap_a);
    sched_node_info_free(snap_b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_code_names),
        cmocka_unit_test(test_status_reasons),
        cmocka_unit_test(test_status_set),
        cmocka_unit_test(test_status_move),
        cmocka_unit_test(test_cycle_write_read_replace),
        cmocka_unit_test(test_cycle_many_entries),
        cmocka_unit_test(test_cycle_clone),
        cmocka_unit_test(test_cycle_skip),
        cmocka_unit_test(test_cycle_override_node),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
