/* placement.h - virtual-to-physical placement of pages: each virtual page
 * gets a physical frame chosen by a seeded random placement on first touch,
 * so hash bits above the page are no more visible than on a real GPU.
 * Frames are unique within a physical space of phys_bytes. */
#ifndef GPUXRAY_PLACEMENT_H
#define GPUXRAY_PLACEMENT_H

#include <stdint.h>

#include "gpuxray/error.h"

typedef struct gx_placement gx_placement;

int gx_placement_new(uint64_t page_bytes, uint64_t phys_bytes, uint64_t seed,
                     gx_placement **out, gx_msg *msg);
void gx_placement_free(gx_placement *pl);
/* Physical address of a virtual address (assigns a frame on first touch). */
uint64_t gx_placement_translate(gx_placement *pl, uint64_t va);
/* Pages mapped so far and frames available: pages > frames means some
 * pages share a frame (the placement reuses frames once all are taken). */
void gx_placement_usage(const gx_placement *pl, uint64_t *pages, uint64_t *frames);
/* Forget every mapping (the next touches get fresh frames). */
void gx_placement_reset(gx_placement *pl, uint64_t seed);
/* on: consecutive virtual pages get consecutive frames (from a seeded
 * start, redrawn at each reset) instead of a random frame each; call before
 * the first translation. off (the default) leaves every frame as before. */
void gx_placement_set_contiguous(gx_placement *pl, int on);

#endif
