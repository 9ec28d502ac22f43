/*
 * sseload: LiveBind's load generator for Server-Sent Events fan-out (Linux, loopback only).
 *
 * Opens N subscriber streams (GET, Accept: text/event-stream) on one epoll loop, then publishes M
 * messages by POST from K publisher threads, each with one keep-alive connection and one request in
 * flight. Every message carries its sequence number and the CLOCK_MONOTONIC time taken just before it
 * was written; a subscriber reads both back out of the event's data, so the latency of each delivery
 * needs no clock sync. With -m 0 it only holds the streams open (and drained) until --hold seconds
 * pass or SIGTERM arrives: the streams a write benchmark runs beside.
 *
 * With --requests FILE the messages are the file's requests instead (changes to existing data, whose
 * bodies cannot carry a stamp, and whose events may carry none: a view's "length" event). Then an
 * event is matched to its write by the model revision: the write's answer names it ("rev":N) and so
 * does every event of that commit, so the latency is from the write's start to the event. Not every
 * write need reach a subscriber (a filtered view): `reached` counts the writes that reached any, and
 * each of those is expected on every stream.
 *
 *   cc -O2 -o sseload sseload.c        (glibc 2.34 or later: threads need no -pthread)
 *   sseload -p PORT -c 1000 -m 2000 -r 1000 -z 200 -w -j --sub '/events?model=bench' --pub /models/bench/log
 *
 * Options (defaults in brackets):
 *   -p PORT              server port (required)
 *   -c N                 subscribers [100]
 *   -m M                 messages [1000]; 0 = hold the streams only
 *   -r RATE              messages per second, 0 = as fast as the server answers [0]
 *   -z BYTES             body size: {"seq":S,"t":T,"pad":"xxx…"} padded to BYTES (at most 65,536) [200]
 *   -k K                 publisher connections (= requests in flight) [8]
 *   -w                   before timing, wait until every subscriber has had an event, publishing a
 *                        message with sequence 0 every 250 ms until then (Nchan sends nothing first)
 *   -j                   one JSON object on stdout (a short human summary always goes to stderr)
 *   -t SEC               hard timeout of the whole run [120]; exit status 3 when it is hit
 *   --sub PATH, --pub PATH            request paths [/sub, /pub]
 *   --sub-port PORT      open the subscribers on this port instead of -p (repeatable: subscriber i
 *                        uses the (i mod n)-th one, so the streams spread evenly over a cluster's
 *                        nodes while every publish goes to -p)
 *   --drain SEC          after the last publish, stop when no event arrived for SEC [5]
 *   --hold SEC           with -m 0: hold this long [until SIGTERM]
 *   --ready-file FILE    with -m 0: create FILE once every stream is open and primed
 *   --server-pid PID     sample the server's CPU and memory from /proc (repeatable)
 *   --children           also sample each server pid's direct children (nginx workers)
 *   --seq-key K, --ts-key K           keys searched for in the event data [seq, t]
 *   --requests FILE      message i is line i of FILE, "METHOD PATH JSON-BODY", sent as is and matched
 *                        to its events by the "rev" of its answer (each must change the model, so that
 *                        no two answers share a revision); -w then publishes nothing
 *
 * Besides loss, duplicates and latency it reports `orders`: how many different arrival orders the
 * subscribers that received every message saw (1 when all streams agree on one order).
 *
 * Exit status: 0 everything delivered, 1 loss or failed subscribers or publishes (or --requests answers
 * that cannot be matched), 2 usage, 3 timeout.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* ===== clock and histogram ======================================================================= */

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Log-linear buckets: 128 per power of two, so a reported value is within 1 % of the true one. */
#define MAX_BODY 65536   /* -z at most */
#define SUB_BITS 7
#define SUB_COUNT (1 << SUB_BITS)
#define BUCKETS ((64 - SUB_BITS + 1) * SUB_COUNT)

typedef struct {
    uint64_t count[BUCKETS];
    uint64_t total;
    int64_t max;
    double sum;
} histogram;

static int bucket_of(int64_t v) {
    if (v < SUB_COUNT) return v < 0 ? 0 : (int)v;
    int e = 63 - __builtin_clzll((uint64_t)v);
    int m = (int)((v >> (e - SUB_BITS)) & (SUB_COUNT - 1));
    return (e - SUB_BITS + 1) * SUB_COUNT + m;
}

static double bucket_middle(int i) {
    if (i < SUB_COUNT) return i;
    int e = i / SUB_COUNT - 1 + SUB_BITS, m = i % SUB_COUNT;
    double low = (double)(SUB_COUNT + m) * (double)(1ULL << (e - SUB_BITS));
    return low + (double)(1ULL << (e - SUB_BITS)) / 2;
}

static void hist_add(histogram *h, int64_t v) {
    h->count[bucket_of(v)]++;
    h->total++;
    h->sum += (double)v;
    if (v > h->max) h->max = v;
}

static void hist_merge(histogram *into, const histogram *h) {
    for (int i = 0; i < BUCKETS; i++) into->count[i] += h->count[i];
    into->total += h->total;
    into->sum += h->sum;
    if (h->max > into->max) into->max = h->max;
}

static double hist_quantile(const histogram *h, double q) {  /* in the recorded unit */
    if (!h->total) return 0;
    uint64_t want = (uint64_t)(q * (double)h->total + 0.5), seen = 0;
    if (want < 1) want = 1;
    for (int i = 0; i < BUCKETS; i++) {
        seen += h->count[i];
        if (seen >= want) {
            double v = bucket_middle(i);
            return v > (double)h->max ? (double)h->max : v;
        }
    }
    return (double)h->max;
}

