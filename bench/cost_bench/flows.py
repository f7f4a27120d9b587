"""The flows the bench prices, each run as its integrator and the customer's device run it."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import jwt

from phoneid.domain.clients import DEFAULT_FLAGS, Flag
from tests.device import KeyPair, latest_code
from tests.harness import Api, Integrator
from tests.unit.helpers import identity_record

STAGED_CUSTOMER = "+12025550142"  # in the identity table: challenge and complete find her
UNIFY_CUSTOMER = "+12025550144"  # possession only
VERIFY_CUSTOMER = "+12025550146"  # in the identity table, enrolled by the first (warm-up) round


@dataclass
class World:
    api: Api
    integrator: Integrator  # a client with key persistence in browsers, as the web SDK's device keys need
    public_api_key: str
    devices: dict[str, KeyPair] = field(default_factory=dict)  # the customer's browser's stored keys

    def post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        answer = self.integrator.post(path, body)
        assert answer.status == 200, (path, answer.body)
        return dict(answer.json())

    def client(self, auth_token: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        """One client API call of the customer's device, as the web SDK makes it."""
        answer = self.api.post(f"/client/v1{path}", body or {}, token=auth_token)
        assert answer.status == 200, (path, answer.body)
        return dict(answer.json())

    def otp_possession(self, auth_token: str, phone: str) -> dict[str, Any]:
        """The web SDK's OTP run: text the code, enter it; the last session view. A staged flow's
        authToken names the methods, so the SDK reads the session first only in a unified flow."""
        claims = jwt.decode(auth_token, options={"verify_signature": False})
        methods = (
            claims["methods"]
            if claims["flow"] == "staged"
            else self.client(auth_token, "/session")["methods"]
        )
        assert methods == ["otp"], methods
        self.client(auth_token, "/otp")
        entered = self.client(auth_token, "/otp/verify", {"otp": latest_code(self.api, phone)})
        assert entered["status"] == "passed", entered
        return entered


def token(world: World) -> None:
    answer = world.api.token_response(world.integrator.credentials.token_form())
    assert answer.status == 200, answer.body


def staged(world: World) -> None:
    """Start, OTP on the customer's device, validate, challenge with the date of birth, complete."""
    started = world.post("/v3/start", {"flowType": "mobile", "phoneNumber": STAGED_CUSTOMER})
    world.otp_possession(started["authToken"], STAGED_CUSTOMER)
    correlation = {"correlationId": started["correlationId"]}
    assert world.post("/v3/validate", correlation)["success"] is True
    assert world.post("/v3/challenge", {**correlation, "dob": "1987-06-15"})["success"] is True
    individual = {"firstName": "Noor", "lastName": "Haddad", "ssn": "123456789"}
    assert world.post("/v3/complete", {**correlation, "individual": individual})["success"] is True


def unify_first_visit(world: World) -> None:
    """No stored key: OTP possession, then the browser registers a key and unify-status binds it."""
    started = world.post("/v3/unify", {"possessionType": "mobile", "phoneNumber": UNIFY_CUSTOMER})
    session = world.otp_possession(started["authToken"], UNIFY_CUSTOMER)
    assert session["deviceKey"]["registerKey"], session
    key = KeyPair()
    body = {
        "publicKey": key.jwk,
        "signature": key.sign(session["deviceKey"]["nonce"]),
        "publicApiKey": world.public_api_key,
    }
    device_id = world.client(started["authToken"], "/device-key/register", body)["deviceId"]
    world.devices = {device_id: key}
    answer = world.post("/v3/unify-status", {"correlationId": started["correlationId"]})
    assert answer["success"] is True, answer
    assert answer["deviceId"] == device_id, answer


def unify_bound_key(world: World) -> None:
    """The browser comes back with its key: it proves the key, no SMS, and unify-status answers."""
    started = world.post("/v3/unify", {"possessionType": "mobile", "phoneNumber": UNIFY_CUSTOMER})
    session = world.client(started["authToken"], "/session")
    ((device_id, key),) = world.devices.items()
    proof = {
        "deviceId": device_id,
        "signature": key.sign(session["deviceKey"]["nonce"]),
        "publicApiKey": world.public_api_key,
    }
    assert world.client(started["authToken"], "/device-key", proof)["status"] == "passed"
    answer = world.post("/v3/unify-status", {"correlationId": started["correlationId"]})
    assert answer["success"] is True, answer
    assert answer["deviceId"] == device_id, answer


def verify(world: World) -> None:
    """Verified User for a customer Identity Manager already has (the warm-up round enrolled her)."""
    body = {
        "phoneNumber": VERIFY_CUSTOMER,
        "verificationType": "verifiedUser",
        "firstName": "Noor",
        "lastName": "Haddad",
    }
    answer = world.post("/v3/verify", body)
    assert answer["success"] == "true", answer
    assert answer["isEnrolled"] is True, answer


FLOWS: dict[str, tuple[str, Callable[[World], None]]] = {
    "staged": ("staged flow, OTP (start, validate, challenge, complete)", staged),
    "unify-new": ("unify without a bound key (OTP, key registered and bound)", unify_first_visit),
    "unify-bound": ("unify with a bound key (the device proves it)", unify_bound_key),
    "verify": ("verify, Verified User, enrolled identity", verify),
}


def build_world(api: Api) -> World:
    identities = [identity_record(STAGED_CUSTOMER), identity_record(VERIFY_CUSTOMER)]
    report = api.container.identity_import.run("\n".join(map(json.dumps, identities)), "jsonl")
    assert (report.imported, report.rejected) == (2, []), report
    integrator = api.integrator(flags=DEFAULT_FLAGS | {Flag.KEY_PERSISTENCE})
    public_api_key = api.container.clients.get(integrator.client_id).public_api_key
    assert integrator.access_token
    return World(api, integrator, public_api_key)
