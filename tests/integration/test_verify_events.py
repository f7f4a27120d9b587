"""/v3/verify and /v3/verify/batch handlers called directly, as Lambda calls them, with the sample
events of ``events/verify`` and ``events/verify_batch`` (the Sandbox user who passes, Lena Ortiz)."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from tests.harness import EVENTS, Api
from tests.integration.test_handler_events import SAMPLE_CLIENT_ID, for_client

# Each invocation a new instance: the IAM check sees every call each function makes on its own.
pytestmark = pytest.mark.cold_instances

VERIFIED_USER_PASS = "+12025550112"
UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")
ALL_PASS = {
    "identification": {"result": "pass"},
    "authentication": {"result": "pass"},
    "compliance": {"result": "pass"},
    "risk": {"result": "pass"},
}


def body(result: dict[str, Any]) -> Any:
    return json.loads(result["body"])


def test_the_verify_samples_are_rest_proxy_events_of_their_routes() -> None:
    # Given the two samples as they are stored
    for name, path in [
        ("verify/verified_user.json", "/v3/verify"),
        ("verify_batch/items.json", "/v3/verify/batch"),
    ]:
        # When read
        event = json.loads((EVENTS / name).read_text())

        # Then each is a POST of its route with the sample authorizer context and client id placeholder
        assert (event["resource"], event["path"], event["httpMethod"]) == (path, path, "POST")
        assert event["requestContext"]["resourcePath"] == path
        assert event["requestContext"]["authorizer"]["clientId"] == SAMPLE_CLIENT_ID


def test_verify_sample_verifies_the_sandbox_user(api: Api) -> None:
    # Given a client of the Sandbox stack
    integrator = api.integrator()

    # When VerifyFunction is invoked with the sample as the authorizer passes it on for that client
    result = api.invoke("VerifyFunction", for_client("verify/verified_user.json", integrator))

    # Then Lena Ortiz is verified and enrolled
    assert result["statusCode"] == 200
    answer = body(result)
    assert UUID.match(answer["correlationId"])
    assert UUID.match(answer["serviceId"])
    assert answer["success"] == "true"
    assert answer["phoneNumber"] == VERIFIED_USER_PASS
    assert (answer["clientRequestId"], answer["clientCustomerId"]) == ("verify-0001", "customer-0042")
    assert answer["isEnrolled"] is True
    assert (answer["identity"]["firstName"], answer["identity"]["lastName"]) == ("Lena", "Ortiz")
    assert answer["identity"]["assuranceLevel"] == "AL2"
    assert answer["evaluation"] == ALL_PASS
    assert answer["signals"] == [{"verifiedUser": {"champion": {"label": "verified"}}}]


def test_verify_batch_sample_answers_each_item_in_order(api: Api) -> None:
    # Given a client of the Sandbox stack
    integrator = api.integrator()

    # When VerifyBatchFunction is invoked with the sample (Verified User, then Human Assurance)
    result = api.invoke("VerifyBatchFunction", for_client("verify_batch/items.json", integrator))

    # Then both items succeed, in order
    assert result["statusCode"] == 200
    answer = body(result)
    assert UUID.match(answer["correlationId"])
    assert answer["clientRequestId"] == "batch-0002"
    verified, human = answer["results"]
    assert (verified["success"], verified["phoneNumber"]) == ("true", VERIFIED_USER_PASS)
    assert (verified["clientCustomerId"], verified["assuranceLevel"]) == ("customer-0042", "AL2")
    assert verified["isEnrolled"] is True
    assert verified["signals"] == [{"verifiedUser": {"champion": {"label": "verified"}}}]
    assert "error" not in verified
    assert (human["success"], human["phoneNumber"]) == ("true", VERIFIED_USER_PASS)
    assert human["clientHumanId"] == "human-0042"
    assert human["signals"] == [{"humanAssurance": {"champion": {"label": "human"}}}]
    assert "error" not in human
