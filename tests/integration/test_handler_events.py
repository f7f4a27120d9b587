"""Each handler called directly, as Lambda calls it, with the sample events of ``events/``.

The samples are what ``sam local invoke -e`` uses too; placeholders (``<ACCESS_TOKEN>``, the client id
and correlation id the authorizer would have set) are filled with real values of this stack.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.device import Device
from tests.harness import EVENTS, Api, Credentials, Integrator, load_event
from tests.sandbox_numbers import OTP_PASS, TOKEN_ONLY

# Each invocation a new instance: the IAM check sees every call each function makes on its own.
pytestmark = pytest.mark.cold_instances

SAMPLE_CLIENT_ID = "0123456789abcdef0123456789abcdef"
SAMPLE_CORRELATION_ID = "4c2d0b0e-6f7a-4d1e-9a53-0c6f2b8e1d11"


def for_client(
    name: str, integrator: Integrator, replacements: dict[str, str] | None = None
) -> dict[str, Any]:
    """A /v3 sample as the access-token authorizer would pass it on for ``integrator``."""
    return load_event(name, {SAMPLE_CLIENT_ID: integrator.client_id, **(replacements or {})})


def body(result: dict[str, Any]) -> Any:
    return json.loads(result["body"])


def test_every_sample_event_is_a_rest_proxy_authorizer_queue_or_schedule_event() -> None:
    samples = sorted(EVENTS.glob("*/*.json"))

    assert len(samples) >= 15
    for sample in samples:
        event = json.loads(sample.read_text())
        if event.get("type") == "TOKEN":
            assert event["methodArn"].startswith("arn:aws:execute-api:")
            continue
        if "Records" in event:
            assert all(record["eventSource"] == "aws:sqs" for record in event["Records"]), sample
            continue
        if event == {} or {"bucket", "batchId", "passId"} & set(event):  # Scheduler; Step Functions tasks
            continue
        assert event["requestContext"]["resourcePath"] == event["resource"], sample
        assert event["httpMethod"] in {"GET", "POST", "DELETE"}, sample


def test_token_sample_grants_a_token(api: Api) -> None:
    credentials: Credentials = api.create_client()

    result = api.invoke(
        "TokenFunction",
        load_event(
            "token/client_credentials.json",
            {"<CLIENT_ID>": credentials.client_id, "<CLIENT_SECRET>": credentials.client_secret},
        ),
    )

    assert result["statusCode"] == 200
    assert body(result)["token_type"] == "Bearer"
    assert body(result)["expires_in"] == 3600


def test_token_sample_with_its_placeholders_is_401(api: Api) -> None:
    result = api.invoke("TokenFunction", load_event("token/client_credentials.json"))

    assert result["statusCode"] == 401
    assert body(result)["code"] == 8002


def test_authorizer_sample_allows_a_real_token_and_refuses_the_placeholder(api: Api) -> None:
    integrator = api.integrator()

    policy = api.invoke(
        "AuthorizerFunction", load_event("authorizer/token.json", {"<ACCESS_TOKEN>": integrator.access_token})
    )

    assert policy["context"]["clientId"] == integrator.client_id
    with pytest.raises(Exception, match=r"^Unauthorized$"):
        api.invoke("AuthorizerFunction", load_event("authorizer/token.json"))


def test_jwks_sample_lists_the_signing_keys_of_today_and_tomorrow(api: Api) -> None:
    result = api.invoke("JwksFunction", load_event("jwks/get.json"))

    assert result["statusCode"] == 200
    kids = [key["kid"] for key in body(result)["keys"]]
    assert len(set(kids)) == 2
    assert kids[0] == api.container.signer.signing_key().jwk["kid"]  # today's signs now


def test_staged_samples_walk_the_whole_flow(api: Api) -> None:
    integrator = api.integrator()

    started = api.invoke("StartFunction", for_client("start/mobile.json", integrator))
    correlation_id = body(started)["correlationId"]
    validated = api.invoke(
        "ValidateFunction",
        for_client("validate/request.json", integrator, {SAMPLE_CORRELATION_ID: correlation_id}),
    )
    challenged = api.invoke(
        "ChallengeFunction",
        for_client("challenge/dob.json", integrator, {SAMPLE_CORRELATION_ID: correlation_id}),
    )
    completed = api.invoke(
        "CompleteFunction",
        for_client("complete/individual.json", integrator, {SAMPLE_CORRELATION_ID: correlation_id}),
    )

    assert started["statusCode"] == 200
    assert body(validated) == {
        "success": True,
        "challengeMissing": True,
        "phoneNumber": TOKEN_ONLY,
        "next": {"v3-challenge": "/v3/challenge"},
    }
    assert body(challenged)["individual"]["lastName"] == "Petrova"
    assert body(completed)["success"] is True
    assert body(completed)["next"] == {"done": "done"}


def test_desktop_start_sample_opens_an_instant_link_flow(api: Api) -> None:
    integrator = api.integrator()

    started = api.invoke("StartFunction", for_client("start/desktop.json", integrator))

    assert started["statusCode"] == 200
    session = api.container.sessions.get(integrator.client_id, body(started)["correlationId"])
    assert session is not None
    assert session.flow_type == "desktop"


def test_samples_of_an_unknown_session_are_403_8008(api: Api) -> None:
    integrator = api.integrator()

    for function, sample in [
        ("ValidateFunction", "validate/request.json"),
        ("ChallengeFunction", "challenge/dob.json"),
        ("CompleteFunction", "complete/individual.json"),
        ("UnifyStatusFunction", "unify_status/request.json"),
        ("UnifyBindFunction", "unify_bind/request.json"),
    ]:
        result = api.invoke(function, for_client(sample, integrator))
        assert result["statusCode"] == 403, sample
        assert body(result)["code"] == 8008, sample
        assert body(result)["correlationId"] == SAMPLE_CORRELATION_ID, sample


def test_unify_and_client_api_samples_prove_possession_by_otp(api: Api) -> None:
    integrator = api.integrator()
    unified = api.invoke("UnifyFunction", for_client("unify/mobile.json", integrator))
    correlation_id, auth_token = body(unified)["correlationId"], body(unified)["authToken"]
    as_the_flow = {SAMPLE_CLIENT_ID: integrator.client_id, SAMPLE_CORRELATION_ID: correlation_id}

    pending = api.invoke(
        "UnifyStatusFunction",
        for_client("unify_status/request.json", integrator, {SAMPLE_CORRELATION_ID: correlation_id}),
    )
    plan = api.invoke("ClientSessionFunction", load_event("client_session/request.json", as_the_flow))
    sent = api.invoke("ClientOtpFunction", load_event("client_otp/send.json", as_the_flow))
    entered = api.invoke("ClientOtpVerifyFunction", load_event("client_otp_verify/code.json", as_the_flow))
    status = api.invoke(
        "UnifyStatusFunction",
        for_client("unify_status/request.json", integrator, {SAMPLE_CORRELATION_ID: correlation_id}),
    )

    assert body(unified)["success"] == "pending"
    assert auth_token.count(".") == 2
    assert body(pending)["code"] == 9100
    assert body(plan)["correlationId"] == correlation_id
    assert plan["multiValueHeaders"]["Access-Control-Allow-Origin"] == ["*"]
    assert body(sent)["otp"]["sent"] is True
    assert body(entered)["status"] == "passed"
    assert body(status)["success"] is True
    assert body(status)["phoneNumber"] == OTP_PASS


def test_device_revoke_sample_revokes_a_bound_key(api: Api) -> None:
    integrator = api.integrator()
    unified = integrator.post("/v3/unify", {"phoneNumber": OTP_PASS, "possessionType": "mobile"}).json()
    device = Device(api, unified["authToken"])
    device.send_otp()
    device.enter("1234")
    device_id = device.register().json()["deviceId"]
    integrator.post("/v3/unify-status", {"correlationId": unified["correlationId"]})

    revoked = api.invoke(
        "DeviceRevokeFunction",
        for_client("device_revoke/request.json", integrator, {"<DEVICE_ID>": device_id}),
    )
    stranger = api.invoke(
        "DeviceRevokeFunction",
        for_client("device_revoke/request.json", api.integrator(), {"<DEVICE_ID>": device_id}),
    )

    assert revoked["statusCode"] == 200
    assert body(revoked)["deviceId"] == device_id
    stored = api.container.device_keys.get(integrator.client_id, device_id)
    assert stored is not None
    assert stored.status.value == "revoked"
    assert stranger["statusCode"] != 200
