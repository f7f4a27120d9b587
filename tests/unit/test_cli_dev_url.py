"""`phoneid dev`'s links (SMS, WebSocket) carry an address a phone can open: never 0.0.0.0."""

from __future__ import annotations

import pytest

from phoneid_cli.commands.dev import lan_address, public_base_url
from phoneid_cli.main import parser

EVERY_INTERFACE = "0.0.0.0"  # noqa: S104 - the address a phone cannot open


def test_links_use_the_address_listened_on() -> None:
    assert public_base_url("127.0.0.1", 3000) == "http://127.0.0.1:3000"


@pytest.mark.parametrize("host", [EVERY_INTERFACE, "::"])
def test_every_interface_means_the_lan_address_in_links(host: str) -> None:
    # Given a stack listening on every interface, on a machine whose LAN address is 192.168.1.20
    # When the base URL is picked
    # Then links carry the LAN address
    assert public_base_url(host, 3000, lan=lambda: "192.168.1.20") == "http://192.168.1.20:3000"


def test_without_a_network_links_fall_back_to_loopback() -> None:
    assert public_base_url(EVERY_INTERFACE, 3000, lan=lambda: None) == "http://127.0.0.1:3000"


def test_the_machines_own_lookup_never_gives_the_wildcard() -> None:
    # The real lookup (a UDP socket's route; nothing sent): an address or none, never 0.0.0.0
    found = lan_address()
    assert found != EVERY_INTERFACE
    assert EVERY_INTERFACE not in public_base_url(EVERY_INTERFACE, 3000)


def test_public_url_wins() -> None:
    picked = public_base_url(
        EVERY_INTERFACE, 3000, "https://phoneid.tunnel.example/", lan=lambda: "192.168.1.20"
    )

    assert picked == "https://phoneid.tunnel.example"


def test_dev_takes_public_url_and_refuses_what_is_not_one(capsys: pytest.CaptureFixture[str]) -> None:
    args = parser().parse_args(
        ["dev", "--host", EVERY_INTERFACE, "--public-url", "http://192.168.1.20:3000/"]
    )
    assert args.public_url == "http://192.168.1.20:3000"

    with pytest.raises(SystemExit) as exited:
        parser().parse_args(["dev", "--public-url", "192.168.1.20:3000"])
    assert exited.value.code == 2
    assert "is not an http(s) URL" in capsys.readouterr().err
