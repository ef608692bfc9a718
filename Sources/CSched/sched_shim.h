#ifndef AF_CSCHED_SHIM_H
#define AF_CSCHED_SHIM_H

/* glibc declares sched_getaffinity only for _GNU_SOURCE builds, which Swift's Glibc module is
 * not (cpu_set_t itself is declared either way): the same declaration, for af batch, which
 * asks how many processors it may run on. */

#include <sched.h>

extern int sched_getaffinity(__pid_t pid, size_t cpusetsize, cpu_set_t *cpuset);

#endif
