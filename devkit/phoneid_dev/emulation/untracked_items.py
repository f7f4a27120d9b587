"""DynamoDB items moto makes for its answers, no longer kept for the life of the process.

Every moto model (``BaseModel``) appends each instance it makes to its class's ``instances_tracked``,
for moto's dashboard, until the mock is reset. For DynamoDB's ``Item`` that is not only the stored
items but every copy moto makes to answer a call (each item of a scan's page, a get's copy, an
update's backup): the process grows with every call it serves. A monitor pass over 200,000
identities grew the bench's process by 1.9 GB, the local stack by as much over a day of use. Here a
new ``Item`` is made as ``BaseModel`` makes it, without the tracking: nothing else reads it (the
dashboard is not served by ``phoneid dev``) and the stored items are held by their tables.
"""

from __future__ import annotations

from typing import Any

from phoneid_dev.patches import Patch, apply, named, register

# moto is imported inside the functions that use it, never here: it takes seconds to import, and
# the patch registry imports this module before (or without) starting moto.


def _untracked(tracked_new: Any) -> Any:
    def made(cls: type, *args: Any, **kwargs: Any) -> Any:
        return object.__new__(cls)

    made.__name__ = "__new__"
    made.__wrapped__ = tracked_new  # type: ignore[attr-defined]
    return staticmethod(made)


_UNTRACKED = register(
    Patch(
        why="a DynamoDB item moto makes to answer a call is not kept for moto's dashboard",
        module="moto.dynamodb.models.dynamo_type",
        attribute="Item.__new__",
        replace=_untracked,
        expected=named("__new__"),
    ),
)


def untracked_items() -> None:
    apply(*_UNTRACKED)
