/*
 * ssefloor: the least an SSE fan-out server can do, as a ceiling to measure real servers against.
 * One thread, one epoll loop, loopback only. GET /sub… opens a stream; POST /pub… publishes its body
 * as one event (`data: BODY\n\n`) and is answered 204. Each turn of the loop frames what was published
 * in it once and hands it to every stream with one write, then answers the publishers: no per-event
 * allocation, no per-subscriber framing, no chunked coding, no history.
 *
 *   cc -O2 -o ssefloor ssefloor.c
 *   ssefloor -p PORT [-t SECONDS]      (exits after SECONDS, default 600, so that it cannot linger)
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define REQUEST_CAP 70000          /* headers plus a body of up to 64 KiB */
#define BACKLOG_CAP (8 << 20)      /* a stream further behind than this is closed */

typedef struct {
    char *in;  size_t in_len;      /* request bytes not yet handled */
    char *out; size_t out_len;     /* bytes owed to the client */
    int streaming, awaiting_reply, open;
} connection;

static connection *conns;          /* indexed by file descriptor */
static int max_fd, epoll_fd;
static char *frames;               /* what this turn published, already framed */
static size_t frames_len, frames_cap;
static int *waiting;               /* publishers to answer after this turn's write */
static int waiting_count;

static void watch(int fd, uint32_t events, int op) {
    struct epoll_event e = {.events = events, .data.fd = fd};
    epoll_ctl(epoll_fd, op, fd, &e);
}

static void close_connection(int fd) {
    connection *c = &conns[fd];
    free(c->in);
    free(c->out);
    memset(c, 0, sizeof *c);
    close(fd);
}

/* Sends what it can now and keeps the rest, watching for room when some is left. */
static void send_or_keep(int fd, const char *p, size_t n) {
    connection *c = &conns[fd];
    if (!c->out_len) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno != EAGAIN) { close_connection(fd); return; }
        if (w > 0) p += w, n -= (size_t)w;
        if (!n) return;
        watch(fd, EPOLLIN | EPOLLOUT, EPOLL_CTL_MOD);
    }
    if (c->out_len + n > BACKLOG_CAP) { close_connection(fd); return; }
    c->out = realloc(c->out, c->out_len + n);
    memcpy(c->out + c->out_len, p, n);
    c->out_len += n;
}

static void flush_backlog(int fd) {
    connection *c = &conns[fd];
    ssize_t w = send(fd, c->out, c->out_len, MSG_NOSIGNAL);
    if (w < 0) { if (errno != EAGAIN) close_connection(fd); return; }
    memmove(c->out, c->out + w, c->out_len - (size_t)w);
    c->out_len -= (size_t)w;
    if (!c->out_len) watch(fd, EPOLLIN, EPOLL_CTL_MOD);
}

static void publish(const char *body, size_t n) {
    size_t need = frames_len + n + 8;
    if (need > frames_cap) frames = realloc(frames, frames_cap = need * 2);
    memcpy(frames + frames_len, "data: ", 6);
    for (size_t i = 0; i < n; i++) frames[frames_len + 6 + i] = body[i] == '\n' ? ' ' : body[i];
    memcpy(frames + frames_len + 6 + n, "\n\n", 2);
    frames_len += n + 8;
}

