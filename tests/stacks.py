"""Stacks provisioned once per worker, given back to each test as a fresh stack gives them.

Provisioning a stack on moto (tables, keys, queues, topics, buckets, state machines and their rules:
some sixty calls) is most of what a test of the stack used to spend before its first request. The
first test of a worker that builds a stack provisions it and keeps moto's state as provisioning left
it; every later test that builds the same stack gets that state back, copied, in the fresh moto its
``mock_aws`` started: the same resources with the same ids (KMS key ids among them), nothing a
test wrote, and moto's other services as a fresh mock leaves them
(docs/adr/0092-stacks-built-once-per-worker.md).
"""

from __future__ import annotations

import contextlib
import copy
import copyreg
import os
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from moto.core.base_backend import BackendDict

from phoneid_dev import workflows
from phoneid_dev.stack import LocalStack

# Locks in moto's state are copied as new, unheld locks (a copy is a different stack's state), and a
# condition as a new condition on its lock's copy (shared, as a queue's conditions share its mutex).
_NEW_LOCKS: dict[type, Any] = {
    type(threading.Lock()): lambda _: (threading.Lock, ()),
    type(threading.RLock()): lambda _: (threading.RLock, ()),
    threading.Condition: lambda condition: (threading.Condition, (condition._lock,)),
}


@contextlib.contextmanager
def _locks_copied_new() -> Iterator[None]:
    saved = dict(copyreg.dispatch_table)
    copyreg.dispatch_table.update(_NEW_LOCKS)
    try:
        yield
    finally:
        copyreg.dispatch_table.clear()
        copyreg.dispatch_table.update(saved)


def _moto_backends() -> set[BackendDict[Any]]:
    """moto's services that hold an account's state (none in a mock just started)."""
    instances = getattr(BackendDict, "_instances", None)
    if instances is None:  # moto moved it: fail here, not with a stack that keeps a test's writes
        raise RuntimeError("moto.core.base_backend.BackendDict._instances is gone: see tests/stacks.py")
    return set(instances)


class _Placeholder:
    """Where a kept state refers to a backend of moto (a topic to its service's backend): the live
    backend it stands for is put back in its place when the state is restored."""


@dataclass(frozen=True)
class _Provisioned:
    physical_ids: dict[str, str]
    attributes: dict[tuple[str, str], str]
    # Each regional backend moto had once the stack was provisioned: its service, account and region,
    # and its state, in which every reference to a backend is that backend's placeholder.
    where: tuple[tuple[BackendDict[Any], str, str], ...]
    placeholders: tuple[_Placeholder, ...]
    states: tuple[dict[str, Any], ...]

    @classmethod
    def kept(cls, stack: LocalStack) -> _Provisioned:
        services = _moto_backends()
        where = tuple(
            (service, account, region)
            for service in services
            for account, regions in service.items()
            for region in regions
        )
        placeholders = tuple(_Placeholder() for _ in where)
        memo: dict[int, Any] = {id(service): service for service in services}
        memo |= {
            id(service[account][region]): each
            for (service, account, region), each in zip(where, placeholders, strict=True)
        }
        with _locks_copied_new():
            states = copy.deepcopy(
                tuple(service[account][region].__dict__ for service, account, region in where), memo
            )
        return cls(dict(stack.physical_ids), dict(stack.attributes), where, placeholders, states)

    def restore(self) -> None:
        """moto's state as provisioning left it, in a mock that holds nothing yet."""
        live = [service[account][region] for service, account, region in self.where]
        memo: dict[int, Any] = {id(service): service for service, _, _ in self.where}
        memo |= {id(each): backend for each, backend in zip(self.placeholders, live, strict=True)}
        with _locks_copied_new():
            states = copy.deepcopy(self.states, memo)
        for backend, state in zip(live, states, strict=True):
            backend.__dict__ = state


_provisioned: dict[tuple[Any, ...], _Provisioned] = {}


def provisioned(
    parameters: Mapping[str, str], overrides: Mapping[str, str], *, cold_starts: bool = False
) -> LocalStack:
    """The stack of ``parameters`` in moto's mock: provisioned when this worker has not built it
    yet, or when the mock already holds something (a second stack of one test, or what a test
    created before), else the kept state restored. Either way a new ``LocalStack``, whose handlers
    load afresh as a new deployment's would."""
    key = (
        os.environ.get("AWS_DEFAULT_REGION"),
        tuple(sorted(parameters.items())),
        tuple(sorted(overrides.items())),
    )
    fresh_mock = not _moto_backends()
    kept = _provisioned.get(key)
    if kept is not None and fresh_mock:
        kept.restore()
        stack = LocalStack(
            parameters=dict(parameters),
            overrides=dict(overrides),
            cold_starts=cold_starts,
            physical_ids=dict(kept.physical_ids),
            attributes=dict(kept.attributes),
        )
        workflows.install(stack)  # moto's Lambda runs this stack's handlers, as provisioning does
        return stack
    stack = LocalStack(
        parameters=dict(parameters), overrides=dict(overrides), cold_starts=cold_starts
    ).provision()
    if fresh_mock:
        _provisioned[key] = _Provisioned.kept(stack)
    return stack
