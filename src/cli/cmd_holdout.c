/* cmd_holdout.c - TEMPORARY placeholder until the owning module lands; replaced. */
#include "commands.h"
int gx_cmd_holdout(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    gx_cli_error("'holdout' is not built yet");
    return GX_EXIT_FAIL;
}
int gx_cmd_genprofile(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    gx_cli_error("'gen-profile' is not built yet");
    return GX_EXIT_FAIL;
}
