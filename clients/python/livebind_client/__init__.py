"""A LiveBind client for devices and scripts: mirror models (or locations inside them) into Python
values kept equal to the server's, and write back — with `If-Match`, `Idempotency-Key` and an offline
queue that survives restarts. Standard library only. See docs/Clients.md.

    from livebind_client import Client
    client = Client("http://127.0.0.1:8080", token=None, queue="writes.jsonl")
    mirror = client.mirror(["sensor", "orders/items"])
    mirror.wait_until_synced(5)
    print(mirror.value("sensor"), mirror.value("orders/items"))
    mirror.set("sensor/threshold", 30)          # applied here at once, then on the server
    lobby = client.presence("lobby", {"name": "Ann"})   # an entry in a room, held by a stream
    print(lobby.members())                              # [{"id", "who", "joined", "meta"}, …]
    lobby.update({"name": "Ann", "row": 3})
    lobby.leave(); mirror.close(); client.close()
"""
from .errors import ConflictError, LiveBindError
from .client import NO_BODY, Client
from .mirror import Mirror
from .presence import Presence

__all__ = ["Client", "Mirror", "Presence", "ConflictError", "LiveBindError", "NO_BODY"]
