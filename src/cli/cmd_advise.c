/* cmd_advise.c - `gpuxray advise`: layout advice from a profile's model.
 *   advise --profile P.json --array rows=R,cols=C,elem=B[,pitch=P]
 *          --pattern row|col|tile:HxW [--sms N] [--max-pad E] [--json]
 *   advise --profile P.json --trace FILE [--sms N] [--json]
 *   advise persist --bytes N [--profile P.json]
 * (src/report/advise*.c); `advise --smem-tile ...` is the shared-memory
 * form (cmd_advise_smem.c). Exit 0 ok, 2 bad usage or input. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "gpuxray/advise.h"
#include "gpuxray/profile.h"

#define ADV_DEFAULT_MAX_PAD_BYTES 256u   /* pads up to two 128 B lines */
#define ADV_SEARCH_LANES (1ULL << 18)    /* lane accesses per padding candidate */
#define ADV_EVAL_LANES (1ULL << 24)      /* lane accesses for the before / after figures */
/* Padding is advised when it cuts the per-wave slice imbalance by this
 * factor: smaller predicted gains sit within what the model does not see
 * (DRAM, TLB, alignment); on the H200 such pads measured 12-18% slower
 * (docs/advise-h200.md). */
#define ADV_FLAG_GAIN 1.5

static void usage(FILE *f)
{
    fprintf(f, "usage: gpuxray advise --profile P.json --array rows=R,cols=C,elem=B[,pitch=P]\n"
               "                      --pattern row|col|tile:HxW [--sms N] [--max-pad E] [--json]\n"
               "       gpuxray advise --profile P.json --trace FILE [--sms N] [--json]\n"
               "       gpuxray advise persist --bytes N [--profile P.json]\n"
               "       gpuxray advise --profile P.json --smem-tile HxW,elem=B[,...] (shared memory)\n");
}

static void print_result(const char *title, const gx_adv_result *r, FILE *o)
{
    fprintf(o, "%s\n", title);
    fprintf(o, "  warp instructions %llu, lane accesses %llu, sector requests %llu%s\n",
            (unsigned long long)r->warp_insts, (unsigned long long)r->lanes,
            (unsigned long long)r->sectors, r->complete ? "" : " (a prefix: --max-lanes)");
    fprintf(o, "  sector efficiency %.1f%% (%.0f useful of %.0f bytes moved)\n",
            100 * r->sector_efficiency, r->useful_bytes, r->moved_bytes);
    fprintf(o, "  slices %u: busiest / expected %.2f over the run; per wave of %u warp "
               "instructions busiest / expected %.2f (worst %.2f; random addresses %.2f)\n",
            r->slices, r->slice_max_mean, r->sms, r->wave_slice_imbalance,
            r->worst_wave_slice_imbalance, r->random_wave_slice_imbalance);
    fprintf(o, "  partitions %u: busiest / expected %.2f over the run, %.2f per wave\n", r->partitions,
            r->partition_max_mean, r->wave_partition_imbalance);
    if (r->have_sets)
        fprintf(o, "  sets: %llu distinct lines over %llu (slice, set) pairs, at most %u in one "
                   "(ways %u), %llu sets over their ways\n",
                (unsigned long long)r->lines, (unsigned long long)r->set_count, r->set_lines_max,
                r->ways, (unsigned long long)r->sets_over_ways);
    else
        fprintf(o, "  sets: the profile has no l2.hash.set (set conflicts not predicted)\n");
}

static void json_result(const char *key, const gx_adv_result *r, FILE *o, int last)
{
    fprintf(o, "  \"%s\": {\"warp_insts\": %llu, \"lanes\": %llu, \"sectors\": %llu, "
               "\"sector_efficiency\": %.6f, \"slices\": %u, \"slice_max_mean\": %.6f, "
               "\"wave_slice_imbalance\": %.6f, \"worst_wave_slice_imbalance\": %.6f, "
               "\"random_wave_slice_imbalance\": %.6f, "
               "\"partitions\": %u, \"partition_max_mean\": %.6f, \"wave_partition_imbalance\": "
               "%.6f, \"sets_over_ways\": %llu, \"set_lines_max\": %u, \"complete\": %s}%s\n",
            key, (unsigned long long)r->warp_insts, (unsigned long long)r->lanes,
            (unsigned long long)r->sectors, isfinite(r->sector_efficiency) ? r->sector_efficiency : 0,
            r->slices, isfinite(r->slice_max_mean) ? r->slice_max_mean : 0,
            isfinite(r->wave_slice_imbalance) ? r->wave_slice_imbalance : 0,
            isfinite(r->worst_wave_slice_imbalance) ? r->worst_wave_slice_imbalance : 0,
            isfinite(r->random_wave_slice_imbalance) ? r->random_wave_slice_imbalance : 0,
            r->partitions, isfinite(r->partition_max_mean) ? r->partition_max_mean : 0,
            isfinite(r->wave_partition_imbalance) ? r->wave_partition_imbalance : 0,
            (unsigned long long)r->sets_over_ways, r->set_lines_max, r->complete ? "true" : "false",
            last ? "" : ",");
}

