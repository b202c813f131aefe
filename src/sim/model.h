/*
 * The usage model of a `koord sim` replay (issue 19 §2; docs/sim.md states every parameter and
 * where its default comes from): what each pod of the trace uses at a given trace time, which
 * the simulated agents report and the QoS decisions act on.
 *
 *  - LS pods use a diurnal fraction of their CPU request:
 *      f(t) = base + amplitude x sin(2 pi (t + phase) / day) + noise, plus spike
 *    with the phase drawn per pod (services peak at different hours), noise uniform in
 *    [-noise, +noise] redrawn every noise_step_s, and a spike of height x request during a
 *    whole spike slot (spike_s long) with probability spike_prob per slot; during the surge
 *    window [surge_from_s, surge_to_s) every LS pod spikes (a fleet-wide event at a known time:
 *    a sale, a test). The fraction is clamped to [0, 1]: a pod never uses more than its limit
 *    (limits = requests). Memory is a steady fraction of the request (container memory stays
 *    about constant, Jiang et al. 2020).
 *  - BE pods want their whole request (batch work runs flat out); what they get is capped by
 *    what the node leaves them, and by suppression when they are batch pods (the fleet's job).
 *  - Each node has a system share (kubelet, daemons) of its capacity.
 *
 * Determinism: every random draw is a pure function of (seed, pod index, time slot), by
 * splitmix64 hashing, so a pod's usage at trace time t is the same whichever thread asks, in
 * whichever order, how often: a replay is repeatable for a given --seed.
 */
#ifndef KOORD_SIM_MODEL_H
#define KOORD_SIM_MODEL_H

#include <stdint.h>

struct sim_model {
    uint64_t seed;
    double ls_cpu_base;      /* mean fraction of the CPU request LS pods use */
    double ls_cpu_amplitude; /* diurnal swing, fraction of the request */
    double ls_cpu_noise;     /* uniform noise, +- fraction of the request */
    double noise_step_s;     /* trace seconds one noise draw lasts */
    double spike_prob;       /* per pod and spike slot */
    double spike_height;     /* fraction of the request a spike adds */
    double spike_s;          /* trace seconds of one spike slot */
    double surge_from_s;     /* every LS pod spikes in [from, to); from >= to: no surge */
    double surge_to_s;
    double ls_memory;  /* fraction of the memory request LS pods use */
    double be_cpu;     /* fraction of the CPU request BE pods want */
    double be_memory;  /* fraction of the memory request BE pods use */
    double sys_cpu;    /* system share of a node's CPU capacity */
    double sys_memory; /* system share of a node's memory capacity */
    double day_s;      /* the diurnal period, trace seconds */
};

/* The defaults (docs/sim.md says where each comes from). */
void sim_model_defaults(struct sim_model *m);

/* "base=0.15 amplitude=0.10 ...": the parameters, one line (for the report). */
struct strbuf;
void sim_model_describe(const struct sim_model *m, struct strbuf *out);

/* Checks ranges (fractions in [0, 1], periods > 0). 0, or -EINVAL with *why (a static string). */
int sim_model_check(const struct sim_model *m, const char **why);

/* splitmix64 of x: the model's hash and PRNG step. */
uint64_t sim_model_mix(uint64_t x);

/* A uniform double in [0, 1) from (seed, a, b, c). */
double sim_model_uniform(uint64_t seed, uint64_t a, uint64_t b, uint64_t c);

/* The fraction of its CPU request LS pod number pod uses at trace time t, in [0, 1]. */
double sim_model_ls_cpu(const struct sim_model *m, uint64_t pod, double t);

/* The same without noise and spikes: base + amplitude x sin(...) (for tests and docs). */
double sim_model_ls_cpu_diurnal(const struct sim_model *m, uint64_t pod, double t);

/* Whether LS pod number pod is spiking at t (its own spike or the surge). */
int sim_model_ls_spiking(const struct sim_model *m, uint64_t pod, double t);

#endif
