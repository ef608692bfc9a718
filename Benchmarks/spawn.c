/* spawn RESULT-FD COMMAND [ARGS...]: runs COMMAND and writes "STATUS SECONDS MAXRSS-KIB" to
 * RESULT-FD, for Benchmarks/harness.py.
 *
 * Why not Python's own fork and wait4: Linux counts a child's peak RSS from the memory of the
 * process that forked it (the copied address space, or the shared one of a vfork, is what
 * exec replaces), so every command run straight from Python reported at least Python's own
 * ~14 MiB. Forked from this small program, the floor is its ~1 MiB. The wall time is taken
 * here too, from just before fork to just after wait4, so the extra exec of this program is
 * not counted against any tool.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: spawn RESULT-FD COMMAND [ARGS...]\n");
        return 64;
    }
    int result = atoi(argv[1]);
    struct timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    pid_t child = fork();
    if (child < 0) {
        perror("spawn: fork");
        return 71;
    }
    if (child == 0) {
        close(result);
        execvp(argv[2], argv + 2);
        perror("spawn: exec");
        _exit(127);
    }
    int status = 0;
    struct rusage usage;
    if (wait4(child, &status, 0, &usage) < 0) {
        perror("spawn: wait4");
        return 71;
    }
    clock_gettime(CLOCK_MONOTONIC, &end);
    double seconds = (double)(end.tv_sec - start.tv_sec) + (double)(end.tv_nsec - start.tv_nsec) / 1e9;
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    dprintf(result, "%d %.9f %ld\n", code, seconds, usage.ru_maxrss);
    return 0;
}
