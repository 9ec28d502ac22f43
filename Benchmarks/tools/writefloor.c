/*
 * writefloor: the least a libmicrohttpd server can do for a write, as a ceiling to measure LiveBind's
 * write path against. Any PUT or POST is a write: its body (up to 256 bytes kept) gets the next
 * sequence number and is answered 200 with `{"id":"N"}`; loopback only.
 *
 * In memory (no -d): libmicrohttpd's own epoll threads (a pool of two, like livebind-server's
 * default) answer each write at once.
 *
 * Durable (-d FILE): the shape that needs the fewest system calls and wake-ups, the one Redis uses
 * for `appendfsync always`. One thread runs libmicrohttpd's epoll loop itself. Each turn of the loop
 * appends that turn's writes to an SQLite table in one transaction (WAL, synchronous=FULL, exclusive
 * locking: livebind-server's settings), commits it (one sync for the whole turn), and answers them
 * right away with one more pass of libmicrohttpd (about a third more writes per second than leaving
 * them to the next turn). A write waiting for its sync is not suspended: libmicrohttpd calls the
 * handler again on every pass until it answers, which costs nothing here because every turn that
 * took writes ends with a sync. Nothing else is served while the loop syncs.
 *
 * Durable without waiting (-d FILE -a): what livebind-server must also do, keep serving while a sync
 * runs. Two threads each run the loop of a daemon of their own on the one listening socket (two
 * workers, as livebind-server has); a sync thread takes the writes queued meanwhile and commits them
 * in one transaction, then wakes both loops with an eventfd each, one write per batch. A waiting
 * write is not suspended either: a loop whose only ready work is writes waiting for their sync
 * blocks until the sync thread or a socket wakes it, instead of polling.
 *
 *   cc -O2 -o writefloor writefloor.c -lmicrohttpd -lsqlite3
 *   writefloor -p PORT [-d FILE [-a]] [-t SECONDS]   (exits after SECONDS, default 600)
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum Mode { IN_MEMORY, DURABLE, DURABLE_WITHOUT_WAITING };

typedef struct {
    char body[256];
    size_t length;
    unsigned long long sequence;   /* 0 until the write is applied */
    int answered;
} Write;

/* A write queued for the sync thread (-a): its sequence and the first bytes of its body. */
typedef struct {
    unsigned long long sequence;
    size_t length;
    char body[64];
} Record;

enum { LOOPS = 2 };

static enum Mode mode;
static sqlite3 *db;
static sqlite3_stmt *append_row, *begin_tx, *commit_tx;
static pthread_mutex_t sequence_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long long last_sequence;      /* under sequence_lock, but with -d alone: the loop thread's */
static _Atomic unsigned long long durable_through;
static _Thread_local unsigned long waiting;   /* the loop thread's writes applied, not answered yet */
/* -a: the writes waiting for the sync thread, under sequence_lock; `queued_signal` wakes it. */
static pthread_cond_t queued_signal = PTHREAD_COND_INITIALIZER;
static Record *queue;
static size_t queued, queue_capacity;
static int loop_wakers[LOOPS];

static void step(sqlite3_stmt *statement) {
    if (sqlite3_step(statement) != SQLITE_DONE) {
        fprintf(stderr, "writefloor: %s\n", sqlite3_errmsg(db));
        exit(1);
    }
    sqlite3_reset(statement);
}

static void append(unsigned long long sequence, const char *body, size_t length) {
    sqlite3_bind_int64(append_row, 1, (sqlite3_int64)sequence);
    sqlite3_bind_blob(append_row, 2, body, (int)length, SQLITE_STATIC);
    step(append_row);
}

static enum MHD_Result answer(struct MHD_Connection *connection, unsigned long long sequence) {
    char text[48];
    int length = snprintf(text, sizeof text, "{\"id\":\"%llu\"}", sequence);
    struct MHD_Response *response = MHD_create_response_from_buffer((size_t)length, text, MHD_RESPMEM_MUST_COPY);
    MHD_add_response_header(response, "Content-Type", "application/json");
    enum MHD_Result queued_response = MHD_queue_response(connection, MHD_HTTP_OK, response);
    MHD_destroy_response(response);
    return queued_response;
}

/* Gives the write its sequence and hands it to the log: the open transaction (-d) or the sync thread (-a). */
static void apply(Write *write) {
    if (mode == DURABLE) {
        write->sequence = ++last_sequence;
        append(write->sequence, write->body, write->length);
        return;
    }
    pthread_mutex_lock(&sequence_lock);
    write->sequence = ++last_sequence;
    if (queued == queue_capacity) {
        queue_capacity = queue_capacity ? queue_capacity * 2 : 256;
        queue = realloc(queue, queue_capacity * sizeof *queue);
        if (queue == NULL) exit(1);
    }
    Record *record = &queue[queued++];
    record->sequence = write->sequence;
    record->length = write->length < sizeof record->body ? write->length : sizeof record->body;
    memcpy(record->body, write->body, record->length);
    if (queued == 1) pthread_cond_signal(&queued_signal);
    pthread_mutex_unlock(&sequence_lock);
}

