/*
 * Tests for selectHost (sched/schedule_one.c sched__select_host; schedule_one.go selectHost):
 * the node with the highest total wins wherever it stands, and among nodes tied at the highest
 * total each is picked about as often as the others (upstream's reservoir sampling gives every
 * tied node the same chance; koord counts the ties and draws once). The random state is seeded,
 * so the counts are the same on every run.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "sched/sched-int.h"

#define NNODES 8

static struct sched_node_info infos[NNODES];

static void fill(struct sched_node_score *v, const int64_t *scores, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        v[i].ni = &infos[i];
        v[i].score = scores[i];
    }
}

static void test_highest_wins(void **state)
{
    static const int64_t first[] = {90, 10, 20, 30};
    static const int64_t middle[] = {10, 20, 95, 30, 40};
    static const int64_t last[] = {10, 20, 30, 40, 50, 60, 70, 300};
    struct sched_node_score v[NNODES];
    unsigned rng = 12345;

    (void)state;
    fill(v, first, 4);
    assert_ptr_equal(sched__select_host(&rng, v, 4), &infos[0]);
    fill(v, middle, 5);
    assert_ptr_equal(sched__select_host(&rng, v, 5), &infos[2]);
    fill(v, last, 8);
    assert_ptr_equal(sched__select_host(&rng, v, 8), &infos[7]);
    /* One node: it, without a draw. */
    fill(v, first, 1);
    assert_ptr_equal(sched__select_host(&rng, v, 1), &infos[0]);
}

/* Three nodes tie at the top among lower ones: only they are picked, each about a third of the
 * time; a higher one after them takes over alone. */
static void test_ties_uniform(void **state)
{
    static const int64_t scores[] = {50, 80, 10, 80, 80, 79, 0, 50};
    struct sched_node_score v[NNODES];
    size_t count[NNODES] = {0};
    unsigned rng = 0x2545f491u;
    const size_t rounds = 30000;

    (void)state;
    fill(v, scores, NNODES);
    for (size_t r = 0; r < rounds; r++) {
        struct sched_node_info *ni = sched__select_host(&rng, v, NNODES);
        count[ni - infos]++;
    }
    for (size_t i = 0; i < NNODES; i++) {
        if (scores[i] != 80) {
            assert_int_equal(count[i], 0);
            continue;
        }
        /* 10,000 expected; a fair draw stays within 5 % of it (about 9 standard deviations). */
        assert_in_range(count[i], rounds / 3 - 500, rounds / 3 + 500);
    }
    v[6].score = 81;
    assert_ptr_equal(sched__select_host(&rng, v, NNODES), &infos[6]);
}

/* Every node tied (the usual SchedulingBasic cycle): each is picked, the first and the last too. */
static void test_all_tied(void **state)
{
    struct sched_node_score v[NNODES];
    size_t count[NNODES] = {0};
    unsigned rng = 7;

    (void)state;
    for (size_t i = 0; i < NNODES; i++) {
        v[i].ni = &infos[i];
        v[i].score = 100;
    }
    for (size_t r = 0; r < 8000; r++)
        count[sched__select_host(&rng, v, NNODES) - infos]++;
    for (size_t i = 0; i < NNODES; i++)
        assert_in_range(count[i], 800, 1200);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_highest_wins),
        cmocka_unit_test(test_ties_uniform),
        cmocka_unit_test(test_all_tied),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
