/* model_curve.c - the model's prediction of the latency-versus-footprint
 * curve: the profile runs as a simulated target (sim:PATH) and one thread
 * on SM 0 chases the same kind of chain the levels stage chased on the
 * GPU (one random 32 B slot per 256 B block, nested footprints, random
 * cyclic order) at the same footprints.
 *
 * Notes:
 * - A measured profile runs as its "simulated" twin: the same fields with
 *   provenance.kind changed, written to a temporary file in P_tmpdir (the
 *   sim target opens profiles by path) and removed afterwards. One missing
 *   a field the model needs gives GX_ECONFIG with the validator's reason;
 *   the report then shows the measurement alone and says why.
 * - The seed makes the curve repeatable. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpuxray/profile.h"
#include "gpuxray/rng.h"
#include "gpuxray/target.h"
#include "report_int.h"

#define MC_BLOCK_BYTES 256u   /* the levels stage's block: one line, one sector per block */
#define MC_SLOT_BYTES 32u
#define MC_TIMED_STEPS 4096u  /* twice the levels stage's timed part: a smoother model line */
#define MC_MAX_BYTES (1ULL << 30) /* footprints above are skipped (host memory and time) */

static void shuffle(gx_rng *r, uint64_t *v, size_t n)
{
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t)gx_rng_below(r, i);
        uint64_t t = v[i - 1];
        v[i - 1] = v[j];
        v[j] = t;
    }
}

/* sim:PATH of p: the file itself, or a simulated twin in a temporary file
 * (*tmp receives its path, to remove). */
static int model_spec(const gx_profile *p, const char *path, char **spec, char **tmp,
                      gx_msg *msg)
{
    *spec = *tmp = NULL;
    const char *use = path;
    if (strcmp(p->provenance.kind, "reference") != 0 &&
        strcmp(p->provenance.kind, "simulated") != 0) {
        gx_profile *twin = gx_profile_clone(p);
        char *t = malloc(strlen(P_tmpdir) + 40);
        if (!twin || !t) {
            gx_profile_free(twin);
            free(t);
            return gx_fail(msg, GX_ENOMEM, "out of memory");
        }
        snprintf(twin->provenance.kind, sizeof twin->provenance.kind, "simulated");
        sprintf(t, "%s/gpuxray-model-XXXXXX", P_tmpdir);
        int fd = mkstemp(t);
        if (fd < 0) {
            gx_profile_free(twin);
            free(t);
            return gx_fail(msg, GX_EIO, "model curve: no temporary file in %s", P_tmpdir);
        }
        close(fd);
        int rc = gx_profile_save(twin, t, msg);
        gx_profile_free(twin);
        if (rc != GX_OK) {
            remove(t);
            free(t);
            return rc;
        }
        *tmp = t;
        use = t;
    }
    size_t n = strlen(use) + 8;
    *spec = malloc(n);
    if (!*spec)
        return gx_fail(msg, GX_ENOMEM, "out of memory");
    snprintf(*spec, n, "sim:%s", use);
    return GX_OK;
}

int rp_model_curve(const gx_profile *p, const char *profile_path, const double *fp, size_t n,
                   uint64_t seed, double *cycles, gx_msg *msg)
{
    double fmax = 0;
    for (size_t i = 0; i < n; i++) {
        cycles[i] = NAN;
        if (fp[i] > fmax && fp[i] <= (double)MC_MAX_BYTES)
            fmax = fp[i];
    }
    if (fmax < MC_BLOCK_BYTES * 2.0)
        return gx_fail(msg, GX_EINVAL, "model curve: no footprint to run");
    char *spec = NULL, *tmp = NULL;
    gx_target *t = NULL;
    int rc = model_spec(p, profile_path, &spec, &tmp, msg);
    if (rc == GX_OK)
        rc = gx_target_open(spec, seed, &t, msg);
    if (rc != GX_OK && tmp && msg && !strncmp(msg->text, tmp, strlen(tmp))) {
        /* name the profile, not its temporary twin */
        char rest[GX_MSG_MAX / 2];
        snprintf(rest, sizeof rest, "%s", msg->text + strlen(tmp));
        snprintf(msg->text, sizeof msg->text, "the model cannot run this profile%s", rest);
    }
    if (tmp) {
        remove(tmp); /* the target has read it */
        free(tmp);
    }
    free(spec);
    if (rc != GX_OK)
        return rc;
    size_t total = (size_t)(fmax / MC_BLOCK_BYTES);
    uint64_t *blocks = malloc(total * sizeof *blocks), *chain = malloc(total * sizeof *chain);
    if (!blocks || !chain) {
        rc = gx_fail(msg, GX_ENOMEM, "model curve: out of memory");
        goto out;
    }
    if ((rc = gx_target_arena(t, (uint64_t)total * MC_BLOCK_BYTES, msg)) != GX_OK)
        goto out;
    gx_rng r;
    gx_rng_seed(&r, seed);
    for (size_t i = 0; i < total; i++)
        blocks[i] = (uint64_t)i * MC_BLOCK_BYTES +
                    gx_rng_below(&r, MC_BLOCK_BYTES / MC_SLOT_BYTES) * MC_SLOT_BYTES;
    shuffle(&r, blocks, total);
    for (size_t i = 0; i < n && rc == GX_OK; i++) {
        if (!(fp[i] <= (double)MC_MAX_BYTES))
            continue;
        size_t k = (size_t)(fp[i] / MC_BLOCK_BYTES);
        k = k < 2 ? 2 : k > total ? total : k;
        memcpy(chain, blocks, k * sizeof *chain);
        shuffle(&r, chain, k);
        gx_chase_req q = {.offsets = chain, .n = k, .warm_rounds = k < 4096 ? 2 : 1,
                          .timed_rounds = 1, .max_timed_steps = MC_TIMED_STEPS, .sm = 0};
        if (k < MC_TIMED_STEPS) {
            q.timed_rounds = (uint32_t)((MC_TIMED_STEPS + k - 1) / k);
            q.max_timed_steps = 0;
        }
        rc = gx_target_chase(t, &q, &cycles[i], msg);
    }
out:
    free(blocks);
    free(chain);
    gx_target_close(t);
    return rc;
}
