"""Array windows and server views as a mirror holds them (docs/HTTP.md, "Array windows", "Views"): a
target such as "readings/items;last=3" or "orders/items;where=status:eq:open;order=-time;limit=20"
read as the server reads a `sub`, and the rows it shows kept in the server's window coordinates."""
import copy

from . import pointer as jsonpointer

WINDOW_NAMES = ("first", "last", "offset", "limit")
VIEW_NAMES = ("where", "order")


class Target:
    """A target read as the server reads a `sub` value: `base` ("model/pointer" as written), `model`,
    `pointer`, the window's parameters (`params`: {"first": N}, {"last": N} or {"offset": K,
    "limit": N}; None) or the view's (`view`: the parameters as written, which its events carry), and
    for either the offset it starts from (`start`; 0 for `last`)."""

    def __init__(self, text):
        self.text = text
        rest, numbers, words, view_start = text, {}, {}, None
        # Parameters are taken from the end only while they are `;name=value` with a known name, as the
        # server does, so a member name holding `;` still works as long as it does not look like one.
        while ";" in rest:
            head, _, parameter = rest.rpartition(";")
            name, equals, value = parameter.partition("=")
            if not equals or name not in WINDOW_NAMES + VIEW_NAMES:
                break
            if name in numbers or name in words:
                raise ValueError(f"{text!r}: {name} is given twice")
            if name in VIEW_NAMES:
                words[name] = value
            elif value.isdigit() and value.isascii():
                numbers[name] = int(value)
            else:
                raise ValueError(f"{text!r}: {name} must be a whole number of rows, 0 or more")
            view_start, rest = len(head) + 1, head
        self.base = rest
        self.model, slash, tail = rest.partition("/")
        if not self.model:
            raise ValueError(f"not a model or location: {text!r}")
        self.pointer = ("/" + tail) if slash else ""
        self.params, self.view = None, None
        if words:
            if "first" in numbers or "last" in numbers:
                raise ValueError(f"{text!r}: a view (where=, order=) takes offset= and limit=, not first= or last=")
            if "limit" in numbers and numbers["limit"] < 1:
                raise ValueError(f"{text!r}: a view shows at least one row")
            self.view = text[view_start:]
            self.start = numbers.get("offset", 0)
        elif numbers:
            self.params = window_params(**numbers)
            self.start = self.params.get("offset", 0)

    @property
    def shows_rows(self):
        """Whether the target is a window or a view (else a model or a location)."""
        return self.params is not None or self.view is not None


def window_params(offset=None, limit=None, first=None, last=None):
    """The canonical parameters of a window: {"first": N}, {"last": N} or {"offset": K, "limit": N}
    (`limit=N` alone is offset 0). Raises ValueError for anything else, as the server answers 400."""
    given = {name: value for name, value in (("offset", offset), ("limit", limit), ("first", first), ("last", last))
             if value is not None}
    for name, value in given.items():
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise ValueError(f"{name} must be a whole number, 0 or more (got {value!r})")
    if set(given) == {"first"}:
        params = {"first": first}
    elif set(given) == {"last"}:
        params = {"last": last}
    elif "limit" in given and set(given) <= {"offset", "limit"}:
        params = {"offset": offset or 0, "limit": limit}
    else:
        raise ValueError("a window is first=N, last=N, or offset=K with limit=N")
    if min(value for name, value in params.items() if name != "offset") < 1:
        raise ValueError("a window has at least one row")
    return params


class Rows:
    """The rows a window or view of a mirror shows, in the server's window coordinates: `rows` (a list;
    None before the first snapshot), `window` ({"offset", "length"}: the first row's absolute index and
    the array's length, or for a view how many elements match), `rev`, `exists`.

    `params` is where the window should be (`Mirror.move_window`); `shown` where the server agreed to
    show it (the target's window, then each move it answered 204), which every new stream asks for, so a
    stream is never opened with a window the server has not taken; `awaiting` the snapshots asked for
    and not here yet (a connection's first, one per move). All guarded by the mirror's lock."""

    def __init__(self, target):
        self.target = target
        self.model, self.pointer, self.view = target.model, target.pointer, target.view
        self.params = target.params
        self.shown = target.params
        self.awaiting = 0
        self.rows, self.window, self.rev, self.exists = None, None, 0, True

    def sub(self):
        """The `sub` value that asks for the rows where the server last agreed to show them."""
        if self.view is not None:
            return self.target.text
        return self.target.base + "".join(f";{name}={value}" for name, value in self.shown.items())

    def holds(self, model, path, view):
        """Whether an event of `model` at `path` (a view's: `view`) is this window's."""
        return (model == self.model and view == self.view
                and (path == self.pointer or path.startswith(self.pointer + "/")))

    def apply(self, kind, data):
        """Applies one event (`snapshot`, `set`, `insert`, `remove`, `replace`, `move`, `batch`, `length`)."""
        if kind == "snapshot":
            self._restate(data)
            self.awaiting = max(0, self.awaiting - 1)
        elif kind == "batch":
            for change in data["changes"]:
                self._change(change["kind"], change)
        elif kind != "length":
            self._change(kind, data)
        if "rev" in data:
            self.rev = data["rev"]
        if isinstance(data.get("window"), dict):
            self.window = {"offset": data["window"].get("offset", 0), "length": data["window"].get("length", 0)}

    def gone(self, revision):
        """The model was dropped: no rows, until its array is back."""
        self.rows, self.exists, self.rev = [], False, revision
        offset = self.shown.get("offset", 0) if self.shown is not None else self.target.start
        self.window = {"offset": offset, "length": 0}

    def forget(self):
        """Starting over (`resync`, an event that could not be applied): rows only from the next snapshot."""
        self.rows, self.window = None, None

    def _restate(self, data):
        value = data.get("value")
        self.rows = copy.deepcopy(value) if isinstance(value, list) else []
        self.exists = data.get("exists", True)

    def _change(self, kind, change):
        relative = change.get("path", "")[len(self.pointer):]
        if relative == "" and (kind == "set" or (kind == "remove" and "index" not in change)):
            # The array replaced, removed or shifted from above: the window's rows, restated.
            return self._restate(change if kind == "set" else {"value": None, "exists": False})
        self.rows = jsonpointer.apply(self.rows, kind, dict(change, path=relative))
