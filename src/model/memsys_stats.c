/* memsys_stats.c - the memory system's translation statistics (see
 * memsys.h): gathered from the parts, written as the "translation" JSON
 * object and as text lines.
 *
 * Notes: JSON keys follow gem5's GPU TLB / walker statistics where gem5 has
 * a name (localNumTLBAccesses, pwcHits, pwc2InvalidNeighboursSkipped,
 * coalesced_accesses ...); the others are gpuxray's, in gem5's style. */
#include <math.h>
#include <string.h>

#include "memsys_internal.h"

int gx_memsys_get_translation_stats(const gx_memsys *ms, gx_translation_stats *s)
{
    memset(s, 0, sizeof *s);
    if (!ms->xlate)
        return 0;
    s->n_levels = ms->n_levels;
    for (int j = 0; j < ms->n_levels; j++) {
        memcpy(s->level_name[j], ms->level_name[j], sizeof s->level_name[j]);
        gx_tlb_get_stats(ms->tlb[j], &s->level[j]);
    }
    s->n_sizes = gx_vmem_n_sizes(ms->vm);
    for (int k = 0; k < s->n_sizes; k++)
        s->sizes[k] = gx_vmem_size(ms->vm, k);
    gx_walker_get_stats(ms->walker, &s->walker);
    gx_coalescer_get_stats(ms->co, &s->coalescer);
    s->accesses = ms->accesses;
    s->faults = ms->faults;
    s->maps = ms->maps;
    s->maps_rejected = ms->maps_rejected;
    s->invalidations = ms->invalidations;
    s->miss_slot_stalls = ms->miss_slot_stalls;
    s->translation_cycles = ms->translation_cycles;
    return 1;
}

static double per(double a, uint64_t b)
{
    return b ? a / (double)b : 0;
}

static void json_levels(FILE *f, const gx_translation_stats *s)
{
    fprintf(f, "    \"levels\": [");
    for (int j = 0; j < s->n_levels; j++) {
        const gx_tlb_stats *l = &s->level[j];
        fprintf(f,
                "%s\n      {\"name\": \"%s\", \"localNumTLBAccesses\": %llu, "
                "\"localNumTLBHits\": %llu, \"localNumTLBMisses\": %llu, \"hitsByPageSize\": {",
                j ? "," : "", s->level_name[j], (unsigned long long)l->accesses,
                (unsigned long long)l->hits, (unsigned long long)l->misses);
        for (int k = 0; k < s->n_sizes; k++)
            fprintf(f, "%s\"%llu\": %llu", k ? ", " : "", (unsigned long long)s->sizes[k],
                    (unsigned long long)l->hits_by_size[k]);
        fprintf(f, "}}");
    }
    fprintf(f, "\n    ],\n");
}

static void json_walker(FILE *f, const gx_walker_stats *w)
{
    fprintf(f,
            "    \"walker\": {\"walks\": %llu, \"pwcAccesses\": %llu, \"pwcHits\": %llu, "
            "\"pwcMisses\": %llu, \"pwcInsertions\": %llu, \"pwcInvalidations\": %llu,\n"
            "      \"pwc2Accesses\": %llu, \"pwc2Hits\": %llu, \"pwc2Misses\": %llu, "
            "\"pwc2Insertions\": %llu, \"pwc2Invalidations\": %llu, "
            "\"pwc2InvalidNeighboursSkipped\": %llu,\n"
            "      \"pageTableReads\": %llu, \"pageTableReadsByLevel\": [",
            (unsigned long long)w->walks, (unsigned long long)w->pwc_accesses,
            (unsigned long long)w->pwc_hits, (unsigned long long)w->pwc_misses,
            (unsigned long long)w->pwc_insertions, (unsigned long long)w->pwc_invalidations,
            (unsigned long long)w->pwc2_accesses, (unsigned long long)w->pwc2_hits,
            (unsigned long long)w->pwc2_misses, (unsigned long long)w->pwc2_insertions,
            (unsigned long long)w->pwc2_invalidations,
            (unsigned long long)w->pwc2_invalid_neighbours_skipped,
            (unsigned long long)w->page_table_reads);
    for (int i = 0; i < GX_MAX_PT_LEVELS; i++)
        fprintf(f, "%s%llu", i ? ", " : "", (unsigned long long)w->reads_by_level[i]);
    fprintf(f, "], \"faults\": %llu, \"queuedWalks\": %llu, \"queueRetries\": %llu,\n",
            (unsigned long long)w->faults, (unsigned long long)w->queued_walks,
            (unsigned long long)w->queue_retries);
    fprintf(f,
            "      \"walkCyclesMean\": %.3f, \"queueCyclesMean\": %.3f, "
            "\"walkLatencyHistogram\": [",
            per(w->walk_cycles, w->walks), per(w->queue_cycles, w->walks));
    int first = 1;
    for (uint32_t b = 0; b < GX_WALK_LAT_BUCKETS; b++) {
        if (!w->lat_hist[b])
            continue;
        double lo = b ? ldexp(1.0, (int)b - 1) : 0, hi = ldexp(1.0, (int)b);
        fprintf(f, "%s{\"from\": %.0f, \"below\": %.0f, \"walks\": %llu}", first ? "" : ", ",
                lo, hi, (unsigned long long)w->lat_hist[b]);
        first = 0;
    }
    fprintf(f, "]},\n");
}

