/* smem_cfg.c - the profile's `smem` section as the bank model sees it
 * (gx_profile.smem; its JSON form, ranges and compare rules are rows of
 * the field table, src/profile/fields.def): the default shared memory,
 * the model's own check of a section (complete when it must run), and a
 * field-by-field comparison for the smem holdout.
 *
 * Notes: absent is 0 for counts, NaN for cycles, -1 for broadcast. */
#include "gpuxray/smem.h"

#include "gpuxray/bits.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void gx_smem_cfg_clear(gx_smem_cfg *c)
{
    memset(c, 0, sizeof *c);
    c->broadcast = -1;
    c->latency_cycles = NAN;
    c->conflict_cycles = NAN;
}

void gx_smem_cfg_default(gx_smem_cfg *c)
{
    gx_smem_cfg_clear(c);
    c->present = 1;
    c->banks = 32;
    c->bank_bytes = 4;
    c->transfer_bytes = GX_SMEM_MAX_TRANSFER;
    c->broadcast = 1;
    c->latency_cycles = 30;
    c->conflict_cycles = 2;
    c->block_bytes = 48u << 10;
    c->sm_bytes = 64u << 10;
}

int gx_smem_cfg_from_profile(const gx_profile *p, gx_smem_cfg *c, gx_msg *msg)
{
    gx_smem_cfg_clear(c);
    if (!p || !p->smem.present)
        return GX_OK;
    *c = p->smem;
    return gx_smem_cfg_validate(c, 0, msg);
}

int gx_smem_cfg_to_profile(gx_profile *p, const gx_smem_cfg *c, gx_msg *msg)
{
    int rc = gx_smem_cfg_validate(c, 0, msg);
    if (rc != GX_OK)
        return rc;
    if (c->present)
        p->smem = *c;
    else
        gx_smem_cfg_clear(&p->smem);
    return GX_OK;
}

int gx_smem_cfg_validate(const gx_smem_cfg *c, int require_model, gx_msg *msg)
{
    if (!c->present)
        return require_model ? gx_fail(msg, GX_ECONFIG, "smem: section required") : GX_OK;
    if (c->banks && (!gx_is_pow2_u64(c->banks) || c->banks > GX_SMEM_MAX_BANKS))
        return gx_fail(msg, GX_ECONFIG, "smem.banks: %u is not a power of two in 1..%d",
                       c->banks, GX_SMEM_MAX_BANKS);
    if (c->bank_bytes && c->bank_bytes != 4 && c->bank_bytes != 8 && c->bank_bytes != 16)
        return gx_fail(msg, GX_ECONFIG, "smem.bank_bytes: %u is not 4, 8 or 16", c->bank_bytes);
    if (c->transfer_bytes && (!gx_is_pow2_u64(c->transfer_bytes) || c->transfer_bytes < GX_SMEM_MAX_WIDTH ||
                              c->transfer_bytes > GX_SMEM_MAX_TRANSFER))
        return gx_fail(msg, GX_ECONFIG,
                       "smem.transfer_bytes: %u is not a power of two in %d..%d (one 128-bit "
                       "lane .. a whole warp of them)",
                       c->transfer_bytes, GX_SMEM_MAX_WIDTH, GX_SMEM_MAX_TRANSFER);
    if (c->block_bytes && c->sm_bytes && c->block_bytes > c->sm_bytes)
        return gx_fail(msg, GX_ECONFIG, "smem.block_bytes: %llu > smem.sm_bytes %llu",
                       (unsigned long long)c->block_bytes, (unsigned long long)c->sm_bytes);
    if (require_model) {
        const char *miss = !c->banks ? "banks" : !c->bank_bytes ? "bank_bytes"
                         : !c->transfer_bytes ? "transfer_bytes" : c->broadcast < 0 ? "broadcast"
                         : !isfinite(c->latency_cycles) ? "latency_cycles"
                         : !isfinite(c->conflict_cycles) ? "conflict_cycles" : NULL;
        if (miss)
            return gx_fail(msg, GX_ECONFIG, "smem.%s: required to run the model", miss);
    }
    return GX_OK;
}

static void fmt_u(char *b, size_t n, uint64_t v)
{
    if (v)
        snprintf(b, n, "%llu", (unsigned long long)v);
    else
        snprintf(b, n, "null");
}

static void fmt_d(char *b, size_t n, double v)
{
    if (isfinite(v))
        snprintf(b, n, "%.2f", v);
    else
        snprintf(b, n, "null");
}

static int cycles_match(double t, double f)
{
    double tol = fmax(GX_SMEM_CYCLES_ABS_TOL, GX_SMEM_CYCLES_REL_TOL * fabs(t));
    return fabs(t - f) <= tol;
}

int gx_smem_cfg_compare(const gx_smem_cfg *t, const gx_smem_cfg *f,
                        gx_smem_field_cmp out[GX_SMEM_FIELDS])
{
    static const char *names[GX_SMEM_FIELDS] = {
        "smem.banks", "smem.bank_bytes", "smem.transfer_bytes", "smem.broadcast",
        "smem.latency_cycles", "smem.conflict_cycles", "smem.block_bytes", "smem.sm_bytes"};
    const uint64_t tu[GX_SMEM_FIELDS] = {t->banks, t->bank_bytes, t->transfer_bytes, 0, 0, 0,
                                         t->block_bytes, t->sm_bytes};
    const uint64_t fu[GX_SMEM_FIELDS] = {f->present ? f->banks : 0, f->present ? f->bank_bytes : 0,
                                         f->present ? f->transfer_bytes : 0, 0, 0, 0,
                                         f->present ? f->block_bytes : 0,
                                         f->present ? f->sm_bytes : 0};
    int n_bad = 0;
    for (int i = 0; i < GX_SMEM_FIELDS; i++) {
        gx_smem_field_cmp *o = &out[i];
        o->field = names[i];
        int have_t, have_f, same;
        if (i == 3) {
            have_t = t->present && t->broadcast >= 0;
            have_f = f->present && f->broadcast >= 0;
            snprintf(o->truth, sizeof o->truth, "%s", !have_t ? "null" : t->broadcast ? "true" : "false");
            snprintf(o->found, sizeof o->found, "%s", !have_f ? "null" : f->broadcast ? "true" : "false");
            same = have_t && have_f && t->broadcast == f->broadcast;
        } else if (i == 4 || i == 5) {
            double tv = i == 4 ? t->latency_cycles : t->conflict_cycles;
            double fv = !f->present ? NAN : i == 4 ? f->latency_cycles : f->conflict_cycles;
            have_t = t->present && isfinite(tv);
            have_f = isfinite(fv);
            fmt_d(o->truth, sizeof o->truth, have_t ? tv : NAN);
            fmt_d(o->found, sizeof o->found, fv);
            same = have_t && have_f && cycles_match(tv, fv);
        } else {
            have_t = t->present && tu[i] != 0;
            have_f = fu[i] != 0;
            fmt_u(o->truth, sizeof o->truth, have_t ? tu[i] : 0);
            fmt_u(o->found, sizeof o->found, fu[i]);
            same = have_t && have_f && tu[i] == fu[i];
        }
        o->verdict = !have_t ? -1 : !have_f ? 2 : same ? 0 : 1;
        n_bad += o->verdict > 0;
    }
    return n_bad;
}
