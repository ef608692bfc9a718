/* tiny-server PORT: an HTTP/1.1 server on 127.0.0.1:PORT that answers every request with
 * 200 and 1,024 bytes, keeping connections open, for the batch scenario of
 * Benchmarks/harness.py. Prints "ready" on standard output once it listens.
 *
 * Why: the test server (Tests/af-test-server) parses each request into Swift strings and
 * records it for the tests, about 35 µs of CPU a request. On a machine of two processors a
 * batch of small GETs against it is bound by CPU, and the server's share decides how much is
 * left for the client: a tool on two threads (af's lanes) competes with the server where one
 * on one thread (curl -Z) does not. Against this one, which costs a few µs a request, the
 * table reads the clients' own costs. It is for measuring, not for tests: one thread, epoll,
 * requests without bodies (a head ends at its blank line; anything after it is taken as the
 * next request).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

enum { maxDescriptors = 65536, bodySize = 1024 };

/* The last four bytes read on each connection, so that a blank line split across two reads
 * still ends a head. */
static uint32_t tails[maxDescriptors];

/* Writes all of `length` bytes (a blocking socket; a short write only when the peer goes). */
static int writeAll(int fd, const char *bytes, size_t length) {
    while (length > 0) {
        ssize_t written = write(fd, bytes, length);
        if (written <= 0) return -1;
        bytes += written;
        length -= (size_t)written;
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: tiny-server PORT\n");
        return 64;
    }
    int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
    setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[1]))};
    inet_pton(AF_INET, "127.0.0.1", &address.sin_addr);
    if (bind(listener, (struct sockaddr *)&address, sizeof address) != 0 || listen(listener, 512) != 0) {
        perror("tiny-server");
        return 1;
    }
    char response[256 + bodySize];
    int headLength = snprintf(response, 256, "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: %d\r\n\r\n", bodySize);
    memset(response + headLength, 'x', bodySize);
    size_t responseLength = (size_t)headLength + bodySize;

    int poller = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event event = {.events = EPOLLIN, .data.fd = listener};
    epoll_ctl(poller, EPOLL_CTL_ADD, listener, &event);
    printf("ready\n");
    fflush(stdout);

    struct epoll_event ready[64];
    char buffer[16384];
    for (;;) {
        int count = epoll_wait(poller, ready, 64, -1);
        for (int index = 0; index < count; index++) {
            int fd = ready[index].data.fd;
            if (fd == listener) {
                int connection = accept4(listener, NULL, NULL, SOCK_CLOEXEC);
                if (connection < 0 || connection >= maxDescriptors) {
                    if (connection >= 0) close(connection);
                    continue;
                }
                setsockopt(connection, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                tails[connection] = 0;
                struct epoll_event added = {.events = EPOLLIN, .data.fd = connection};
                epoll_ctl(poller, EPOLL_CTL_ADD, connection, &added);
                continue;
            }
            ssize_t got = read(fd, buffer, sizeof buffer);
            if (got <= 0) {
                close(fd);
                continue;
            }
            uint32_t tail = tails[fd];
            int heads = 0;
            for (ssize_t at = 0; at < got; at++) {
                tail = (tail << 8) | (uint8_t)buffer[at];
                if (tail == 0x0d0a0d0a) heads++;
            }
            tails[fd] = tail;
            for (int head = 0; head < heads; head++) {
                if (writeAll(fd, response, responseLength) != 0) {
                    close(fd);
                    break;
                }
            }
        }
    }
}
