"""/v3/verify and /v3/verify/batch: Verified User and Human Assurance, with no possession step.

- ``verifier``: the one code path of every verification (single, batch item, Connect row): each
  item decided, then the passing ones enrolled together;
- ``api``: the single call and the batch, read from the request and answered;
- ``answers``: what an answer says of a verification.
"""

from phoneid.services.verify.api import VerifyService, item_of
from phoneid.services.verify.verifier import ITEM_WORKERS, Verified, Verifier

__all__ = ["ITEM_WORKERS", "Verified", "Verifier", "VerifyService", "item_of"]
