// How glibc's allocator gives memory back, set before anything allocates.
//
// libcurl allocates a transfer's receive buffer (af asks for 256 KiB) when the transfer
// starts and frees it when it ends, so af batch allocates and frees one such block per
// request. glibc serves it from the top of the heap; freed, the top grows past the trim
// threshold and glibc returns all but 128 KiB of it to the kernel, and the next request's
// buffer takes the heap up again, page faults and all. A 3,000-line batch took 2,300-4,000
// page faults against curl's 800.
//
// Keeping 4 MiB at the top when trimming (M_TOP_PAD) ends that cycle: 900 page faults, and
// 3-8 % less CPU for a batch (Benchmarks/README.md). It costs nothing where nothing is
// freed, and at most 4 MiB of memory already touched where something is. A user's own
// MALLOC_TOP_PAD_ or GLIBC_TUNABLES setting is left alone.
//
// Setting M_TOP_PAD also stops glibc from raising its mmap threshold (128 KiB) after the
// first large block is freed, as it otherwise does. Then whenever the heap's top happens to
// be too small, the 256 KiB buffer is mapped and unmapped by itself, page faults and all: a
// 500-line batch did that 48 times once its plans were kept in memory. The threshold is set
// to 1 MiB instead, where glibc's own adjustment would have taken it for these buffers;
// larger blocks (big bodies held in memory) are still mapped and given back when freed.

#include <malloc.h>
#include <stdlib.h>

static void afTuneAllocator(int count, char **arguments, char **environment) {
    (void)count;
    (void)arguments;
    (void)environment;
    if (getenv("MALLOC_TOP_PAD_") != NULL || getenv("GLIBC_TUNABLES") != NULL) return;
    mallopt(M_TOP_PAD, 4 << 20);
    mallopt(M_MMAP_THRESHOLD, 1 << 20);
}

__attribute__((section(".init_array"), used))
static void (*const afTuneAllocatorEntry)(int, char **, char **) = afTuneAllocator;