/* ===== options =================================================================================== */

static struct {
    int port, subscribers, messages, rate, size, publishers, prime, json, children;
    double timeout, drain, hold, connect_timeout, prime_timeout;
    const char *sub, *pub, *ready_file, *seq_key, *ts_key, *requests_file;
    int server_pids[16], server_pid_count;
    int sub_ports[16], sub_port_count;
} opt = {
    .subscribers = 100, .messages = 1000, .size = 200, .publishers = 8, .timeout = 120, .drain = 5,
    .connect_timeout = 60, .prime_timeout = 30, .sub = "/sub", .pub = "/pub", .seq_key = "seq", .ts_key = "t",
};

static void usage(void) {
    fprintf(stderr, "usage: sseload -p PORT [-c N] [-m M] [-r RATE] [-z BYTES] [-k K] [-w] [-j] [-t SEC]\n"
                    "               [--sub PATH] [--pub PATH] [--drain SEC] [--hold SEC] [--ready-file FILE]\n"
                    "               [--server-pid PID]... [--children] [--seq-key K] [--ts-key K] [--requests FILE]\n"
                    "(see the comment at the top of sseload.c)\n");
    exit(2);
}

static void parse_options(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define VALUE() (v ? (i++, v) : (usage(), ""))
        if (!strcmp(a, "-p")) opt.port = atoi(VALUE());
        else if (!strcmp(a, "-c")) opt.subscribers = atoi(VALUE());
        else if (!strcmp(a, "-m")) opt.messages = atoi(VALUE());
        else if (!strcmp(a, "-r")) opt.rate = atoi(VALUE());
        else if (!strcmp(a, "-z")) opt.size = atoi(VALUE());
        else if (!strcmp(a, "-k")) opt.publishers = atoi(VALUE());
        else if (!strcmp(a, "-t")) opt.timeout = atof(VALUE());
        else if (!strcmp(a, "-w")) opt.prime = 1;
        else if (!strcmp(a, "-j")) opt.json = 1;
        else if (!strcmp(a, "--sub")) opt.sub = VALUE();
        else if (!strcmp(a, "--pub")) opt.pub = VALUE();
        else if (!strcmp(a, "--drain")) opt.drain = atof(VALUE());
        else if (!strcmp(a, "--hold")) opt.hold = atof(VALUE());
        else if (!strcmp(a, "--ready-file")) opt.ready_file = VALUE();
        else if (!strcmp(a, "--children")) opt.children = 1;
        else if (!strcmp(a, "--seq-key")) opt.seq_key = VALUE();
        else if (!strcmp(a, "--ts-key")) opt.ts_key = VALUE();
        else if (!strcmp(a, "--requests")) opt.requests_file = VALUE();
        else if (!strcmp(a, "--sub-port")) {
            if (opt.sub_port_count == 16) usage();
            opt.sub_ports[opt.sub_port_count++] = atoi(VALUE());
        } else if (!strcmp(a, "--server-pid")) {
            if (opt.server_pid_count == 16) usage();
            opt.server_pids[opt.server_pid_count++] = atoi(VALUE());
        } else usage();
#undef VALUE
    }
    if (opt.port <= 0 || opt.port > 65535 || opt.subscribers < 0 || opt.messages < 0 || opt.rate < 0 ||
        opt.publishers < 1 || opt.size < 0 || opt.size > MAX_BODY)
        usage();
    for (int i = 0; i < opt.sub_port_count; i++)
        if (opt.sub_ports[i] <= 0 || opt.sub_ports[i] > 65535) usage();
    if (!opt.sub_port_count) opt.sub_ports[opt.sub_port_count++] = opt.port;
}

/* ===== /proc sampling of the server ============================================================== */

typedef struct { double cpu_s, wait_s; long hwm_kb, rss_kb; } usage_sample;

static void add_process(usage_sample *u, int pid) {
    char path[64], buf[4096];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    if (f) {
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        buf[n] = 0;
        fclose(f);
        char *p = strrchr(buf, ')');  /* the command name may hold spaces */
        unsigned long utime = 0, stime = 0;
        if (p && sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &utime, &stime) == 2)
            u->cpu_s += (double)(utime + stime) / (double)sysconf(_SC_CLK_TCK);
    }
    snprintf(path, sizeof path, "/proc/%d/status", pid);
    if ((f = fopen(path, "r"))) {
        while (fgets(buf, sizeof buf, f)) {
            long kb;
            if (sscanf(buf, "VmHWM: %ld", &kb) == 1) u->hwm_kb += kb;
            else if (sscanf(buf, "VmRSS: %ld", &kb) == 1) u->rss_kb += kb;
        }
        fclose(f);
    }
    /* Run delay (runnable, waiting for a CPU), summed over the process's threads. */
    snprintf(path, sizeof path, "/proc/%d/task", pid);
    DIR *tasks = opendir(path);
    for (struct dirent *t; tasks && (t = readdir(tasks));) {
        if (t->d_name[0] == '.') continue;
        snprintf(buf, sizeof buf, "/proc/%d/task/%s/schedstat", pid, t->d_name);
        unsigned long long run, delay;
        if ((f = fopen(buf, "r"))) {
            if (fscanf(f, "%llu %llu", &run, &delay) == 2) u->wait_s += (double)delay / 1e9;
            fclose(f);
        }
    }
    if (tasks) closedir(tasks);
}

