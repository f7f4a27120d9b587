"""The carrier's fraud signals through CAMARA network APIs, against a fake operator on loopback."""

from __future__ import annotations

import itertools
import json
import urllib.error
import urllib.request
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, date, datetime
from typing import Any

import pytest

from phoneid.adapters.camara import OperatorConfig
from phoneid.adapters.camara_signals import (
    CamaraCallForwarding,
    CamaraDeviceStatus,
    CamaraKycMatch,
    CamaraNetworkClient,
    CamaraNumberRecycling,
    CamaraSimSwap,
    CamaraTenure,
)
from phoneid.domain.signals import KycClaim, KycResult, SignalSourceError
from phoneid_dev.operator import FakeOperator
from tests.harness import LogRecorder

_numbers = itertools.count(1000)


def new_number() -> str:
    return f"+1202555{next(_numbers) % 10000:04d}"


class Clock:
    """A monotonic clock the test moves."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def network(
    operator: FakeOperator,
    *,
    timeout: float = 5.0,
    clock: Callable[[], float] | None = None,
    client_secret: str | None = None,
) -> CamaraNetworkClient:
    config = OperatorConfig(
        authorize_url=operator.settings["CAMARA_AUTHORIZE_URL"],
        token_url=operator.settings["CAMARA_TOKEN_URL"],
        api_base_url=operator.settings["CAMARA_API_URL"],
        client_id=operator.client_id,
        client_secret=client_secret or operator.client_secret,
    )
    if clock is None:
        return CamaraNetworkClient(lambda: config, operator.base_url, timeout=timeout)
    return CamaraNetworkClient(lambda: config, operator.base_url, timeout=timeout, clock=clock)


def every_signal(client: CamaraNetworkClient, number: str) -> dict[str, Any]:
    """Each port's answer for ``number``."""
    status = CamaraDeviceStatus(client)
    return {
        "sim_swap": CamaraSimSwap(client).latest_change(number),
        "call_forwarding": CamaraCallForwarding(client).unconditional(number),
        "tenure": CamaraTenure(client).held_since(number, date(2020, 1, 1)),
        "recycled": CamaraNumberRecycling(client).recycled_since(number, date(2020, 1, 1)),
        "kyc": CamaraKycMatch(client).match(number, KycClaim(given_name="Ana", birthdate="1990-01-01")),
        "reachable": status.reachable(number),
        "roaming": status.roaming_country(number),
    }


NEUTRAL = {
    "sim_swap": None,
    "call_forwarding": False,
    "tenure": True,
    "recycled": False,
    "kyc": KycResult({"given_name": "not_available", "birthdate": "not_available"}),
    "reachable": True,
    "roaming": None,
}
NO_DATA = NEUTRAL | {"tenure": False, "reachable": False}


def test_sim_swap_answers_the_scripted_change_and_none_without_one(operator: FakeOperator) -> None:
    # Given a number whose SIM changed at a known time, and a number with no change scripted
    swapped, untouched = new_number(), new_number()
    operator.script(swapped, latestSimChange="2025-06-01T10:15:00Z")
    sim_swap = CamaraSimSwap(network(operator))

    # When the SIM Swap adapter asks for both
    changed = sim_swap.latest_change(swapped)
    unchanged = sim_swap.latest_change(untouched)

    # Then the first has its change as an aware datetime, the second none
    assert changed == datetime(2025, 6, 1, 10, 15, tzinfo=UTC)
    assert unchanged is None


def test_call_forwarding_is_on_only_where_scripted(operator: FakeOperator) -> None:
    # Given a number that forwards its calls unconditionally
    forwarding, plain = new_number(), new_number()
    operator.script(forwarding, callForwarding=True)
    source = CamaraCallForwarding(network(operator))

    # When the adapter asks about it and about another number
    # Then only the first forwards
    assert source.unconditional(forwarding) is True
    assert source.unconditional(plain) is False


