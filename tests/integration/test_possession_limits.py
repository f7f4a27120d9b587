"""Possession limits at their edges, with time moved by the test's clock, never slept."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.device import Device, latest_code, latest_link
from tests.harness import Api, Integrator, at_once
from tests.integration.test_possession_sandbox import TARGET, start
from tests.sandbox_numbers import OTP_PASS

CANADIAN = "+16135550101"  # valid, mobile-capable, but not a test user


def production(api_factory: Callable[..., Api], **spec: Any) -> tuple[Api, Integrator]:
    api = api_factory(tier="production")
    return api, api.integrator(**spec)


def test_otp_is_accepted_at_119_seconds_and_refused_at_121(make_api: Callable[..., Api]) -> None:
    api, integrator = production(make_api)
    _, early = start(integrator, OTP_PASS)
    _, late = start(integrator, OTP_PASS)
    early.send_otp()
    early_code = latest_code(api, OTP_PASS)
    late.send_otp()
    late_code = latest_code(api, OTP_PASS)

    api.clock.advance(seconds=119)
    accepted = early.enter(early_code)
    api.clock.advance(seconds=2)
    refused = late.enter(late_code)

    assert accepted.json()["status"] == "passed"
    assert refused.status == 400
    assert "expired" in refused.json()["message"]
    assert late.session()["status"] == "pending"  # an expired code is not an entry


def test_link_works_at_179_seconds_and_not_at_181(api: Api) -> None:
    integrator = api.integrator()
    _, first = start(integrator, OTP_PASS, flowType="desktop", finalTargetUrl=TARGET)
    first.send_link()
    first_link = latest_link(api, OTP_PASS)
    _, second = start(integrator, OTP_PASS, flowType="desktop", finalTargetUrl=TARGET)
    second.send_link()
    second_link = latest_link(api, OTP_PASS)

    api.clock.advance(seconds=179)
    in_time = api.get(first_link)
    api.clock.advance(seconds=2)
    too_late = api.get(second_link)

    assert in_time.status == 302
    assert too_late.status == 410
    assert second.session()["status"] == "pending"


def test_fourth_send_is_refused_and_nothing_is_texted(api: Api) -> None:
    integrator = api.integrator()
    _, device = start(integrator, OTP_PASS)

    sends = [device.send_otp().status for _ in range(3)]
    fourth = device.send_otp()

    assert sends == [200, 200, 200]
    assert fourth.status == 403
    assert "At most 3 messages" in fourth.json()["message"]
    assert len(api.outbox(OTP_PASS)) == 3


def test_fourth_entry_is_refused_even_with_the_right_code(api: Api) -> None:
    integrator = api.integrator()
    _, device = start(integrator, OTP_PASS, allowOTPRetry=True)
    device.send_otp()

    wrong = [device.enter("9999").json() for _ in range(3)]
    fourth = device.enter("1234")

    assert [w["otp"]["entriesLeft"] for w in wrong] == [2, 1, 0]
    assert [w["status"] for w in wrong] == ["pending", "pending", "failed"]
    assert fourth.status == 403


def test_without_retry_one_wrong_entry_fails_possession(api: Api) -> None:
    integrator = api.integrator()
    _, device = start(integrator, OTP_PASS)
    device.send_otp()

    assert device.enter("9999").json()["status"] == "failed"
    assert device.enter("1234").status == 403


def test_a_used_code_is_refused(make_api: Callable[..., Api]) -> None:
    api, integrator = production(make_api)
    _, device = start(integrator, OTP_PASS)
    device.send_otp()
    code = latest_code(api, OTP_PASS)

    assert device.enter(code).json()["status"] == "passed"
    assert device.enter(code).status == 403


def test_a_code_of_an_earlier_send_no_longer_works(make_api: Callable[..., Api]) -> None:
    api, integrator = production(make_api)
    _, device = start(integrator, OTP_PASS, allowOTPRetry=True)
    device.send_otp()
    first = latest_code(api, OTP_PASS)
    device.send_otp()
    second = latest_code(api, OTP_PASS)

    stale = device.enter(first).json()
    fresh = device.enter(second).json()

    assert first != second or stale["status"] == "passed"  # two equal random codes would both be current
    assert stale["lastError"] == "otp-invalid"
    assert fresh["status"] == "passed"


@pytest.mark.overlapping
def test_parallel_entries_cannot_exceed_the_attempt_limit(api: Api) -> None:
    integrator = api.integrator()
    _, device = start(integrator, OTP_PASS, allowOTPRetry=True)
    device.send_otp()
    statuses = [answer.status for answer in at_once(lambda: device.enter("9999"), 8)]

    after = device.session()
    assert statuses.count(200) == 3
    assert statuses.count(403) == 5
    assert after["status"] == "failed"
    assert after["otp"]["entriesLeft"] == 0


def test_number_change_needs_the_operator_flag(api: Api) -> None:
    plain = api.integrator()
    _, device = start(plain, OTP_PASS)
    device.send_otp()

    changed = device.send_otp("+12025550105")

    assert changed.status == 403
    assert "not enabled" in changed.json()["message"]
    assert api.outbox("+12025550105") == []


def test_number_change_allows_three_numbers_in_all(api: Api) -> None:
    integrator = api.integrator(flags=["phone-number-change"])
    correlation_id, device = start(integrator, OTP_PASS)
    device.send_otp()

    second = device.send_otp("+12025550105")
    third = device.send_otp(OTP_PASS)
    entered = device.enter("1234")

    assert [second.status, third.status] == [200, 200]
    assert second.json()["numberChangeAllowed"] is True
    assert entered.json()["status"] == "passed"
    validated = integrator.post("/v3/validate", {"correlationId": correlation_id}).json()
    assert validated["phoneNumber"] == OTP_PASS


def test_fourth_number_is_refused(make_api: Callable[..., Api]) -> None:
    api = make_api(tier="production")
    integrator = api.integrator(flags=["phone-number-change"])
    _, device = start(integrator, "+12025550121", allowOTPRetry=True)

    statuses = [device.send_otp(number).status for number in ("+12025550121", "+12025550122", "+12025550123")]
    fourth = device.send_otp("+12025550124")

    assert statuses == [200, 200, 200]
    assert fourth.status == 403
    assert api.outbox("+12025550124") == []


def test_sms_only_to_allowed_countries_and_mobile_capable_numbers(make_api: Callable[..., Api]) -> None:
    api, integrator = production(make_api, countries=["US", "AU"], flags=["phone-number-change"])
    _, device = start(integrator, "+12025550131")

    canadian = device.send_otp(CANADIAN)
    landline = device.send_otp("+61291234567")  # Sydney fixed line
    garbage = device.send_otp("+1 555")

    assert canadian.status == 403
    assert canadian.json()["code"] == 8010
    assert landline.status == 400
    assert "cannot receive SMS" in landline.json()["message"]
    assert garbage.status == 400
    assert api.outbox() == []


def test_send_budget_per_number_spans_sessions(make_api: Callable[..., Api]) -> None:
    # Given four sessions for one number (a new session does not reset the budget)
    api, integrator = production(make_api)
    devices: list[Device] = [start(integrator, "+12025550141")[1] for _ in range(4)]

    # When they ask for 11 codes within the hour
    responses = [device.send_otp() for device in devices for _ in range(3)][:11]

    # Then the 11th is refused with the rate-limit headers and texts nothing
    assert [r.status for r in responses[:10]] == [200] * 10
    assert responses[10].status == 429
    assert responses[10].json()["code"] == 8018
    assert int(responses[10].headers["Retry-After"]) > 0
    assert len(api.outbox("+12025550141")) == 10
    # And the next hour's budget is fresh (with a fresh access token: the old one expired too)
    api.clock.advance(hours=1)
    renewed = Integrator(api, integrator.credentials)
    assert start(renewed, "+12025550141")[1].send_otp().status == 200


def test_send_budget_per_client_spans_numbers(make_api: Callable[..., Api]) -> None:
    api = make_api(tier="production", parameters={"SmsPerClientPerHour": "2"})
    integrator = api.integrator()
    other = api.integrator()

    statuses = [start(integrator, f"+1202555015{n}")[1].send_otp().status for n in range(3)]

    assert statuses == [200, 200, 429]
    assert start(other, "+12025550159")[1].send_otp().status == 200


def test_sms_message_carries_a_code_of_its_placeholders_length(make_api: Callable[..., Api]) -> None:
    api, integrator = production(make_api)
    _, device = start(integrator, OTP_PASS, smsMessage="Your Acme code: ####")
    refused = integrator.start(phoneNumber=OTP_PASS, smsMessage="Your Acme code: ##")

    device.send_otp()
    text = api.outbox(OTP_PASS)[-1]["text"]
    code = latest_code(api, OTP_PASS)

    assert text == f"Your Acme code: {code}"
    assert len(code) == 4
    assert device.enter(code).json()["status"] == "passed"
    assert refused.status == 400
    assert "smsMessage" in refused.json()["message"]
