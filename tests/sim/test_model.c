/*
 * Tests for sim/model: the usage model is a pure function of (seed, pod, time) (same answer in
 * any order, another seed gives another fleet), stays within [0, 1] of the request, its diurnal
 * curve averages to the base over a day, noise stays within its bound, spikes come at their
 * probability and every pod spikes in the surge window; bad parameters are refused.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/base.h"
#include "base/strbuf.h"
#include "sim/model.h"

static void test_determinism(void **state)
{
    struct sim_model m, other;
    double first[50];
    int differ = 0;

    (void)state;
    sim_model_defaults(&m);
    m.seed = 42;
    other = m;
    other.seed = 43;
    for (size_t i = 0; i < 50; i++)
        first[i] = sim_model_ls_cpu(&m, i, 1000.0 * (double)i);
    /* asked again backwards, interleaved with another model: the same answers */
    for (size_t k = 50; k-- > 0;) {
        (void)sim_model_ls_cpu(&other, k, 1000.0 * (double)k);
        assert_true(sim_model_ls_cpu(&m, k, 1000.0 * (double)k) == first[k]);
        differ += sim_model_ls_cpu(&other, k, 1000.0 * (double)k) != first[k];
    }
    assert_true(differ > 40);
    /* the hash is splitmix64: its first output for 0 is a published constant */
    assert_true(sim_model_mix(0) == UINT64_C(0xe220a8397b1dcdaf));
}

static void test_bounds(void **state)
{
    struct sim_model m;

    (void)state;
    sim_model_defaults(&m);
    m.spike_prob = 0.3;
    m.spike_height = 1.0;
    m.ls_cpu_noise = 0.5;
    for (uint64_t pod = 0; pod < 200; pod++) {
        for (double t = 0; t < 3 * 86400; t += 977) {
            double f = sim_model_ls_cpu(&m, pod, t);
            assert_true(f >= 0 && f <= 1);
        }
    }
}

/* Over one whole period sin() averages to 0: the diurnal curve's mean is the base. */
static void test_diurnal_mean(void **state)
{
    struct sim_model m;

    (void)state;
    sim_model_defaults(&m);
    for (uint64_t pod = 0; pod < 20; pod++) {
        double sum = 0, lo = 1, hi = 0;
        int n = 0;
        for (double t = 0; t < m.day_s; t += 60, n++) {
            double f = sim_model_ls_cpu_diurnal(&m, pod, t);
            sum += f;
            lo = f < lo ? f : lo;
            hi = f > hi ? f : hi;
        }
        assert_true(fabs(sum / n - m.ls_cpu_base) < 1e-9);
        /* the swing reaches base +- amplitude (to the 60 s step) */
        assert_true(fabs(hi - (m.ls_cpu_base + m.ls_cpu_amplitude)) < 1e-3);
        assert_true(fabs(lo - (m.ls_cpu_base - m.ls_cpu_amplitude)) < 1e-3);
    }
}

static void test_noise_and_spikes(void **state)
{
    struct sim_model m;
    int spikes = 0, slots = 0;

    (void)state;
    sim_model_defaults(&m);
    m.spike_prob = 0;
    for (uint64_t pod = 0; pod < 50; pod++)
        for (double t = 0; t < 86400; t += 450) {
            double d = sim_model_ls_cpu(&m, pod, t) - sim_model_ls_cpu_diurnal(&m, pod, t);
            assert_true(fabs(d) <= m.ls_cpu_noise + 1e-12);
        }
    /* spikes: one draw per pod and slot, at the given probability (20,000 draws of a fixed
     * seed: the count is a fixed number, within 10 % of the expected 2,000) */
    m.spike_prob = 0.1;
    for (uint64_t pod = 0; pod < 100; pod++)
        for (int s = 0; s < 200; s++, slots++)
            spikes += sim_model_ls_spiking(&m, pod, s * m.spike_s + 1);
    assert_true(spikes > slots / 10 * 9 / 10 && spikes < slots / 10 * 11 / 10);
    /* a spike lasts its whole slot */
    for (uint64_t pod = 0; pod < 100; pod++)
        assert_int_equal(sim_model_ls_spiking(&m, pod, 5 * m.spike_s + 1),
                         sim_model_ls_spiking(&m, pod, 6 * m.spike_s - 1));
    /* the surge: every pod, only inside [from, to) */
    m.spike_prob = 0;
    m.surge_from_s = 1000;
    m.surge_to_s = 2000;
    for (uint64_t pod = 0; pod < 100; pod++) {
        assert_true(sim_model_ls_spiking(&m, pod, 1000));
        assert_true(sim_model_ls_spiking(&m, pod, 1999));
        assert_false(sim_model_ls_spiking(&m, pod, 2000));
        assert_false(sim_model_ls_spiking(&m, pod, 999));
        assert_true(sim_model_ls_cpu(&m, pod, 1500) >= sim_model_ls_cpu_diurnal(&m, pod, 1500) -
                                                           m.ls_cpu_noise + m.spike_height - 1e-12);
    }
}

static void test_check(void **state)
{
    struct sim_model m;
    struct strbuf sb = STRBUF_INIT;
    const char *why = NULL;

    (void)state;
    sim_model_defaults(&m);
    assert_int_equal(sim_model_check(&m, &why), 0);
    sim_model_describe(&m, &sb);
    assert_non_null(strstr(sb.buf, "ls-cpu-base=0.15"));
    m.ls_cpu_base = 1.5;
    assert_int_equal(sim_model_check(&m, &why), -EINVAL);
    assert_string_equal(why, "ls-cpu-base must be in [0, 1]");
    sim_model_defaults(&m);
    m.day_s = 0;
    assert_int_equal(sim_model_check(&m, &why), -EINVAL);
    sim_model_defaults(&m);
    m.sys_cpu = 1;
    assert_int_equal(sim_model_check(&m, &why), -EINVAL);
    strbuf_release(&sb);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_determinism),  cmocka_unit_test(test_bounds),
        cmocka_unit_test(test_diurnal_mean), cmocka_unit_test(test_noise_and_spikes),
        cmocka_unit_test(test_check),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
