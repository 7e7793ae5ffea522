/* adv_int.h - the advisor's accumulator, shared by the engine (advise.c)
 * and its drivers (advise_patterns.c: arrays, padding, traces, persist). */
#ifndef GPUXRAY_ADV_INT_H
#define GPUXRAY_ADV_INT_H

#include <stdint.h>

#include "gpuxray/advise.h"
#include "gpuxray/placement.h"

#define ADV_MAX_LANES 32 /* lanes of a warp instruction */

typedef struct adv_state {
    const gx_profile *p;
    gx_placement *pl;   /* NULL: addresses used as physical (hash below the page) */
    uint32_t line, sector, slices, parts, sets, ways, sms;
    uint64_t *slice_n, *wave_n, *part_n, *wpart_n;
    double *slice_w, *part_w; /* share of the address space each slice / partition gets */
    uint32_t *set_lines;
    uint64_t *tab, tab_cap, tab_n;
    int tab_full, stopped;
    uint64_t warp_insts, lanes, sectors, waves, wave_sectors;
    uint32_t in_wave;
    double useful, moved, imb_sum, pimb_sum, imb_worst;
    char assumption[200];
} adv_state;

int adv_init(adv_state *s, const gx_profile *p, uint32_t sms, gx_msg *msg);
void adv_free(adv_state *s);
/* One warp instruction: n lanes' byte addresses and sizes (n <= 32). */
void adv_warp(adv_state *s, const uint64_t *addr, const uint32_t *size, uint32_t n);
void adv_finish(adv_state *s, gx_adv_result *r);

#endif
