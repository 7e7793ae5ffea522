/* target.c - the target front end: parses the spec, dispatches to a backend
 * (sim or cuda), checks arguments once for every backend, and keeps the
 * cost of a discovery (primitive calls, accesses, seconds). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuxray/clock.h"

#include "target_impl.h"

int gx_target_open(const char *spec, uint64_t seed, gx_target **out, gx_msg *msg)
{
    *out = NULL;
    if (!spec || !*spec)
        return gx_fail(msg, GX_EINVAL, "empty target spec (use sim:PROFILE or cuda[:N])");
    gx_target *t = calloc(1, sizeof *t);
    if (!t)
        return gx_fail(msg, GX_ENOMEM, "out of memory opening target %s", spec);
    int rc;
    if (strncmp(spec, "sim:", 4) == 0) {
        if (!spec[4]) {
            free(t);
            return gx_fail(msg, GX_EINVAL, "target sim: needs a profile path (sim:PROFILE)");
        }
        rc = gx_sim_target_open(spec + 4, seed, &t->ops, &t->impl, &t->info, msg);
        snprintf(t->info.kind, sizeof t->info.kind, "sim");
    } else if (strcmp(spec, "cuda") == 0 || strncmp(spec, "cuda:", 5) == 0) {
        int dev = 0;
        if (spec[4] == ':') {
            char *end = NULL;
            long v = strtol(spec + 5, &end, 10);
            if (!spec[5] || *end || v < 0 || v > 1024) {
                free(t);
                return gx_fail(msg, GX_EINVAL, "bad CUDA device in target '%s' (use cuda:N)", spec);
            }
            dev = (int)v;
        }
        rc = gx_cuda_target_open(dev, &t->ops, &t->impl, &t->info, msg);
        snprintf(t->info.kind, sizeof t->info.kind, "cuda");
    } else {
        free(t);
        return gx_fail(msg, GX_EINVAL, "unknown target '%s' (use sim:PROFILE or cuda[:N])", spec);
    }
    if (rc != GX_OK) {
        free(t);
        return rc;
    }
    snprintf(t->info.spec, sizeof t->info.spec, "%s", spec);
    *out = t;
    return GX_OK;
}

void gx_target_close(gx_target *t)
{
    if (!t)
        return;
    if (t->ops && t->ops->close)
        t->ops->close(t->impl);
    free(t);
}

const gx_target_info *gx_target_get_info(const gx_target *t)
{
    return &t->info;
}

uint64_t gx_target_arena_bytes(const gx_target *t)
{
    return t->arena_bytes;
}

int gx_target_arena(gx_target *t, uint64_t bytes, gx_msg *msg)
{
    if (bytes == 0)
        return gx_fail(msg, GX_EINVAL, "arena of 0 bytes");
    if (t->info.max_arena_bytes && bytes > t->info.max_arena_bytes)
        return gx_fail(msg, GX_ERANGE, "arena of %llu bytes exceeds the target's limit of %llu",
                       (unsigned long long)bytes, (unsigned long long)t->info.max_arena_bytes);
    uint64_t page = t->info.page_bytes ? t->info.page_bytes : 1;
    uint64_t rounded = (bytes + page - 1) / page * page;
    double t0 = gx_monotonic_seconds();
    int rc = t->ops->arena(t->impl, rounded, msg);
    t->stats.seconds += gx_monotonic_seconds() - t0;
    if (rc == GX_OK)
        t->arena_bytes = rounded;
    else
        t->arena_bytes = 0;
    return rc;
}

static int check_offset(const gx_target *t, uint64_t off, gx_msg *msg)
{
    if (t->arena_bytes == 0)
        return gx_fail(msg, GX_EINVAL, "no arena: call arena() first");
    if (off % 8 != 0 || off + 8 > t->arena_bytes)
        return gx_fail(msg, GX_ERANGE, "offset %llu outside the %llu-byte arena or not 8-byte aligned",
                       (unsigned long long)off, (unsigned long long)t->arena_bytes);
    return GX_OK;
}

static int check_sm(const gx_target *t, uint32_t sm, gx_msg *msg)
{
    if (sm >= t->info.sm_count)
        return gx_fail(msg, GX_ERANGE, "SM %u out of range (device has %u)", sm, t->info.sm_count);
    return GX_OK;
}

int gx_target_chase(gx_target *t, const gx_chase_req *req, double *mean_cycles, gx_msg *msg)
{
    int rc;
    if (!req || !req->offsets || req->n == 0 || req->timed_rounds == 0)
        return gx_fail(msg, GX_EINVAL, "chase needs offsets, n > 0 and timed_rounds > 0");
    if ((rc = check_sm(t, req->sm, msg)) != GX_OK)
        return rc;
    for (size_t i = 0; i < req->n; i++)
        if ((rc = check_offset(t, req->offsets[i], msg)) != GX_OK)
            return rc;
    double t0 = gx_monotonic_seconds();
    rc = t->ops->chase(t->impl, req, mean_cycles, msg);
    t->stats.seconds += gx_monotonic_seconds() - t0;
    t->stats.calls++;
    uint64_t timed = (uint64_t)req->timed_rounds * req->n;
    if (req->max_timed_steps && req->max_timed_steps < timed)
        timed = req->max_timed_steps;
    t->stats.accesses += (uint64_t)req->warm_rounds * req->n + timed;
    t->stats.serial_accesses += (uint64_t)req->warm_rounds * req->n + timed;
    return rc;
}

int gx_target_seq(gx_target *t, const gx_seq_op *ops, size_t n, uint32_t sm, double *cycles,
                  gx_msg *msg)
{
    int rc;
    if (!ops || n == 0 || !cycles)
        return gx_fail(msg, GX_EINVAL, "seq needs ops, n > 0 and a cycles buffer");
    if ((rc = check_sm(t, sm, msg)) != GX_OK)
        return rc;
    uint64_t acc = 0;
    for (size_t i = 0; i < n; i++) {
        if (ops[i].kind > GX_OP_NONE)
            return gx_fail(msg, GX_EINVAL, "seq op %zu has unknown kind %u", i, ops[i].kind);
        if (ops[i].kind != GX_OP_NONE) {
            if ((rc = check_offset(t, ops[i].offset, msg)) != GX_OK)
                return rc;
            acc++;
        }
    }
    double t0 = gx_monotonic_seconds();
    rc = t->ops->seq(t->impl, ops, n, sm, cycles, msg);
    t->stats.seconds += gx_monotonic_seconds() - t0;
    t->stats.calls++;
    t->stats.accesses += acc;
    t->stats.serial_accesses += acc;
    return rc;
}

int gx_target_prime_probe_rounds(gx_target *t, const uint64_t *prime, size_t n_prime,
                                 uint32_t rounds, const uint64_t *probe, size_t n_probe,
                                 uint32_t sm, double *cycles, gx_msg *msg)
{
    int rc;
    if ((n_prime && !prime) || (n_probe && (!probe || !cycles)))
        return gx_fail(msg, GX_EINVAL, "prime_probe needs prime/probe offsets and a cycles buffer");
    if (rounds == 0)
        return gx_fail(msg, GX_EINVAL, "prime_probe needs at least one prime round");
    if (n_prime == 0 && n_probe == 0)
        return gx_fail(msg, GX_EINVAL, "prime_probe with nothing to prime or probe");
    if ((rc = check_sm(t, sm, msg)) != GX_OK)
        return rc;
    for (size_t i = 0; i < n_prime; i++)
        if ((rc = check_offset(t, prime[i], msg)) != GX_OK)
            return rc;
    for (size_t i = 0; i < n_probe; i++)
        if ((rc = check_offset(t, probe[i], msg)) != GX_OK)
            return rc;
    double t0 = gx_monotonic_seconds();
    rc = t->ops->prime_probe(t->impl, prime, n_prime, rounds, probe, n_probe, sm, cycles, msg);
    t->stats.seconds += gx_monotonic_seconds() - t0;
    t->stats.calls++;
    t->stats.accesses += (uint64_t)n_prime * rounds + n_probe;
    t->stats.serial_accesses += n_probe;
    return rc;
}

int gx_target_prime_probe(gx_target *t, const uint64_t *prime, size_t n_prime,
                          const uint64_t *probe, size_t n_probe, uint32_t sm, double *cycles,
                          gx_msg *msg)
{
    if (!probe || n_probe == 0 || !cycles)
        return gx_fail(msg, GX_EINVAL, "prime_probe needs probe offsets and a cycles buffer");
    return gx_target_prime_probe_rounds(t, prime, n_prime, 1, probe, n_probe, sm, cycles, msg);
}

static int check_smem_req(const gx_smem_probe_req *req, gx_msg *msg)
{
    const uint32_t w = req->width_bytes;
    if (w != 4 && w != 8 && w != 16)
        return gx_fail(msg, GX_EINVAL, "smem_probe: width %u bytes (use 4, 8 or 16)", w);
    if (req->active == 0)
        return gx_fail(msg, GX_EINVAL, "smem_probe: no active lane");
    if (req->reps == 0 || req->reps > GX_SMEM_PROBE_MAX_REPS)
        return gx_fail(msg, GX_EINVAL, "smem_probe: reps %u outside 1..%u", req->reps,
                       GX_SMEM_PROBE_MAX_REPS);
    for (int i = 0; i < GX_SMEM_PROBE_LANES; i++) {
        const uint32_t off = req->lane_offsets[i];
        if (!(req->active >> i & 1u))
            continue;
        if (off % w != 0 || off > GX_SMEM_PROBE_WINDOW - w)
            return gx_fail(msg, GX_ERANGE,
                           "smem_probe: lane %d offset %u not %u-byte aligned inside the "
                           "%u-byte window",
                           i, off, w, GX_SMEM_PROBE_WINDOW);
    }
    return GX_OK;
}

int gx_target_smem_probe(gx_target *t, const gx_smem_probe_req *req, double *cycles,
                         gx_msg *msg)
{
    int rc;
    if (!req || !cycles)
        return gx_fail(msg, GX_EINVAL, "smem_probe needs a request and a cycles result");
    if (!t->ops->smem_probe)
        return gx_fail(msg, GX_EUNSUPPORTED, "smem_probe: target %s has no shared-memory probe",
                       t->info.spec);
    if ((rc = check_sm(t, req->sm, msg)) != GX_OK || (rc = check_smem_req(req, msg)) != GX_OK)
        return rc;
    double t0 = gx_monotonic_seconds();
    rc = t->ops->smem_probe(t->impl, req, cycles, msg);
    t->stats.seconds += gx_monotonic_seconds() - t0;
    t->stats.calls++;
    const uint64_t n = (uint64_t)req->reps + (req->reps < 32 ? req->reps : 32);
    t->stats.accesses += n;
    t->stats.serial_accesses += n;
    return rc;
}

static int check_xchain(uint64_t stride, uint32_t steps, const char *what, gx_msg *msg)
{
    if (stride < GX_XCHASE_MIN_STRIDE || stride % GX_XCHASE_MIN_STRIDE)
        return gx_fail(msg, GX_EINVAL, "xchase: %s stride %llu is not a multiple of %u", what,
                       (unsigned long long)stride, GX_XCHASE_MIN_STRIDE);
    if (steps == 0 || steps > GX_XCHASE_MAX_STEPS)
        return gx_fail(msg, GX_ERANGE, "xchase: %s steps %u outside 1..%u", what, steps,
                       GX_XCHASE_MAX_STEPS);
    if (stride > GX_XCHASE_MAX_WINDOW_BYTES / steps)
        return gx_fail(msg, GX_ERANGE, "xchase: %s window of %u x %llu bytes passes %llu", what,
                       steps, (unsigned long long)stride,
                       (unsigned long long)GX_XCHASE_MAX_WINDOW_BYTES);
    return GX_OK;
}

int gx_target_xchase(gx_target *t, const gx_xchase_req *req, double *cycles, gx_msg *msg)
{
    int rc;
    if (!req || !cycles)
        return gx_fail(msg, GX_EINVAL, "xchase needs a request and a cycles buffer");
    if (!t->ops->xchase)
        return gx_fail(msg, GX_EUNSUPPORTED, "xchase: target %s has no translation chase",
                       t->info.spec);
    if (req->timed_rounds == 0 || req->timed_rounds > GX_XCHASE_MAX_ROUNDS ||
        req->warm_rounds > GX_XCHASE_MAX_ROUNDS)
        return gx_fail(msg, GX_ERANGE, "xchase: rounds (warm %u, timed %u) outside 0..%u, 1..%u",
                       req->warm_rounds, req->timed_rounds, GX_XCHASE_MAX_ROUNDS,
                       GX_XCHASE_MAX_ROUNDS);
    if ((rc = check_sm(t, req->sm, msg)) != GX_OK ||
        (rc = check_xchain(req->stride_bytes, req->steps, "timed", msg)) != GX_OK)
        return rc;
    if (req->thrash_steps) {
        if ((rc = check_sm(t, req->thrash_sm, msg)) != GX_OK ||
            (rc = check_xchain(req->thrash_stride_bytes, req->thrash_steps, "thrash", msg)) !=
                GX_OK)
            return rc;
        if (req->thrash_sm == req->sm)
            return gx_fail(msg, GX_EINVAL, "xchase: the thrashing SM must differ from SM %u",
                           req->sm);
    }
    double t0 = gx_monotonic_seconds();
    rc = t->ops->xchase(t->impl, req, cycles, msg);
    t->stats.seconds += gx_monotonic_seconds() - t0;
    t->stats.calls++;
    uint64_t n = (uint64_t)(req->warm_rounds + req->timed_rounds) * req->steps;
    /* the thrashing thread's accesses run beside the timed ones (the sim
     * target alternates one each): counted once more, not serial */
    t->stats.accesses += req->thrash_steps ? 2 * n : n;
    t->stats.serial_accesses += n;
    return rc;
}

