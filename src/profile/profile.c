/* profile.c - life cycle of a profile (new / clone / free), its confidence
 * map, and the small hash-function helpers of hash.h / profile.h.
 *
 * Notes:
 * - Absent fields follow profile.h: 0 for counts and sizes, NaN for
 *   latencies, "" for strings, present == 0 for hash functions, -1 for the
 *   observable-bit range and the near-far switches. A new profile takes
 *   every default from the field table (fields.def).
 * - The sim knobs (noise, skew) default to 0 (no noise) when absent.
 * - gx_hash_range lives with the model (src/model/hash.c).
 * - The kept JSON document (doc) is deep-copied by clone and released by
 *   free; the struct, not the document, is the truth for known fields.
 * - The tlb section holds no pointers: clone copies it with the struct.
 *   Its defaults (gx_tlb_cfg_init, listed in profile.h):
 *   gem5's predictor width (4 bits), 4 KiB vs 2 MiB predicted sizes, line
 *   groups of 16 pages, 8-byte PTEs. */
#include "gpuxray/profile.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fields.h"


static void hash_init(gx_hash_fn *h)
{
    memset(h, 0, sizeof *h);
    h->obs_lo = -1;
    h->obs_hi = -1;
}

gx_profile *gx_profile_new(void)
{
    gx_profile *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    gx_fields_init(GX_FG_root, p); /* every field at its table default */
    strcpy(p->provenance.kind, "measured");
    hash_init(&p->l2.slice_hash);
    hash_init(&p->l2.set_hash);
    return p;
}

void gx_small_cache_init(gx_small_cache_cfg *c)
{
    gx_fields_init(GX_FG_smallcache, c);
}

void gx_tlb_level_init(gx_tlb_level_cfg *l)
{
    gx_fields_init(GX_FG_tlblevel, l);
}

/* The tlb rows of the table are the truth; test_fields checks that a new
 * profile's tlb equals this. */
void gx_tlb_cfg_init(gx_tlb_cfg *t)
{
    memset(t, 0, sizeof *t);
    t->pte_bytes = GX_TLB_DEFAULT_PTE_BYTES;
    t->hit_fills_entry = -1;
    for (int i = 0; i < GX_MAX_TLB_LEVELS; i++)
        gx_tlb_level_init(&t->levels[i]);
    t->walker.fixed_read_cycles = NAN;
    gx_small_cache_init(&t->walker.pwc);
    gx_small_cache_init(&t->walker.neighbour_pwc);
    t->coalescer.size_predictor_bits = GX_TLB_DEFAULT_PREDICTOR_BITS;
    t->coalescer.predict_small_bytes = GX_TLB_DEFAULT_PREDICT_SMALL;
    t->coalescer.predict_large_bytes = GX_TLB_DEFAULT_PREDICT_LARGE;
    t->coalescer.neighbour_predictor_bits = GX_TLB_DEFAULT_PREDICTOR_BITS;
    t->coalescer.line_group_pages = GX_TLB_DEFAULT_LINE_GROUP_PAGES;
}

static const char *const sharing_names[] = {"unknown", "sm", "tpc", "gpc", "gpu"};

const char *gx_sharing_name(gx_sharing s)
{
    return (unsigned)s < sizeof sharing_names / sizeof *sharing_names ? sharing_names[s]
                                                                       : "unknown";
}

int gx_sharing_parse(const char *name, gx_sharing *out)
{
    for (unsigned i = 1; i < sizeof sharing_names / sizeof *sharing_names; i++) {
        if (name && strcmp(name, sharing_names[i]) == 0) {
            *out = (gx_sharing)i;
            return GX_OK;
        }
    }
    return GX_EINVAL;
}

void gx_hash_clear(gx_hash_fn *h)
{
    if (!h)
        return;
    free(h->table);
    hash_init(h);
}

int gx_hash_copy(gx_hash_fn *dst, const gx_hash_fn *src)
{
    uint32_t *t = NULL;
    if (src->table) {
        if (src->n_masks < 0 || src->n_masks > GX_MAX_MASKS - 1 || src->n_masks > 30)
            return GX_EINVAL;
        size_t n = (size_t)1 << src->n_masks;
        t = malloc(n * sizeof *t);
        if (!t)
            return GX_ENOMEM;
        memcpy(t, src->table, n * sizeof *t);
    }
    if (dst != src) {
        free(dst->table);
        *dst = *src;
    }
    dst->table = t;
    return GX_OK;
}

const char *gx_topology_name(gx_topology t)
{
    switch (t) {
    case GX_TOPO_UNIFORM:
        return "uniform";
    case GX_TOPO_NEAR_FAR:
        return "near-far";
    default:
        return "unknown";
    }
}

gx_profile *gx_profile_clone(const gx_profile *p)
{
    if (!p)
        return NULL;
    gx_profile *c = malloc(sizeof *c);
    if (!c)
        return NULL;
    *c = *p;
    c->l2.slice_hash.table = NULL;
    c->l2.set_hash.table = NULL;
    c->doc = NULL;
    if (gx_hash_copy(&c->l2.slice_hash, &p->l2.slice_hash) != GX_OK ||
        gx_hash_copy(&c->l2.set_hash, &p->l2.set_hash) != GX_OK) {
        gx_profile_free(c);
        return NULL;
    }
    if (p->doc) {
        c->doc = json_deep_copy((const json_t *)p->doc);
        if (!c->doc) {
            gx_profile_free(c);
            return NULL;
        }
    }
    return c;
}

void gx_profile_free(gx_profile *p)
{
    if (!p)
        return;
    free(p->l2.slice_hash.table);
    free(p->l2.set_hash.table);
    if (p->doc)
        json_decref((json_t *)p->doc);
    free(p);
}

int gx_profile_set_confidence(gx_profile *p, const char *key, double value)
{
    if (!p || !key || !*key || strlen(key) >= sizeof p->confidence[0].key)
        return GX_EINVAL;
    for (int i = 0; i < p->n_confidence; i++) {
        if (strcmp(p->confidence[i].key, key) == 0) {
            p->confidence[i].value = value;
            return GX_OK;
        }
    }
    if (p->n_confidence >= GX_MAX_CONFIDENCE)
        return GX_ERANGE;
    gx_confidence *c = &p->confidence[p->n_confidence++];
    strcpy(c->key, key);
    c->value = value;
    return GX_OK;
}

double gx_profile_confidence(const gx_profile *p, const char *key)
{
    if (!p || !key)
        return NAN;
    for (int i = 0; i < p->n_confidence; i++)
        if (strcmp(p->confidence[i].key, key) == 0)
            return p->confidence[i].value;
    return NAN;
}
