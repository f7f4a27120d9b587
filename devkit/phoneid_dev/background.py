"""What the local stack does on its own while it runs, as AWS would: print the outbox, deliver the
queues' messages (Lambda's SQS event source mappings), log the state machines' executions and rotate
the token keys (EventBridge Scheduler), and delete expired items (DynamoDB's TTL). Each runs as a
task for the app's lifespan."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

from starlette.concurrency import run_in_threadpool

from phoneid_dev.console import log
from phoneid_dev.devstack import DevStack
from phoneid_dev.outbox import Outbox, printed_line
from phoneid_dev.workflows.watching import ExecutionLog

# How often a stack with a data directory saves what changed (phoneid dev --data): what a crash loses.
SAVE_SECONDS = 10.0


async def watch_outbox(outbox: Outbox) -> None:
    """Print every message once; reading /_local/outbox meanwhile takes none away."""
    while True:
        try:
            for message in outbox.unprinted():
                log(printed_line(message))
        except Exception as error:  # keep watching; the next round may succeed
            log(f"OUTBOX watch failed: {type(error).__name__}")
        await asyncio.sleep(0.2)


async def every(seconds: float, work: Callable[[], object], failed: str) -> None:
    """``work`` on a worker thread every ``seconds``; a round that fails is logged, the next tried."""
    while True:
        try:
            await run_in_threadpool(work)
        except Exception as error:
            log(f"{failed}: {type(error).__name__}")
        await asyncio.sleep(seconds)


def log_workflows(executions: ExecutionLog) -> None:
    """Connect batches run in moto's Step Functions (started by uploads): log their executions."""
    for line in executions.changes():
        log(line)


class BackgroundTasks:
    """The app's lifespan (``lifespan``): the tasks start with the app and are cancelled when it stops."""

    def __init__(self, dev: DevStack) -> None:
        self._dev = dev

    @contextlib.asynccontextmanager
    async def lifespan(self, app: Any) -> AsyncIterator[None]:
        dev = self._dev
        executions = ExecutionLog(dev.stack)
        tasks = [
            asyncio.create_task(watch_outbox(dev.outbox)),
            # Lambda's SQS event source mapping: messages are delivered once they are visible.
            asyncio.create_task(every(1.0, dev.deliver_queued, "WEBHOOK queue poll failed")),
            asyncio.create_task(every(1.0, lambda: log_workflows(executions), "WORKFLOW watch failed")),
            # The rotation's hourly schedule, run every minute here: the local clock may jump days.
            asyncio.create_task(every(60.0, dev.rotate_token_keys, "TOKEN KEYS rotation failed")),
            # The decision history's appends, every minute as their schedule runs them in AWS.
            asyncio.create_task(every(60.0, dev.append_history, "HISTORY append failed")),
            # DynamoDB's TTL: expired items deleted, their deletions to the streams' consumers.
            asyncio.create_task(every(60.0, dev.sweep_expired, "TTL sweep failed")),
        ]
        if dev.data is not None:  # phoneid dev --data: a crash (kill -9) loses at most this long's changes
            tasks.append(asyncio.create_task(every(SAVE_SECONDS, dev.save_data, "DATA save failed")))
        yield
        for task in tasks:
            task.cancel()
