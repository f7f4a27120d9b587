"""A demo integrator: a page using the web SDK and a small server holding its own credentials.

The server does what an integrator's backend does: it gets an access token, calls ``/v3/start``
with the customer's number and keeps the flow to itself; when the SDK's finish step calls back, it
runs ``/v3/validate``, ``/v3/challenge`` and ``/v3/complete`` over HTTP like any client. It also
tells the page what the stack is (tier, region, its Sandbox test users, a number to prefill).
"""

from __future__ import annotations

import json
import secrets
from typing import TYPE_CHECKING, Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from phoneid.bootstrap import container
from phoneid.domain.clients import Solution
from phoneid.domain.sandbox import Catalogue
from phoneid_dev.static import web_client

if TYPE_CHECKING:  # the types only: the stack imports nothing of the demo
    import httpx

    from phoneid_dev.devstack import DevStack

COOKIE = "phoneid_demo"

# Numbers to prefill on a production stack (no test users there): one of the stack's own region,
# since a number of the other region's host is refused with 8010.
PRODUCTION_NUMBERS = {"US": "+12025550142", "EU": "+353855550142"}
MAX_FLOWS_PER_VISITOR = 10


class DemoIntegrator:
    def __init__(self, dev: DevStack) -> None:
        self._dev = dev
        # Made once per data directory (phoneid dev --data), else once per start.
        created = dev.own_clients.get(
            "demo",
            lambda: dev.create_client(
                name="demo",
                flags=["auto-enrollment", "phone-number-change", "key-persistence"],
                with_public_key=True,
            ),
        )
        self.public_api_key = created["public_api_key"]
        self._credentials = {name: created[name] for name in ("client_id", "client_secret")}
        # demo visitor -> correlationId -> flow: two tabs of one browser share the visitor cookie
        self._flows: dict[str, dict[str, dict[str, Any]]] = {}

    def page_config(self) -> dict[str, Any]:
        """What the page needs to know about this stack: tier, region, test users, SMS budgets."""
        settings = container().settings
        users: list[dict[str, str]] = []
        if self._dev.tier == "sandbox":
            # The demo's credentials are of the identity solution: other solutions' users get 8009.
            users = [
                {
                    "phoneNumber": user.phone_number,
                    "firstName": user.identity.first_name,
                    "lastName": user.identity.last_name,
                    "dob": user.identity.dob,
                    "scenario": user.scenario.value,
                    "description": user.description,
                }
                for user in Catalogue.load(settings.region)
                if user.solution in (None, Solution.IDENTITY)
            ]
        operator = self._dev.operator
        if users:
            prefill = {key: users[0][key] for key in ("phoneNumber", "dob", "firstName", "lastName")}
        else:
            # The production stack's "this SIM" passes Mobile Auth; otherwise a number of the region.
            device = operator.device_msisdn if operator is not None else None
            prefill = {"phoneNumber": device or PRODUCTION_NUMBERS.get(self._dev.region, "")}
        return {
            "publicApiKey": self.public_api_key,
            "tier": self._dev.tier,
            "region": self._dev.region,
            "testUsers": users,
            "prefill": prefill,
            "smsBudget": {
                "perNumber": settings.sms_per_number_per_hour,
                "perClient": settings.sms_per_client_per_hour,
            },
        }

    def _http(self) -> httpx.AsyncClient:
        """A client of this stack's API, as an integrator's backend has one."""
        # httpx imports its command line (click, rich, pygments: half a second) with itself: only when
        # the demo calls the API, not whenever the CLI imports the local server to read its state file.
        import httpx

        return httpx.AsyncClient(base_url=self._dev.base_url, timeout=30)

    async def _token(self, http: Any) -> str:
        response = await http.post(
            "/token",
            data={"grant_type": "client_credentials", **self._credentials},
        )
        response.raise_for_status()
        return str(response.json()["access_token"])

    async def start(self, visitor: str, form: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        unified = form.get("api") == "unify"
        fields = ("phoneNumber", "allowOTPRetry") if unified else ("flowType", "phoneNumber", "allowOTPRetry")
        body = {key: form[key] for key in fields if form.get(key) not in (None, "")}
        if unified:
            body["possessionType"] = "mobile"
        if unified or body.get("flowType") == "desktop":
            body["finalTargetUrl"] = f"{self._dev.base_url}/demo/verified.html"
        async with self._http() as http:
            token = await self._token(http)
            path = "/v3/unify" if unified else "/v3/start"
            started = await http.post(path, json=body, headers={"Authorization": f"Bearer {token}"})
        answer = started.json()
        if started.status_code != 200:
            return started.status_code, answer
        # The name the customer typed is what they confirm at complete (none: the challenge's).
        flows = self._flows.setdefault(visitor, {})
        flows[answer["correlationId"]] = {
            "correlationId": answer["correlationId"],
            "token": token,
            **_customer(form),
            "unified": unified,
        }
        while len(flows) > MAX_FLOWS_PER_VISITOR:  # abandoned checks never finish: forget the oldest
            flows.pop(next(iter(flows)))
        return 200, {"authToken": answer["authToken"]}

    async def revoke(self, device_id: str) -> tuple[int, dict[str, Any]]:
        async with self._http() as http:
            token = await self._token(http)
            revoked = await http.post(
                "/v3/device/revoke",
                json={"deviceId": device_id},
                headers={"Authorization": f"Bearer {token}"},
            )
        return revoked.status_code, revoked.json()

    async def finish(
        self, visitor: str, auth_id: str | None, details: dict[str, Any] | None = None
    ) -> tuple[int, dict[str, Any]]:
        """The SDK's finish step names its flow (authId, the correlationId); each flow finishes once.

        ``details``: the date of birth and name as the page shows them now, when it sends them: a
        number changed during the check brings its own (or none), and the start's would fail it."""
        flows = self._flows.get(visitor, {})
        flow = flows.pop(auth_id, None) if auth_id else None
        if flow is None and not auth_id and flows:
            flow = flows.pop(next(reversed(flows)))  # a caller naming no flow: the latest one
        if flow is None:
            return 400, {"message": "no flow in progress for this visitor"}
        if details is not None and "dob" in details:
            flow = {**flow, **_customer(details)}
        headers = {"Authorization": f"Bearer {flow['token']}"}
        steps: dict[str, Any] = {}
        correlation = {"correlationId": flow["correlationId"]}
        async with self._http() as http:
            if flow["unified"]:
                status = await http.post("/v3/unify-status", json=correlation, headers=headers)
                return 200, {"unifyStatus": status.json()}
            validated = (await http.post("/v3/validate", json=correlation, headers=headers)).json()
            steps["validate"] = validated
            next_call = next(iter(validated.get("next", {}).values()), "done")
            individual: dict[str, Any] = {}
            if next_call == "/v3/challenge":
                challenge = {**correlation, "dob": flow["dob"] or "1900-01-01"}
                challenged = (await http.post("/v3/challenge", json=challenge, headers=headers)).json()
                steps["challenge"] = challenged
                individual = challenged.get("individual") or {}
                next_call = next(iter(challenged.get("next", {}).values()), "done")
            if next_call == "/v3/complete":
                # The customer confirms the prefilled identity; the demo sends it back as is, with
                # the name the customer typed, if any.
                confirmed = {**individual, **flow["name"]}
                completed = await http.post(
                    "/v3/complete", json={**correlation, "individual": confirmed}, headers=headers
                )
                steps["complete"] = completed.json()
        return 200, steps


def _customer(form: dict[str, Any]) -> dict[str, Any]:
    """The date of birth for the challenge, and the name the customer confirms at complete (none
    typed: the challenge's)."""
    name = {
        key: str(form[key]).strip() for key in ("firstName", "lastName") if str(form.get(key) or "").strip()
    }
    return {"dob": form.get("dob") or None, "name": name}


def demo_routes(dev: DevStack) -> list[BaseRoute]:
    return DemoRoutes(DemoIntegrator(dev)).routes()


def _visitor_of(request: Request) -> str:
    return request.cookies.get(COOKIE) or secrets.token_urlsafe(16)


def _answer(request: Request, status: int, body: dict[str, Any]) -> Response:
    response = JSONResponse(body, status_code=status)
    response.set_cookie(COOKIE, _visitor_of(request), httponly=True, samesite="strict")
    return response


class DemoRoutes:
    """The demo page's backend at ``/demo/api``, and the page itself at ``/demo/``."""

    def __init__(self, demo: DemoIntegrator) -> None:
        self._demo = demo

    def routes(self) -> list[BaseRoute]:
        return [
            Route("/demo/api/start", self.start, methods=["POST"]),
            Route("/demo/api/finish", self.finish, methods=["POST"]),
            Route("/demo/api/config", self.config, methods=["GET"]),
            Route("/demo/api/revoke", self.revoke, methods=["POST"]),
            Route("/demo", self.index),
            Mount(
                "/demo",
                app=StaticFiles(directory=web_client() / "demo", html=True, check_dir=False),
                name="demo",
            ),
        ]

    async def start(self, request: Request) -> Response:
        visitor = _visitor_of(request)
        status, body = await self._demo.start(visitor, await request.json())
        response = JSONResponse(body, status_code=status)
        response.set_cookie(COOKIE, visitor, httponly=True, samesite="strict")
        return response

    async def finish(self, request: Request) -> Response:
        try:
            sent = json.loads(await request.body() or b"{}")
        except ValueError:
            sent = {}
        sent = sent if isinstance(sent, dict) else {}
        auth_id = sent.get("authId")
        status, body = await self._demo.finish(_visitor_of(request), str(auth_id) if auth_id else None, sent)
        return _answer(request, status, body)

    async def index(self, request: Request) -> Response:
        return RedirectResponse("/demo/")

    async def config(self, request: Request) -> Response:
        return JSONResponse(await run_in_threadpool(self._demo.page_config))

    async def revoke(self, request: Request) -> Response:
        status, body = await self._demo.revoke(str((await request.json()).get("deviceId", "")))
        return JSONResponse(body, status_code=status)
