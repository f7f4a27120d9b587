"""One event per multipart upload: moto's ``CompleteMultipartUpload`` stores the object with its
``PutObject`` (which sends an ``Object Created`` event) and then sends the event of the completed
upload; S3 sends one, so here the inner put sends none."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from phoneid_dev.patches import Patch, named, register

if TYPE_CHECKING:
    pass


_completing = threading.local()


def quiet_while_completing(put_object: Callable[..., Any]) -> Callable[..., Any]:
    def put_quietly_while_completing(self: Any, *args: Any, **kwargs: Any) -> Any:
        if getattr(_completing, "active", False):
            kwargs["disable_notification"] = True
        return put_object(self, *args, **kwargs)

    return put_quietly_while_completing


def completed_with_one_event(complete: Callable[..., Any]) -> Callable[..., Any]:
    def complete_with_one_event(self: Any, *args: Any, **kwargs: Any) -> Any:
        _completing.active = True
        try:
            return complete(self, *args, **kwargs)
        finally:
            _completing.active = False

    return complete_with_one_event


PATCHES = register(
    Patch(
        why="a completed multipart upload sends one Object Created event (its inner put none)",
        module="moto.s3.models",
        attribute="S3Backend.put_object",
        replace=quiet_while_completing,
        expected=named("put_object"),
    ),
    Patch(
        why="a completed multipart upload sends one Object Created event",
        module="moto.s3.models",
        attribute="S3Backend.complete_multipart_upload",
        replace=completed_with_one_event,
        expected=named("complete_multipart_upload"),
    ),
)
