"""Decision records: verify Lena Ortiz, then a batch of her and a number no Sandbox user has; list
the client's records of her number (every page), read the other item's whole by its id (it holds a
`#`), count the last 30 days, and erase her records; reading one afterwards is a NotFoundError.

    python clients/python/examples/decisions.py
"""

from __future__ import annotations

import sys

from _connection import client_from_environment
from phoneid_client import NotFoundError, PhoneIdError
from phoneid_client.models import VerifyBatchRequest, VerifyRequest

LENA = "+12025550112"
NOBODY = "+12025550199"  # no Sandbox user: the batch answers an error for it


def main() -> int:
    with client_from_environment() as phoneid:
        phoneid.verify(VerifyRequest(phoneNumber=LENA, verificationType="humanAssurance"))
        batch = phoneid.verify_batch(
            VerifyBatchRequest(
                items=[
                    {"phoneNumber": LENA, "verificationType": "humanAssurance"},
                    {"phoneNumber": NOBODY, "verificationType": "humanAssurance"},
                ]
            )
        )
        print(f"verify, verify/batch: {1 + len(batch.results or [])} decisions")

        # Two a page, to show the iterator going through the pages: the SDK asks for each in turn
        lenas = list(phoneid.list_decisions(phone_number=LENA, limit=2))
        kinds = ", ".join(f"{record.kind} {record.outcome}" for record in lenas)
        print(f"list: {len(lenas)} records of the number ending {LENA[-2:]}, newest first: {kinds}")

        # A batch item's record: its id is the batch's, `#` and the item's index (sent as %23)
        lena_item, nobody_item = f"{batch.correlationId}#0", f"{batch.correlationId}#1"
        item = phoneid.get_decision(nobody_item)
        number = item.number.lastTwo if item.number else "?"
        print(f"get: {item.kind} {item.outcome} (code {item.errorCode}), number ..{number}, tier {item.tier}")

        summary = phoneid.summarise_decisions()
        by_kind = ", ".join(f"{kind} {count}" for kind, count in sorted((summary.byKind or {}).items()))
        print(
            f"summary: {summary.total} decisions, {summary.passed} passed, {summary.failed} failed, "
            f"{summary.errors} errors; {by_kind}"
        )

        erased = phoneid.erase_decisions(LENA)
        print(f"erase: {erased.erased} records of the number")
        try:
            phoneid.get_decision(lena_item)
        except NotFoundError as gone:
            print(f"get Lena's item: {gone.status} {gone.code} {gone.message}")
            return 0 if lenas and lenas[0].id == lena_item else 1
    return 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    except PhoneIdError as error:
        sys.exit(f"the API refused: {error}")
