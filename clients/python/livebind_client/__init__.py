"""A LiveBind client for devices and scripts: mirror models (or locations inside them) into Python
values kept equal to the server's, and write back — with `If-Match`, `Idempotency-Key` and an offline
queue that survives restarts. Standard library only. See docs/Clients.md.

    from livebind_client import Client
    client = Client("http://127.0.0.1:8080", token=None, queue="writes.jsonl")
    mirror = client.mirror(["sensor", "orders/items"])
    mirror.wait_until_synced(5)
    print(mirror.value("sensor"), mirror.value("orders/items"))
    mirror.set("sensor/threshold", 30)          # applied here at once, then on the server
    mirror.close(); client.close()
"""
from .errors import ConflictError, LiveBindError
from .client import NO_BODY, Client
from .mirror import Mirror

__all__ = ["Client", "Mirror", "ConflictError", "LiveBindError", "NO_BODY"]
