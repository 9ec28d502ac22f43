"""Idempotent writes (docs/HTTP.md, "Idempotent writes"), searched for counterexamples.

The invariant: whatever sequence of writes, retries, key reuses, restarts and crashes a client makes,
every write sent with an `Idempotency-Key` is applied at most once; a retry with the same key and the
same request gets the first answer again (status and body, `Idempotent-Replayed: true`) and changes
nothing; the same key with another request is 422 and changes nothing; and the model is exactly what
applying each first write once gives, and the bindings made over HTTP exactly what making, switching and
deleting each once gives. hypothesis's `RuleBasedStateMachine` drives a live
`livebind-server --data` (restarted with SIGTERM and with SIGKILL: an answered write is on disk, and
so is its key). The example tests below push the limits (`--idempotency-window`, `--idempotency-keys`),
race one key from many threads, and keep two credentials' keys apart.
"""
import os
import threading
import time

from hypothesis import HealthCheck, settings, strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from harness import Server

EXAMPLES = int(os.environ.get("PROPERTY_EXAMPLES", "25"))
STEPS = int(os.environ.get("PROPERTY_STEPS", "30"))
RANDOM = os.environ.get("PROPERTY_RANDOM", "") not in ("", "0")
KEYS = ["k1", "k2", "k3", "k4", "k5", "k6"]


class IdempotentWrites(RuleBasedStateMachine):
    def __init__(self):
        super().__init__()
        self.server = Server().start()
        status, _, body = self.server.call("PUT", "/models/ledger", {"items": [], "total": 0})
        assert status == 201, body
        assert self.server.call("PUT", "/models/view", {})[0] == 201
        assert self.server.call("PUT", "/models/journal", {"lines": []})[0] == 201
        self.expected = {"items": [], "total": 0}
        self.journal = []
        self.bindings = {}       # id → enabled, of the bindings made over HTTP
        self.made = 0
        self.first = {}          # key → ((method, path, body), (status, answer))

    def teardown(self):
        self.server.close()

    def send(self, key, method, path, body, expected=200):
        headers = {"Idempotency-Key": key} if key else {}
        status, headers, answer = self.server.call(method, path, body, headers=headers)
        request = (method, path, body)
        if key in self.first:
            sent, (first_status, first_answer) = self.first[key]
            if sent == request:
                assert (status, answer) == (first_status, first_answer), f"retry of {key} got {status} {answer}"
                assert headers.get("idempotent-replayed") == "true"
            else:
                assert status == 422 and answer["type"].endswith("idempotency-key-reused"), (status, answer)
            return False
        assert status == expected, (status, answer)
        if key:
            self.first[key] = (request, (status, answer))
        return True

    @rule(key=st.sampled_from(KEYS + [None]), value=st.integers(0, 3))
    def append(self, key, value):
        if self.send(key, "POST", "/models/ledger/items", value):
            self.expected["items"].append(value)

    @rule(key=st.sampled_from(KEYS + [None]), value=st.integers(0, 3))
    def set_total(self, key, value):
        # Sometimes an equal value, which commits nothing: its answer is kept all the same.
        value += self.expected["total"]
        if self.send(key, "PUT", "/models/ledger/total", value):
            self.expected["total"] = value

    @rule(key=st.sampled_from(KEYS + [None]), value=st.integers(0, 3))
    def append_to_both(self, key, value):
        # PATCH /models: one unit over two models; its answer names both.
        body = {"ledger": {"patch": [{"op": "add", "path": "/items/-", "value": value}]},
                "journal": {"patch": [{"op": "add", "path": "/lines/-", "value": value}]}}
        if self.send(key, "PATCH", "/models", body):
            self.expected["items"].append(value)
            self.journal.append(value)

    @rule(key=st.sampled_from(KEYS + [None]))
    def make_binding(self, key):
        # No id: the server names it, so a write applied twice would make a second binding.
        self.made += 1
        entry = {"source": "ledger.total", "target": f"view.copy{self.made}"}
        before = set(self.listed())
        if self.send(key, "POST", "/bindings", entry, expected=201):
            # The list is by id, and a crash may give a deleted binding's id again: the new one is
            # the one that was not there before.
            made = set(self.listed()) - before
            assert len(made) == 1, (before, made)
            self.bindings[made.pop()] = True

    @rule(key=st.sampled_from(KEYS + [None]), which=st.integers(0, 5), enabled=st.booleans())
    def switch_binding(self, key, which, enabled):
        if self.bindings:
            id = sorted(self.bindings)[which % len(self.bindings)]
            if self.send(key, "PATCH", f"/bindings/{id}", {"enabled": enabled}):
                self.bindings[id] = enabled

    @rule(key=st.sampled_from(KEYS + [None]), which=st.integers(0, 5))
    def delete_binding(self, key, which):
        if self.bindings:
            id = sorted(self.bindings)[which % len(self.bindings)]
            if self.send(key, "DELETE", f"/bindings/{id}", None):
                del self.bindings[id]

    def listed(self):
        status, _, listing = self.server.call("GET", "/bindings")
        assert status == 200, listing
        return [binding["id"] for binding in listing["bindings"]]

    @rule(which=st.integers(0, len(KEYS) - 1))
    def retry(self, which):
        key = KEYS[which]
        if key in self.first:
            method, path, body = self.first[key][0]
            assert not self.send(key, method, path, body)

    @rule()
    def restart(self):
        self.server.restart()

    @rule()
    def crash(self):
        self.server.kill()
        self.server.start()

    @invariant()
    def model_is_each_first_write_once(self):
        status, _, document = self.server.call("GET", "/models/ledger")
        assert status == 200 and document == self.expected, f"{document} != {self.expected}"

    @invariant()
    def journal_is_each_first_write_once(self):
        status, _, lines = self.server.call("GET", "/models/journal/lines")
        assert status == 200 and lines == self.journal, f"{lines} != {self.journal}"

    @invariant()
    def bindings_are_each_first_change_once(self):
        _, _, listing = self.server.call("GET", "/bindings")
        made = {binding["id"]: binding["enabled"] for binding in listing["bindings"]}
        assert made == self.bindings, f"{made} != {self.bindings}"


