// Standard descriptors af was started without, held open on /dev/null.
//
// A process started with descriptor 0, 1 or 2 closed (`af post URL <&-`, `af batch - <&-`,
// `af get URL >&-`) hands that number to the next descriptor it opens. af's signal pipe
// became its standard input: `af post URL <&-` then waited ten seconds for a body on its
// own pipe and failed, and `af batch - <&-` would read lines from it; a socket or an
// output file could as well become standard output or standard error.
//
// Each closed one is opened on /dev/null the other way round — write-only for standard
// input, read-only for standard output and error — so that no descriptor of af's own can
// take its number, while using it still fails with EBADF, as using a closed descriptor
// does (exit 9 for the output, whose message says it was closed). Standard input held this
// way is a character device, which af never reads as a body, as it never read a closed one.
// Programs af starts (`--auth-cmd`) inherit the same.

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

static void afHoldStandardDescriptors(int count, char **arguments, char **environment) {
    (void)count;
    (void)arguments;
    (void)environment;
    for (int fd = 0; fd <= 2; fd++) {
        if (fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
        // The lowest free number: this one, since those below it are open by now.
        int held = open("/dev/null", fd == 0 ? O_WRONLY : O_RDONLY);
        if (held < 0) return;
        if (held != fd) {
            dup2(held, fd);
            close(held);
        }
    }
}

// Run before main, like the other initializers here; the shared libraries' initializers,
// which run before the executable's, open no descriptor.
__attribute__((section(".init_array"), used))
static void (*const afHoldStandardDescriptorsEntry)(int, char **, char **) = afHoldStandardDescriptors;
