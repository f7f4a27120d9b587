"""The Python server SDK against the stack on moto, through the local API Gateway: the errors it
raises are the stack's own answers, and its token follows the stack's clock."""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import parse_qsl

import httpx
import pytest
from phoneid_client import (
    AuthenticationError,
    BadRequestError,
    NotFoundError,
    PermissionDeniedError,
    PhoneIdClient,
    RateLimitError,
)
from phoneid_client.models import (
    IdentityEnrollRequest,
    StartRequest,
    VerifyBatchRequest,
    VerifyRequest,
)

from tests.harness import PUBLIC_BASE_URL, Api, Credentials


class InProcess(httpx.BaseTransport):
    """HTTP requests of the SDK handed to the test's stack, as API Gateway would receive them."""

    def __init__(self, api: Api) -> None:
        self.api = api

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        body = request.read().decode() or None
        query = dict(parse_qsl(request.url.query.decode()))
        # A REST API's event has the path as sent, still percent-encoded (a decision's `#` as %23)
        path = request.url.raw_path.decode().partition("?")[0]
        answer = self.api.request(request.method, path, body, dict(request.headers), query)
        return httpx.Response(answer.status, headers=dict(answer.headers), content=answer.body.encode())


def sdk(api: Api, credentials: Credentials) -> PhoneIdClient:
    return PhoneIdClient(
        PUBLIC_BASE_URL,
        credentials.client_id,
        credentials.client_secret,
        http=httpx.Client(transport=InProcess(api)),
        clock=lambda: api.clock.now().timestamp(),
    )


@pytest.fixture
def phoneid(api: Api) -> Iterator[PhoneIdClient]:
    with sdk(api, api.create_client()) as client:
        yield client


def test_a_refused_parameter_raises_bad_request_naming_it(phoneid: PhoneIdClient) -> None:
    with pytest.raises(BadRequestError) as raised:
        phoneid.enroll_identity(IdentityEnrollRequest(phoneNumber="+1 202 555"))

    assert (raised.value.status, raised.value.code) == (400, 8001)
    assert raised.value.message.startswith("Invalid parameters: phoneNumber:")


def test_an_unknown_identity_raises_not_found(phoneid: PhoneIdClient) -> None:
    with pytest.raises(NotFoundError) as raised:
        phoneid.get_identity("551ef735-5d2e-4c45-b080-c25a128913b3", client_request_id="req-7")

    assert (raised.value.status, raised.value.code, raised.value.message) == (404, 8011, "Identity not found")
    assert raised.value.client_request_id == "req-7"


def test_a_test_user_of_another_solution_raises_permission_denied(phoneid: PhoneIdClient) -> None:
    jamal = VerifyRequest(
        phoneNumber="+12025550110", verificationType="verifiedUser", firstName="Jamal", lastName="Carter"
    )
    with pytest.raises(PermissionDeniedError) as raised:
        phoneid.verify(jamal)

    assert (raised.value.status, raised.value.code) == (403, 8009)


def test_wrong_credentials_raise_authentication_error(api: Api) -> None:
    genuine = api.create_client()
    wrong = Credentials(genuine.client_id, "a-secret-that-is-long-enough-but-wrong")
    with sdk(api, wrong) as client, pytest.raises(AuthenticationError) as raised:
        client.list_identities()

    assert (raised.value.status, raised.value.code) == (401, 8002)


def test_more_than_25_calls_in_one_second_raise_rate_limit_error(phoneid: PhoneIdClient) -> None:
    # The stack's clock stands still: every call falls in one second
    for _ in range(25):
        phoneid.list_identities()
    with pytest.raises(RateLimitError) as raised:
        phoneid.list_identities()

    assert (raised.value.status, raised.value.code) == (429, 8018)


def test_the_token_is_renewed_before_the_stack_would_refuse_it(api: Api) -> None:
    client = sdk(api, api.create_client())
    first = client.access_token()
    client.start(StartRequest(flowType="mobile", phoneNumber="+12025550111"))

    # Five minutes before the first token expires, the SDK has taken another
    api.clock.advance(seconds=3600 - 300)
    started = client.start(StartRequest(flowType="mobile", phoneNumber="+12025550111"))
    second = client.access_token()
    assert second != first

    # and once the first has expired at the stack, the calls go on with it
    api.clock.advance(seconds=301)
    validated = client.validate(started.correlationId)
    assert client.access_token() == second
    assert validated.success is True
    assert validated.challengeMissing is True


