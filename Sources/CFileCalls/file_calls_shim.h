#ifndef AF_CFILECALLS_SHIM_H
#define AF_CFILECALLS_SHIM_H

/* File calls that Swift's Glibc module leaves out.
 *
 * Extended attributes: a download's `.part` file keeps what a later run needs to resume it
 * safely (PartFileMarks).
 *
 * A rename that never replaces (renameat2 with RENAME_NOREPLACE), for saving a download
 * where the file system makes no hard links (FileCalls.place). Through
 * syscall(2): glibc declares renameat2 only for _GNU_SOURCE, and only from 2.28.
 *
 * The type of the file system a path is on (statfs), to tell files made as they are read
 * (sysfs, procfs), whose size says nothing of their contents (FileInfo). */

#include <errno.h>
#include <fcntl.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

/* 0, or -1 with errno set: EEXIST when `to` exists, EINVAL (or ENOSYS on kernels before
 * 3.15) when the file system does not support the flag. */
static inline int af_rename_noreplace(const char *from, const char *to) {
#ifdef SYS_renameat2
    return (int)syscall(SYS_renameat2, AT_FDCWD, from, AT_FDCWD, to, 1u /* RENAME_NOREPLACE */);
#else
    errno = ENOSYS;
    return -1;
#endif
}

/* The file system's magic number (f_type, as <linux/magic.h> lists them), or -1 with errno
 * set. */
static inline long af_file_system_type(const char *path) {
    struct statfs info;
    if (statfs(path, &info) != 0) return -1;
    return (long)info.f_type;
}

#endif
