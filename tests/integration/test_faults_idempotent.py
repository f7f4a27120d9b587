"""Faults under an Idempotency-Key: a retry after a timeout returns the same answer and creates
nothing twice (docs/api.md#retries-with-an-idempotency-key), on each of the six write routes.

Three timeouts (an AWS call failing above botocore's retries, as ``tests/faults.py``'s API layer does):

- the answer lost on its way back (the caller's own timeout): the request was done; its retry is
  answered the first answer and runs nothing;
- a call of the route timing out in the first attempt (for verify, after its enrolment was written):
  it answers the documented 8000 and frees the key; the retry runs once, a third send is its replay;
- the write that keeps the answer timing out: the caller still gets the success (the work was done),
  and a retry while the attempt's lease lasts is 409, not a second run.

"Nothing twice" is read in the tables a request creates things in (sessions, identities, device
keys) and in the outbox: the keyed request, with its failure and retries, leaves what one clean
request of another client leaves.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from botocore.client import BaseClient
from botocore.exceptions import ReadTimeoutError

from tests.harness import Api
from tests.integration.test_idempotency import ALL, Route, keyed, route_of

# The tables a write route creates things in; activity records are records of checks, one per run.
_CREATED_IN = ("SessionsTable", "EnrollmentsTable", "DeviceKeysTable")
# A call of each route that, timing out, fails the attempt (8000): the session's write; the phone
# alias's MAC, made after the enrollment's write has landed; the read of the identities' places
# before enrolling (a timed-out enrollment write itself is retried by the route and answered).
_TIMING_OUT: dict[str, tuple[str, str | None]] = {
    "start": ("PutItem", "SessionsTable"),
    "verify": ("GenerateMac", None),
    "verify_batch": ("GenerateMac", None),
    "identity": ("BatchGetItem", None),
    "identity_batch": ("BatchGetItem", None),
    "device_revoke": ("UpdateItem", "DeviceKeysTable"),
}


def created(api: Api) -> Counter[str]:
    return Counter({table: len(api.table_items(table)) for table in _CREATED_IN}) + Counter(
        texts=len(api.outbox())
    )


def once_by_another_client(api: Api, name: str, route: Route) -> Counter[str]:
    """What one clean request leaves: the same request by another client (a revocation creates
    nothing, and another client has no key of this device to revoke)."""
    if name == "device_revoke":
        return Counter()
    before = created(api)
    assert keyed(api.integrator(), route).status == 200
    return created(api) - before


@contextmanager
def timing_out(api: Api, operation: str, table: str | None) -> Iterator[list[str]]:
    """The first call of ``operation`` (on ``table``, a template table's name) raises botocore's
    read timeout above its retries (as ``tests/faults.py``'s API layer does): what the code sees
    when every attempt timed out."""
    physical = api.stack.physical_ids[table] if table else None
    make_api_call = BaseClient._make_api_call  # type: ignore[attr-defined]
    failed: list[str] = []

    def call(client: Any, name: str, params: Any) -> Any:
        if not failed and name == operation and physical in (None, params.get("TableName")):
            failed.append(name)
            raise ReadTimeoutError(endpoint_url=client.meta.endpoint_url)
        return make_api_call(client, name, params)

    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(BaseClient, "_make_api_call", call)
        yield failed


@pytest.mark.parametrize("name", ALL)
def test_a_retry_after_the_answer_was_lost_gets_it_and_creates_nothing_twice(api: Api, name: str) -> None:
    # Given a keyed request whose answer the caller never got (its own timeout)
    integrator, route = route_of(api, name)
    before = created(api)
    lost = keyed(integrator, route)
    assert lost.status == 200, lost.body

    # When it retries under the same key
    again = keyed(integrator, route)

    # Then it gets that answer, and one request's things exist
    assert (again.status, again.body) == (lost.status, lost.body)
    assert created(api) - before == once_by_another_client(api, name, route)


@pytest.mark.parametrize("name", ALL)
def test_a_retry_after_a_call_of_the_route_timed_out_runs_once(api: Api, name: str) -> None:
    # Given a keyed request one of whose calls times out in the first attempt, failing it
    integrator, route = route_of(api, name)
    before = created(api)
    with timing_out(api, *_TIMING_OUT[name]) as failed:
        first = keyed(integrator, route)
    assert failed

    # When the caller retries under the same key, then once more
    retried = keyed(integrator, route)
    replayed = keyed(integrator, route)

    # Then the failure was the documented 8000, which kept nothing; the retry ran once, and the
    # third send is its replay
    assert (first.status, first.json().get("code")) == (500, 8000)
    assert retried.status == 200, retried.body
    assert replayed.body == retried.body
    # and one request's things exist
    assert created(api) - before == once_by_another_client(api, name, route)


@pytest.mark.parametrize("name", ALL)
def test_when_keeping_the_answer_times_out_the_caller_has_it_and_a_retry_is_409(api: Api, name: str) -> None:
    # Given a keyed request whose answer could not be kept: the idempotency table's UpdateItem times out
    integrator, route = route_of(api, name)
    before = created(api)
    with timing_out(api, "UpdateItem", "IdempotencyTable") as failed:
        first = keyed(integrator, route)
    assert failed

    # When the caller retries while that attempt's lease lasts
    retried = keyed(integrator, route)

    # Then it had the success, the retry is 409, and one request's things exist
    assert first.status == 200, first.body
    assert (retried.status, retried.json().get("code")) == (409, 8020)
    assert created(api) - before == once_by_another_client(api, name, route)
