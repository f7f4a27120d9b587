"""List page keys (``lastKey``, sent back as ``startKey``): a place in one client's list, authenticated.

A key is base64url (unpadded) of ``{"c": clientId, "k": position, "m": MAC}``. The MAC is an
HMAC-SHA-256 of the use, the client id and the position under a key derived from the stack's MAC
key for this use only (``DerivedKeyMac``, purpose ``list-page``): a key that was made up, changed
in any character, or given to another client does not verify, and is a 400/8001 naming
``startKey`` before any read. The position (when the page's last identity was created, and its
serviceId) is not secret; it is authenticated so that a page only ever starts where one ended.
"""

from __future__ import annotations

import base64
import binascii
import hmac
import json
from typing import Final

from phoneid.domain.errors import MalformedRequest
from phoneid.ports import KeyedDigest

PURPOSE: Final = "list-page"  # the derived key's purpose (docs/adr/0023-list-page-keys-carry-a-mac.md)
_USE: Final = "identity-list-page"  # in every MACed message: a MAC of another kind never fits


def _refused() -> MalformedRequest:
    return MalformedRequest(problems={"startKey": "is not the lastKey of a page of these credentials"})


class PageKeys:
    """``use`` names the list: a key of one list never opens a page of another."""

    def __init__(self, mac: KeyedDigest, use: str = _USE) -> None:
        self._mac = mac
        self._use = use

    def _digest(self, client_id: str, position: str) -> str:
        return self._mac.digest(json.dumps([self._use, client_id, position], separators=(",", ":")))

    def seal(self, client_id: str, position: str) -> str:
        """The ``lastKey`` of a page of ``client_id`` that ended at ``position``."""
        fields = {"c": client_id, "k": position, "m": self._digest(client_id, position)}
        raw = json.dumps(fields, separators=(",", ":")).encode()
        return base64.urlsafe_b64encode(raw).decode().rstrip("=")

    def opened(self, client_id: str, key: str) -> str:
        """The position ``key`` stands for, if it is exactly a ``lastKey`` this client was given.

        Raises ``MalformedRequest`` (startKey) for anything else. The key is compared whole with the
        one this client would have been given: the MAC, the client id and the encoding itself (no
        other spelling of the same bytes) must all match."""
        try:
            # Padding enough for any length (the decoder drops what is more): the key is compared
            # whole with the one it should be below, so no other spelling passes.
            fields = json.loads(base64.urlsafe_b64decode(key + "=="))
        except (ValueError, binascii.Error):
            raise _refused() from None
        position = fields.get("k") if isinstance(fields, dict) else None
        if not isinstance(position, str) or not hmac.compare_digest(
            self.seal(client_id, position).encode(), key.encode()
        ):
            raise _refused()
        return position
