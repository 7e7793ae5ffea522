/* cmd_sim.c - TEMPORARY placeholder until the owning module lands; replaced. */
#include "commands.h"
int gx_cmd_sim(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    gx_cli_error("'sim' is not built yet");
    return GX_EXIT_FAIL;
}