LENA = "+12025550112"  # the Sandbox's Verified User (docs/sandbox.md)
NOBODY = "+12025550199"  # no Sandbox user has this number


def test_decision_records_are_listed_across_pages_read_by_id_summarised_and_erased(
    api: Api, phoneid: PhoneIdClient
) -> None:
    # Given Lena verified, then a batch of Lena and a number no Sandbox user has, a second apart
    verified = phoneid.verify(VerifyRequest(phoneNumber=LENA, verificationType="humanAssurance"))
    api.clock.advance(seconds=1)
    batch = phoneid.verify_batch(
        VerifyBatchRequest(
            items=[
                {"phoneNumber": LENA, "verificationType": "humanAssurance"},
                {"phoneNumber": NOBODY, "verificationType": "humanAssurance"},
            ]
        )
    )

    # When every record is listed one a page, and Lena's by her number
    everything = list(phoneid.list_decisions(limit=1))
    lenas = list(phoneid.list_decisions(phone_number=LENA, limit=1))

    # Then the list went through the pages, newest first, and the filter kept Lena's two
    assert [(record.kind, record.success) for record in lenas] == [("verify-batch", True), ("verify", True)]
    assert [record.id for record in lenas] == [f"{batch.correlationId}#0", verified.correlationId]
    assert {record.id for record in everything} == {
        *(record.id for record in lenas),
        f"{batch.correlationId}#1",
    }
    assert all(record.number is not None and record.number.lastTwo == "12" for record in lenas)

    # And a batch item's record is read whole by its id, the # escaped on the way: the number no
    # Sandbox user has, refused before a decision (8007), shown by its last two digits only
    item = phoneid.get_decision(f"{batch.correlationId}#1")
    assert (item.id, item.kind, item.outcome, item.success, item.errorCode) == (
        f"{batch.correlationId}#1", "verify-batch", "error", False, 8007,
    )  # fmt: skip
    assert item.number is not None
    assert (item.number.country, item.number.lastTwo) == ("US", "99")

    # And the summary counts the three
    summary = phoneid.summarise_decisions()
    assert (summary.total, summary.passed, summary.failed, summary.errors) == (3, 2, 0, 1)
    assert summary.byKind == {"verify": 1, "verify-batch": 2}

    # When Lena's records are erased
    erased = phoneid.erase_decisions(LENA)

    # Then they are gone from the list and from reading by id; the other item's stays
    assert erased.erased == 2
    assert list(phoneid.list_decisions(phone_number=LENA)) == []
    assert [record.id for record in phoneid.list_decisions()] == [f"{batch.correlationId}#1"]
    with pytest.raises(NotFoundError) as raised:
        phoneid.get_decision(f"{batch.correlationId}#0")
    assert (raised.value.status, raised.value.code, raised.value.message) == (404, 8011, "Decision not found")
    assert phoneid.get_decision(f"{batch.correlationId}#1").errorCode == 8007


def test_a_verification_is_read_whole_with_its_evaluation_and_facts(api: Api, phoneid: PhoneIdClient) -> None:
    verified = phoneid.verify(VerifyRequest(phoneNumber=LENA, verificationType="humanAssurance"))

    record = phoneid.get_decision(verified.correlationId)

    assert (record.kind, record.outcome, record.flow) == ("verify", "pass", "humanAssurance")
    assert record.evaluation is not None
    assert record.facts is not None
    facts = {fact.signal: fact for fact in record.facts}
    assert facts["portHoursAgo"].value is None


def test_a_list_filter_the_api_refuses_raises_bad_request_when_the_iteration_starts(
    phoneid: PhoneIdClient,
) -> None:
    records = phoneid.list_decisions(from_="last tuesday")

    with pytest.raises(BadRequestError) as raised:
        next(records)

    assert (raised.value.status, raised.value.code) == (400, 8001)
    assert "from" in raised.value.message
