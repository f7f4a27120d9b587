"""Unified authentication end to end: every unified-authentication Sandbox scenario, device keys, rebind,
revocation, inactivity, tenancy and racing binds."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from tests.device import Device, KeyPair, latest_code, latest_link
from tests.harness import Api, HttpResponse, Integrator, at_once
from tests.sandbox_numbers import (
    FALLBACK,
    HARD_FAIL_INTL,
    HARD_FAIL_NA,
    MOBILE_AUTH_FAIL,
    MOBILE_AUTH_PASS,
    OTP_FAIL,
    OTP_PASS,
    REPUTATION_FAIL,
    REVOKED_KEY,
)

# Each invocation a new instance: the IAM check sees every call each function makes on its own.
pytestmark = pytest.mark.cold_instances


def unify(integrator: Integrator, phone: str | None, **fields: Any) -> tuple[str, str]:
    body = {"possessionType": "mobile", **fields}
    if phone is not None:
        body["phoneNumber"] = phone
    answer = integrator.post("/v3/unify", body)
    assert answer.status == 200, answer.body
    assert answer.json()["success"] == "pending"
    return answer.json()["correlationId"], answer.json()["authToken"]


def status(integrator: Integrator, correlation_id: str) -> HttpResponse:
    return integrator.post("/v3/unify-status", {"correlationId": correlation_id})


def first_visit(
    integrator: Integrator, phone: str, device: Device | None = None
) -> tuple[Device, dict[str, Any]]:
    """A full OTP possession that registers a key; unify-status binds it."""
    correlation_id, token = unify(integrator, phone)
    device = device.for_flow(token) if device else Device(integrator.api, token)
    device.send_otp()
    assert device.enter("1234").json()["status"] == "passed"
    assert device.register().status == 200
    answer = status(integrator, correlation_id)
    assert answer.status == 200, answer.body
    return device, answer.json()


def test_first_visit_binds_a_key_after_otp_and_the_second_needs_no_sms(api: Api) -> None:
    # Given a first unify in which the customer passed OTP and the device registered a key
    integrator = api.integrator()
    device, first = first_visit(integrator, OTP_PASS)
    texts = len(api.outbox(OTP_PASS))

    # When the same device comes back for the same number and proves its key
    correlation_id, token = unify(integrator, OTP_PASS)
    returning = device.for_flow(token)
    proven = returning.prove()
    second = status(integrator, correlation_id)

    # Then the first answer bound the key, the second bypassed possession, and no SMS was sent
    assert first["success"] is True
    assert first["phoneNumber"] == OTP_PASS
    assert first["deviceId"] in device.keys
    assert first["serviceId"]
    assert proven.json()["status"] == "passed"
    assert second.json() == {
        "success": True,
        "serviceId": first["serviceId"],
        "deviceId": first["deviceId"],
        "phoneNumber": OTP_PASS,
    }
    assert len(api.outbox(OTP_PASS)) == texts


def test_unify_status_before_possession_is_9100_and_can_be_asked_again(api: Api) -> None:
    integrator = api.integrator()
    correlation_id, token = unify(integrator, OTP_PASS)
    device = Device(api, token)

    early = status(integrator, correlation_id)
    device.send_otp()
    device.enter("1234")
    later = status(integrator, correlation_id)
    replay = status(integrator, correlation_id)

    assert (early.status, early.json().get("code")) == (400, 9100)
    assert later.status == 200
    assert (replay.status, replay.json().get("code")) == (403, 8003)


@pytest.mark.parametrize("correlation_id", ["", "not-a-uuid", "4c2d0b0e-6f7a-4d1e-9a53-0c6f2b8e1d11"])
def test_unify_status_and_bind_answer_8008_with_403_for_bad_correlation_ids(
    api: Api, correlation_id: str
) -> None:
    integrator = api.integrator()
    body = {"correlationId": correlation_id} if correlation_id else {}

    for path in ("/v3/unify-status", "/v3/unify-bind"):
        answer = integrator.post(path, body)
        assert (answer.status, answer.json().get("code")) == (403, 8008), path


def test_otp_failure_answers_false_with_the_number(api: Api) -> None:
    integrator = api.integrator()
    correlation_id, token = unify(integrator, OTP_FAIL)
    device = Device(api, token)
    device.send_otp()
    device.enter("1111")

    answer = status(integrator, correlation_id).json()

    assert answer["success"] is False
    assert answer["phoneNumber"] == OTP_FAIL
    assert "deviceId" not in answer
    assert answer["evaluation"]["authentication"]["failureReasons"] == {"9100": "Phone possession incomplete"}


def test_mobile_auth_pass_binds_a_key_with_no_input(api: Api) -> None:
    integrator = api.integrator()
    correlation_id, token = unify(integrator, MOBILE_AUTH_PASS)
    device = Device(api, token)

    device.mobile_auth()
    device.register()
    answer = status(integrator, correlation_id).json()

    assert answer["success"] is True
    assert answer["deviceId"] in device.keys
    assert api.outbox(MOBILE_AUTH_PASS) == []


def test_mobile_auth_fail_then_otp_pass(api: Api) -> None:
    integrator = api.integrator()
    correlation_id, token = unify(integrator, FALLBACK)
    device = Device(api, token)

    device.mobile_auth()
    device.send_otp()
    device.enter("1234")

    assert status(integrator, correlation_id).json()["success"] is True


def test_mobile_auth_fail_without_fallback(api: Api) -> None:
    integrator = api.integrator()
    correlation_id, token = unify(integrator, MOBILE_AUTH_FAIL)
    Device(api, token).mobile_auth()

    answer = status(integrator, correlation_id).json()

    assert answer["success"] is False
    assert answer["phoneNumber"] == MOBILE_AUTH_FAIL
    assert "deviceId" not in answer


@pytest.mark.parametrize("phone", [HARD_FAIL_NA, HARD_FAIL_INTL])
def test_hard_failure_binds_nothing_and_answers_empty_identifiers(api: Api, phone: str) -> None:
    integrator = api.integrator()
    correlation_id, token = unify(integrator, phone)
    device = Device(api, token)
    device.mobile_auth()

    registered = device.register()
    answer = status(integrator, correlation_id).json()

    assert registered.status == 403  # possession failed: no key is registered
    assert answer["success"] is False
    assert answer["deviceId"] == ""
    assert answer["serviceId"] == ""
    assert answer["phoneNumber"] == phone


def test_reputation_failure_when_asked(api: Api) -> None:
    integrator = api.integrator()
    asked, token = unify(integrator, REPUTATION_FAIL, checkReputation=True)
    Device(api, token).mobile_auth()
    not_asked, other = unify(integrator, REPUTATION_FAIL)
    Device(api, other).mobile_auth()

    failed = status(integrator, asked).json()
    passed = status(integrator, not_asked).json()

    assert failed["success"] is False
    assert set(failed["evaluation"]["authentication"]["failureReasons"]) == {"9176"}
    assert set(failed["evaluation"]["risk"]["failureReasons"]) == {"9302"}
    assert passed["success"] is True


def test_revoked_key_user_gets_8019_on_the_second_unify_and_a_full_flow_rebinds(api: Api) -> None:
    integrator = api.integrator()
    correlation_id, token = unify(integrator, REVOKED_KEY)
    device = Device(api, token)
    device.mobile_auth()
    device.register()
    assert status(integrator, correlation_id).json()["success"] is True

    second_id, second_token = unify(integrator, REVOKED_KEY)
    revoked = device.for_flow(second_token).prove()
    second = status(integrator, second_id)

    assert (revoked.status, revoked.json().get("code")) == (403, 8019)
    assert (second.status, second.json().get("code")) == (403, 8019)


def test_revoke_gives_8019_until_a_new_full_flow_binds_a_new_key(api: Api) -> None:
    integrator = api.integrator()
    device, first = first_visit(integrator, OTP_PASS)

    revoked = integrator.post("/v3/device/revoke", {"deviceId": first["deviceId"]})
    _, token = unify(integrator, OTP_PASS)
    refused = device.for_flow(token).prove(first["deviceId"])
    device.keys.pop(first["deviceId"])  # the SDK forgets a revoked key
    _, again = first_visit(integrator, OTP_PASS, device)

    assert revoked.json() == {"success": True, "deviceId": first["deviceId"]}
    assert (refused.status, refused.json().get("code")) == (403, 8019)
    assert again["success"] is True
    assert again["deviceId"] != first["deviceId"]


def test_a_key_for_another_number_fails_with_9101_unless_rebind(api: Api) -> None:
    # Given a device whose key is bound to OTP_PASS
    integrator = api.integrator()
    device, first = first_visit(integrator, OTP_PASS)

    # When it authenticates for another number without rebind
    mismatch_id, token = unify(integrator, FALLBACK)
    mismatched = device.for_flow(token).prove()
    mismatch = status(integrator, mismatch_id).json()

    # Then the flow fails with 9101 and the key stays bound to OTP_PASS
    assert mismatched.json()["status"] == "failed"
    assert mismatch["success"] is False
    assert "9101" in mismatch["evaluation"]["authentication"]["failureReasons"]
    assert api.container.device_keys.get(integrator.client_id, first["deviceId"]).phone_number == OTP_PASS

    # When it runs again with rebind=true: full possession, then the key moves to the new number
    rebind_id, token = unify(integrator, FALLBACK, rebind=True)
    rebinding = device.for_flow(token)
    during = rebinding.prove().json()
    rebinding.mobile_auth()
    rebinding.send_otp()
    rebinding.enter("1234")
    rebound = status(integrator, rebind_id).json()

    assert during["status"] == "pending"  # the key alone is not enough when rebinding
    assert during["deviceKey"]["registerKey"] is False  # the device keeps its key
    assert rebound["success"] is True
    assert rebound["deviceId"] == first["deviceId"]
    assert api.container.device_keys.get(integrator.client_id, first["deviceId"]).phone_number == FALLBACK

    # And later calls for the new number need no rebind
    later_id, token = unify(integrator, FALLBACK)
    later = device.for_flow(token).prove()
    assert later.json()["status"] == "passed", later.body
    assert status(integrator, later_id).json()["deviceId"] == first["deviceId"]


def test_device_id_on_unify_picks_which_of_several_registrations_to_recover(api: Api) -> None:
    # Given one browser holding two registrations: one customer's for OTP_PASS, another's for FALLBACK
    integrator = api.integrator()
    browser, first = first_visit(integrator, OTP_PASS)
    _, second = first_visit(integrator, FALLBACK, browser)
    assert set(browser.keys) == {first["deviceId"], second["deviceId"]}

    # When the integrator names the second customer's registration on unify
    correlation_id, token = unify(integrator, FALLBACK, deviceId=second["deviceId"])
    returning = browser.for_flow(token)
    plan = returning.session()
    wrong_key = returning.prove(first["deviceId"])
    named_key = returning.prove(second["deviceId"])

    # Then the SDK is told which key to use, no other key of the browser may stand in, and it passes
    assert plan["deviceKey"]["deviceId"] == second["deviceId"]
    assert (wrong_key.status, wrong_key.json().get("code")) == (403, 8002)
    assert named_key.json()["status"] == "passed"
    assert status(integrator, correlation_id).json()["deviceId"] == second["deviceId"]


def test_an_inactive_key_is_deactivated_and_a_success_resets_the_period(api: Api) -> None:
    integrator = api.integrator()
    device, _ = first_visit(integrator, OTP_PASS)

    api.clock.advance(days=179)
    integrator = Integrator(api, integrator.credentials)  # a fresh access token
    recent_id, token = unify(integrator, OTP_PASS)
    assert device.for_flow(token).prove().json()["status"] == "passed"
    assert status(integrator, recent_id).json()["success"] is True

    api.clock.advance(days=179)
    integrator = Integrator(api, integrator.credentials)
    _, token = unify(integrator, OTP_PASS)
    assert device.for_flow(token).prove().status == 200  # used 179 days ago: still active

    api.clock.advance(days=181)
    integrator = Integrator(api, integrator.credentials)
    _, token = unify(integrator, OTP_PASS)
    stale = device.for_flow(token).prove()
    assert stale.status == 403
    assert stale.json()["code"] == 8002


def test_keys_are_per_client(api: Api) -> None:
    owner, stranger = api.integrator(), api.integrator()
    device, first = first_visit(owner, OTP_PASS)

    _, token = unify(stranger, OTP_PASS)
    borrowed = device.for_flow(token).prove(first["deviceId"])
    revoked = stranger.post("/v3/device/revoke", {"deviceId": first["deviceId"]})

    assert borrowed.status == 403
    assert (revoked.status, revoked.json().get("code")) == (404, 8011)
    assert api.container.device_keys.get(owner.client_id, first["deviceId"]).status.value == "active"


def test_a_proof_signed_by_another_key_is_refused(api: Api) -> None:
    integrator = api.integrator()
    device, first = first_visit(integrator, OTP_PASS)
    _, token = unify(integrator, OTP_PASS)

    forged = device.for_flow(token).prove(first["deviceId"], key=KeyPair())

    assert forged.status == 403


@pytest.mark.overlapping
def test_racing_unify_status_calls_bind_one_key(api: Api) -> None:
    integrator = api.integrator()
    correlation_id, token = unify(integrator, OTP_PASS)
    device = Device(api, token)
    device.send_otp()
    device.enter("1234")
    device.register()
    answers = at_once(lambda: status(integrator, correlation_id), 6)

    winners = [a.json() for a in answers if a.status == 200]
    assert len(winners) == 1
    keys = api.container.device_keys
    assert keys.get(integrator.client_id, winners[0]["deviceId"]) is not None
    assert sorted(a.status for a in answers) == [200] + [403] * 5


def test_desktop_success_has_no_key(api: Api) -> None:
    integrator = api.integrator()
    correlation_id, token = unify(integrator, OTP_PASS, finalTargetUrl="https://shop.example.com/")
    desktop = Device(api, token)

    chosen = desktop.call("/session", {"flowType": "desktop"}).json()
    desktop.send_link()
    api.get(latest_link(api, OTP_PASS))
    answer = status(integrator, correlation_id).json()

    assert chosen["methods"] == ["instant-link"]
    assert "deviceKey" not in chosen
    assert answer["success"] is True
    assert set(answer) == {"success", "serviceId", "phoneNumber"}


def test_possession_type_none_binds_with_unify_bind(make_api: Callable[..., Api]) -> None:
    # Given an EU stack, where possessionType none may come without a number
    api = make_api(tier="production", region="EU")
    integrator = api.integrator()
    answer = integrator.post("/v3/unify", {"possessionType": "none"})
    correlation_id, token = answer.json()["correlationId"], answer.json()["authToken"]
    device = Device(api, token)

    # When the device registers its key and the integrator, having checked possession itself, binds
    early = integrator.post("/v3/unify-bind", {"correlationId": correlation_id})
    device.register()
    bound = integrator.post("/v3/unify-bind", {"correlationId": correlation_id})
    wrong_step = integrator.post("/v3/unify-status", {"correlationId": correlation_id})

    # Then bind waits for the key (9100), then binds it
    assert (early.status, early.json().get("code")) == (400, 9100)
    assert bound.status == 200
    assert bound.json()["success"] is True
    assert bound.json()["deviceId"] in device.keys
    assert wrong_step.status == 403


def test_phone_number_rules_per_region_and_possession_type(make_api: Callable[..., Api]) -> None:
    us = make_api(tier="production")
    integrator = us.integrator()

    mobile_without = integrator.post("/v3/unify", {"possessionType": "mobile"})
    none_without = integrator.post("/v3/unify", {"possessionType": "none"})
    bad_type = integrator.post("/v3/unify", {"possessionType": "desktop", "phoneNumber": OTP_PASS})

    assert mobile_without.status == 200
    assert none_without.status == 400
    assert "phoneNumber" in none_without.json()["message"]
    assert bad_type.status == 400
    assert "possessionType" in bad_type.json()["message"]


def test_production_reputation_comes_with_the_imported_identity(make_api: Callable[..., Api]) -> None:
    # Given a production identity whose number has a reputation finding
    api = make_api(tier="production")
    record = {
        "phoneNumber": "+12025550181",
        "firstName": "Ada",
        "lastName": "Lovelace",
        "dob": "1985-12-10",
        "ssn": "123456789",
        "reputationReasons": [9135],
    }
    assert api.container.identity_import.run(json.dumps(record), "jsonl").imported == 1
    integrator = api.integrator()
    correlation_id, token = unify(integrator, "+12025550181", checkReputation=True)
    device = Device(api, token)
    device.send_otp()
    device.enter(latest_code(api, "+12025550181"))

    # Then the flow fails on that finding
    answer = status(integrator, correlation_id).json()
    assert answer["success"] is False
    assert answer["evaluation"]["authentication"]["failureReasons"] == {
        "9135": "Possible takeover: SIM swap under 24 hours"
    }


def test_browser_keys_need_the_key_persistence_flag(api: Api) -> None:
    plain = api.integrator()
    allowed = api.integrator(flags=["key-persistence"])

    def register(integrator: Integrator, public_api_key: str) -> HttpResponse:
        _, token = unify(integrator, MOBILE_AUTH_PASS)
        device = Device(api, token)
        device.mobile_auth()
        key = KeyPair()
        nonce = device.session()["deviceKey"]["nonce"]
        body = {"publicKey": key.jwk, "signature": key.sign(nonce), "publicApiKey": public_api_key}
        return device.call("/device-key/register", body)

    plain_key = api.container.clients.get(plain.client_id).public_api_key
    allowed_key = api.container.clients.get(allowed.client_id).public_api_key

    assert register(plain, plain_key).status == 403
    assert register(allowed, plain_key).status == 403  # another client's public key
    assert register(allowed, allowed_key).status == 200
