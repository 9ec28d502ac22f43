"""Writes the FuzzStoreSequence seeds into Tests/fuzz/corpus/store-sequence/ (binary: the bytes FuzzInput
reads, in order). Run from that folder: python3 ../../store-sequence-seeds.py"""
import random
# Bytes in the order FuzzInput reads them (see Fuzz/Sources/FuzzStoreSequence).
A, B, C = 0, 1, 2
SET, INSERT, APPEND, REMOVE, REPLACE, MOVE, PUT, DROP, PATCH, MERGE, EDITS = range(11)
ROOT_KEY = [0, 0, 0]  # walk stops, then add key "x"
def chain(depth): return [9, depth] + [0] * (depth // 2)   # value: chain of `depth`, keys "x"
def copy_root(model): return [10, model, 0, 2]             # value: copy of the whole model
def write(name, data): open(name, "wb").write(bytes(data))
def concat(parts): return [b for part in parts for b in part]

# Deeper and deeper chains set at the root: accepted up to maxDepth 8, refused past it.
write("deep-chains", concat([A, SET] + chain(d) + ROOT_KEY + [3] for d in range(4, 12)))
# A model copied into itself again and again: doubles until maxModelBytes refuses.
write("copy-doubling", concat([A, SET] + copy_root(A) + [0, 0, k % 13] + [3] for k in range(12)))
# Long strings into three models until maxStoreBytes refuses.
write("store-fill", concat([m, PUT, 2, 6, 0, 255, 0, 3] for m in (A, B, C, A, B, C)))
# Appends to the seed's list, then moves and removes in it.
write("list-edits", [A, APPEND, 2, 7, 1, 1, 0, 3, 2, 0, 0, A, APPEND, 4, 3, 1, 1, 0, A, MOVE, 0, 1, 1, 1, 0,
                     A, REMOVE, 1, 0, 1, 0, A, REPLACE, 1, 1, 0, 12, 200])
# JSON Patches of 16 and 20 operations (the fuzz store allows 16).
write("patch-lengths", [A, PATCH, 15] + [0, 0, 0, 2, 1, 0] * 16 + [A, PATCH, 19] + [4, 0, 0, 0, 0] * 20)
# Drop, then writes to the dropped model, then put it back with a stale revision and with 0.
write("drop-put", [A, DROP, A, SET, 2, 0, 0, 0, 3, A, PUT, 1, 3, 0, A, PUT, 0, 1, 2, A, PUT, 0, 1, 0])
# Merge patches that add deep members, and multi-edit writes whose last edit fails.
write("merge-and-edits", [B, PUT, 0, 0, 0, B, MERGE, 1, 8, 2, 9, 9, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                          A, EDITS, 3, 2, 5, 0, 0, 0, 0, 9, 11, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 1, 0, 0, 0])
random.seed(13)
for n, length in enumerate([32, 96, 256, 700, 2000]):
    write(f"random-{n}", [random.randrange(256) for _ in range(length)])
