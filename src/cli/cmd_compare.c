/* cmd_compare.c - TEMPORARY placeholder until the owning module lands; replaced. */
#include "commands.h"
int gx_cmd_compare(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    gx_cli_error("'compare' is not built yet");
    return GX_EXIT_FAIL;
}
