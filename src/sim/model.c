/*
 * The usage model (model.h). Randomness is hashing, not a stream: a draw is splitmix64 over
 * (seed, pod, slot, purpose), so nothing depends on the order in which threads ask.
 */
#include "sim/model.h"

#include <errno.h>
#include <math.h>

#include "base/base.h"
#include "base/strbuf.h"

/* Purposes of a draw, so that the phase, the noise and the spikes of a pod are independent. */
enum { DRAW_PHASE = 1, DRAW_NOISE = 2, DRAW_SPIKE = 3 };

void sim_model_defaults(struct sim_model *m)
{
    *m = (struct sim_model){
        .seed = 1,
        .ls_cpu_base = 0.15,
        .ls_cpu_amplitude = 0.10,
        .ls_cpu_noise = 0.03,
        .noise_step_s = 300,
        .spike_prob = 0.01,
        .spike_height = 0.5,
        .spike_s = 600,
        .surge_from_s = 0,
        .surge_to_s = 0,
        .ls_memory = 0.6,
        .be_cpu = 1.0,
        .be_memory = 0.8,
        .sys_cpu = 0.02,
        .sys_memory = 0.05,
        .day_s = 86400,
    };
}

void sim_model_describe(const struct sim_model *m, struct strbuf *out)
{
    strbuf_addf(out,
                "seed=%llu ls-cpu-base=%g ls-cpu-amplitude=%g ls-cpu-noise=%g spike-prob=%g "
                "spike-height=%g spike-seconds=%g ls-memory=%g be-cpu=%g be-memory=%g "
                "sys-cpu=%g sys-memory=%g day-seconds=%g",
                (unsigned long long)m->seed, m->ls_cpu_base, m->ls_cpu_amplitude, m->ls_cpu_noise,
                m->spike_prob, m->spike_height, m->spike_s, m->ls_memory, m->be_cpu, m->be_memory,
                m->sys_cpu, m->sys_memory, m->day_s);
    if (m->surge_to_s > m->surge_from_s)
        strbuf_addf(out, " surge=%g-%g", m->surge_from_s, m->surge_to_s);
}

static bool frac(double v)
{
    return v >= 0 && v <= 1;
}

int sim_model_check(const struct sim_model *m, const char **why)
{
    const char *w = NULL;

    if (!frac(m->ls_cpu_base))
        w = "ls-cpu-base must be in [0, 1]";
    else if (!frac(m->ls_cpu_amplitude))
        w = "ls-cpu-amplitude must be in [0, 1]";
    else if (!frac(m->ls_cpu_noise))
        w = "ls-cpu-noise must be in [0, 1]";
    else if (!frac(m->spike_prob))
        w = "spike-prob must be in [0, 1]";
    else if (!frac(m->spike_height))
        w = "spike-height must be in [0, 1]";
    else if (!frac(m->ls_memory) || !frac(m->be_cpu) || !frac(m->be_memory))
        w = "ls-memory, be-cpu and be-memory must be in [0, 1]";
    else if (!(m->sys_cpu >= 0 && m->sys_cpu < 1) || !(m->sys_memory >= 0 && m->sys_memory < 1))
        w = "sys-cpu and sys-memory must be in [0, 1)";
    else if (!(m->day_s > 0) || !(m->spike_s > 0) || !(m->noise_step_s > 0))
        w = "day-seconds, spike-seconds and the noise step must be positive";
    if (w && why)
        *why = w;
    return w ? -EINVAL : 0;
}

uint64_t sim_model_mix(uint64_t x)
{
    x += UINT64_C(0x9e3779b97f4a7c15);
    x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
    return x ^ (x >> 31);
}

double sim_model_uniform(uint64_t seed, uint64_t a, uint64_t b, uint64_t c)
{
    uint64_t h = sim_model_mix(seed);

    h = sim_model_mix(h ^ a);
    h = sim_model_mix(h ^ b);
    h = sim_model_mix(h ^ c);
    return (double)(h >> 11) * 0x1.0p-53;
}

/* The slot of t for a period (t < 0 counts as slot 0). */
static uint64_t slot(double t, double period)
{
    return t <= 0 ? 0 : (uint64_t)floor(t / period);
}

double sim_model_ls_cpu_diurnal(const struct sim_model *m, uint64_t pod, double t)
{
    double phase = sim_model_uniform(m->seed, pod, 0, DRAW_PHASE) * m->day_s;

    return m->ls_cpu_base + m->ls_cpu_amplitude * sin(2 * M_PI * (t + phase) / m->day_s);
}

int sim_model_ls_spiking(const struct sim_model *m, uint64_t pod, double t)
{
    if (m->surge_to_s > m->surge_from_s && t >= m->surge_from_s && t < m->surge_to_s)
        return 1;
    return sim_model_uniform(m->seed, pod, slot(t, m->spike_s), DRAW_SPIKE) < m->spike_prob;
}

double sim_model_ls_cpu(const struct sim_model *m, uint64_t pod, double t)
{
    double f = sim_model_ls_cpu_diurnal(m, pod, t);
    double u = sim_model_uniform(m->seed, pod, slot(t, m->noise_step_s), DRAW_NOISE);

    f += (2 * u - 1) * m->ls_cpu_noise;
    if (sim_model_ls_spiking(m, pod, t))
        f += m->spike_height;
    return f < 0 ? 0 : f > 1 ? 1 : f;
}
