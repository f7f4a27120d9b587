"""Global secondary indexes that have not caught up yet, on moto.

DynamoDB updates a table's global secondary indexes asynchronously: a query of an index made just
after a write may not see it (an item written, changed or deleted shows there as it was), usually
for a fraction of a second. moto updates them at once, so a test could never meet the window.
``behind(table)`` opens it: while the block runs, every query of one of the table's indexes answers
from the table as it stood when the block began (a copy taken then), with moto's own key conditions,
filters, projections and pages; the table itself, and every read of it, stay current. When the
block ends the indexes have caught up.

The seam wraps ``query`` of this test's DynamoDB backend object only (it lives in the backend's own
``__dict__``, which the next test's stack replaces), so it reaches the functions that run in this
process, not those in worker processes (the ``overlapping`` mark), and replaces no name of moto.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

_ACCOUNT = "123456789012"  # moto's


class _AsOf:
    """The backend as an index query of ``table`` sees it while behind: that table as it stood."""

    def __init__(self, backend: Any, table: str, stood: Any) -> None:
        self._backend = backend
        self._table = table
        self._stood = stood

    def get_table(self, name: str) -> Any:
        return self._stood if name == self._table else self._backend.get_table(name)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._backend, name)


def _backend() -> Any:
    from moto.dynamodb.models import dynamodb_backends

    return dynamodb_backends[_ACCOUNT][os.environ.get("AWS_DEFAULT_REGION", "us-east-1")]


@contextmanager
def behind(table: str) -> Iterator[None]:
    """The indexes of ``table`` (its physical name) held where they stood: see the module."""
    backend = _backend()
    stood = copy.deepcopy(backend.get_table(table))
    current = type(backend).query

    def query(table_name: str, *args: Any, index_name: str | None = None, **kwargs: Any) -> Any:
        seen = _AsOf(backend, table, stood) if index_name and table_name == table else backend
        return current(seen, table_name, *args, index_name=index_name, **kwargs)

    backend.query = query
    try:
        yield
    finally:
        del backend.query