IdempotentWrites.TestCase.settings = settings(
    max_examples=EXAMPLES, stateful_step_count=STEPS, deadline=None, derandomize=not RANDOM, database=None,
    print_blob=True, suppress_health_check=list(HealthCheck))
TestIdempotentWrites = IdempotentWrites.TestCase


def post(server, key, value, token=None):
    headers = {"Idempotency-Key": key}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    return server.call("POST", "/models/ledger/items", value, headers=headers)


def items(server, token=None):
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return server.call("GET", "/models/ledger/items", headers=headers)[2]


def test_one_key_raced_from_many_threads_is_applied_once():
    server = Server().start()
    try:
        assert server.call("PUT", "/models/ledger", {"items": []})[0] == 201
        answers, barrier = [], threading.Barrier(12)

        def racer():
            barrier.wait()
            status, headers, body = post(server, "race", 7)
            answers.append((status, body))

        threads = [threading.Thread(target=racer) for _ in range(12)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        assert items(server) == [7]
        applied = [body for status, body in answers if status == 200]
        assert applied and all(body == applied[0] for body in applied), answers
        assert all(status in (200, 409) for status, _ in answers), answers
    finally:
        server.close()


def test_keys_are_per_credential():
    server = Server(["--token", "alpha-token-0123456789", "--token", "beta-token-0123456789"]).start()
    try:
        status, _, body = server.call("PUT", "/models/ledger", {"items": []},
                                      headers={"Authorization": "Bearer alpha-token-0123456789"})
        assert status == 201, body
        assert post(server, "same", 1, "alpha-token-0123456789")[0] == 200
        assert post(server, "same", 2, "beta-token-0123456789")[0] == 200   # another credential's key
        assert post(server, "same", 1, "alpha-token-0123456789")[1].get("idempotent-replayed") == "true"
        assert items(server, "alpha-token-0123456789") == [1, 2]
    finally:
        server.close()


def test_past_the_window_and_past_the_key_limit_a_key_is_forgotten():
    server = Server(["--idempotency-window", "1", "--idempotency-keys", "2"]).start()
    try:
        assert server.call("PUT", "/models/ledger", {"items": []})[0] == 201
        for key, value in [("a", 1), ("b", 2), ("c", 3)]:
            assert post(server, key, value)[0] == 200
        assert post(server, "c", 3)[1].get("idempotent-replayed") == "true"
        metrics = server.call("GET", "/metrics")[2]
        assert "\nlivebind_idempotency_keys 2\n" in metrics, metrics
        # Three keys, room for two: the oldest was forgotten, so its retry writes again.
        assert post(server, "a", 1)[1].get("idempotent-replayed") is None
        assert items(server) == [1, 2, 3, 1]
        time.sleep(1.2)
        assert post(server, "c", 3)[1].get("idempotent-replayed") is None    # past the window
        assert items(server) == [1, 2, 3, 1, 3]
        # A restart reads back only what is in the window.
        assert post(server, "d", 4)[0] == 200
        server.restart()
        assert post(server, "d", 4)[1].get("idempotent-replayed") == "true"
    finally:
        server.close()


def test_a_key_that_is_no_key_is_refused_and_changes_nothing():
    server = Server().start()
    try:
        assert server.call("PUT", "/models/ledger", {"items": []})[0] == 201
        for key in ["", "has space", "x" * 256, "caf\u00e9"]:
            status, _, body = server.call("POST", "/models/ledger/items", 1,
                                          headers={"Idempotency-Key": key.encode("utf-8").decode("latin-1")})
            assert status == 400 and "Idempotency-Key" in body["detail"], (key, status, body)
        assert items(server) == []
    finally:
        server.close()


ALPHA, BETA = "alpha-token-0123456789", "beta-token-0123456789"


def keyed(server, method, path, body, key, token=None):
    headers = {"Idempotency-Key": key}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    return server.call(method, path, body, headers=headers)


def test_one_credentials_keys_do_not_push_anothers_out_of_the_data_directory():
    # Room for 16 keys, an eighth (2) each's share; a checkpoint after every write trims the receipts
    # on disk. Beta's 40 keyed writes, changing the model or not, leave alpha's two keys on disk too.
    server = Server(["--token", ALPHA, "--token", BETA, "--idempotency-keys", "16", "--checkpoint-bytes", "1"]).start()
    try:
        assert keyed(server, "PUT", "/models/ledger", {"items": [], "total": 0}, "make", ALPHA)[0] == 201
        first = keyed(server, "POST", "/models/ledger/items", "alpha", "mine", ALPHA)
        assert first[0] == 200, first
        same = keyed(server, "PUT", "/models/ledger/total", 0, "same", ALPHA)     # an equal value: no commit
        assert same[0] == 200, same
        for number in range(40):
            assert keyed(server, "POST", "/models/ledger/items", number, f"b-{number}", BETA)[0] == 200
            assert keyed(server, "PUT", "/models/ledger/total", 0, f"same-{number}", BETA)[0] == 200
        server.restart()
        again = keyed(server, "POST", "/models/ledger/items", "alpha", "mine", ALPHA)
        assert again[1].get("idempotent-replayed") == "true", again
        assert (again[0], again[2]) == (first[0], first[2])
        assert items(server, ALPHA).count("alpha") == 1
        assert keyed(server, "PUT", "/models/ledger/total", 0, "same", ALPHA)[1].get("idempotent-replayed") == "true"
        # Beta's newest keys are kept too, within the table.
        assert keyed(server, "POST", "/models/ledger/items", 39, "b-39", BETA)[1].get("idempotent-replayed") == "true"
        assert len(items(server, ALPHA)) == 41
    finally:
        server.close()


def test_a_keyed_write_that_changed_nothing_is_not_run_again_after_a_restart():
    server = Server().start()
    try:
        assert server.call("PUT", "/models/ledger", {"items": [], "total": 0})[0] == 201
        # An equal value commits nothing; a refusal neither (the model does not exist yet).
        equal = keyed(server, "PUT", "/models/ledger/total", 0, "equal")
        missing = keyed(server, "PUT", "/models/later/x", 1, "missing")
        assert equal[0] == 200 and missing[0] == 404, (equal, missing)
        assert server.call("PUT", "/models/ledger/total", 5)[0] == 200
        assert server.call("PUT", "/models/later", {"x": 0})[0] == 201
        server.restart()
        again = keyed(server, "PUT", "/models/ledger/total", 0, "equal")
        assert again[1].get("idempotent-replayed") == "true" and (again[0], again[2]) == (equal[0], equal[2]), again
        again = keyed(server, "PUT", "/models/later/x", 1, "missing")
        assert again[1].get("idempotent-replayed") == "true" and (again[0], again[2]) == (missing[0], missing[2]), again
        assert server.call("GET", "/models/ledger/total")[2] == 5
        assert server.call("GET", "/models/later/x")[2] == 0
        # So after a crash.
        server.kill()
        server.start()
        assert keyed(server, "PUT", "/models/ledger/total", 0, "equal")[1].get("idempotent-replayed") == "true"
        assert server.call("GET", "/models/ledger/total")[2] == 5
    finally:
        server.close()