static usage_sample sample_server(void) {
    usage_sample u = {0};
    for (int i = 0; i < opt.server_pid_count; i++) {
        int pid = opt.server_pids[i];
        add_process(&u, pid);
        if (!opt.children) continue;
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/task/%d/children", pid, pid);
        FILE *f = fopen(path, "r");
        int child;
        while (f && fscanf(f, "%d", &child) == 1) add_process(&u, child);
        if (f) fclose(f);
    }
    return u;
}

static double own_cpu_s(void) {
    struct rusage r;
    getrusage(RUSAGE_SELF, &r);
    return (double)(r.ru_utime.tv_sec + r.ru_stime.tv_sec) + (double)(r.ru_utime.tv_usec + r.ru_stime.tv_usec) / 1e6;
}

/* ===== sockets =================================================================================== */

static struct sockaddr_in server_address(int port) {
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);  /* loopback only, by construction */
    return a;
}

/* Close with RST: repeated runs must not pile up TIME_WAIT sockets and run out of ports. */
static void close_hard(int fd) {
    struct linger l = {1, 0};
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
    close(fd);
}

/* ===== publishing ================================================================================ */

typedef struct {
    int fd;
    histogram latency;  /* request latency, ns */
    long sent, ok, failed;
    int64_t worst_lateness;
} publisher;

static atomic_long next_sequence = 1;
static int64_t publish_start_ns;
static atomic_int publishers_running;

static int publisher_connect(void) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = server_address(opt.port);
    int one = 1;
    struct timeval tv = {10, 0};
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static size_t format_body(char *out, long sequence, int64_t ts) {
    int n = snprintf(out, 128, "{\"%s\":%ld,\"%s\":%lld,\"pad\":\"", opt.seq_key, sequence, opt.ts_key, (long long)ts);
    int pad = opt.size - n - 2;
    if (pad > 0) memset(out + n, 'x', (size_t)pad), n += pad;
    memcpy(out + n, "\"}", 2);
    return (size_t)n + 2;
}

static long find_number(const char *text, size_t len, const char *key);

/* Reads one HTTP response; returns its status, 0 on a broken connection. Sets *close_after, and
 * *rev (when not NULL) to the "rev" in a small body, -1 without one. */
static int read_response(int fd, int *close_after, long *rev) {
    char buf[16384];
    size_t have = 0;
    char *end = NULL;
    while (!end) {
        if (have == sizeof buf - 1) return 0;
        ssize_t n = read(fd, buf + have, sizeof buf - 1 - have);
        if (n <= 0) return 0;
        have += (size_t)n;
        buf[have] = 0;
        end = strstr(buf, "\r\n\r\n");
    }
    int status = 0;
    if (sscanf(buf, "HTTP/1.%*d %d", &status) != 1) return 0;
    long length = -1;
    int chunked = 0;
    *close_after = 0;
    for (char *line = strstr(buf, "\r\n") + 2; line < end; line = strstr(line, "\r\n") + 2) {
        if (!strncasecmp(line, "content-length:", 15)) length = atol(line + 15);
        else if (!strncasecmp(line, "transfer-encoding:", 18) && strcasestr(line, "chunked") < strstr(line, "\r\n")) chunked = 1;
        else if (!strncasecmp(line, "connection:", 11) && strcasestr(line, "close") < strstr(line, "\r\n")) *close_after = 1;
    }
    size_t body = have - (size_t)(end + 4 - buf);
    const char *text = end + 4;  /* the body, when it is kept */
    if (chunked) {  /* small answers only: read until the last chunk's empty line */
        text = buf;
        memmove(buf, end + 4, body);
        have = body;
        buf[have] = 0;
        while (!strstr(buf, "0\r\n\r\n")) {
            if (have == sizeof buf - 1) return 0;
            ssize_t n = read(fd, buf + have, sizeof buf - 1 - have);
            if (n <= 0) return 0;
            have += (size_t)n;
            buf[have] = 0;
        }
    } else if (length > 0) {
        long left = length - (long)body;
        int keep = left < (long)(sizeof buf - 1 - have);  /* a small body stays after the header */
        if (!keep) text = NULL;
        while (left > 0) {
            char *into = keep ? buf + have : buf;
            ssize_t n = read(fd, into, left < (long)sizeof buf ? (size_t)left : sizeof buf);
            if (n <= 0) return 0;
            if (keep) have += (size_t)n, buf[have] = 0;
            left -= n;
        }
    } else if (length < 0 && status >= 200 && status != 204 && status != 304) {
        *close_after = 1;  /* body up to the close: not expected from the servers measured */
    }
    if (rev) *rev = text ? find_number(text, strlen(text), "rev") : -1;
    return status;
}

/* --requests: message i is requests[i - 1]; when it was written and the revision its answer named. */
typedef struct { char *method, *path, *body; } request_line;
static request_line *requests;
static int64_t *sent_at;
static long *answer_rev;

static void load_requests(void) {
    FILE *f = fopen(opt.requests_file, "r");
    if (!f) { perror(opt.requests_file); exit(2); }
    requests = calloc((size_t)opt.messages, sizeof *requests);
    char *line = NULL;
    size_t cap = 0;
    int n = 0;
    while (n < opt.messages && getline(&line, &cap, f) > 0) {
        line[strcspn(line, "\r\n")] = 0;
        char *path = strchr(line, ' '), *body = path ? strchr(path + 1, ' ') : NULL;
        if (!body || body - path > 256 || strlen(body + 1) > MAX_BODY) {
            fprintf(stderr, "%s, line %d: not METHOD PATH BODY (a path under 256 bytes, a body under 64 KiB)\n", opt.requests_file, n + 1);
            exit(2);
        }
        *path++ = 0, *body++ = 0;
        requests[n++] = (request_line){strdup(line), strdup(path), strdup(body)};
    }
    free(line);
    fclose(f);
    if (n < opt.messages) { fprintf(stderr, "%s: %d requests, fewer than -m %d\n", opt.requests_file, n, opt.messages); exit(2); }
    sent_at = calloc((size_t)opt.messages + 1, sizeof *sent_at);
    answer_rev = calloc((size_t)opt.messages + 1, sizeof *answer_rev);
}

