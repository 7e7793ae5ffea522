/* slice_contend_label.c - the contention labeller (slice_contend.h): slice
 * classes of lines by contention against a partition's classes, for the
 * slice predictor's labelled learning (slicepredict.h). Labels are
 * memoised by arena offset (the hash solver and a page's identification ask
 * for lines already measured; a memo hit costs no launch); the lines not
 * remembered are joined in one call (2 + 2 x classes launches, whatever
 * their number). Uses only gx_target_contend (through slice_contend.c). */
#include <stdlib.h>
#include <string.h>

#include "gpuxray/rng.h"
#include "slice_contend.h"

#define LB_EMPTY UINT64_MAX /* a free memo slot (arena offsets are line aligned) */
#define LB_MIN_SLOTS 1024u

struct sc_labeller {
    gx_target *t;
    sc_opts o;
    sc_partition *p;
    uint64_t *key; /* open addressing, power-of-two slots, load <= 1/2 */
    int *val;
    size_t slots, used;
    uint64_t joined;
};

static size_t slot_of(const sc_labeller *l, uint64_t k)
{
    size_t i = (size_t)gx_mix64(k) & (l->slots - 1);
    while (l->key[i] != LB_EMPTY && l->key[i] != k)
        i = (i + 1) & (l->slots - 1);
    return i;
}

static int memo_resize(sc_labeller *l, size_t slots)
{
    uint64_t *ok = l->key;
    int *ov = l->val;
    size_t on = l->slots;
    l->key = malloc(slots * sizeof *l->key);
    l->val = malloc(slots * sizeof *l->val);
    if (!l->key || !l->val) {
        free(l->key);
        free(l->val);
        l->key = ok;
        l->val = ov;
        return GX_ENOMEM;
    }
    for (size_t i = 0; i < slots; i++)
        l->key[i] = LB_EMPTY;
    l->slots = slots;
    for (size_t i = 0; i < on; i++)
        if (ok[i] != LB_EMPTY) {
            size_t s = slot_of(l, ok[i]);
            l->key[s] = ok[i];
            l->val[s] = ov[i];
        }
    free(ok);
    free(ov);
    return GX_OK;
}

sc_labeller *sc_labeller_new(gx_target *t, const sc_opts *o, const sc_partition *p)
{
    sc_labeller *l = calloc(1, sizeof *l);
    if (!l)
        return NULL;
    l->t = t;
    l->o = *o;
    l->p = malloc(sizeof *l->p);
    if (!l->p || memo_resize(l, LB_MIN_SLOTS) != GX_OK) {
        sc_labeller_free(l);
        return NULL;
    }
    memcpy(l->p, p, sizeof *p);
    return l;
}

void sc_labeller_free(sc_labeller *l)
{
    if (!l)
        return;
    free(l->p);
    free(l->key);
    free(l->val);
    free(l);
}

int sc_labeller_put(sc_labeller *l, const uint64_t *lines, const int *cls, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (cls[i] < 0)
            continue;
        if (2 * (l->used + 1) > l->slots && memo_resize(l, 2 * l->slots) != GX_OK)
            return GX_ENOMEM;
        size_t s = slot_of(l, lines[i]);
        l->used += l->key[s] == LB_EMPTY;
        l->key[s] = lines[i];
        l->val[s] = cls[i];
    }
    return GX_OK;
}

int sc_labeller_label(void *user, const uint64_t *offs, size_t n, int *labels, gx_msg *msg)
{
    sc_labeller *l = user;
    size_t miss = 0;
    for (size_t i = 0; i < n; i++) {
        size_t s = slot_of(l, offs[i]);
        labels[i] = l->key[s] == offs[i] ? l->val[s] : -1;
        miss += l->key[s] != offs[i];
    }
    if (miss == 0)
        return GX_OK;
    uint64_t *ask = malloc(miss * sizeof *ask);
    int *got = malloc(miss * sizeof *got);
    size_t *at = malloc(miss * sizeof *at);
    int rc = ask && got && at ? GX_OK : gx_fail(msg, GX_ENOMEM, "slices: out of memory");
    size_t k = 0;
    for (size_t i = 0; rc == GX_OK && i < n; i++)
        if (labels[i] < 0) {
            at[k] = i;
            ask[k++] = offs[i];
        }
    size_t none = 0, twice = 0;
    if (rc == GX_OK)
        rc = sc_join_lines(l->t, &l->o, l->p, ask, miss, got, &none, &twice, msg);
    if (rc == GX_OK) {
        l->joined += miss;
        for (size_t j = 0; j < miss; j++)
            labels[at[j]] = got[j] >= 0 ? got[j] : -1;
        if (sc_labeller_put(l, ask, got, miss) != GX_OK)
            rc = gx_fail(msg, GX_ENOMEM, "slices: out of memory");
    }
    free(ask);
    free(got);
    free(at);
    return rc;
}

uint64_t sc_labeller_joined(const sc_labeller *l)
{
    return l->joined;
}
