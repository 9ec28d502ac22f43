"""Shapes of state the memory tests and the restart benchmark write: `rows(seed, size)` is a document
of rows with the same six keys, about `size` bytes of compact JSON (`compact(value)`). Standard
library only; imported like livebind_server (see its docstring).
"""
import json
import random


def compact(value):
    """`value` as compact JSON bytes."""
    return json.dumps(value, separators=(",", ":")).encode()


def rows(seed, size):
    """`{"rows": [...]}`, about `size` bytes, the same for the same seed."""
    rnd, items, total = random.Random(seed), [], 0
    while total < size:
        row = {"id": len(items), "name": f"item {rnd.randrange(10**6)}", "price": round(rnd.random() * 100, 2),
               "qty": rnd.randrange(100), "tags": ["a", "b"], "ok": rnd.random() < 0.5}
        items.append(row)
        total += len(compact(row)) + 1
    return {"rows": items}
