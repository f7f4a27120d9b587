"""The Identity Manager handlers called directly, as Lambda calls them, with their sample events.

The samples (``events/identity_*/``) carry the sample client id the authorizer would set and a sample
serviceId; both are replaced with real values of this stack, as ``test_handler_events.py`` does.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.harness import Api, Integrator, load_event

# Each invocation a new instance: the IAM check sees every call each function makes on its own.
pytestmark = pytest.mark.cold_instances

SAMPLE_CLIENT_ID = "0123456789abcdef0123456789abcdef"
SAMPLE_SERVICE_ID = "5f0c6a8e-2d4b-4c1e-9f3a-7b6d8e0a1c2d"
SAMPLE_PHONE = "+12025550123"  # the number of the enroll and lookup samples


def sample(name: str, integrator: Integrator, service_id: str = SAMPLE_SERVICE_ID) -> dict[str, Any]:
    return load_event(name, {SAMPLE_CLIENT_ID: integrator.client_id, SAMPLE_SERVICE_ID: service_id})


def body(result: dict[str, Any]) -> Any:
    return json.loads(result["body"])


def test_identity_samples_walk_an_identity_through_every_call(api: Api) -> None:
    # Given a client
    integrator = api.integrator()

    # When each sample is invoked in turn on the identity the enroll sample creates
    enrolled = api.invoke("IdentityEnrollFunction", sample("identity_enroll/request.json", integrator))
    service_id = body(enrolled)["serviceId"]
    read = api.invoke("IdentityGetFunction", sample("identity_get/request.json", integrator, service_id))
    deactivated = api.invoke(
        "IdentityDeactivateFunction", sample("identity_deactivate/request.json", integrator, service_id)
    )
    listed = api.invoke("IdentityListFunction", sample("identity_list/request.json", integrator))
    activated = api.invoke(
        "IdentityActivateFunction", sample("identity_activate/request.json", integrator, service_id)
    )
    looked_up = api.invoke("IdentityLookupFunction", sample("identity_lookup/request.json", integrator))
    disenrolled = api.invoke(
        "IdentityDisenrollFunction", sample("identity_disenroll/request.json", integrator, service_id)
    )
    gone = api.invoke("IdentityGetFunction", sample("identity_get/request.json", integrator, service_id))

    # Then each answers as documented
    assert enrolled["statusCode"] == 200
    assert body(enrolled) == {"serviceId": service_id, "success": True}
    assert body(read)["clientCustomerId"] == "customer-0042"
    assert body(read)["phoneNumber"] == SAMPLE_PHONE
    assert body(deactivated) == {"success": True}
    assert body(listed) == {
        "results": [
            {
                "serviceId": service_id,
                "phoneNumber": SAMPLE_PHONE,
                "clientCustomerId": "customer-0042",
                "active": False,
            }
        ]
    }
    assert body(activated) == {"success": True}
    assert [item["serviceId"] for item in body(looked_up)["items"]] == [service_id]
    assert body(looked_up)["items"][0]["active"] is True
    assert body(disenrolled) == {"success": True}
    assert (gone["statusCode"], body(gone)["code"]) == (404, 8011)


def test_batch_sample_enrolls_the_good_item_and_reports_the_bad_one(api: Api) -> None:
    integrator = api.integrator()

    result = api.invoke("IdentityBatchFunction", sample("identity_batch/request.json", integrator))

    assert result["statusCode"] == 200
    good, bad = body(result)["results"]
    assert set(good) == {"serviceId"}
    assert bad["error"].startswith("Invalid parameters: phoneNumber: ")


def test_samples_naming_an_unknown_identity_are_404_8011(api: Api) -> None:
    integrator = api.integrator()

    for function, name in [
        ("IdentityGetFunction", "identity_get/request.json"),
        ("IdentityDisenrollFunction", "identity_disenroll/request.json"),
        ("IdentityActivateFunction", "identity_activate/request.json"),
        ("IdentityDeactivateFunction", "identity_deactivate/request.json"),
        ("IdentityLookupFunction", "identity_lookup/request.json"),
    ]:
        result = api.invoke(function, sample(name, integrator))
        assert result["statusCode"] == 404, name
        assert body(result)["code"] == 8011, name
    # The disenroll sample sends clientRequestId in its query string; the error echoes it.
    disenroll = api.invoke("IdentityDisenrollFunction", sample("identity_disenroll/request.json", integrator))
    assert body(disenroll)["clientRequestId"] == "disenroll-0042"