static int persist(int argc, char **argv)
{
    const char *prof = NULL;
    unsigned long long bytes = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--bytes") && i + 1 < argc) {
            if (gx_parse_size(argv[++i], &bytes) != 0 || !bytes) {
                gx_cli_error("advise persist: bad --bytes '%s'", argv[i]);
                return GX_EXIT_USAGE;
            }
        } else if (!strcmp(argv[i], "--profile") && i + 1 < argc) {
            prof = argv[++i];
        } else {
            usage(stderr);
            return GX_EXIT_USAGE;
        }
    }
    if (!bytes) {
        usage(stderr);
        return GX_EXIT_USAGE;
    }
    if (gx_cli_parse_only)
        return GX_EXIT_OK;
    gx_msg msg;
    gx_profile *p = NULL;
    gx_persist r = {0, 0, bytes, 0};
    if (prof) {
        int ec = gx_cli_load_profile(prof, &p);
        if (ec != GX_EXIT_OK)
            return ec;
        int rc = gx_advise_persist(p, bytes, &r, &msg);
        gx_profile_free(p);
        if (rc != GX_OK) {
            gx_cli_error("%s", msg.text);
            return gx_exit_code(rc);
        }
    }
    if (!r.known) {
        printf("persisting carve-out: unknown (%s). Measure it first: the largest footprint that "
               "stays L2-resident under a persisting access window while another kernel streams "
               "through L2, with cudaLimitPersistingL2CacheSize at its maximum; record it as "
               "l2.persisting_carveout_bytes.\nUntil then the snippet takes the API's claim "
               "(persistingL2CacheMaxSize), not a measurement:\n\n",
               prof ? "the profile has no l2.persisting_carveout_bytes" : "no --profile");
    } else {
        printf("persisting carve-out %llu bytes (measured), window %llu bytes: hitRatio %.4f "
               "(%s)\n\n",
               (unsigned long long)r.carveout_bytes, bytes, r.hit_ratio,
               r.hit_ratio >= 1 ? "the window fits" : "carve-out / window: lines beyond it stream");
    }
    printf("cudaDeviceProp prop;\ncudaGetDeviceProperties(&prop, 0);\n");
    if (r.known)
        printf("size_t carveout = %lluULL;  /* measured */\n", (unsigned long long)r.carveout_bytes);
    else
        printf("size_t carveout = prop.persistingL2CacheMaxSize;  /* API claim: measure it */\n");
    char hr[160];
    if (r.known)
        snprintf(hr, sizeof hr, "%.4ff", r.hit_ratio);
    else
        snprintf(hr, sizeof hr, "carveout >= %lluULL ? 1.0f : (float)carveout / %lluULL",
                 bytes, bytes);
    printf("cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, carveout);\n"
           "cudaStreamAttrValue attr = {};\n"
           "attr.accessPolicyWindow.base_ptr = (void *)ptr;       /* your buffer */\n"
           "attr.accessPolicyWindow.num_bytes = %lluULL;\n"
           "attr.accessPolicyWindow.hitRatio = %s;\n"
           "attr.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;\n"
           "attr.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;\n"
           "cudaStreamSetAttribute(stream, cudaStreamAttributeAccessPolicyWindow, &attr);\n",
           bytes, hr);
    return GX_EXIT_OK;
}

static int parse_u32(const char *opt, const char *s, uint32_t *out)
{
    unsigned long long v;
    if (gx_parse_count(s, &v) != 0 || v > 1000000) {
        gx_cli_error("advise: bad %s '%s'", opt, s);
        return -1;
    }
    *out = (uint32_t)v;
    return 0;
}

