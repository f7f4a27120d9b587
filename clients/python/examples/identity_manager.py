"""Identity Manager: enroll a customer's number, read the identity back, look the number up, and
disenroll it; reading it afterwards is a NotFoundError (404, code 8011).

    python clients/python/examples/identity_manager.py
"""

from __future__ import annotations

import sys
import uuid

from _connection import client_from_environment
from phoneid_client import NotFoundError, PhoneIdError
from phoneid_client.models import IdentityEnrollRequest

PHONE_NUMBER = "+12025550123"


def main() -> int:
    customer = f"example-{uuid.uuid4().hex[:8]}"
    with client_from_environment() as phoneid:
        enrolled = phoneid.enroll_identity(
            IdentityEnrollRequest(phoneNumber=PHONE_NUMBER, clientCustomerId=customer, firstName="Ada"),
            idempotency_key=str(uuid.uuid4()),
        )
        print(f"enroll: serviceId {enrolled.serviceId}")

        identity = phoneid.get_identity(enrolled.serviceId)
        print(f"get: {identity.phoneNumber}, active {identity.active}, customer {identity.clientCustomerId}")

        found = phoneid.lookup_identities(PHONE_NUMBER).items or []
        mine = [item.serviceId for item in found if item.clientCustomerId == customer]
        print(f"lookup: {len(found)} identities of {PHONE_NUMBER}, this customer's: {mine}")

        phoneid.disenroll_identity(enrolled.serviceId)
        print("disenroll: done")
        try:
            phoneid.get_identity(enrolled.serviceId)
        except NotFoundError as gone:
            print(f"get again: {gone.status} {gone.code} {gone.message}")
            return 0 if mine == [enrolled.serviceId] else 1
    return 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    except PhoneIdError as error:
        sys.exit(f"the API refused: {error}")
