/* spawn RESULT-FD COMMAND [ARGS...]: runs COMMAND and writes "STATUS SECONDS MAXRSS-KIB
 * CPU-SECONDS" to RESULT-FD, for Benchmarks/harness.py. CPU-SECONDS is the user and system
 * time of COMMAND and the children it waited for, over every thread (wait4's rusage).
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
    double cpu = (double)(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + (double)(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
    dprintf(result, "%d %.9f %ld %.6f\n", code, seconds, usage.ru_maxrss, cpu);
    return 0;
}