/* One request on the publisher's connection (reconnecting once if the server closed it): a POST of a
 * stamped body, or with --requests the message's request. */
static int publish(publisher *p, long sequence) {
    char request[MAX_BODY + 512], body[MAX_BODY + 128];
    for (int attempt = 0; attempt < 2; attempt++) {
        if (p->fd < 0 && (p->fd = publisher_connect()) < 0) continue;
        int64_t start = now_ns();
        const char *method = "POST", *path = opt.pub, *payload = body;
        size_t n;
        if (requests) {
            const request_line *r = &requests[sequence - 1];
            method = r->method, path = r->path, payload = r->body, n = strlen(r->body);
        } else {
            n = format_body(body, sequence, start);
        }
        int h = snprintf(request, 512, "%s %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/json\r\n"
                                       "Content-Length: %zu\r\n\r\n", method, path, opt.port, n);
        memcpy(request + h, payload, n);
        size_t total = (size_t)h + n, off = 0;
        while (off < total) {
            ssize_t w = write(p->fd, request + off, total - off);
            if (w <= 0) break;
            off += (size_t)w;
        }
        int close_after = 1;
        long rev = -1;
        int status = off == total ? read_response(p->fd, &close_after, &rev) : 0;
        if (close_after || !status) close_hard(p->fd), p->fd = -1;
        if (!status) continue;
        hist_add(&p->latency, now_ns() - start);
        if (requests) sent_at[sequence] = start, answer_rev[sequence] = rev;
        return status;
    }
    return 0;
}

static void *publisher_main(void *arg) {
    publisher *p = arg;
    for (;;) {
        long sequence = atomic_fetch_add(&next_sequence, 1);
        if (sequence > opt.messages) break;
        if (opt.rate > 0) {  /* message i is due at start + (i - 1) / rate */
            int64_t due = publish_start_ns + (int64_t)((double)(sequence - 1) * 1e9 / opt.rate);
            struct timespec ts = {due / 1000000000, due % 1000000000};
            while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {}
            int64_t late = now_ns() - due;
            if (late > p->worst_lateness) p->worst_lateness = late;
        }
        int status = publish(p, sequence);
        p->sent++;
        if (status >= 200 && status < 300) p->ok++;
        else p->failed++;
    }
    atomic_fetch_sub(&publishers_running, 1);
    return NULL;
}

/* ===== subscribers =============================================================================== */

enum { S_CONNECTING, S_HEADER, S_BODY, S_DONE };
enum { C_SIZE, C_EXTENSION, C_DATA, C_DATA_END, C_LAST };
#define LINE_CAP 8192   /* longer lines are cut: the keys searched for sit near the start of an event */
#define HEADER_CAP 8192

typedef struct {
    int fd, attempts;
    uint8_t state, chunked, chunk_state, has_data;
    uint64_t chunk_left;
    char *buffer;          /* the response header, then the unfinished line */
    uint32_t buffered;
    uint32_t events;       /* every dispatched event, with or without a sequence */
    long sequence, ts;     /* read from the current event's data, -1 until found */
    long highest;
    uint64_t order;        /* a hash of the sequence numbers in the order they arrived */
    uint8_t *seen;         /* one bit per sequence 1..M */
} subscriber;

static subscriber *subs;
static int epoll_fd;
static char sub_request[16][1024];   /* one per --sub-port: its Host header names that port */
static size_t sub_request_len[16];

static struct {
    long connected, failed, bad_status, not_sse, retries, closed, connecting;
    long primed;
    long events, deliveries, unique, duplicates, out_of_order, without_keys, comments;
    long reached, unmatched;  /* messages some stream got; --requests answers without a revision of their own */
    int64_t first_delivery, last_delivery, last_event;
    histogram latency;     /* publish to receive, ns */
    int64_t read_time;     /* when the current read() returned */
} g;

static void watch(int fd, uint32_t events, int index, int op) {
    struct epoll_event e = {.events = events, .data.u32 = (uint32_t)index};
    epoll_ctl(epoll_fd, op, fd, &e);
}

static void start_connect(int i) {
    subscriber *s = &subs[i];
    struct sockaddr_in a = server_address(opt.sub_ports[i % opt.sub_port_count]);
    s->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    s->state = S_CONNECTING;
    s->attempts++;
    g.connecting++;
    if (s->fd < 0 || (connect(s->fd, (struct sockaddr *)&a, sizeof a) < 0 && errno != EINPROGRESS)) {
        if (s->fd >= 0) close(s->fd);
        s->fd = -1;
        s->state = S_DONE;
        g.connecting--;
        g.failed++;
        return;
    }
    watch(s->fd, EPOLLOUT, i, EPOLL_CTL_ADD);
}

static void drop(subscriber *s, int retry, int index) {
    int was_connecting = s->state != S_BODY;
    if (s->fd >= 0) close_hard(s->fd);  /* also leaves the epoll set */
    s->fd = -1;
    s->state = S_DONE;
    free(s->buffer);
    s->buffer = NULL;
    s->buffered = 0;
    if (!was_connecting) { g.closed++; return; }
    g.connecting--;
    if (retry && s->attempts < 5) { g.retries++; start_connect(index); }
    else g.failed++;
}