static int array_advice(const gx_profile *p, gx_adv_cfg *c, uint32_t max_pad, int json)
{
    gx_msg msg;
    gx_adv_result before, after;
    uint32_t pad = 0;
    c->max_lanes = ADV_EVAL_LANES;
    int rc = gx_advise_padding(p, c, max_pad, ADV_SEARCH_LANES, &pad, &before, &after, &msg);
    if (rc != GX_OK) {
        gx_cli_error("%s", msg.text);
        return gx_exit_code(rc);
    }
    uint64_t pitch = c->pitch ? c->pitch : c->cols;
    double gain = after.wave_slice_imbalance > 0
                      ? before.wave_slice_imbalance / after.wave_slice_imbalance
                      : 1.0;
    int flagged = pad > 0 && (gain >= ADV_FLAG_GAIN ||
                              (before.have_sets && after.sets_over_ways < before.sets_over_ways));
    if (json) {
        printf("{\n  \"pitch\": %llu, \"best_pad\": %u, \"predicted_gain\": %.4f, "
               "\"flagged\": %s,\n",
               (unsigned long long)pitch, pad, gain, flagged ? "true" : "false");
        json_result("before", &before, stdout, 0);
        json_result("after", &after, stdout, 0);
        printf("  \"assumption\": \"%s\"\n}\n", before.assumption);
        return GX_EXIT_OK;
    }
    char title[160];
    snprintf(title, sizeof title, "layout: pitch %llu elements (%llu bytes)",
             (unsigned long long)pitch, (unsigned long long)pitch * c->elem_bytes);
    print_result(title, &before, stdout);
    if (!flagged) {
        if (pad == 0)
            printf("advice: keep the pitch: no padding up to %u elements spreads the load better\n",
                   max_pad);
        else
            printf("advice: keep the pitch: the best pad (%u elements) cuts the per-wave slice "
                   "imbalance only %.2fx (%.2f -> %.2f), below the %.1fx at which padding pays\n",
                   pad, gain, before.wave_slice_imbalance, after.wave_slice_imbalance,
                   ADV_FLAG_GAIN);
    } else {
        snprintf(title, sizeof title, "advice: pad each row by %u element%s (pitch %llu = %llu bytes)",
                 pad, pad > 1 ? "s" : "", (unsigned long long)(pitch + pad),
                 (unsigned long long)(pitch + pad) * c->elem_bytes);
        print_result(title, &after, stdout);
        printf("predicted change: per-wave slice imbalance %.2f -> %.2f (%.2fx), partition %.2f "
               "-> %.2f, sets over their ways %llu -> %llu\n",
               before.wave_slice_imbalance, after.wave_slice_imbalance, gain,
               before.wave_partition_imbalance, after.wave_partition_imbalance,
               (unsigned long long)before.sets_over_ways, (unsigned long long)after.sets_over_ways);
    }
    printf("assumed: %s\n", before.assumption);
    return GX_EXIT_OK;
}

int gx_cmd_advise(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "persist"))
        return persist(argc - 1, argv + 1);
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--smem-tile"))
            return gx_cmd_advise_smem(argc, argv); /* the shared-memory form */
    const char *prof = NULL, *array = NULL, *pattern = NULL, *trace = NULL;
    uint32_t sms = 0, max_pad = 0;
    int json = 0, have_pad = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int has = i + 1 < argc;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return GX_EXIT_OK;
        } else if (!strcmp(a, "--profile") && has) {
            prof = argv[++i];
        } else if (!strcmp(a, "--array") && has) {
            array = argv[++i];
        } else if (!strcmp(a, "--pattern") && has) {
            pattern = argv[++i];
        } else if (!strcmp(a, "--trace") && has) {
            trace = argv[++i];
        } else if (!strcmp(a, "--sms") && has) {
            if (parse_u32(a, argv[++i], &sms) != 0)
                return GX_EXIT_USAGE;
        } else if (!strcmp(a, "--max-pad") && has) {
            if (parse_u32(a, argv[++i], &max_pad) != 0)
                return GX_EXIT_USAGE;
            have_pad = 1;
        } else if (!strcmp(a, "--json")) {
            json = 1;
        } else {
            gx_cli_error("advise: unknown or incomplete option '%s'", a);
            usage(stderr);
            return GX_EXIT_USAGE;
        }
    }
    if (!prof || (!!trace == !!array) || (array && !pattern)) {
        gx_cli_error("advise: need --profile and either --array with --pattern, or --trace");
        usage(stderr);
        return GX_EXIT_USAGE;
    }
    gx_msg msg;
    gx_adv_cfg c;
    memset(&c, 0, sizeof c);
    c.sms = sms;
    if (array && (gx_adv_parse_array(array, &c, &msg) != GX_OK ||
                  gx_adv_parse_pattern(pattern, &c, &msg) != GX_OK)) {
        gx_cli_error("%s", msg.text);
        return GX_EXIT_USAGE;
    }
    if (gx_cli_parse_only)
        return GX_EXIT_OK;
    gx_profile *p = NULL;
    int ec = gx_cli_load_profile(prof, &p);
    if (ec != GX_EXIT_OK)
        return ec;
    int rc;
    if (array) {
        if (!have_pad)
            max_pad = ADV_DEFAULT_MAX_PAD_BYTES / c.elem_bytes;
        ec = array_advice(p, &c, max_pad, json);
    } else {
        gx_adv_result r;
        rc = gx_advise_trace(p, trace, sms, 0, &r, &msg);
        if (rc != GX_OK) {
            gx_cli_error("%s", msg.text);
            ec = gx_exit_code(rc);
        } else if (json) {
            printf("{\n");
            json_result("trace", &r, stdout, 0);
            printf("  \"assumption\": \"%s\"\n}\n", r.assumption);
            ec = GX_EXIT_OK;
        } else {
            print_result(trace, &r, stdout);
            printf("assumed: %s\n", r.assumption);
            ec = GX_EXIT_OK;
        }
    }
    gx_profile_free(p);
    return ec;
}
