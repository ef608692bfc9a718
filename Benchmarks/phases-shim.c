// Benchmarks/phases-shim.c: loaded into a measured command by Benchmarks/phases.py
// (LD_PRELOAD). It notes when the command first connects to an IPv4 or IPv6 address, first
// sends on a socket and last receives from one, on the same clock as the script's
// (CLOCK_MONOTONIC), and writes those three times to the file PHASES_SHIM_OUT names when the
// command exits. Each wrapped call costs a clock read; no other call is slowed, so a tool
// that makes many more system calls than another is not charged for them.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double first_connect, first_send, last_receive;

static double now(void) {
    struct timespec clock;
    clock_gettime(CLOCK_MONOTONIC, &clock);
    return (double)clock.tv_sec + (double)clock.tv_nsec / 1e9;
}

int connect(int fd, const struct sockaddr *address, socklen_t length) {
    static int (*next)(int, const struct sockaddr *, socklen_t);
    if (!next) next = (int (*)(int, const struct sockaddr *, socklen_t))dlsym(RTLD_NEXT, "connect");
    if (first_connect == 0 && address && (address->sa_family == AF_INET || address->sa_family == AF_INET6)) first_connect = now();
    return next(fd, address, length);
}

ssize_t send(int fd, const void *bytes, size_t count, int flags) {
    static ssize_t (*next)(int, const void *, size_t, int);
    if (!next) next = (ssize_t (*)(int, const void *, size_t, int))dlsym(RTLD_NEXT, "send");
    if (first_send == 0) first_send = now();
    return next(fd, bytes, count, flags);
}

ssize_t sendto(int fd, const void *bytes, size_t count, int flags, const struct sockaddr *address, socklen_t length) {
    static ssize_t (*next)(int, const void *, size_t, int, const struct sockaddr *, socklen_t);
    if (!next) next = (ssize_t (*)(int, const void *, size_t, int, const struct sockaddr *, socklen_t))dlsym(RTLD_NEXT, "sendto");
    if (first_send == 0) first_send = now();
    return next(fd, bytes, count, flags, address, length);
}

ssize_t recv(int fd, void *bytes, size_t count, int flags) {
    static ssize_t (*next)(int, void *, size_t, int);
    if (!next) next = (ssize_t (*)(int, void *, size_t, int))dlsym(RTLD_NEXT, "recv");
    ssize_t received = next(fd, bytes, count, flags);
    if (received > 0) last_receive = now();
    return received;
}

ssize_t recvfrom(int fd, void *bytes, size_t count, int flags, struct sockaddr *address, socklen_t *length) {
    static ssize_t (*next)(int, void *, size_t, int, struct sockaddr *, socklen_t *);
    if (!next) next = (ssize_t (*)(int, void *, size_t, int, struct sockaddr *, socklen_t *))dlsym(RTLD_NEXT, "recvfrom");
    ssize_t received = next(fd, bytes, count, flags, address, length);
    if (received > 0) last_receive = now();
    return received;
}

static void report(void) {
    const char *path = getenv("PHASES_SHIM_OUT");
    if (!path) return;
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) return;
    char line[96];
    int length = snprintf(line, sizeof line, "%.6f %.6f %.6f\n", first_connect, first_send, last_receive);
    if (length > 0) (void)!write(fd, line, (size_t)length);
    close(fd);
}

__attribute__((constructor)) static void start(void) { atexit(report); }