/* The number after KEY in the text: KEY must not follow a letter, digit or '_', and only quotes,
 * backslashes, spaces, ':' and '=' may stand between it and the digits (JSON, escaped JSON, forms). */
static long find_number(const char *text, size_t len, const char *key) {
    size_t k = strlen(key);
    const char *p = text, *end = text + len;
    while ((p = memmem(p, (size_t)(end - p), key, k))) {
        const char *q = p + k;
        int word_before = p > text && (isalnum((unsigned char)p[-1]) || p[-1] == '_');
        p += 1;
        if (word_before) continue;
        const char *skip_start = q;
        while (q < end && (*q == '"' || *q == '\\' || *q == ' ' || *q == ':' || *q == '=')) q++;
        if (q == skip_start || q == end || !isdigit((unsigned char)*q)) continue;
        long v = 0;
        while (q < end && isdigit((unsigned char)*q)) v = v * 10 + (*q++ - '0');
        return v;
    }
    return -1;
}

static uint8_t *reached;  /* per message: some stream got it */

/* Message seq, written at sent, arrived on stream s at time at. */
static void deliver(subscriber *s, long seq, int64_t sent, int64_t at) {
    if (seq == 0 || seq > opt.messages || !s->seen) return;  /* priming messages, or not ours */
    g.deliveries++;
    uint8_t bit = (uint8_t)(1u << (seq & 7));
    if (s->seen[seq >> 3] & bit) { g.duplicates++; return; }
    s->seen[seq >> 3] |= bit;
    g.unique++;
    s->order = (s->order ^ (uint64_t)seq) * 0x100000001b3ULL;  /* FNV-1a step over the arrival order */
    if (seq < s->highest) g.out_of_order++;
    else s->highest = seq;
    if (!reached[seq]) reached[seq] = 1, g.reached++;
    if (!g.first_delivery) g.first_delivery = at;
    g.last_delivery = at;
    hist_add(&g.latency, at - sent);
}

/* --requests: the events, with their revision, kept in arrival order until the answers are all in
 * (an event may arrive before its write's answer), then matched by match_arrivals. */
typedef struct { int subscriber; long rev; int64_t at; } arrival;
static arrival *arrivals;
static size_t arrival_count, arrival_cap;

static void keep_arrival(int subscriber, long rev, int64_t at) {
    if (arrival_count == arrival_cap) {
        arrival_cap = arrival_cap ? arrival_cap * 2 : 1 << 16;
        arrivals = realloc(arrivals, arrival_cap * sizeof *arrivals);
        if (!arrivals) { perror("sseload: arrivals"); exit(1); }
    }
    arrivals[arrival_count++] = (arrival){subscriber, rev, at};
}

typedef struct { long rev, sequence; } revision;

static int compare_rev(const void *a, const void *b) {
    long x = ((const revision *)a)->rev, y = ((const revision *)b)->rev;
    return x < y ? -1 : x > y;
}

static void match_arrivals(void) {
    revision *by_rev = malloc(sizeof *by_rev * ((size_t)opt.messages + 1));
    size_t n = 0;
    for (long i = 1; i <= opt.messages; i++) {
        if (answer_rev[i] > 0) by_rev[n++] = (revision){answer_rev[i], i};
        else g.unmatched++;
    }
    qsort(by_rev, n, sizeof *by_rev, compare_rev);
    for (size_t i = 1; i < n; i++) if (by_rev[i].rev == by_rev[i - 1].rev) g.unmatched++;
    for (size_t i = 0; i < arrival_count; i++) {
        const arrival *a = &arrivals[i];
        revision key = {a->rev, 0}, *r = bsearch(&key, by_rev, n, sizeof *by_rev, compare_rev);
        if (r) deliver(&subs[a->subscriber], r->sequence, sent_at[r->sequence], a->at);  /* else a snapshot's */
    }
    free(by_rev);
}

static void dispatch(subscriber *s) {
    long seq = s->sequence, ts = s->ts;
    s->sequence = s->ts = -1;
    if (!s->has_data) return;  /* as in the SSE spec: a blank line after no data dispatches nothing */
    s->has_data = 0;
    s->events++;
    g.events++;
    g.last_event = g.read_time;
    if (s->events == 1) g.primed++;
    if (seq < 0 || (ts < 0 && !requests)) { g.without_keys++; return; }
    if (requests) keep_arrival((int)(s - subs), seq, g.read_time);
    else deliver(s, seq, ts, g.read_time);
}

static void sse_line(subscriber *s, const char *line, size_t len) {
    if (len && line[len - 1] == '\r') len--;
    if (!len) { dispatch(s); return; }
    if (line[0] == ':') { g.comments++; return; }
    if (len < 4 || memcmp(line, "data", 4) || (len > 4 && line[4] != ':')) return;  /* id:, event:, retry: are not needed */
    s->has_data = 1;
    if (len < 5) return;
    if (s->sequence < 0) s->sequence = find_number(line + 5, len - 5, requests ? "rev" : opt.seq_key);
    if (s->ts < 0 && !requests) s->ts = find_number(line + 5, len - 5, opt.ts_key);
}

static void keep_partial(subscriber *s, const char *p, size_t n) {
    if (!s->buffer) s->buffer = malloc(LINE_CAP);
    size_t room = LINE_CAP - s->buffered;
    if (n > room) n = room;
    memcpy(s->buffer + s->buffered, p, n);
    s->buffered += (uint32_t)n;
}

