"""N active identities in the enrollments table, made by the enrollment store's own bulk path
(``enroll_many``, as Connect's chunks enroll their passing rows): each an identity item with its
sealed PII, its place and its number's roster, exactly as the service writes them."""

from __future__ import annotations

from datetime import timedelta

from phoneid.domain.enrollment import Enrollment, Pii, new_service_id
from tests.harness import Api

CHUNK = 1_000  # a Connect chunk's rows
CLIENTS = 10


def phone_number(index: int) -> str:
    """A distinct valid US number per index (exchanges 200-999 of area code 212)."""
    return f"+1212{2_000_000 + index:07d}"


def enroll(api: Api, clients: list[str], first: int, count: int) -> list[Enrollment]:
    """Identities ``first`` to ``first + count - 1``, spread over ``clients``, half with a Client
    Customer ID; the enrollments made."""
    store = api.container.enrollment_store
    created_at = api.clock.now() - timedelta(days=30)
    made: list[Enrollment] = []
    for start in range(first, first + count, CHUNK):
        chunk = [
            Enrollment(
                client_id=clients[index % len(clients)],
                service_id=new_service_id(),
                phone_number=phone_number(index),
                country="US",
                created_at=created_at,
                client_customer_id=f"customer-{index}" if index % 2 else None,
                pii=Pii(first_name=f"First{index}", last_name=f"Last{index}"),
            )
            for index in range(start, min(start + CHUNK, first + count))
        ]
        for result in store.enroll_many(chunk):
            if not isinstance(result, tuple) or not result[1]:
                raise RuntimeError(f"an identity of the bench was not created: {result!r}")
            made.append(result[0])
    return made


def clients(api: Api) -> list[str]:
    return [api.create_client().client_id for _ in range(CLIENTS)]
