/* cmd_advise_smem.c - `gpuxray advise --smem-tile HxW,elem=B[,read=row|col|both][,pad=N]
 * --profile P.json [--json]`: the bank conflicts of a shared-memory tile's
 * reads under the profile's smem section and the row padding that removes
 * them, with the cycles saved (src/model/smem/smem_tile.c does the work).
 * Exit 0 ok, 2 bad usage or input (a profile without a runnable smem
 * section included: the advice would rest on a guess). */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "gpuxray/profile.h"
#include "gpuxray/smem.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: gpuxray advise --smem-tile HxW,elem=B[,read=row|col|both][,pad=N] "
               "--profile P.json [--json]\n");
}

int gx_cmd_advise_smem(int argc, char **argv)
{
    const char *prof = NULL, *spec = NULL;
    int json = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--smem-tile") && i + 1 < argc) {
            spec = argv[++i];
        } else if (!strcmp(argv[i], "--profile") && i + 1 < argc) {
            prof = argv[++i];
        } else if (!strcmp(argv[i], "--json")) {
            json = 1;
        } else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout);
            return GX_EXIT_OK;
        } else {
            gx_cli_error("advise: unknown or incomplete argument '%s' with --smem-tile", argv[i]);
            usage(stderr);
            return GX_EXIT_USAGE;
        }
    }
    if (!spec || !prof) {
        gx_cli_error("advise: --smem-tile needs --profile P.json");
        usage(stderr);
        return GX_EXIT_USAGE;
    }
    gx_msg m;
    gx_msg_clear(&m);
    gx_smem_tile t;
    if (gx_smem_tile_parse(spec, &t, &m) != GX_OK) {
        gx_cli_error("advise: %s", m.text);
        return GX_EXIT_USAGE;
    }
    if (gx_cli_parse_only)
        return GX_EXIT_OK;
    gx_profile *p = NULL;
    int ec = gx_cli_load_profile(prof, &p);
    if (ec != GX_EXIT_OK)
        return ec;
    gx_smem_cfg c;
    int rc = gx_smem_cfg_from_profile(p, &c, &m);
    if (rc == GX_OK && !c.present)
        rc = gx_fail(&m, GX_ECONFIG, "%s has no smem section (gpuxray discover --only smem)", prof);
    if (rc == GX_OK)
        rc = gx_smem_cfg_validate(&c, 1, &m);
    gx_smem_tile_advice a;
    if (rc == GX_OK)
        rc = gx_smem_tile_advise(&c, &t, &a, &m);
    gx_profile_free(p);
    if (rc != GX_OK) {
        gx_cli_error("advise: %s: %s", prof, m.text);
        return GX_EXIT_USAGE;
    }
    if (json) {
        rc = gx_smem_tile_write_json(&a, stdout);
        fputc('\n', stdout);
    } else {
        rc = gx_smem_tile_write_text(&c, &a, stdout);
    }
    if (rc != GX_OK || fflush(stdout) != 0) {
        gx_cli_error("advise: write error on standard output");
        return GX_EXIT_FAIL;
    }
    return GX_EXIT_OK;
}