static void feed_events(subscriber *s, const char *p, size_t n) {
    while (n) {
        const char *nl = memchr(p, '\n', n);
        if (!nl) { keep_partial(s, p, n); return; }
        size_t len = (size_t)(nl - p);
        if (s->buffered) {
            keep_partial(s, p, len);
            sse_line(s, s->buffer, s->buffered);
            s->buffered = 0;
        } else {
            sse_line(s, p, len);
        }
        p = nl + 1;
        n -= len + 1;
    }
}

/* The body of the stream, through the chunked transfer coding when the server uses it. */
static void feed_body(subscriber *s, const char *p, size_t n) {
    if (!s->chunked) { feed_events(s, p, n); return; }
    while (n) {
        char c = *p;
        switch (s->chunk_state) {
        case C_SIZE:
            p++, n--;
            if (isxdigit((unsigned char)c)) s->chunk_left = s->chunk_left * 16 + (uint64_t)(isdigit((unsigned char)c) ? c - '0' : (c | 32) - 'a' + 10);
            else if (c == '\n') s->chunk_state = s->chunk_left ? C_DATA : C_LAST;
            else if (c != '\r') s->chunk_state = C_EXTENSION;
            break;
        case C_EXTENSION:
            p++, n--;
            if (c == '\n') s->chunk_state = s->chunk_left ? C_DATA : C_LAST;
            break;
        case C_DATA: {
            size_t take = n < s->chunk_left ? n : (size_t)s->chunk_left;
            feed_events(s, p, take);
            p += take, n -= take;
            if (!(s->chunk_left -= take)) s->chunk_state = C_DATA_END;
            break;
        }
        case C_DATA_END:
            p++, n--;
            if (c == '\n') s->chunk_state = C_SIZE, s->chunk_left = 0;
            break;
        case C_LAST:  /* the stream's last chunk: the server ends it */
            return;
        }
    }
}

static void on_header(subscriber *s, int index) {
    char *end = memmem(s->buffer, s->buffered, "\r\n\r\n", 4);
    if (!end) {
        if (s->buffered == HEADER_CAP) drop(s, 0, index);
        return;
    }
    *end = 0;
    int status = 0;
    sscanf(s->buffer, "HTTP/1.%*d %d", &status);
    if (status != 200) { g.bad_status++; drop(s, 0, index); return; }
    if (!strcasestr(s->buffer, "text/event-stream")) g.not_sse++;
    char *te = strcasestr(s->buffer, "transfer-encoding:");
    s->chunked = te && strcasestr(te, "chunked") && strcasestr(te, "chunked") < (strstr(te, "\r\n") ? strstr(te, "\r\n") : end);
    size_t rest = s->buffered - (size_t)(end + 4 - s->buffer);
    char tail[HEADER_CAP];
    memcpy(tail, end + 4, rest);
    s->buffered = 0;
    s->state = S_BODY;
    g.connecting--;
    g.connected++;
    feed_body(s, tail, rest);
}

static void on_ready(int index, uint32_t events) {
    static char buf[1 << 16];
    subscriber *s = &subs[index];
    if (s->state == S_CONNECTING) {
        int err = 0;
        socklen_t len = sizeof err;
        getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &err, &len);
        if (err || (events & (EPOLLERR | EPOLLHUP))) { drop(s, 1, index); return; }
        int port = index % opt.sub_port_count;
        if (write(s->fd, sub_request[port], sub_request_len[port]) != (ssize_t)sub_request_len[port]) { drop(s, 1, index); return; }
        s->state = S_HEADER;
        s->buffer = malloc(HEADER_CAP);
        watch(s->fd, EPOLLIN, index, EPOLL_CTL_MOD);
        return;
    }
    if (s->state == S_HEADER) {
        ssize_t n = read(s->fd, s->buffer + s->buffered, HEADER_CAP - s->buffered);
        if (n <= 0) { if (n == 0 || errno != EAGAIN) drop(s, 1, index); return; }
        g.read_time = now_ns();
        s->buffered += (uint32_t)n;
        on_header(s, index);
        return;
    }
    ssize_t n = read(s->fd, buf, sizeof buf);  /* one read per wake-up: every stream gets its turn */
    if (n <= 0) { if (n == 0 || errno != EAGAIN) drop(s, 0, index); return; }
    g.read_time = now_ns();
    feed_body(s, buf, (size_t)n);
}

static void poll_once(int timeout_ms) {
    struct epoll_event events[512];
    int n = epoll_wait(epoll_fd, events, 512, timeout_ms);
    for (int i = 0; i < n; i++) on_ready((int)events[i].data.u32, events[i].events);
}

/* ===== the run =================================================================================== */

static volatile sig_atomic_t stop_requested;
static void on_signal(int sig) { (void)sig; stop_requested = 1; }

static void raise_file_limit(long want) {
    struct rlimit r;
    getrlimit(RLIMIT_NOFILE, &r);
    if ((long)r.rlim_cur >= want) return;
    r.rlim_cur = (long)r.rlim_max >= want || r.rlim_max == RLIM_INFINITY ? (rlim_t)want : r.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &r) < 0 || (long)r.rlim_cur < want) {
        r.rlim_cur = r.rlim_max = (rlim_t)want;  /* as root the hard limit may rise too */
        setrlimit(RLIMIT_NOFILE, &r);
    }
}

static double seconds(int64_t ns) { return (double)ns / 1e9; }

static int compare_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* How many different arrival orders the subscribers that received every message saw: 1 when every
 * stream carries the messages in one order (publishes racing each other may still commit in another
 * order than their sequence numbers, which out_of_order counts). */
