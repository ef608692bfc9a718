#ifndef AF_BUILD_INFO_H
#define AF_BUILD_INFO_H

/* How af was built. install.sh passes these with -Xcc -DAF_BUILD_...="..."; a plain
   `swift build` leaves them unknown. */
#ifndef AF_BUILD_COMMIT
#define AF_BUILD_COMMIT "unknown"
#endif
#ifndef AF_BUILD_DATE
#define AF_BUILD_DATE "unknown"
#endif
#ifndef AF_BUILD_SWIFT
#define AF_BUILD_SWIFT "unknown"
#endif

static inline const char *af_build_commit(void) { return AF_BUILD_COMMIT; }
static inline const char *af_build_date(void) { return AF_BUILD_DATE; }
static inline const char *af_build_swift(void) { return AF_BUILD_SWIFT; }

#endif
