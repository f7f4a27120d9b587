"""Identity Manager's calls as one integrator makes them, for the tests of the stack."""

from __future__ import annotations

from typing import Any

from tests.harness import Api, HttpResponse, Integrator


class Identities:
    """The eight Identity Manager calls as one integrator makes them."""

    def __init__(self, api: Api, integrator: Integrator) -> None:
        self.api = api
        self.integrator = integrator

    def _call(
        self, method: str, path: str, body: Any = None, query: dict[str, str] | None = None
    ) -> HttpResponse:
        return self.api.call(method, path, body, token=self.integrator.access_token, query=query)

    def enroll(self, **fields: Any) -> HttpResponse:
        return self._call("POST", "/v3/identity", fields)

    def enrolled(self, **fields: Any) -> str:
        answer = self.enroll(**fields)
        assert answer.status == 200, answer.body
        return str(answer.json()["serviceId"])

    def batch(self, items: list[Any], **fields: Any) -> HttpResponse:
        return self._call("POST", "/v3/identity/batch", {"items": items, **fields})

    def list(self, **query: str) -> HttpResponse:
        return self._call("GET", "/v3/identity", query=query)

    def get(self, service_id: str, **query: str) -> HttpResponse:
        return self._call("GET", f"/v3/identity/{service_id}", query=query)

    def disenroll(self, service_id: str) -> HttpResponse:
        return self._call("DELETE", f"/v3/identity/{service_id}")

    def activate(self, service_id: str, body: Any = None) -> HttpResponse:
        return self._call("POST", f"/v3/identity/{service_id}/activate", {} if body is None else body)

    def deactivate(self, service_id: str, body: Any = None) -> HttpResponse:
        return self._call("POST", f"/v3/identity/{service_id}/deactivate", {} if body is None else body)

    def lookup(self, phone_number: str) -> HttpResponse:
        return self._call("GET", f"/v3/identity/{phone_number}/lookup")

    def every_page(self, **query: str) -> list[dict[str, Any]]:
        pages: list[dict[str, Any]] = []
        while True:
            answer = self.list(**query)
            assert answer.status == 200, answer.body
            pages.append(answer.json())
            if "lastKey" not in pages[-1]:
                return pages
            query = {**query, "startKey": pages[-1]["lastKey"]}
