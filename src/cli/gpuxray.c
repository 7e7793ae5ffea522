/* gpuxray.c - main(): temporary files are removed on SIGINT / SIGTERM /
 * SIGHUP (outfile.h), then the command line runs (main.c). Kept apart so
 * the fuzzers link every command without this main(). */
#include "commands.h"

int main(int argc, char **argv)
{
    gx_out_install_signal_cleanup();
    return gx_cli_main(argc, argv);
}
