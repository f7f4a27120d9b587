"""List page keys (ADR 0023): a page's lastKey opens to its position for its own client only; any other
key, or the same key changed in one character, re-spelled or given to another client, is a 400/8001
naming startKey."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json

import pytest

from phoneid.domain.errors import MalformedRequest
from phoneid.services.page_keys import PageKeys

POSITION = "2026-11-22T12:00:00Z#svc-0001"


class Hmac:
    """An HMAC-SHA-256 under a fixed key, as the stack's derived-key MAC digests."""

    def __init__(self, key: bytes = b"page-key-test") -> None:
        self._key = key

    def digest(self, message: str) -> str:
        return base64.b64encode(hmac.new(self._key, message.encode(), hashlib.sha256).digest()).decode()


def refused(keys: PageKeys, client_id: str, key: str) -> MalformedRequest:
    with pytest.raises(MalformedRequest) as raised:
        keys.opened(client_id, key)
    assert (raised.value.code, raised.value.http_status) == (8001, 400)
    assert raised.value.parameters == ["startKey"]
    assert (
        str(raised.value) == "Invalid parameters: startKey: is not the lastKey of a page of these credentials"
    )
    return raised.value


def fields_of(key: str) -> dict[str, str]:
    loaded: dict[str, str] = json.loads(base64.urlsafe_b64decode(key + "=" * (-len(key) % 4)))
    return loaded


def spelled(fields: object) -> str:
    return base64.urlsafe_b64encode(json.dumps(fields, separators=(",", ":")).encode()).decode().rstrip("=")


def test_a_pages_key_opens_to_its_position_for_its_client() -> None:
    keys = PageKeys(Hmac())
    key = keys.seal("client-a", POSITION)
    assert keys.opened("client-a", key) == POSITION


def test_a_key_is_unpadded_base64url_of_the_client_the_position_and_a_mac() -> None:
    key = PageKeys(Hmac()).seal("client-a", POSITION)
    assert "=" not in key
    assert set(fields_of(key)) == {"c", "k", "m"}
    assert (fields_of(key)["c"], fields_of(key)["k"]) == ("client-a", POSITION)


def test_another_clients_key_is_refused() -> None:
    keys = PageKeys(Hmac())
    refused(keys, "client-b", keys.seal("client-a", POSITION))


def test_a_key_under_another_mac_key_is_refused() -> None:
    refused(PageKeys(Hmac(b"mine")), "client-a", PageKeys(Hmac(b"another")).seal("client-a", POSITION))


def test_a_key_whose_position_was_changed_is_refused() -> None:
    keys = PageKeys(Hmac())
    fields = fields_of(keys.seal("client-a", POSITION))
    refused(keys, "client-a", spelled({**fields, "k": "2099-01-01T00:00:00Z#svc-9999"}))


def test_a_key_whose_client_was_changed_to_the_callers_is_refused() -> None:
    keys = PageKeys(Hmac())
    fields = fields_of(keys.seal("client-a", POSITION))
    refused(keys, "client-b", spelled({**fields, "c": "client-b"}))


def test_a_key_with_its_padding_or_another_spelling_of_the_same_fields_is_refused() -> None:
    keys = PageKeys(Hmac())
    key = keys.seal("client-a", POSITION)
    fields = fields_of(key)
    refused(keys, "client-a", key + "=" * (-len(key) % 4 or 4))
    refused(keys, "client-a", base64.urlsafe_b64encode(json.dumps(fields).encode()).decode().rstrip("="))


def test_a_key_changed_in_any_one_character_is_refused() -> None:
    keys = PageKeys(Hmac())
    key = keys.seal("client-a", POSITION)
    for index in range(0, len(key), 7):
        changed = key[:index] + ("A" if key[index] != "A" else "B") + key[index + 1 :]
        refused(keys, "client-a", changed)


@pytest.mark.parametrize(
    "key",
    ["", "!!!", "e30", spelled([]), spelled({"k": 5}), spelled({"c": "client-a"}), spelled("text")],
)
def test_what_is_no_key_at_all_is_refused(key: str) -> None:
    refused(PageKeys(Hmac()), "client-a", key)


def test_the_mac_binds_the_use_so_another_kind_of_mac_never_fits() -> None:
    # Given a key whose MAC is of the bare client and position (no use in the message)
    mac = Hmac()
    bare = spelled(
        {
            "c": "client-a",
            "k": POSITION,
            "m": mac.digest(json.dumps(["client-a", POSITION], separators=(",", ":"))),
        }
    )

    # Then it is refused
    refused(PageKeys(mac), "client-a", bare)


@pytest.mark.parametrize("client_id", [f"client-{'x' * n}" for n in range(16)])
def test_keys_of_every_length_open_whatever_padding_they_dropped(client_id: str) -> None:
    # Keys are unpadded: 0, 1 or 2 '=' were dropped, by the key's length
    keys = PageKeys(Hmac())
    key = keys.seal(client_id, POSITION)
    assert keys.opened(client_id, key) == POSITION
