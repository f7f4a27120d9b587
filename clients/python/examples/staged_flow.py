"""The staged flow on the Sandbox, with the token-only test user (+12025550111, Kira Petrova): possession
passes at start with no client SDK, so the server's four calls run one after the other.

    python clients/python/examples/staged_flow.py
"""

from __future__ import annotations

import sys

from _connection import client_from_environment
from phoneid_client import PhoneIdError
from phoneid_client.models import ChallengeRequest, CompleteRequest, Individual, StartRequest

PHONE_NUMBER = "+12025550111"
DATE_OF_BIRTH = "1999-08-08"


def main() -> int:
    with client_from_environment() as phoneid:
        started = phoneid.start(StartRequest(flowType="mobile", phoneNumber=PHONE_NUMBER))
        print(f"start: correlationId {started.correlationId}, next {started.next}")
        # A real flow hands started.authToken to the client SDK here; this user needs none.

        validated = phoneid.validate(started.correlationId)
        print(f"validate: success {validated.success}, challengeMissing {validated.challengeMissing}")
        if not validated.success:
            return 1

        challenged = phoneid.challenge(
            ChallengeRequest(correlationId=started.correlationId, dob=DATE_OF_BIRTH)
        )
        print(f"challenge: success {challenged.success}")
        if not challenged.success or challenged.individual is None:
            return 1
        found = challenged.individual
        print(f"  individual: {found.firstName} {found.lastName}")

        # The customer confirms what challenge found; complete evaluates it.
        confirmed = Individual(firstName=found.firstName, lastName=found.lastName, ssn=found.ssn)
        completed = phoneid.complete(
            CompleteRequest(correlationId=started.correlationId, individual=confirmed)
        )
        results = {name: category.result for name, category in (completed.evaluation or {}).items()}
        print(f"complete: success {completed.success}, evaluation {results}")
        return 0 if completed.success else 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    except PhoneIdError as error:
        sys.exit(f"the API refused: {error}")