static enum MHD_Result handle(void *context, struct MHD_Connection *connection, const char *url,
                              const char *method, const char *version, const char *upload,
                              size_t *upload_size, void **request) {
    (void)context; (void)url; (void)version;
    Write *write = *request;
    if (write == NULL) {
        if (strcmp(method, "PUT") != 0 && strcmp(method, "POST") != 0) {
            struct MHD_Response *response = MHD_create_response_from_buffer(0, "", MHD_RESPMEM_PERSISTENT);
            enum MHD_Result queued_response = MHD_queue_response(connection, MHD_HTTP_METHOD_NOT_ALLOWED, response);
            MHD_destroy_response(response);
            return queued_response;
        }
        *request = calloc(1, sizeof(Write));
        return *request ? MHD_YES : MHD_NO;
    }
    if (*upload_size > 0) {
        size_t room = sizeof write->body - write->length;
        size_t taken = *upload_size < room ? *upload_size : room;
        memcpy(write->body + write->length, upload, taken);
        write->length += taken;
        *upload_size = 0;
        return MHD_YES;
    }
    if (mode == IN_MEMORY) {
        pthread_mutex_lock(&sequence_lock);
        unsigned long long sequence = ++last_sequence;
        pthread_mutex_unlock(&sequence_lock);
        return answer(connection, sequence);
    }
    if (write->sequence == 0) {             /* first time: apply it */
        apply(write);
        waiting += 1;
    }
    if (write->sequence > atomic_load(&durable_through)) return MHD_YES;   /* asked again next pass */
    waiting -= 1;
    write->answered = 1;
    return answer(connection, write->sequence);
}

static void completed(void *context, struct MHD_Connection *connection, void **request,
                      enum MHD_RequestTerminationCode code) {
    (void)context; (void)connection; (void)code;
    Write *write = *request;
    if (mode != IN_MEMORY && write != NULL && write->sequence != 0 && !write->answered) waiting -= 1;  /* client gone */
    free(write);
    *request = NULL;
}

static void open_log(const char *path) {
    if (sqlite3_open(path, &db) != SQLITE_OK
        || sqlite3_exec(db, "PRAGMA locking_mode = EXCLUSIVE; PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;"
                            "CREATE TABLE IF NOT EXISTS log (sequence INTEGER PRIMARY KEY, body BLOB NOT NULL);",
                        NULL, NULL, NULL) != SQLITE_OK
        || sqlite3_prepare_v2(db, "INSERT INTO log (sequence, body) VALUES (?1, ?2)", -1, &append_row, NULL) != SQLITE_OK
        || sqlite3_prepare_v2(db, "BEGIN", -1, &begin_tx, NULL) != SQLITE_OK
        || sqlite3_prepare_v2(db, "COMMIT", -1, &commit_tx, NULL) != SQLITE_OK) {
        fprintf(stderr, "writefloor: cannot open %s: %s\n", path, sqlite3_errmsg(db));
        exit(1);
    }
}

/* -d: one turn lets libmicrohttpd read, apply and answer what is ready, then syncs what the turn wrote. */
static void run_durable(struct MHD_Daemon *daemon, time_t deadline) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_EPOLL_FD);
    /* poll() on the epoll descriptor: waiting with epoll_wait would take the edge-triggered events
       libmicrohttpd itself waits for. */
    struct pollfd ready = { .fd = info->epoll_fd, .events = POLLIN };
    step(begin_tx);
    while (time(NULL) < deadline) {
        MHD_UNSIGNED_LONG_LONG timeout = 0;
        if (waiting == 0 && (MHD_get_timeout(daemon, &timeout) != MHD_YES || timeout > 1000)) timeout = 1000;
        poll(&ready, 1, (int)timeout);
        MHD_run(daemon);
        if (last_sequence > durable_through) {
            step(commit_tx);
            durable_through = last_sequence;
            step(begin_tx);
            MHD_run(daemon);   /* answers them now */
        }
    }
}

/* -a: commits whatever the loops queued meanwhile, in one transaction, then wakes every loop once. */
static void *run_sync(void *unused) {
    (void)unused;
    Record *batch = NULL;
    size_t batch_capacity = 0;
    for (;;) {
        pthread_mutex_lock(&sequence_lock);
        while (queued == 0) pthread_cond_wait(&queued_signal, &sequence_lock);
        Record *taken = queue;
        size_t count = queued, taken_capacity = queue_capacity;
        queue = batch;
        queue_capacity = batch_capacity;
        queued = 0;
        pthread_mutex_unlock(&sequence_lock);
        step(begin_tx);
        for (size_t index = 0; index < count; index++) append(taken[index].sequence, taken[index].body, taken[index].length);
        step(commit_tx);
        atomic_store(&durable_through, taken[count - 1].sequence);
        const unsigned long long one = 1;
        for (int loop = 0; loop < LOOPS; loop++) {
            if (write(loop_wakers[loop], &one, sizeof one) != sizeof one) exit(1);
        }
        batch = taken;
        batch_capacity = taken_capacity;
    }
    return NULL;
}

