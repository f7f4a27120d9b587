"""Lambda's execution environments for the local stack: worker processes.

Every function of the local stack runs here in processes of its own, as on Lambda: one invocation
at a time per process, a new process when every one of the function's is busy (up to ``limit``;
further invocations wait for one to be free), and a process kept warm for the next invocation. A
worker reaches moto over HTTP like any other client. So overlapping requests never share a process
(Powertools keeps an invocation's event and log keys process-wide, as Lambda allows), a batch's
chunks are decided on every CPU of the machine rather than taking turns for one interpreter lock
with moto and the Step Functions interpreter, and each step's memory is its own process's
(``/proc/PID/status``, the process named by its ``--function``).

Between the local stack and a worker: one line of JSON each way per invocation, over a socket pair
(the worker's stdout and stderr stay the function's log, as in Lambda). A request carries the event
and the local clock's offset; the answer is the handler's result or Lambda's error payload. A
worker that exits mid-invocation answers ``Runtime.ExitError``; one that overruns its function's
timeout is stopped and answers ``Sandbox.Timedout``, as Lambda reports them to Step Functions. A
new worker's import of its handler is Lambda's init phase, timed apart from the invocation: it
says it is ready before its first invocation's timeout starts.

Run as ``python -m phoneid_dev.processes --fd N --module-path P --handler H --function F
--timeout T``: the worker's side.
"""

from __future__ import annotations

import argparse
import importlib.util
import io
import json
import logging
import os
import socket
import subprocess
import sys
import threading
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from phoneid import bootstrap
from phoneid_dev.access.recording.attribution import invoked_in_worker
from phoneid_dev.access.recording.hooks import install_from_environment
from phoneid_dev.clock import OffsetClock
from phoneid_dev.events import FunctionContext, function_context, lambda_error
from phoneid_dev.template import Template

log = logging.getLogger("phoneid_dev.processes")

# A worker gets this long beyond its function's timeout to answer before it is stopped.
_GRACE_SECONDS = 5.0
# Lambda's init phase has its own 10 s; past them, Lambda runs init again within the first
# invocation, under the function's timeout. So a new worker has at most 10 s plus its timeout to
# be ready, and its first invocation's timeout starts when it is.
_INIT_SECONDS = 10.0
_READY = b'{"ready": true}\n'


@dataclass(frozen=True)
class FunctionSpec:
    """What a worker process needs to run one function."""

    logical_id: str
    module_path: Path
    handler_name: str
    timeout_seconds: float


def function_specs(template: Template) -> dict[str, FunctionSpec]:
    """Every function of the template, with its timeout."""
    return {
        logical_id: FunctionSpec(
            logical_id,
            function.module_path,
            function.handler_name,
            function_context(template, logical_id).timeout_seconds,
        )
        for logical_id, function in template.functions.items()
    }


class _Worker:
    def __init__(self, spec: FunctionSpec, environment: Mapping[str, str]) -> None:
        ours, theirs = socket.socketpair()
        self.spec = spec
        self.process = subprocess.Popen(  # noqa: S603 - this package's own module
            [
                sys.executable, "-m", "phoneid_dev.processes",
                "--fd", str(theirs.fileno()),
                "--module-path", str(spec.module_path),
                "--handler", spec.handler_name,
                "--function", spec.logical_id,
                "--timeout", f"{spec.timeout_seconds:g}",
            ],
            env=dict(environment),
            pass_fds=(theirs.fileno(),),
            start_new_session=True,  # Ctrl-C is the local stack's to handle: it stops its workers
        )  # fmt: skip
        theirs.close()
        self._socket = ours
        self._stream = ours.makefile("rwb")
        self._ready = False

    def call(self, event: Any, clock_offset: float) -> tuple[Any, dict[str, Any] | None]:
        try:
            if not self._ready:
                self._socket.settimeout(_INIT_SECONDS + self.spec.timeout_seconds + _GRACE_SECONDS)
                self._ready = self._stream.readline() == _READY
                if not self._ready:
                    raise OSError("the worker ended its init without saying it was ready")
            self._socket.settimeout(self.spec.timeout_seconds + _GRACE_SECONDS)
            self._stream.write(json.dumps({"event": event, "clockOffset": clock_offset}).encode() + b"\n")
            self._stream.flush()
            line = self._stream.readline()
        except TimeoutError:
            self.stop()
            message = f"Task timed out after {self.spec.timeout_seconds:.2f} seconds"
            return None, {"errorType": "Sandbox.Timedout", "errorMessage": message}
        except OSError:
            line = b""
        if not line:
            self.stop()
            code = self.process.poll()
            return None, {
                "errorType": "Runtime.ExitError",
                "errorMessage": f"RequestId: {uuid.uuid4()} Error: Runtime exited with status {code}",
            }
        answer: dict[str, Any] = json.loads(line)
        return answer.get("result"), answer.get("error")

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def end(self) -> None:
        """Kill the process, from any thread: the invocation waiting on it answers Runtime.ExitError."""
        if self.process.poll() is None:
            self.process.kill()

    def stop(self) -> None:
        self._stream.close()
        self._socket.close()
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()


