"""A Verified User check on the Sandbox (+12025550112, Lena Ortiz): one call, no possession step; a pass
is enrolled in Identity Manager.

    python clients/python/examples/verify.py
"""

from __future__ import annotations

import sys
import uuid

from _connection import client_from_environment
from phoneid_client import PhoneIdError
from phoneid_client.models import VerifyRequest


def main() -> int:
    request = VerifyRequest(
        phoneNumber="+12025550112",
        verificationType="verifiedUser",
        firstName="Lena",
        lastName="Ortiz",
        clientCustomerId=f"example-{uuid.uuid4().hex[:8]}",
    )
    with client_from_environment() as phoneid:
        # A retry under the same key answers the first answer again: safe after a timeout.
        verified = phoneid.verify(request, idempotency_key=str(uuid.uuid4()))
    print(f"verify: success {verified.success}, assurance {verified.identity.assuranceLevel}")
    print(f"  enrolled {verified.isEnrolled}, serviceId {verified.serviceId}")
    return 0 if verified.success == "true" and verified.isEnrolled else 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    except PhoneIdError as error:
        sys.exit(f"the API refused: {error}")