typedef struct {
    struct MHD_Daemon *daemon;
    int waker;
    time_t deadline;
} Loop;

/* -a: one loop; when its only ready work is writes waiting for their sync it blocks, until the sync
   thread or a socket wakes it. */
static void *run_loop(void *argument) {
    Loop *loop = argument;
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(loop->daemon, MHD_DAEMON_INFO_EPOLL_FD);
    struct pollfd ready[2] = { { .fd = info->epoll_fd, .events = POLLIN }, { .fd = loop->waker, .events = POLLIN } };
    while (time(NULL) < loop->deadline) {
        MHD_UNSIGNED_LONG_LONG timeout = 0;
        if (MHD_get_timeout(loop->daemon, &timeout) != MHD_YES || timeout > 1000) timeout = 1000;
        if (timeout == 0 && waiting > 0) timeout = 1000;
        poll(ready, 2, (int)timeout);
        unsigned long long wakes;
        if (ready[1].revents && read(loop->waker, &wakes, sizeof wakes) < 0) exit(1);
        MHD_run(loop->daemon);
    }
    return NULL;
}

static void run_without_waiting(int port, time_t deadline) {
    int listener = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0), on = 1;
    struct sockaddr_in address = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                                   .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    if (listener < 0 || setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on) != 0
        || bind(listener, (struct sockaddr *)&address, sizeof address) != 0 || listen(listener, 128) != 0) {
        fprintf(stderr, "writefloor: cannot listen on 127.0.0.1:%d\n", port);
        exit(1);
    }
    Loop loops[LOOPS];
    pthread_t threads[LOOPS], sync_thread;
    for (int index = 0; index < LOOPS; index++) {
        loop_wakers[index] = eventfd(0, EFD_NONBLOCK);
        /* Each daemon closes its listening descriptor when it stops: each gets its own. */
        loops[index] = (Loop){
            .daemon = MHD_start_daemon(MHD_USE_EPOLL, 0, NULL, NULL, handle, NULL,
                                       MHD_OPTION_LISTEN_SOCKET, index == 0 ? listener : dup(listener),
                                       MHD_OPTION_NOTIFY_COMPLETED, completed, NULL,
                                       MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)16384, MHD_OPTION_END),
            .waker = loop_wakers[index], .deadline = deadline };
        if (loops[index].daemon == NULL || loop_wakers[index] < 0) {
            fprintf(stderr, "writefloor: cannot start loop %d\n", index);
            exit(1);
        }
    }
    pthread_create(&sync_thread, NULL, run_sync, NULL);
    for (int index = 0; index < LOOPS; index++) pthread_create(&threads[index], NULL, run_loop, &loops[index]);
    for (int index = 0; index < LOOPS; index++) pthread_join(threads[index], NULL);
    for (int index = 0; index < LOOPS; index++) MHD_stop_daemon(loops[index].daemon);
}

int main(int argc, char **argv) {
    int port = 0, seconds = 600, option, without_waiting = 0;
    const char *path = NULL;
    while ((option = getopt(argc, argv, "p:d:at:")) != -1) {
        if (option == 'p') port = atoi(optarg);
        else if (option == 'd') path = optarg;
        else if (option == 'a') without_waiting = 1;
        else if (option == 't') seconds = atoi(optarg);
        else return 2;
    }
    if (port <= 0 || (without_waiting && path == NULL)) {
        fprintf(stderr, "usage: writefloor -p PORT [-d FILE [-a]] [-t SECONDS]\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    mode = path == NULL ? IN_MEMORY : without_waiting ? DURABLE_WITHOUT_WAITING : DURABLE;
    if (path != NULL) open_log(path);
    time_t deadline = time(NULL) + seconds;
    if (mode == DURABLE_WITHOUT_WAITING) {
        run_without_waiting(port, deadline);   /* exits the process when the time is up, sync thread included */
        return 0;
    }
    struct sockaddr_in address = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                                   .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    struct MHD_Daemon *daemon = mode == DURABLE
        ? MHD_start_daemon(MHD_USE_EPOLL, (uint16_t)port, NULL, NULL, handle, NULL,
                           MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&address,
                           MHD_OPTION_NOTIFY_COMPLETED, completed, NULL,
                           MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)16384, MHD_OPTION_END)
        : MHD_start_daemon(MHD_USE_EPOLL_INTERNAL_THREAD, (uint16_t)port, NULL, NULL, handle, NULL,
                           MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&address,
                           MHD_OPTION_NOTIFY_COMPLETED, completed, NULL,
                           MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)16384,
                           MHD_OPTION_THREAD_POOL_SIZE, 2u, MHD_OPTION_END);
    if (daemon == NULL) {
        fprintf(stderr, "writefloor: cannot listen on 127.0.0.1:%d\n", port);
        return 1;
    }
    if (mode == DURABLE) {
        run_durable(daemon, deadline);
    } else {
        while (time(NULL) < deadline) sleep(1);
    }
    MHD_stop_daemon(daemon);
    return 0;
}