class FunctionProcesses:
    """Each function's worker processes; ``invoke`` runs one invocation on a free one."""

    def __init__(
        self,
        specs: Mapping[str, FunctionSpec],
        environment: Mapping[str, str],
        clock_offset: Callable[[], float] = lambda: 0.0,
        limit: int | None = None,
    ) -> None:
        self._specs = dict(specs)
        self._environment = dict(environment)
        self._clock_offset = clock_offset
        self.limit = max(1, limit or os.cpu_count() or 1)
        self._idle: dict[str, list[_Worker]] = {name: [] for name in self._specs}
        self._busy: set[_Worker] = set()
        self._count: dict[str, int] = dict.fromkeys(self._specs, 0)
        self._changed = threading.Condition()
        self._stopped = False

    def __contains__(self, logical_id: str) -> bool:
        return logical_id in self._specs

    def invoke(self, logical_id: str, event: Any) -> tuple[Any, dict[str, Any] | None]:
        """(result, None), or (None, Lambda's error payload)."""
        worker = self._acquire(logical_id)
        try:
            result, error = worker.call(event, self._clock_offset())
        finally:
            self._release(worker)
        if error is not None:
            log.info("%s raised %s", logical_id, error.get("errorType"))
        return result, error

    def _acquire(self, logical_id: str) -> _Worker:
        with self._changed:
            while True:
                if self._stopped:
                    raise RuntimeError("the local stack is stopping")
                idle = self._idle[logical_id]
                if idle:
                    worker = idle.pop()
                    self._busy.add(worker)
                    return worker
                if self._count[logical_id] < self.limit:
                    self._count[logical_id] += 1
                    break
                self._changed.wait()
        try:  # a process is started outside the lock: other functions' invocations go on meanwhile
            worker = _Worker(self._specs[logical_id], self._environment)
        except BaseException:
            with self._changed:
                self._count[logical_id] -= 1
                self._changed.notify_all()
            raise
        with self._changed:
            self._busy.add(worker)
            if self._stopped:  # stopped while it started: its invocation ends at once
                worker.end()
        return worker

    def _release(self, worker: _Worker) -> None:
        with self._changed:
            self._busy.discard(worker)
            if worker.alive and not self._stopped:
                self._idle[worker.spec.logical_id].append(worker)
            else:
                self._count[worker.spec.logical_id] -= 1
                worker.stop()
            self._changed.notify_all()

    def pids(self) -> dict[str, list[int]]:
        """The idle workers' process ids, by function."""
        with self._changed:
            return {name: [w.process.pid for w in idle] for name, idle in self._idle.items() if idle}

    def stop(self) -> None:
        """Stop the idle workers, and end the busy ones' invocations (Runtime.ExitError): a stack
        that stops waits for none, as a first invocation still importing would hold its exit for
        seconds (the key rotation it runs at start)."""
        with self._changed:
            self._stopped = True
            idle = [worker for workers in self._idle.values() for worker in workers]
            for workers in self._idle.values():
                workers.clear()
            busy = list(self._busy)
            self._changed.notify_all()
        for worker in idle:
            worker.stop()
        for worker in busy:
            worker.end()


# --- the worker's side -----------------------------------------------------------------------------


def _load(module_path: Path, handler_name: str) -> Callable[[Any, Any], Any]:
    spec = importlib.util.spec_from_file_location(f"function_{module_path.parent.name}", module_path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {module_path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    handler: Callable[[Any, Any], Any] = getattr(module, handler_name)
    return handler


def serve(
    stream: io.BufferedIOBase, handler: Callable[[Any, Any], Any], function: str, timeout: float
) -> None:
    """Answer invocations read from ``stream`` until it closes."""
    clock = OffsetClock()
    bootstrap.override(clock=clock)
    for line in stream:
        request = json.loads(line)
        clock.catch_up(float(request.get("clockOffset") or 0.0))
        context = FunctionContext(function_name=function, timeout_seconds=timeout)
        try:
            with invoked_in_worker(function):
                result = handler(request["event"], context)
            reply = json.dumps({"result": result})
        except Exception as error:  # the handler's, or a result that is not JSON (Lambda's too)
            reply = json.dumps({"error": lambda_error(error)})
        stream.write(reply.encode() + b"\n")
        stream.flush()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m phoneid_dev.processes", description=__doc__)
    parser.add_argument("--fd", type=int, required=True, help="the socket to the local stack")
    parser.add_argument("--module-path", type=Path, required=True)
    parser.add_argument("--handler", required=True)
    parser.add_argument("--function", required=True, help="the function's logical id")
    parser.add_argument("--timeout", type=float, required=True, help="the function's timeout, seconds")
    args = parser.parse_args(argv)
    install_from_environment()  # when the local stack records its functions' calls
    with socket.socket(fileno=args.fd) as connection, connection.makefile("rwb") as stream:
        with invoked_in_worker(args.function):  # the import is Lambda's init phase, under the function's role
            handler = _load(args.module_path, args.handler)
        stream.write(_READY)
        stream.flush()
        serve(stream, handler, args.function, args.timeout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
