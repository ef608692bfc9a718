#ifndef AF_CXATTR_SHIM_H
#define AF_CXATTR_SHIM_H

/* glibc's extended-attribute calls, which Swift's Glibc module leaves out: a download's
 * `.part` file keeps what a later run needs to resume it safely (PartFileMarks). */

#include <sys/xattr.h>

#endif
