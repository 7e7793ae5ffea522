/* cmd_validate.c - `gpuxray validate FILE...`: load and validate profiles.
 * Prints "FILE: ok" per valid file, or the error (file, line and column or
 * field and rule) on stderr; exit 2 when any file fails. */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "gpuxray/profile.h"

int gx_cmd_validate(int argc, char **argv)
{
    int n_files = 0, failed = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            printf("usage: gpuxray validate PROFILE.json ...\n"
                   "  loads and checks every rule of each profile (docs/profile-format.md);\n"
                   "  prints FILE: ok, or the error naming the file and the field or line\n"
                   "exit: 0 every file valid; 2 any file invalid or unreadable, bad usage\n");
            return GX_EXIT_OK;
        }
    }
    if (gx_cli_parse_only)
        return argc > 1 ? GX_EXIT_OK : GX_EXIT_USAGE;
    for (int i = 1; i < argc; i++) {
        gx_profile *p = NULL;
        gx_msg m;
        gx_msg_clear(&m);
        n_files++;
        int rc = gx_profile_load(argv[i], &p, &m);
        if (rc == GX_OK) {
            printf("%s: ok\n", argv[i]);
            gx_profile_free(p);
        } else {
            gx_cli_error("%s", m.text);
            failed++;
        }
    }
    if (n_files == 0) {
        gx_cli_error("validate: no files given (usage: gpuxray validate PROFILE.json ...)");
        return GX_EXIT_USAGE;
    }
    return failed ? GX_EXIT_USAGE : GX_EXIT_OK;
}
