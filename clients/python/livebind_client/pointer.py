"""JSON Pointers (RFC 6901) and the server's change events applied to plain Python values."""
import copy


def split(pointer):
    """The tokens of a JSON Pointer ("" is the root)."""
    if pointer == "":
        return []
    if not pointer.startswith("/"):
        raise ValueError(f"not a JSON Pointer: {pointer!r}")
    return [token.replace("~1", "/").replace("~0", "~") for token in pointer[1:].split("/")]


def join(tokens):
    return "".join("/" + str(token).replace("~", "~0").replace("/", "~1") for token in tokens)


def get(document, tokens):
    for token in tokens:
        document = document[int(token)] if isinstance(document, list) else document[token]
    return document


def parent_and_last(document, tokens):
    return get(document, tokens[:-1]), tokens[-1]


def set_at(document, tokens, value):
    """`document` with `value` at `tokens` (the root when empty): returns the new document."""
    if not tokens:
        return value
    parent, last = parent_and_last(document, tokens)
    if isinstance(parent, list):
        index = len(parent) if last == "-" else int(last)
        if index == len(parent):
            parent.append(value)
        else:
            parent[index] = value
    else:
        parent[last] = value
    return document


def apply(document, kind, change):
    """Applies one change (the members of an event or of a `batch` entry) to `document`; returns it.
    Paths are the model's (RFC 6901)."""
    tokens = split(change.get("path", ""))
    if kind == "set":
        return set_at(document, tokens, copy.deepcopy(change["value"]))
    target = get(document, tokens)
    if kind == "insert":
        target.insert(change["index"], copy.deepcopy(change["value"]))
    elif kind == "replace":
        target[change["index"]] = copy.deepcopy(change["value"])
    elif kind == "move":
        target.insert(change["to"], target.pop(change["from"]))
    elif kind == "remove":
        if "index" in change:
            del target[change["index"]]
        else:
            parent, last = parent_and_last(document, tokens)
            if isinstance(parent, list):
                del parent[int(last)]
            else:
                del parent[last]
    elif kind == "length":
        pass  # a window's length: the rows come as their own events
    else:
        raise ValueError(f"unknown change {kind!r}")
    return document
