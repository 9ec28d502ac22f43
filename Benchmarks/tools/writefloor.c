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
 * took writes ends with a sync.
 *
 *   cc -O2 -o writefloor writefloor.c -lmicrohttpd -lsqlite3
 *   writefloor -p PORT [-d FILE] [-t SECONDS]   (exits after SECONDS, default 600)
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    char body[256];
    size_t length;
    unsigned long long sequence;   /* 0 until the write is applied */
    int answered;
} Write;

static sqlite3 *db;
static sqlite3_stmt *append_row, *begin_tx, *commit_tx;
static unsigned long long last_sequence;      /* under sequence_lock in memory; the loop thread's when durable */
static unsigned long long durable_through;    /* durable mode: the loop thread only */
static unsigned long waiting;                 /* durable mode: writes applied, not answered yet */
static pthread_mutex_t sequence_lock = PTHREAD_MUTEX_INITIALIZER;
static int durable;

static void step(sqlite3_stmt *statement) {
    if (sqlite3_step(statement) != SQLITE_DONE) {
        fprintf(stderr, "writefloor: %s\n", sqlite3_errmsg(db));
        exit(1);
    }
    sqlite3_reset(statement);
}

static enum MHD_Result answer(struct MHD_Connection *connection, unsigned long long sequence) {
    char text[48];
    int length = snprintf(text, sizeof text, "{\"id\":\"%llu\"}", sequence);
    struct MHD_Response *response = MHD_create_response_from_buffer((size_t)length, text, MHD_RESPMEM_MUST_COPY);
    MHD_add_response_header(response, "Content-Type", "application/json");
    enum MHD_Result queued = MHD_queue_response(connection, MHD_HTTP_OK, response);
    MHD_destroy_response(response);
    return queued;
}

static enum MHD_Result handle(void *context, struct MHD_Connection *connection, const char *url,
                              const char *method, const char *version, const char *upload,
                              size_t *upload_size, void **request) {
    (void)context; (void)url; (void)version;
    Write *write = *request;
    if (write == NULL) {
        if (strcmp(method, "PUT") != 0 && strcmp(method, "POST") != 0) {
            struct MHD_Response *response = MHD_create_response_from_buffer(0, "", MHD_RESPMEM_PERSISTENT);
            enum MHD_Result queued = MHD_queue_response(connection, MHD_HTTP_METHOD_NOT_ALLOWED, response);
            MHD_destroy_response(response);
            return queued;
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
    if (!durable) {
        pthread_mutex_lock(&sequence_lock);
        unsigned long long sequence = ++last_sequence;
        pthread_mutex_unlock(&sequence_lock);
        return answer(connection, sequence);
    }
    if (write->sequence == 0) {             /* first time: apply it to this turn's transaction */
        write->sequence = ++last_sequence;
        sqlite3_bind_int64(append_row, 1, (sqlite3_int64)write->sequence);
        sqlite3_bind_blob(append_row, 2, write->body, (int)write->length, SQLITE_STATIC);
        step(append_row);
        waiting += 1;
    }
    if (write->sequence > durable_through) return MHD_YES;   /* asked again next turn */
    waiting -= 1;
    write->answered = 1;
    return answer(connection, write->sequence);
}

static void completed(void *context, struct MHD_Connection *connection, void **request,
                      enum MHD_RequestTerminationCode code) {
    (void)context; (void)connection; (void)code;
    Write *write = *request;
    if (durable && write != NULL && write->sequence != 0 && !write->answered) waiting -= 1;  /* client gone */
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

/* One turn: let libmicrohttpd read, apply and answer what is ready, then sync what the turn wrote. */
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

int main(int argc, char **argv) {
    int port = 0, seconds = 600, option;
    const char *path = NULL;
    while ((option = getopt(argc, argv, "p:d:t:")) != -1) {
        if (option == 'p') port = atoi(optarg);
        else if (option == 'd') path = optarg;
        else if (option == 't') seconds = atoi(optarg);
        else return 2;
    }
    if (port <= 0) {
        fprintf(stderr, "usage: writefloor -p PORT [-d FILE] [-t SECONDS]\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    struct sockaddr_in address = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                                   .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    durable = path != NULL;
    if (durable) open_log(path);
    struct MHD_Daemon *daemon = durable
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
    time_t deadline = time(NULL) + seconds;
    if (durable) {
        run_durable(daemon, deadline);
    } else {
        while (time(NULL) < deadline) sleep(1);
    }
    MHD_stop_daemon(daemon);
    return 0;
}
