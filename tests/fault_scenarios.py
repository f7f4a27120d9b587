"""One happy request per REST route of the template, with what it needs done before it.

``SCENARIOS[name](make_api)`` builds a fresh stack, walks the flow up to the request, and returns a
``Scenario`` whose ``send`` makes the request (again, each time it is called).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from phoneid.domain.clients import Solution
from phoneid.domain.push import SUBSCRIBED_TYPE, PushSignal, PushSubscription, new_sink_token
from phoneid_dev.gateway import HttpResponse
from tests.device import Device, KeyPair, latest_link
from tests.harness import Api, Integrator
from tests.sandbox_numbers import MOBILE_AUTH_PASS, OTP_PASS, TOKEN_ONLY

VERIFIED_USER_PASS = "+12025550112"
LENA = {"firstName": "Lena", "lastName": "Ortiz"}
TARGET = "https://shop.example.com/verified"
ENROLLED = "+12025559001"


@dataclass
class Scenario:
    api: Api
    send: Callable[[], HttpResponse]
    ok: int = 200
    # Once it answered its success, the same request is a replay: ``replay`` (docs/api.md).
    once: bool = False
    replay: tuple[int, int | None] = (403, 8003)  # status, code (None: not a JSON error)
    phone: str | None = None  # whose outbox to watch
    texts: int = 0  # texts one success sends to ``phone``
    binds: bool = False  # one success binds the flow's device key


MakeApi = Callable[..., Api]


def _staged(integrator: Integrator, phone: str = TOKEN_ONLY) -> str:
    started = integrator.start(phoneNumber=phone)
    assert started.status == 200, started.body
    return str(started.json()["correlationId"])


def _flow(integrator: Integrator, phone: str, path: str = "/v3/start", **fields: Any) -> tuple[str, Device]:
    body = (
        {"phoneNumber": phone, **fields}
        if path == "/v3/start"
        else {"possessionType": "mobile", "phoneNumber": phone}
    )
    if path == "/v3/start":
        body.setdefault("flowType", "mobile")
    answer = integrator.post(path, body)
    assert answer.status == 200, answer.body
    return answer.json()["correlationId"], Device(integrator.api, answer.json()["authToken"])


def _ready(make_api: MakeApi, **spec: Any) -> tuple[Api, Integrator]:
    """A stack and a client with its access token, its authorizers' instances holding the token keys
    (they read them once a minute: docs/performance.md)."""
    api = make_api()
    integrator = api.integrator(**spec)
    assert integrator.access_token
    api.container.verification_keys.published()
    return api, integrator


def token(make_api: MakeApi) -> Scenario:
    api = make_api()
    credentials = api.create_client()
    return Scenario(api, lambda: api.token_response(credentials.token_form()))


def jwks(make_api: MakeApi) -> Scenario:
    api = make_api()
    return Scenario(api, lambda: api.request("GET", "/.well-known/jwks.json", None, {}))


def start(make_api: MakeApi) -> Scenario:
    api, integrator = _ready(make_api)
    return Scenario(api, lambda: integrator.start(phoneNumber=OTP_PASS))


def validate(make_api: MakeApi) -> Scenario:
    api, integrator = _ready(make_api)
    correlation_id = _staged(integrator)
    return Scenario(
        api, lambda: integrator.post("/v3/validate", {"correlationId": correlation_id}), once=True
    )


def challenge(make_api: MakeApi) -> Scenario:
    api, integrator = _ready(make_api)
    correlation_id = _staged(integrator)
    assert integrator.post("/v3/validate", {"correlationId": correlation_id}).status == 200
    body = {"correlationId": correlation_id, "dob": "1999-08-08"}
    return Scenario(api, lambda: integrator.post("/v3/challenge", body), once=True)


def complete(make_api: MakeApi) -> Scenario:
    api, integrator = _ready(make_api)
    correlation_id = _staged(integrator)
    assert integrator.post("/v3/validate", {"correlationId": correlation_id}).status == 200
    assert (
        integrator.post("/v3/challenge", {"correlationId": correlation_id, "dob": "1999-08-08"}).status == 200
    )
    body = {"correlationId": correlation_id, "individual": {"firstName": "Kira", "lastName": "Petrova"}}
    return Scenario(api, lambda: integrator.post("/v3/complete", body), once=True)


def unify(make_api: MakeApi) -> Scenario:
    api, integrator = _ready(make_api)
    body = {"possessionType": "mobile", "phoneNumber": OTP_PASS}
    return Scenario(api, lambda: integrator.post("/v3/unify", body))


def _possessed(make_api: MakeApi) -> tuple[Api, Integrator, str, Device]:
    """A unify flow for the OTP user whose device passed OTP and registered a key."""
    api, integrator = _ready(make_api)
    correlation_id, device = _flow(integrator, OTP_PASS, "/v3/unify")
    assert device.send_otp().status == 200
    assert device.enter("1234").json()["status"] == "passed"
    assert device.register().status == 200
    return api, integrator, correlation_id, device


def unify_status(make_api: MakeApi) -> Scenario:
    api, integrator, correlation_id, _ = _possessed(make_api)
    body = {"correlationId": correlation_id}
    return Scenario(api, lambda: integrator.post("/v3/unify-status", body), once=True, binds=True)


def unify_bind(make_api: MakeApi) -> Scenario:
    api = make_api(tier="production", region="EU")
    integrator = api.integrator()
    answer = integrator.post("/v3/unify", {"possessionType": "none"})
    assert answer.status == 200, answer.body
    assert Device(api, answer.json()["authToken"]).register().status == 200
    body = {"correlationId": answer.json()["correlationId"]}
    return Scenario(api, lambda: integrator.post("/v3/unify-bind", body), once=True, binds=True)


def _bound(make_api: MakeApi) -> tuple[Api, Integrator, Device, str]:
    api, integrator, correlation_id, device = _possessed(make_api)
    answer = integrator.post("/v3/unify-status", {"correlationId": correlation_id})
    assert answer.status == 200, answer.body
    return api, integrator, device, str(answer.json()["deviceId"])


def device_revoke(make_api: MakeApi) -> Scenario:
    api, integrator, _, device_id = _bound(make_api)
    return Scenario(api, lambda: integrator.post("/v3/device/revoke", {"deviceId": device_id}))


def client_device_key(make_api: MakeApi) -> Scenario:
    api, integrator, device, device_id = _bound(make_api)
    _, returning = _flow(integrator, OTP_PASS, "/v3/unify")
    returning = device.for_flow(returning.auth_token)
    nonce = returning.session()["deviceKey"]["nonce"]
    body = {"deviceId": device_id, "signature": device.keys[device_id].sign(nonce)}
    return Scenario(api, lambda: returning.call("/device-key", body), once=True)


def client_device_key_register(make_api: MakeApi) -> Scenario:
    api, integrator = _ready(make_api)
    _, device = _flow(integrator, OTP_PASS, "/v3/unify")
    assert device.send_otp().status == 200
    assert device.enter("1234").json()["status"] == "passed"
    key = KeyPair()
    nonce = device.session()["deviceKey"]["nonce"]
    body = {"publicKey": key.jwk, "signature": key.sign(nonce)}
    return Scenario(api, lambda: device.call("/device-key/register", body))


def verify(make_api: MakeApi) -> Scenario:
    api, integrator = _ready(make_api, solution=Solution.VERIFIED_USER)
    body = {"phoneNumber": VERIFIED_USER_PASS, "verificationType": "verifiedUser", **LENA}
    return Scenario(api, lambda: integrator.post("/v3/verify", body))


def _decided(make_api: MakeApi) -> tuple[Api, Integrator, str]:
    """A stack whose integrator has one decision record (a verify that carried a clientRequestId)."""
    api, integrator = _ready(make_api, solution=Solution.VERIFIED_USER)
    body = {
        "phoneNumber": VERIFIED_USER_PASS,
        "verificationType": "verifiedUser",
        "clientRequestId": "v-1",
        **LENA,
    }
    answer = integrator.post("/v3/verify", body)
    assert answer.status == 200, answer.body
    return api, integrator, str(answer.json()["correlationId"])


def decisions_list(make_api: MakeApi) -> Scenario:
    api, integrator, _ = _decided(make_api)
    query = {"phoneNumber": VERIFIED_USER_PASS}
    return Scenario(api, lambda: api.call("GET", "/v3/decisions", token=integrator.access_token, query=query))


def decisions_get(make_api: MakeApi) -> Scenario:
    api, integrator, decision_id = _decided(make_api)
    return Scenario(
        api, lambda: api.call("GET", f"/v3/decisions/{decision_id}", token=integrator.access_token)
    )


def decisions_summary(make_api: MakeApi) -> Scenario:
    api, integrator, _ = _decided(make_api)
    return Scenario(api, lambda: api.call("GET", "/v3/decisions/summary", token=integrator.access_token))


def decisions_erase(make_api: MakeApi) -> Scenario:
    api, integrator, _ = _decided(make_api)
    query = {"phoneNumber": VERIFIED_USER_PASS}
    return Scenario(
        api, lambda: api.call("DELETE", "/v3/decisions", token=integrator.access_token, query=query)
    )


def verify_batch(make_api: MakeApi) -> Scenario:
    api, integrator = _ready(make_api, solution=Solution.VERIFIED_USER)
    item = {"phoneNumber": VERIFIED_USER_PASS, "verificationType": "verifiedUser", **LENA}
    return Scenario(api, lambda: integrator.post("/v3/verify/batch", {"items": [item, item]}))


def client_session(make_api: MakeApi) -> Scenario:
    api, integrator = _ready(make_api)
    _, device = _flow(integrator, OTP_PASS)
    return Scenario(api, lambda: device.call("/session"))


def client_mobile_auth(make_api: MakeApi) -> Scenario:
    api, integrator = _ready(make_api)
    _, device = _flow(integrator, MOBILE_AUTH_PASS)
    return Scenario(api, lambda: device.call("/mobile-auth"))


def mobile_auth_callback(make_api: MakeApi) -> Scenario:
    api, integrator = _ready(make_api)
    _, device = _flow(integrator, MOBILE_AUTH_PASS)
    started = device.call("/mobile-auth")
    assert started.status == 200, started.body
    url = started.json()["mobileAuth"]["url"]
    return Scenario(api, lambda: api.get(url), once=True, replay=(403, 8008))


def client_otp(make_api: MakeApi) -> Scenario:
    api, integrator = _ready(make_api)
    _, device = _flow(integrator, OTP_PASS)
    return Scenario(api, device.send_otp, phone=OTP_PASS, texts=1)


def client_otp_verify(make_api: MakeApi) -> Scenario:
    api, integrator = _ready(make_api)
    _, device = _flow(integrator, OTP_PASS)
    assert device.send_otp().status == 200
    return Scenario(api, lambda: device.enter("1234"), once=True, phone=OTP_PASS)


def client_instant_link(make_api: MakeApi) -> Scenario:
    api, integrator = _ready(make_api)
    _, device = _flow(integrator, OTP_PASS, flowType="desktop", finalTargetUrl=TARGET)
    return Scenario(api, device.send_link, phone=OTP_PASS, texts=1)


def instant_link(make_api: MakeApi) -> Scenario:
    api, integrator = _ready(make_api)
    _, device = _flow(integrator, OTP_PASS, flowType="desktop", finalTargetUrl=TARGET)
    assert device.connect_socket()[1] == 200
    assert device.send_link().status == 200
    link = latest_link(api, OTP_PASS)
    return Scenario(api, lambda: api.get(link), ok=302, once=True, replay=(410, None))


class _Identities:
    def __init__(self, api: Api, integrator: Integrator) -> None:
        self.api, self.integrator = api, integrator

    def call(
        self, method: str, path: str, body: Any = None, query: dict[str, str] | None = None
    ) -> HttpResponse:
        return self.api.call(method, path, body, token=self.integrator.access_token, query=query)


def _identities(make_api: MakeApi, enrolled: bool = True) -> tuple[Api, _Identities, str]:
    api, integrator = _ready(make_api)
    identities = _Identities(api, integrator)
    if not enrolled:
        return api, identities, ""
    answer = identities.call(
        "POST", "/v3/identity", {"phoneNumber": ENROLLED, "clientCustomerId": "customer-1"}
    )
    assert answer.status == 200, answer.body
    return api, identities, str(answer.json()["serviceId"])


def identity_enroll(make_api: MakeApi) -> Scenario:
    api, identities, _ = _identities(make_api, enrolled=False)
    body = {"phoneNumber": ENROLLED, "clientCustomerId": "customer-1", "clientRequestId": "enroll-1"}
    return Scenario(api, lambda: identities.call("POST", "/v3/identity", body))


def identity_batch(make_api: MakeApi) -> Scenario:
    api, identities, _ = _identities(make_api, enrolled=False)
    items = [{"phoneNumber": ENROLLED, "clientCustomerId": "customer-1"}, {"phoneNumber": "+12025559002"}]
    return Scenario(api, lambda: identities.call("POST", "/v3/identity/batch", {"items": items}))


def identity_list(make_api: MakeApi) -> Scenario:
    api, identities, _ = _identities(make_api)
    return Scenario(api, lambda: identities.call("GET", "/v3/identity"))


def identity_get(make_api: MakeApi) -> Scenario:
    api, identities, service_id = _identities(make_api)
    return Scenario(api, lambda: identities.call("GET", f"/v3/identity/{service_id}"))


def identity_disenroll(make_api: MakeApi) -> Scenario:
    api, identities, service_id = _identities(make_api)
    return Scenario(
        api, lambda: identities.call("DELETE", f"/v3/identity/{service_id}"), once=True, replay=(404, 8011)
    )


def identity_activate(make_api: MakeApi) -> Scenario:
    api, identities, service_id = _identities(make_api)
    assert identities.call("POST", f"/v3/identity/{service_id}/deactivate", {}).status == 200
    return Scenario(api, lambda: identities.call("POST", f"/v3/identity/{service_id}/activate", {}))


def identity_deactivate(make_api: MakeApi) -> Scenario:
    api, identities, service_id = _identities(make_api)
    return Scenario(api, lambda: identities.call("POST", f"/v3/identity/{service_id}/deactivate", {}))


def identity_lookup(make_api: MakeApi) -> Scenario:
    api, identities, _ = _identities(make_api)
    return Scenario(api, lambda: identities.call("GET", f"/v3/identity/{ENROLLED}/lookup"))


def operator_notifications(make_api: MakeApi) -> Scenario:
    """The operator pushes a disconnect of an enrolled identity whose client has a webhook. A Sandbox
    stack has no operator: the subscription is stored as enrolling on a pushing stack stores it."""
    api, identities, service_id = _identities(make_api)
    client_id = identities.integrator.client_id
    api.container.client_admin.set_webhook(client_id, "https://hooks.example.com/phoneid")
    token = new_sink_token()
    api.container.push_store.put(
        PushSubscription(
            client_id,
            service_id,
            PushSignal.REACHABILITY,
            token.selector,
            token.verifier_hash,
            "subscription-1",
            None,
        )
    )
    event = {
        "id": "notification-1",
        "source": "https://operator.example/notifications",
        "type": SUBSCRIBED_TYPE[PushSignal.REACHABILITY],
        "specversion": "1.0",
        "data": {"device": {"phoneNumber": ENROLLED}, "subscriptionId": "subscription-1"},
        "time": "2026-11-22T12:00:00Z",
    }
    headers = {"content-type": "application/cloudevents+json", "authorization": f"Bearer {token.bearer}"}
    body = json.dumps(event)
    return Scenario(api, lambda: api.request("POST", "/operator/v1/notifications", body, headers), ok=204)


# Keyed by the route's function in template.yaml.
SCENARIOS: dict[str, Callable[[MakeApi], Scenario]] = {
    "TokenFunction": token,
    "JwksFunction": jwks,
    "StartFunction": start,
    "ValidateFunction": validate,
    "ChallengeFunction": challenge,
    "CompleteFunction": complete,
    "UnifyFunction": unify,
    "UnifyStatusFunction": unify_status,
    "UnifyBindFunction": unify_bind,
    "DeviceRevokeFunction": device_revoke,
    "ClientDeviceKeyFunction": client_device_key,
    "ClientDeviceKeyRegisterFunction": client_device_key_register,
    "VerifyFunction": verify,
    "VerifyBatchFunction": verify_batch,
    "ClientSessionFunction": client_session,
    "ClientMobileAuthFunction": client_mobile_auth,
    "MobileAuthCallbackFunction": mobile_auth_callback,
    "ClientOtpFunction": client_otp,
    "ClientOtpVerifyFunction": client_otp_verify,
    "ClientInstantLinkFunction": client_instant_link,
    "InstantLinkFunction": instant_link,
    "IdentityEnrollFunction": identity_enroll,
    "IdentityBatchFunction": identity_batch,
    "IdentityListFunction": identity_list,
    "DecisionsListFunction": decisions_list,
    "DecisionsGetFunction": decisions_get,
    "DecisionsSummaryFunction": decisions_summary,
    "DecisionsEraseFunction": decisions_erase,
    "IdentityGetFunction": identity_get,
    "IdentityDisenrollFunction": identity_disenroll,
    "IdentityActivateFunction": identity_activate,
    "IdentityDeactivateFunction": identity_deactivate,
    "IdentityLookupFunction": identity_lookup,
    "OperatorNotificationsFunction": operator_notifications,
}
