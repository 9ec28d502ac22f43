"""History answers are bounded in bytes (issue #41; docs/HTTP.md, "History queries").

The points, buckets and scan limits count values, and a value may be a whole document: on a model
of several hundred kB written a few hundred times, `GET /models/m?history&from=0` used to build an
answer of a hundred MB and more in memory (and libmicrohttpd a copy of it). `--history-max-bytes`
bounds every history answer that grows with the stored data, counted while it is written: raw points
(JSON and CSV), buckets (whose `first` and `last` are values too), `?at=`, and what `/events?since=`
sends before going live (its replay, or its `history` event of buckets). Past it: 422 with a problem
naming the setting, and the server's peak memory (VmHWM) grows by no more than a few times the limit.

Against the real server (loopback, `--data` in a temporary folder), stopped by the pid it started.
"""
import json

from harness import Server, memory

LIMIT = 1 << 20                 # --history-max-bytes in the memory test
WRITES = 300                    # small writes to a large model: each is a point of the whole document
# The peak may grow by the answer being written (never past the limit; one and a half times while its
# buffer doubles), a few documents being read, and slack for SQLite's and malloc's own caches.
MULTIPLE = 2
SLACK = 16 << 20


def big_document():
    """About 350 kB of JSON, as many small members (not one string), as a real document is."""
    return {"rows": [{"i": k, "s": "x" * 80} for k in range(3500)], "n": 0}


def write(server, method, path, body):
    status, _, answer = server.call(method, path, body)
    assert status in (200, 201), (method, path, status, answer)
    return answer["id"]


def assert_refused(server, path, headers=None, limit=LIMIT):
    answer = server.request("GET", path, headers=headers)
    assert answer.status == 422, (path, headers, answer.status, answer.body[:300])
    assert answer.header("Content-Type") == "application/problem+json", answer.header("Content-Type")
    problem = answer.json()
    assert (problem["setting"], problem["limit"]) == ("history-max-bytes", limit), problem
    assert "--history-max-bytes" in problem["detail"], problem


def test_history_of_a_large_model_is_refused_past_the_byte_limit_and_memory_stays_bounded():
    server = Server(["--history-max-bytes", str(LIMIT), "--history-max-buckets", "100000000"]).start()
    try:
        document = big_document()
        size = len(json.dumps(document, separators=(",", ":")))
        assert LIMIT > 2 * size + 4096      # a start and one point fit, not three documents
        write(server, "PUT", "/models/m", document)
        ids = [write(server, "PUT", "/models/m/rows/0/i", n) for n in range(1, WRITES + 1)]
        for k in range(5):            # five whole documents of 300 kB: a replay of 1.5 MB
            write(server, "PUT", "/models/r", {"blob": "y" * 300_000, "k": k})

        # The same kind of work, answered within the limit: the reader, its caches and two documents.
        status, _, answer = server.call("GET", f"/models/m?history&from={ids[-2]}")
        assert status == 200 and len(answer["points"]) == 1, (status, str(answer)[:300])
        status, _, answer = server.call("GET", f"/models/m?at={ids[-1]}")
        assert status == 200 and answer["rows"][0]["i"] == WRITES, (status, str(answer)[:300])
        before = memory(server.pid, "VmHWM")

        csv = {"Accept": "text/csv"}
        assert_refused(server, "/models/m?history&from=0")                       # whole documents, raw
        assert_refused(server, "/models/m?history&from=0", csv)
        assert_refused(server, "/models/m?history&from=0&step=1ms")             # first/last of each bucket
        assert_refused(server, "/models/m?history&from=0&step=1ms", csv)
        assert_refused(server, "/models/m/rows?history&from=0")                  # a subtree (an array)
        assert_refused(server, "/events?model=r&since=0")                        # a replay
        assert_refused(server, "/events?model=m&since=0&step=1ms&path=/rows")    # the `history` event
        grew = memory(server.pid, "VmHWM") - before
        assert grew <= MULTIPLE * LIMIT + SLACK, f"the peak grew by {grew >> 20} MiB for answers refused at {LIMIT >> 20} MiB"

        # Within the limit everything still answers, and the server is well.
        status, _, answer = server.call("GET", "/models/m/rows/0/i?history&from=0")
        assert status == 200 and len(answer["points"]) == WRITES + 1, (status, str(answer)[:300])
        assert server.call("GET", "/healthz")[0] == 200
    finally:
        server.close()


def test_each_history_answer_is_refused_one_byte_past_the_limit():
    """An answer of exactly the limit is sent; one byte less of limit refuses it. Ids fix the range, so
    each answer is the same bytes across restarts."""
    server = Server().start()
    try:
        ids = [write(server, "PUT", "/models/s", {"t": 0, "note": "a,\"quoted\" value"})]
        ids += [write(server, "PUT", "/models/s/t", t) for t in range(1, 6)]
        queries = [(f"/models/s?history&from={ids[0]}&to={ids[-1]}", None),
                   (f"/models/s?history&from={ids[0]}&to={ids[-1]}", {"Accept": "text/csv"}),
                   (f"/models/s?history&from={ids[0]}&to={ids[-1]}&step=1h", None),
                   (f"/models/s?at={ids[-1]}", None)]
        answers = []
        for path, headers in queries:
            answer = server.request("GET", path, headers=headers)
            assert answer.status == 200, (path, answer.status, answer.body[:300])
            answers.append(answer.body)
        server.args += ["--history-max-bytes", "0"]
        for (path, headers), body in zip(queries, answers):
            for limit in (len(body), len(body) - 1):
                server.args[-1] = str(limit)
                server.restart()
                if limit == len(body):
                    answer = server.request("GET", path, headers=headers)
                    assert (answer.status, answer.body) == (200, body), (path, limit, answer.status, answer.body[:300])
                else:
                    assert_refused(server, path, headers, limit=limit)
    finally:
        server.close()
