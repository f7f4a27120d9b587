"""A number's place in Identity Manager handed over: a deactivated identity without a clientCustomerId
gives its place to the next one enrolled for the number, by any of the routes that enroll."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.identities import Identities

# Each invocation a new instance: the IAM check sees every call each function makes on its own.
pytestmark = pytest.mark.cold_instances

VERIFIED_USER_PASS = "+12025550112"  # Lena Ortiz (docs/sandbox.md)
LENA = {"firstName": "Lena", "lastName": "Ortiz"}


def verified(alice: Identities) -> str:
    answer = alice.integrator.post(
        "/v3/verify", {"phoneNumber": VERIFIED_USER_PASS, "verificationType": "verifiedUser", **LENA}
    )
    assert answer.status == 200, answer.body
    return str(answer.json()["serviceId"])


def verified_in_a_batch(alice: Identities) -> str:
    answer = alice.integrator.post(
        "/v3/verify/batch",
        {"items": [{"phoneNumber": VERIFIED_USER_PASS, "verificationType": "verifiedUser", **LENA}]},
    )
    assert answer.status == 200, answer.body
    [result] = answer.json()["results"]
    return str(result["serviceId"])


def enrolled_in_a_batch(alice: Identities) -> str:
    answer = alice.batch([{"phoneNumber": VERIFIED_USER_PASS, **LENA}])
    assert answer.status == 200, answer.body
    [result] = answer.json()["results"]
    return str(result["serviceId"])


@pytest.mark.parametrize("enroll", [verified, verified_in_a_batch, enrolled_in_a_batch])
def test_the_next_identity_of_a_number_takes_the_place_of_its_deactivated_one(
    alice: Identities, enroll: Callable[[Identities], str]
) -> None:
    # Given the number's identity, enrolled without a clientCustomerId, then deactivated
    first = enroll(alice)
    assert alice.deactivate(first).status == 200

    # When the number is enrolled again by the same route
    second = enroll(alice)

    # Then a new identity holds the number; the first one stays, inactive
    assert second != first
    found = alice.lookup(VERIFIED_USER_PASS).json()["items"]
    assert {item["serviceId"]: item["active"] for item in found} == {first: False, second: True}