int gx_target_has_contend(const gx_target *t)
{
    return t && t->ops->contend != NULL;
}

int gx_target_contend(gx_target *t, const gx_contend_req *req, double *cycles, gx_msg *msg)
{
    int rc;
    if (!req || !req->probes || req->n_probes == 0 || !cycles)
        return gx_fail(msg, GX_EINVAL, "contend needs probe offsets and a cycles buffer");
    if (!t->ops->contend)
        return gx_fail(msg, GX_EUNSUPPORTED, "contend: target %s has no contention probe",
                       t->info.spec);
    if (req->reps == 0 || req->reps > GX_CONTEND_MAX_REPS)
        return gx_fail(msg, GX_ERANGE, "contend: %u timed loads a probe outside 1..%u", req->reps,
                       GX_CONTEND_MAX_REPS);
    if (req->hammer_warps > GX_CONTEND_MAX_WARPS)
        return gx_fail(msg, GX_ERANGE, "contend: %u hammering warps an SM outside 0..%u",
                       req->hammer_warps, GX_CONTEND_MAX_WARPS);
    if ((rc = check_sm(t, req->sm, msg)) != GX_OK ||
        (rc = check_offset(t, req->hammer_offset, msg)) != GX_OK)
        return rc;
    for (size_t i = 0; i < req->n_probes; i++)
        if ((rc = check_offset(t, req->probes[i], msg)) != GX_OK)
            return rc;
    double t0 = gx_monotonic_seconds();
    rc = t->ops->contend(t->impl, req, cycles, msg);
    t->stats.seconds += gx_monotonic_seconds() - t0;
    t->stats.calls++;
    /* the probes only: the hammers' loads run beside them, as many as time allows */
    uint64_t n = (uint64_t)req->n_probes * (req->reps + 1u);
    t->stats.accesses += n;
    t->stats.serial_accesses += n;
    return rc;
}

void gx_target_get_stats(const gx_target *t, gx_target_stats *s)
{
    *s = t->stats;
}