static long distinct_orders(long want, long *complete) {
    uint64_t *orders = malloc(sizeof *orders * ((size_t)opt.subscribers + 1));
    long n = 0, distinct = 0;
    for (int i = 0; i < opt.subscribers; i++) {
        long got = 0;
        for (size_t b = 0; subs[i].seen && b < (size_t)opt.messages / 8 + 1; b++) got += __builtin_popcount(subs[i].seen[b]);
        if (got == want) orders[n++] = subs[i].order;
    }
    qsort(orders, (size_t)n, sizeof *orders, compare_u64);
    for (long i = 0; i < n; i++) if (!i || orders[i] != orders[i - 1]) distinct++;
    free(orders);
    *complete = n;
    return distinct;
}

int main(int argc, char **argv) {
    parse_options(argc, argv);
    if (opt.requests_file) load_requests();
    reached = calloc((size_t)opt.messages + 1, 1);
    signal(SIGPIPE, SIG_IGN);
    signal(SIGTERM, on_signal);
    signal(SIGINT, on_signal);
    raise_file_limit(opt.subscribers + opt.publishers + 64);
    epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    for (int i = 0; i < opt.sub_port_count; i++)
        sub_request_len[i] = (size_t)snprintf(sub_request[i], sizeof sub_request[i],
            "GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nAccept: text/event-stream\r\nCache-Control: no-cache\r\n\r\n",
            opt.sub, opt.sub_ports[i]);
    subs = calloc((size_t)opt.subscribers + 1, sizeof *subs);
    size_t bitmap = opt.messages ? (size_t)opt.messages / 8 + 1 : 0;
    for (int i = 0; i < opt.subscribers; i++) {
        subs[i].fd = -1;
        subs[i].sequence = subs[i].ts = -1;
        if (bitmap) subs[i].seen = calloc(bitmap, 1);
    }
    int64_t t0 = now_ns(), deadline = t0 + (int64_t)(opt.timeout * 1e9);
    double gen_cpu0 = own_cpu_s();
    usage_sample server0 = sample_server();
    int timed_out = 0;

    /* 1. Open the streams, at most 256 handshakes in progress at once. */
    int next = 0;
    int64_t connect_deadline = t0 + (int64_t)(opt.connect_timeout * 1e9);
    while ((next < opt.subscribers || g.connecting) && now_ns() < connect_deadline && !stop_requested) {
        while (next < opt.subscribers && g.connecting < 256) start_connect(next++);
        poll_once(50);
    }
    double connect_s = seconds(now_ns() - t0);

    /* 2. Every open stream has had an event (publishing priming messages when none come). */
    publisher primer = {.fd = -1};
    int64_t prime_start = now_ns(), last_prime = prime_start;
    if (opt.prime) {
        while (g.primed < g.connected && !stop_requested) {
            int64_t t = now_ns();
            if (t - prime_start > (int64_t)(opt.prime_timeout * 1e9)) break;
            if (t - last_prime > 250000000 && opt.messages > 0 && !requests) { publish(&primer, 0); last_prime = t; }
            poll_once(20);
        }
    }
    if (primer.fd >= 0) close_hard(primer.fd);
    double prime_s = seconds(now_ns() - prime_start);

    /* 3. Publish and receive, or only hold the streams. */
    double gen_cpu1 = own_cpu_s();
    usage_sample server1 = sample_server();
    long events_before = g.events;
    publisher *pubs = calloc((size_t)opt.publishers, sizeof *pubs);
    pthread_t *threads = calloc((size_t)opt.publishers, sizeof *threads);
    int64_t hold_start = now_ns();
    publish_start_ns = hold_start;
    if (opt.messages > 0) {
        atomic_store(&publishers_running, opt.publishers);
        for (int i = 0; i < opt.publishers; i++) {
            pubs[i].fd = -1;
            pthread_create(&threads[i], NULL, publisher_main, &pubs[i]);
        }
        int64_t publish_done = 0, expected = (int64_t)g.connected * opt.messages;
        for (;;) {
            poll_once(20);
            int64_t t = now_ns();
            if (t > deadline) { timed_out = 1; break; }
            if (stop_requested) break;
            if (atomic_load(&publishers_running) > 0) continue;
            if (!publish_done) publish_done = t;
            if (g.unique >= expected) break;
            int64_t quiet_since = g.last_event > publish_done ? g.last_event : publish_done;
            if (t - quiet_since > (int64_t)(opt.drain * 1e9)) break;
        }
        if (timed_out || stop_requested) alarm(30);  /* publishers stuck on a dead server: do not wait forever */
        for (int i = 0; i < opt.publishers; i++) pthread_join(threads[i], NULL);
    } else {
        if (opt.ready_file) { FILE *f = fopen(opt.ready_file, "w"); if (f) fclose(f); }
        int64_t hold_end = opt.hold > 0 ? hold_start + (int64_t)(opt.hold * 1e9) : INT64_MAX;
        while (!stop_requested && now_ns() < hold_end) poll_once(50);
    }
    int64_t t_end = now_ns();
    double gen_cpu2 = own_cpu_s();
    usage_sample server2 = sample_server();

    /* 4. Report. */
    publisher all = {0};
    for (int i = 0; i < opt.publishers; i++) {
        hist_merge(&all.latency, &pubs[i].latency);
        all.sent += pubs[i].sent, all.ok += pubs[i].ok, all.failed += pubs[i].failed;
        if (pubs[i].worst_lateness > all.worst_lateness) all.worst_lateness = pubs[i].worst_lateness;
    }
    if (requests) match_arrivals();
    long expected = (long)opt.subscribers * (requests ? g.reached : opt.messages);
    long lost = expected - g.unique;
    double span = g.last_delivery > hold_start ? seconds(g.last_delivery - hold_start) : 0;
    double delivered_per_s = span > 0 ? (double)g.unique / span : 0;
    double held_s = seconds(t_end - hold_start);
    long complete = 0, orders = opt.messages ? distinct_orders(requests ? g.reached : opt.messages, &complete) : 0;
    const histogram *h = &g.latency;
#define MS(q) (hist_quantile(h, q) / 1e6)
    fprintf(stderr,
            "connect   %ld/%d in %.2f s (failed %ld, retries %ld, non-200 %ld, not SSE %ld)\n"
            "primed    %ld in %.2f s\n"
            "publish   %ld sent, %ld 2xx, %ld failed; request p50 %.2f ms p99 %.2f ms; worst lateness %.1f ms\n"
            "delivered %ld unique of %ld (lost %ld, duplicates %ld, out of order %ld), %.0f/s\n"
            "reached   %ld of %d messages reached some stream; %ld answers without a revision of their own\n"
            "orders    %ld different arrival order(s) among the %ld subscribers that got every message\n"
            "latency   p50 %.2f p90 %.2f p99 %.2f p99.9 %.2f max %.2f ms\n"
            "events    %ld during the run (%.0f/s), %ld without keys, %ld comments, %ld streams closed\n"
            "CPU       generator %.2f s; server %.2f s (publish and drain %.2f s), waited %.2f s; server HWM %ld kB\n",
            g.connected, opt.subscribers, connect_s, g.failed, g.retries, g.bad_status, g.not_sse, g.primed, prime_s,
            all.sent, all.ok, all.failed, hist_quantile(&all.latency, .5) / 1e6, hist_quantile(&all.latency, .99) / 1e6,
            all.worst_lateness / 1e6, g.unique, expected, lost, g.duplicates, g.out_of_order, delivered_per_s,
            g.reached, opt.messages, g.unmatched, orders, complete,
            MS(.5), MS(.9), MS(.99), MS(.999), h->max / 1e6, g.events - events_before,
            held_s > 0 ? (double)(g.events - events_before) / held_s : 0, g.without_keys, g.comments, g.closed,
            gen_cpu2 - gen_cpu0, server2.cpu_s - server0.cpu_s, server2.cpu_s - server1.cpu_s,
            server2.wait_s - server1.wait_s, server2.hwm_kb);
    if (opt.json) {
        printf("{\"subscribers\":%d,\"connected\":%ld,\"connect_failed\":%ld,\"bad_status\":%ld,\"connect_s\":%.3f,"
               "\"primed\":%ld,\"prime_s\":%.3f,\"messages\":%d,\"rate\":%d,\"size\":%d,\"publishers\":%d,"
               "\"sent\":%ld,\"pub_ok\":%ld,\"pub_failed\":%ld,\"pub_lat_ms\":{\"p50\":%.3f,\"p99\":%.3f,\"max\":%.3f},"
               "\"worst_lateness_ms\":%.3f,\"expected\":%ld,\"deliveries\":%ld,\"unique\":%ld,\"lost\":%ld,"
               "\"duplicates\":%ld,\"out_of_order\":%ld,\"reached\":%ld,\"unmatched\":%ld,\"orders\":%ld,\"complete\":%ld,\"delivered_per_s\":%.1f,"
               "\"lat_ms\":{\"p50\":%.3f,\"p90\":%.3f,\"p99\":%.3f,\"p999\":%.3f,\"max\":%.3f,\"mean\":%.3f},"
               "\"events\":%ld,\"events_per_s\":%.1f,\"held_s\":%.3f,\"without_keys\":%ld,\"comments\":%ld,\"closed\":%ld,"
               "\"gen_cpu_s\":%.3f,\"gen_cpu_pub_s\":%.3f,\"server_cpu_s\":%.3f,\"server_cpu_pub_s\":%.3f,"
               "\"server_wait_pub_s\":%.3f,\"server_hwm_kb\":%ld,\"server_rss_kb\":%ld,\"timed_out\":%s}\n",
               opt.subscribers, g.connected, g.failed, g.bad_status, connect_s, g.primed, prime_s, opt.messages, opt.rate,
               opt.size, opt.publishers, all.sent, all.ok, all.failed, hist_quantile(&all.latency, .5) / 1e6,
               hist_quantile(&all.latency, .99) / 1e6, all.latency.max / 1e6, all.worst_lateness / 1e6, expected,
               g.deliveries, g.unique, lost, g.duplicates, g.out_of_order, g.reached, g.unmatched, orders, complete, delivered_per_s, MS(.5), MS(.9), MS(.99),
               MS(.999), h->max / 1e6, h->total ? h->sum / (double)h->total / 1e6 : 0, g.events - events_before,
               held_s > 0 ? (double)(g.events - events_before) / held_s : 0, held_s, g.without_keys, g.comments,
               g.closed, gen_cpu2 - gen_cpu0, gen_cpu2 - gen_cpu1, server2.cpu_s - server0.cpu_s,
               server2.cpu_s - server1.cpu_s, server2.wait_s - server1.wait_s, server2.hwm_kb, server2.rss_kb,
               timed_out ? "true" : "false");
    }
#undef MS
    for (int i = 0; i < opt.subscribers; i++)
        if (subs[i].fd >= 0) close_hard(subs[i].fd);
    if (timed_out) return 3;
    if (opt.messages == 0) return g.connected == opt.subscribers ? 0 : 1;
    return lost || all.failed || g.failed || g.unmatched ? 1 : 0;
}