/* Handles every complete request in the connection's input; a stream's later input is ignored. */
static void handle_requests(int fd) {
    connection *c = &conns[fd];
    while (c->open && !c->streaming && !c->awaiting_reply) {
        char *end = memmem(c->in, c->in_len, "\r\n\r\n", 4);
        if (!end) { if (c->in_len >= REQUEST_CAP) close_connection(fd); return; }
        size_t head = (size_t)(end + 4 - c->in), length = 0;
        char *cl = strcasestr(c->in, "\r\ncontent-length:");
        if (cl && cl < end) length = strtoul(cl + 17, NULL, 10);
        if (head + length > REQUEST_CAP) { close_connection(fd); return; }
        if (c->in_len < head + length) return;
        if (!strncmp(c->in, "GET /sub", 8)) {
            static const char answer[] = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                                         "Cache-Control: no-cache\r\nConnection: close\r\n\r\n";
            c->streaming = 1;
            send_or_keep(fd, answer, sizeof answer - 1);
        } else if (!strncmp(c->in, "POST /pub", 9)) {
            publish(c->in + head, length);
            c->awaiting_reply = 1;
            waiting[waiting_count++] = fd;
        } else {
            static const char answer[] = "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n";
            send_or_keep(fd, answer, sizeof answer - 1);
        }
        if (!conns[fd].open) return;
        memmove(c->in, c->in + head + length, c->in_len - head - length);
        c->in_len -= head + length;
    }
}

static void on_readable(int fd) {
    connection *c = &conns[fd];
    char buf[65536];
    ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n == 0 || (n < 0 && errno != EAGAIN)) { close_connection(fd); return; }
    if (n < 0 || c->streaming) return;
    if (c->in_len + (size_t)n > REQUEST_CAP) { close_connection(fd); return; }
    memcpy(c->in + c->in_len, buf, (size_t)n);
    c->in_len += (size_t)n;
    handle_requests(fd);
}

/* The end of a turn: one write of everything published in it to each stream, then the 204s. */
static void end_turn(void) {
    if (frames_len)
        for (int fd = 0; fd <= max_fd; fd++)
            if (conns[fd].open && conns[fd].streaming) send_or_keep(fd, frames, frames_len);
    frames_len = 0;
    static const char answer[] = "HTTP/1.1 204 No Content\r\n\r\n";
    for (int i = 0; i < waiting_count; i++) {
        int fd = waiting[i];
        if (!conns[fd].open) continue;
        conns[fd].awaiting_reply = 0;
        send_or_keep(fd, answer, sizeof answer - 1);
        if (conns[fd].open) handle_requests(fd);  /* a pipelined next request */
    }
    waiting_count = 0;
}

int main(int argc, char **argv) {
    int port = 0, seconds = 600;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "-p")) port = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "-t")) seconds = atoi(argv[i + 1]);
    }
    if (port <= 0 || port > 65535) { fprintf(stderr, "usage: ssefloor -p PORT [-t SECONDS]\n"); return 2; }
    signal(SIGPIPE, SIG_IGN);
    int listener = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0), one = 1;
    setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(listener, (struct sockaddr *)&a, sizeof a) < 0 || listen(listener, 8192) < 0) { perror("ssefloor"); return 1; }
    long limit = sysconf(_SC_OPEN_MAX);
    conns = calloc((size_t)limit, sizeof *conns);
    waiting = calloc((size_t)limit, sizeof *waiting);
    epoll_fd = epoll_create1(0);
    watch(listener, EPOLLIN, EPOLL_CTL_ADD);
    time_t stop = time(NULL) + seconds;
    struct epoll_event events[1024];
    while (time(NULL) < stop) {
        int n = epoll_wait(epoll_fd, events, 1024, 1000);
        for (int i = 0; i < n; i++) {
            int fd = events[i].data.fd;
            if (fd == listener) {
                int client;
                while ((client = accept4(listener, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
                    if (client >= limit) { close(client); continue; }
                    setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                    conns[client] = (connection){.in = malloc(REQUEST_CAP), .open = 1};
                    if (client > max_fd) max_fd = client;
                    watch(client, EPOLLIN, EPOLL_CTL_ADD);
                }
                continue;
            }
            if (!conns[fd].open) continue;
            if (events[i].events & (EPOLLERR | EPOLLHUP)) { close_connection(fd); continue; }
            if (events[i].events & EPOLLOUT) flush_backlog(fd);
            if (conns[fd].open && (events[i].events & EPOLLIN)) on_readable(fd);
        }
        end_turn();
    }
    return 0;
}