int gx_memsys_write_translation_json(const gx_memsys *ms, FILE *f)
{
    gx_translation_stats s;
    if (!gx_memsys_get_translation_stats(ms, &s))
        return GX_OK;
    fprintf(f, "  \"translation\": {\n");
    fprintf(f,
            "    \"accesses\": %llu, \"faults\": %llu, \"maps\": %llu, \"mapsRejected\": %llu, "
            "\"invalidations\": %llu, \"missSlotStalls\": %llu,\n"
            "    \"translationCycles\": {\"total\": %.3f, \"per_access\": %.3f},\n",
            (unsigned long long)s.accesses, (unsigned long long)s.faults,
            (unsigned long long)s.maps, (unsigned long long)s.maps_rejected,
            (unsigned long long)s.invalidations, (unsigned long long)s.miss_slot_stalls,
            s.translation_cycles, per(s.translation_cycles, s.accesses));
    json_levels(f, &s);
    json_walker(f, &s.walker);
    const gx_coalescer_stats *c = &s.coalescer;
    fprintf(f,
            "    \"coalescer\": {\"uncoalesced_accesses\": %llu, \"coalesced_accesses\": %llu, "
            "\"sizePredictions\": %llu, \"sizeMispredictions\": %llu, "
            "\"lineCoalesceDecisions\": %llu}\n  },\n",
            (unsigned long long)c->uncoalesced_accesses,
            (unsigned long long)c->coalesced_accesses, (unsigned long long)c->size_predictions,
            (unsigned long long)c->size_mispredictions,
            (unsigned long long)c->line_coalesce_decisions);
    return ferror(f) ? GX_EIO : GX_OK;
}

static double pct(uint64_t a, uint64_t b)
{
    return b ? 100.0 * (double)a / (double)b : 0;
}

int gx_memsys_write_translation_text(const gx_memsys *ms, FILE *f)
{
    gx_translation_stats s;
    if (!gx_memsys_get_translation_stats(ms, &s))
        return GX_OK;
    fprintf(f, "xlate    %llu accesses, %llu faults, %.2f translation cycles per access\n",
            (unsigned long long)s.accesses, (unsigned long long)s.faults,
            per(s.translation_cycles, s.accesses));
    for (int j = 0; j < s.n_levels; j++) {
        const gx_tlb_stats *l = &s.level[j];
        fprintf(f, "TLB %-4s lookups %llu, hits %llu (%.2f%%), misses %llu\n", s.level_name[j],
                (unsigned long long)l->accesses, (unsigned long long)l->hits,
                pct(l->hits, l->accesses), (unsigned long long)l->misses);
    }
    const gx_walker_stats *w = &s.walker;
    fprintf(f, "walker   %llu walks, %llu page-table reads, mean walk %.1f + queue %.1f cycles\n",
            (unsigned long long)w->walks, (unsigned long long)w->page_table_reads,
            per(w->walk_cycles, w->walks), per(w->queue_cycles, w->walks));
    fprintf(f, "PWC      accesses %llu, hits %llu, insertions %llu; neighbour PWC accesses %llu, "
               "hits %llu, insertions %llu, invalid neighbours skipped %llu\n",
            (unsigned long long)w->pwc_accesses, (unsigned long long)w->pwc_hits,
            (unsigned long long)w->pwc_insertions, (unsigned long long)w->pwc2_accesses,
            (unsigned long long)w->pwc2_hits, (unsigned long long)w->pwc2_insertions,
            (unsigned long long)w->pwc2_invalid_neighbours_skipped);
    const gx_coalescer_stats *c = &s.coalescer;
    fprintf(f, "coalesce %llu requests -> %llu translations; size mispredicted %llu of %llu; "
               "%llu widened groups\n",
            (unsigned long long)c->uncoalesced_accesses,
            (unsigned long long)c->coalesced_accesses,
            (unsigned long long)c->size_mispredictions, (unsigned long long)c->size_predictions,
            (unsigned long long)c->line_coalesce_decisions);
    return ferror(f) ? GX_EIO : GX_OK;
}
