"""moto as the local AWS: in-process (tests), and for ``phoneid dev`` both in-process (its own
handlers) and as a server other processes reach.

Two fidelity fixes to moto's DynamoDB. DynamoDB applies each single-item write atomically,
condition included; moto evaluates the condition and writes in Python without a lock, so under
threads two conditional writes could in principle both pass. The local stack serialises those
writes, as DynamoDB would. And a transaction costs DynamoDB the same whatever the table's size;
moto backs up every table it touches (a deep copy of all its items) to roll back a cancelled one,
so a workflow that enrolls row after row slowed quadratically (800 rows in, a transaction took
50 ms; 4,000 rows in, 200 ms). Here a transaction saves and restores only the items it touches.
And moto parses a condition expression anew for every item it checks (twice for a transaction's
put), a third of the time a batch of conditional writes takes; here a parsed expression is kept
for the next item with the same expression, names and values (the parsed form is not changed by
evaluating it).
"""

from __future__ import annotations

import copy
import functools
import json
import os
import socket
import threading
from collections.abc import Callable
from typing import Any

_WRITE_OPERATIONS = ("put_item", "update_item", "delete_item", "transact_write_items")
_write_lock = threading.RLock()
_patched = False

FAKE_CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SESSION_TOKEN": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
}


class _TableKeepingCopy:
    """``copy`` as moto's DynamoDB backend sees it: its transaction backup of a whole table is the
    table itself (``_undone_per_item`` saves and restores the touched items instead)."""

    def __getattr__(self, name: str) -> Any:
        return getattr(copy, name)

    @staticmethod
    def deepcopy(value: Any, memo: dict[int, Any] | None = None) -> Any:
        from moto.dynamodb.models.table import Table

        return value if isinstance(value, Table) else copy.deepcopy(value, memo)


def _touched(backend: Any, transact_items: list[dict[str, Any]]) -> list[tuple[str, Any, Any]]:
    """(table, key, the item's attributes or None) of each well-formed item a transaction names."""
    saved = []
    for entry in transact_items:
        for kind, operation in entry.items():
            table = backend.tables.get(operation.get("TableName")) if isinstance(operation, dict) else None
            if table is None:
                continue
            key = operation.get("Item", {}) if kind == "Put" else operation.get("Key", {})
            names = [n for n in (table.hash_key_attr, table.range_key_attr) if n]
            if not all(n in key for n in names):
                continue  # moto refuses the transaction before it writes anything
            key = {n: key[n] for n in names}
            current = backend.get_item(table.name, key)
            saved.append((table.name, key, current.to_json()["Attributes"] if current else None))
    return saved


def _undone_per_item(transact: Callable[..., Any]) -> Callable[..., Any]:
    """A transaction that fails puts back, in reverse order, each item it touched as it was."""

    @functools.wraps(transact)
    def wrapper(backend: Any, transact_items: list[dict[str, Any]]) -> Any:
        saved = _touched(backend, transact_items)
        try:
            return transact(backend, transact_items)
        except Exception:
            for table_name, key, attributes in reversed(saved):
                if attributes is None:
                    backend.delete_item(table_name, key)
                else:
                    backend.put_item(table_name, attributes)
            raise

    return wrapper


def _parsed_once(parse: Callable[..., Any]) -> Callable[..., Any]:
    """moto's ``get_filter_expression``, remembering the last few thousand expressions parsed."""

    @functools.lru_cache(maxsize=4096)
    def cached(expression: str | None, names: str, values: str) -> Any:
        return parse(expression, json.loads(names), json.loads(values))

    @functools.wraps(parse)
    def wrapper(expression: str | None, names: Any, values: Any) -> Any:
        return cached(expression, json.dumps(names, sort_keys=True), json.dumps(values, sort_keys=True))

    return wrapper


def atomic_dynamodb_writes() -> None:
    global _patched
    if _patched:
        return
    import moto.dynamodb.models as dynamodb_models
    import moto.dynamodb.models.table as dynamodb_tables
    from moto.dynamodb.comparisons import get_filter_expression
    from moto.dynamodb.models import DynamoDBBackend

    parse = _parsed_once(get_filter_expression)
    setattr(dynamodb_models, "get_filter_expression", parse)  # noqa: B010 - module attributes moto reads
    setattr(dynamodb_tables, "get_filter_expression", parse)  # noqa: B010

    setattr(dynamodb_models, "copy", _TableKeepingCopy())  # noqa: B010 - a module attribute moto reads
    DynamoDBBackend.transact_write_items = _undone_per_item(DynamoDBBackend.transact_write_items)  # type: ignore[method-assign]

    def serialised(method: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(method)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with _write_lock:
                return method(*args, **kwargs)

        return wrapper

    for name in _WRITE_OPERATIONS:
        setattr(DynamoDBBackend, name, serialised(getattr(DynamoDBBackend, name)))
    _patched = True


def _backend_lookup_without_disk() -> None:
    """moto's server lists its own package directory on every request, to route it, under one lock
    for all threads: half the server's time when a batch's rows make their calls. The list is the
    installed package's and cannot change while the process runs, so it is read once."""
    import moto.backends

    modules = tuple(moto.backends.list_of_moto_modules())
    moto.backends.list_of_moto_modules = lambda: modules


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


class MotoServer:
    """moto's threaded server on loopback for other processes (by endpoint URL), and moto's
    in-process mock over the same backends for this one."""

    def __init__(self, port: int | None = None, host: str = "127.0.0.1") -> None:
        self.host = host
        self.port = port or free_port(host)

    @property
    def endpoint_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self) -> MotoServer:
        import logging

        from moto.server import ThreadedMotoServer

        logging.getLogger("werkzeug").setLevel(logging.ERROR)  # one line per AWS call is noise here
        atomic_dynamodb_writes()
        _backend_lookup_without_disk()
        for name, value in FAKE_CREDENTIALS.items():
            os.environ.setdefault(name, value)
        # moto's own internal calls (e.g. Step Functions invoking services) go to MOTO_PORT.
        os.environ["MOTO_PORT"] = str(self.port)
        # This process (handlers, workflow tasks, SFTP) calls the same backends in-process, as the
        # tests do; HTTP, which moto's server answers on a new connection and thread per call, is
        # for other processes (the CLI, benches, the SDKs' tools).
        from moto import mock_aws

        os.environ.pop("AWS_ENDPOINT_URL", None)  # one inherited from another stack would win
        self._mock = mock_aws()
        self._mock.start()
        self._server = ThreadedMotoServer(ip_address=self.host, port=self.port, verbose=False)
        self._server.start()
        return self

    def stop(self) -> None:
        self._server.stop()
        self._mock.stop()