def test_tenure_holds_for_dates_on_or_after_the_subscription(operator: FakeOperator) -> None:
    # Given a subscriber since 2024-03-01, and an unscripted number (subscribed since 2015-01-01)
    recent, old = new_number(), new_number()
    operator.script(recent, subscribedSince="2024-03-01")
    tenure = CamaraTenure(network(operator))

    # When tenure is checked around those dates
    # Then it holds from the subscription date on, and not before it
    assert tenure.held_since(recent, date(2024, 3, 1)) is True
    assert tenure.held_since(recent, date(2024, 2, 29)) is False
    assert tenure.held_since(old, date(2015, 1, 1)) is True
    assert tenure.held_since(old, date(2014, 12, 31)) is False


def test_a_number_is_recycled_when_its_subscriber_changed_after_the_date(operator: FakeOperator) -> None:
    # Given a number whose subscriber changed on 2025-02-10
    changed, kept = new_number(), new_number()
    operator.script(changed, subscriberChangedAt="2025-02-10")
    recycling = CamaraNumberRecycling(network(operator))

    # When recycling is checked since dates before and on the change, and for a number never recycled
    # Then only a date before the change counts as recycled
    assert recycling.recycled_since(changed, date(2025, 2, 9)) is True
    assert recycling.recycled_since(changed, date(2025, 2, 10)) is False
    assert recycling.recycled_since(kept, date(2000, 1, 1)) is False


def test_kyc_match_answers_each_supplied_field_ignoring_case_and_accents(operator: FakeOperator) -> None:
    # Given a subscriber whose operator KYC holds name, birth date, SSN and address (but no email)
    number = new_number()
    operator.script(
        number,
        subscriber={
            "givenName": "José",
            "familyName": "Núñez García",
            "birthdate": "1980-04-02",
            "idDocument": "123-45-6789",
            "address": "1 Main Street",
            "postalCode": "20001",
        },
    )
    claim = KycClaim(
        given_name="JOSE",
        family_name="nunez  garcia",
        birthdate="1980-04-03",
        id_document="123456789",
        postal_code="20001",
        email="jose@example.com",
    )

    # When the claim is matched
    result = CamaraKycMatch(network(operator)).match(number, claim)

    # Then every supplied field (and only those) has the operator's answer, under KycClaim's names
    assert result.fields == {
        "given_name": "true",
        "family_name": "true",
        "birthdate": "false",
        "id_document": "true",
        "postal_code": "true",
        "email": "not_available",
    }
    assert result.elements() == {"name": "true", "address": "true", "dob": "false", "ssn": "true"}


def test_kyc_match_of_an_empty_claim_asks_nothing(operator: FakeOperator) -> None:
    # Given a claim with no field
    number = new_number()
    client = network(operator)

    # When it is matched
    result = CamaraKycMatch(client).match(number, KycClaim())

    # Then the answer is empty, and the operator was not asked (no token taken)
    assert result.fields == {}
    assert operator.client_grants == 0


def test_device_status_reports_reachability_and_the_visited_country(operator: FakeOperator) -> None:
    # Given a device that is off the network, one roaming in Germany, and one at home
    off, abroad, home = new_number(), new_number(), new_number()
    operator.script(off, reachable=False)
    operator.script(abroad, roamingCountry="DE")
    status = CamaraDeviceStatus(network(operator))

    # When reachability and roaming are asked
    # Then each answers as scripted
    assert status.reachable(off) is False
    assert status.reachable(home) is True
    assert status.roaming_country(abroad) == "DE"
    assert status.roaming_country(home) is None


def test_unscripted_numbers_get_neutral_answers(operator: FakeOperator) -> None:
    # Given a number the test scripted nothing for
    number = new_number()

    # When every signal is asked
    answers = every_signal(network(operator), number)

    # Then each is the neutral answer
    assert answers == NEUTRAL


def test_a_number_the_operator_does_not_know_gets_the_no_data_answers(operator: FakeOperator) -> None:
    # Given a number the operator answers 404 IDENTIFIER_NOT_FOUND for, on every API
    number = new_number()
    operator.script(number, unknown=True)

    # When every signal is asked
    answers = every_signal(network(operator), number)

    # Then none fails: no SIM change, no forwarding, no tenure, not recycled, KYC not available,
    # not reachable, not roaming
    assert answers == NO_DATA


