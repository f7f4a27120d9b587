"""Telling a PO Box from a street address, and leaving PO Boxes out of responses unless the client's
flag allows them."""

from __future__ import annotations

import pytest

from phoneid.domain.addresses import is_po_box
from phoneid.domain.identity import Address
from phoneid.domain.verification import shown_addresses


@pytest.mark.parametrize(
    "line",
    [
        "PO Box 12",
        "P.O. Box 12",
        "P O Box 12",
        "P O Box",
        "POB 12",
        "P.O.B. 12",
        "Post Office Box 12",
        "PO Bx 12",
        "Pobox 12",
        "Postal Box 12",
        "Box 123",
        "Lockbox 12",
        "Acme Ltd, PO Box 12",
        "Attn: P.O. Box 4",
        "P.O. Drawer 12",
        "BOX #4",
        "Box No. 5",
        "po box 12",
        "PO BOX 12",
        "P.Ó. Bóx 12",
        "  PO Box 12  ",
    ],
)
def test_the_usual_spellings_of_a_po_box_are_po_boxes(line: str) -> None:
    # Given an address line written as a post-office box
    # When it is checked
    # Then it is a PO Box
    assert is_po_box(line) is True


@pytest.mark.parametrize(
    "line",
    [
        "Box Elder Road",
        "12 Boxwood Lane",
        "12 Post Office Square",
        "Port Orchard Blvd",
        "PMB 123 1 Main St",
        "1 Pobox Street",
        "Po River Road 1",
        "12 Box Hill Rd",
        "42 Quarry Road",
    ],
)
def test_street_addresses_that_merely_look_like_one_are_not_po_boxes(line: str) -> None:
    # Given a street address whose name contains "box", "post office", "po" or a private mailbox
    # When it is checked
    # Then it is not a PO Box
    assert is_po_box(line) is False


@pytest.mark.parametrize(
    "line",
    [
        "Acme Ltd, POB 12",
        "Acme Ltd, P.O.B. 12",
        "Acme Ltd, Postal Box 12",
        "Acme Ltd, P.O. Drawer 12",
    ],
)
def test_a_po_box_after_a_name_is_a_po_box_in_every_spelling_known_at_the_start(line: str) -> None:
    # Given a name followed by a spelling that is a PO Box at the start of a line
    assert is_po_box(line.split(", ", 1)[1]) is True

    # When the whole line is checked
    # Then it is a PO Box too, as "Acme Ltd, PO Box 12" is
    assert is_po_box(line) is True


def test_the_extended_address_line_is_checked_too() -> None:
    # Given a street line that is an ordinary street and an extended line that is a PO Box
    # When both are checked
    # Then the address is a PO Box; lines that are missing are ignored
    assert is_po_box("12 Main Street", "PO Box 9") is True
    assert is_po_box(None, "Box 4") is True
    assert is_po_box("12 Main Street", "Apt 4B") is False
    assert is_po_box(None, None) is False
    assert is_po_box("", "") is False


STREET = Address(address="12 Orchard Street", city="Albany", region="NY", postal_code="12207")
PO_BOX = Address(address="PO Box 77", city="Albany", region="NY", postal_code="12201")
PO_BOX_EXTENDED = Address(
    address="1 Main Street", extended_address="P.O. Box 5", city="Troy", region="NY", postal_code="12180"
)


def test_po_boxes_are_left_out_for_a_client_without_the_flag() -> None:
    # Given a street address and two PO Boxes (one written in the extended line)
    addresses = [STREET, PO_BOX, PO_BOX_EXTENDED]

    # When shown to a client whose po-box-addresses flag is off
    shown = shown_addresses(addresses, po_boxes=False)

    # Then only the street address is shown
    assert shown == [STREET]


def test_po_boxes_are_shown_to_a_client_with_the_flag_in_their_order() -> None:
    # Given a PO Box listed before a street address
    addresses = [PO_BOX, STREET, PO_BOX_EXTENDED]

    # When shown to a client whose po-box-addresses flag is on
    shown = shown_addresses(addresses, po_boxes=True)

    # Then every address is shown, in the order held
    assert shown == [PO_BOX, STREET, PO_BOX_EXTENDED]


def test_only_po_boxes_leaves_nothing_to_show_without_the_flag() -> None:
    # Given only PO Boxes
    # When shown without the flag
    # Then nothing is shown
    assert shown_addresses([PO_BOX], po_boxes=False) == []
    assert shown_addresses([], po_boxes=False) == []
