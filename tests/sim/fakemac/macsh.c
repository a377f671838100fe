/* SPDX-License-Identifier: MIT */
/* macsh.c - /bin/sh of a simulated stock Mac.
 *
 * A Mac's /bin/sh is bash in POSIX mode, whose echo follows XPG (escapes
 * expanded, `echo -n x` prints "-n x"). Debian's bash does the same when it
 * is started as sh with the xpg_echo option, which is all this does: exec
 * BASH with the same argv[0] (so bash sees it is sh: POSIX mode, sh's
 * start-up files) and `-O xpg_echo` after any leading long options (bash
 * takes those first), then the caller's arguments.
 *
 * Build: cc -O2 -DBASH='"/usr/bin/bash"' -o macsh macsh.c   (simcluster.sh up)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef BASH
#define BASH "/bin/bash"
#endif

int main(int argc, char **argv)
{
    char **v = calloc((size_t)argc + 3, sizeof *v);
    int i = 1, n = 0;

    if (!v) {
        perror("sh");
        return 126;
    }
    v[n++] = argv[0];
    for (; i < argc && strncmp(argv[i], "--", 2) == 0 && argv[i][2] != '\0'; i++)
        v[n++] = argv[i];
    v[n++] = "-O";
    v[n++] = "xpg_echo";
    for (; i < argc; i++)
        v[n++] = argv[i];
    v[n] = NULL;
    execv(BASH, v);
    perror("sh: " BASH);
    return 126;
}
