/* cmd_discover.c - TEMPORARY placeholder until the owning module lands; replaced. */
#include "commands.h"
int gx_cmd_discover(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    gx_cli_error("'discover' is not built yet");
    return GX_EXIT_FAIL;
}
