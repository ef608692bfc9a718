// The process's arguments for Swift's `CommandLine`, without the runtime's stack search.
//
// Swift's runtime finds `argv` on Linux with a static initializer that opens
// /proc/self/maps, formats and scans every mapping of the process (about 180 lines with
// libcurl and OpenSSL loaded) to find the stack, then walks back from `environ`. Measured
// here, that costs 0.24-0.43 ms on every start, in a command that curl runs in 8-15 ms.
//
// glibc hands every initializer in the executable's .init_array the real argc and argv, so
// af keeps them from there and defines the one function the standard library asks for them
// (`_swift_stdlib_getUnsafeArgvArgc`, a Swift-convention function of libswiftCore). In the
// static release build that definition comes before libswiftCore.a's, so the runtime's
// CommandLine object, and its initializer, are not linked at all; where libswiftCore is a
// shared library (debug builds, tests) its own definition serves it and this one is unused.

#include <stddef.h>

static int savedCount;
static char **savedArguments;

static void afSaveArguments(int count, char **arguments, char **environment) {
    (void)environment;
    savedCount = count;
    savedArguments = arguments;
}

__attribute__((section(".init_array"), used))
static void (*const afSaveArgumentsEntry)(int, char **, char **) = afSaveArguments;

__attribute__((swiftcall, visibility("default")))
char **_swift_stdlib_getUnsafeArgvArgc(int *outArgumentCount) {
    static char *none[] = { NULL };
    if (savedArguments == NULL) {
        *outArgumentCount = 0;
        return none;
    }
    *outArgumentCount = savedCount;
    return savedArguments;
}