@pytest.mark.parametrize("status", [404, 422])
def test_no_data_statuses_give_the_no_data_answer(operator: FakeOperator, status: int) -> None:
    # Given an operator answering 404 IDENTIFIER_NOT_FOUND or 422 on every API for a number
    number = new_number()
    apis = ["sim-swap", "call-forwarding", "tenure", "recycling", "kyc-match", "reachability", "roaming"]
    operator.script(number, fail=dict.fromkeys(apis, status))

    # When every signal is asked
    answers = every_signal(network(operator), number)

    # Then each is the no-data answer
    assert answers == NO_DATA


def test_one_token_serves_many_concurrent_calls(operator: FakeOperator) -> None:
    # Given one client shared by every adapter, and a scripted number
    number = new_number()
    operator.script(number, callForwarding=True, roamingCountry="FR")
    client = network(operator)

    # When forty calls run at once from a thread pool
    with ThreadPoolExecutor(max_workers=8) as pool:
        rounds = list(pool.map(lambda _: every_signal(client, number), range(6)))

    # Then every call answered, and the operator issued a single token
    assert all(answers["call_forwarding"] is True and answers["roaming"] == "FR" for answers in rounds)
    assert operator.client_grants == 1


def test_the_token_is_renewed_shortly_before_it_expires(operator: FakeOperator) -> None:
    # Given tokens that live 300 s, and a client on a clock the test moves
    operator.token_lifetime = 300
    clock = Clock()
    source = CamaraCallForwarding(network(operator, clock=clock))
    number = new_number()

    # When calls are made at once, after 250 s, and after 280 s (30 s before expiry)
    source.unconditional(number)
    clock.now += 250
    source.unconditional(number)
    after_250 = operator.client_grants
    clock.now += 30
    source.unconditional(number)

    # Then the first token served until shortly before its expiry, then a new one was taken
    assert after_250 == 1
    assert operator.client_grants == 2


def test_a_token_the_operator_no_longer_accepts_is_replaced(operator: FakeOperator) -> None:
    # Given a client holding a token, and an operator that forgets it (as after a restart)
    number = new_number()
    operator.script(number, callForwarding=True)
    source = CamaraCallForwarding(network(operator))
    source.unconditional(number)
    operator.revoke_tokens()

    # When the next call is made
    active = source.unconditional(number)

    # Then it answers, with a fresh token
    assert active is True
    assert operator.client_grants == 2


@pytest.mark.parametrize("status", [500, 503, 429, 403, 401, 400])
def test_an_operator_failure_becomes_a_signal_source_error(operator: FakeOperator, status: int) -> None:
    # Given an operator that answers SIM Swap with an error status for a number
    number = new_number()
    operator.script(number, fail={"sim-swap": status})

    # When the SIM Swap adapter asks
    with pytest.raises(SignalSourceError) as raised:
        CamaraSimSwap(network(operator)).latest_change(number)

    # Then the error names the API and the status, never the number
    assert "SIM Swap" in str(raised.value)
    assert str(status) in str(raised.value)
    assert number not in str(raised.value)


def test_a_failure_of_one_api_leaves_the_others_working(operator: FakeOperator) -> None:
    # Given an operator whose KYC Match is down for a number
    number = new_number()
    operator.script(number, callForwarding=True, fail={"kyc-match": 503})
    client = network(operator)

    # When KYC Match and Call Forwarding are asked
    with pytest.raises(SignalSourceError):
        CamaraKycMatch(client).match(number, KycClaim(given_name="Ana"))
    forwarding = CamaraCallForwarding(client).unconditional(number)

    # Then the other API still answers
    assert forwarding is True


def test_an_answer_slower_than_the_timeout_becomes_a_signal_source_error(operator: FakeOperator) -> None:
    # Given an operator that answers Device Roaming Status for a number after 2 s, and an adapter
    # whose timeout is 0.2 s
    number = new_number()
    operator.script(number, fail={"roaming": "slow:2"})
    status = CamaraDeviceStatus(network(operator, timeout=0.2))

    # When roaming is asked
    with pytest.raises(SignalSourceError) as raised:
        status.roaming_country(number)

    # Then the call gave up with a SignalSourceError naming the API, and reachability still answers
    assert "Device Roaming Status" in str(raised.value)
    assert number not in str(raised.value)
    assert status.reachable(number) is True


