#ifndef AF_CSPAWN_SHIM_H
#define AF_CSPAWN_SHIM_H

/* glibc (2.34 and later) declares this only for _GNU_SOURCE or _DEFAULT_SOURCE builds, which
 * Swift's Glibc module is not: the same declaration, for af's command runner, which starts a
 * command with none of af's own descriptors. */

#include <spawn.h>

extern int posix_spawn_file_actions_addclosefrom_np(posix_spawn_file_actions_t *actions, int from);

#endif