def test_an_answer_that_is_not_json_becomes_a_signal_source_error(operator: FakeOperator) -> None:
    # Given an operator that answers Number Recycling with an HTML page
    number = new_number()
    operator.script(number, fail={"recycling": "malformed"})

    # When recycling is checked
    # Then the adapter raises SignalSourceError
    with pytest.raises(SignalSourceError, match="Number Recycling"):
        CamaraNumberRecycling(network(operator)).recycled_since(number, date(2024, 1, 1))


def test_wrong_operator_credentials_become_a_signal_source_error(operator: FakeOperator) -> None:
    # Given a client configured with a wrong client secret
    number = new_number()
    client = network(operator, client_secret="not-the-secret")

    # When a signal is asked
    with pytest.raises(SignalSourceError) as raised:
        CamaraTenure(client).held_since(number, date(2024, 1, 1))

    # Then the token request failed (401) and no token was issued
    assert "token" in str(raised.value)
    assert "401" in str(raised.value)
    assert operator.client_grants == 0


def test_an_unreachable_operator_becomes_a_signal_source_error() -> None:
    # Given a client whose operator has stopped listening
    gone = FakeOperator().start()
    client = network(gone, timeout=1)
    gone.stop()

    # When a signal is asked
    # Then the adapter raises SignalSourceError
    with pytest.raises(SignalSourceError, match="SIM Swap token"):
        CamaraSimSwap(client).latest_change(new_number())


def test_failures_log_no_phone_number_or_personal_data(operator: FakeOperator, logged: LogRecorder) -> None:
    # Given an operator failing KYC Match and SIM Swap for a number
    number = new_number()
    operator.script(number, fail={"kyc-match": 403, "sim-swap": 503})
    client = network(operator)

    # When both are asked with a claim holding personal data
    for call in (
        lambda: CamaraKycMatch(client).match(number, KycClaim(given_name="Zorba", id_document="911456711")),
        lambda: CamaraSimSwap(client).latest_change(number),
    ):
        with pytest.raises(SignalSourceError):
            call()

    # Then the failures were logged, without the number, the name or the SSN
    written = "\n".join(logged.lines)
    assert "CAMARA" in written
    for secret in (number, number.removeprefix("+"), "Zorba", "911456711"):
        assert secret not in written


def test_scripts_can_be_posted_and_cleared_over_http(operator: FakeOperator) -> None:
    # Given a number scripted over HTTP as the local stack does
    number = new_number()
    post(operator, "POST", {"phoneNumber": number, "callForwarding": True, "roamingCountry": "it"})
    client = network(operator)
    scripted = every_signal(client, number)

    # When every script is deleted
    post(operator, "DELETE", None)
    cleared = every_signal(client, number)

    # Then the script took effect, and after the delete the number is neutral again
    assert scripted == NEUTRAL | {"call_forwarding": True, "roaming": "IT"}
    assert cleared == NEUTRAL


@pytest.mark.parametrize(
    "script",
    [
        {"callForwarding": True},  # no phoneNumber
        {"phoneNumber": "+12025550100", "colour": "blue"},
        {"phoneNumber": "+12025550100", "fail": {"sim-swap": "sometimes"}},
        {"phoneNumber": "+12025550100", "subscriber": {"shoeSize": "44"}},
    ],
)
def test_an_invalid_script_is_refused(operator: FakeOperator, script: dict[str, Any]) -> None:
    # Given a script the operator cannot follow
    # When it is posted
    with pytest.raises(urllib.error.HTTPError) as raised:
        post(operator, "POST", script)

    # Then it is refused with CAMARA's error body
    assert raised.value.code == 400
    assert json.loads(raised.value.read())["code"] == "INVALID_ARGUMENT"


def post(operator: FakeOperator, method: str, body: dict[str, Any] | None) -> int:
    request = urllib.request.Request(  # noqa: S310 - the operator on loopback
        f"{operator.base_url}/_script",
        data=json.dumps(body).encode() if body is not None else None,
        headers={"Content-Type": "application/json"},
        method=method,
    )
    with urllib.request.urlopen(request, timeout=5) as response:  # noqa: S310
        return int(response.status)
