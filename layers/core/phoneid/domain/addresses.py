"""Postal addresses: telling a PO Box from a street address.

Responses leave PO Box addresses out unless the client's ``po-box-addresses`` flag is on: a PO Box
says where mail goes, not where a person lives. Detection looks at the street line (and the
extended line) for the usual ways of writing a post-office box, and not at street names that merely
contain "box" or "post office" (Box Elder Road, Boxwood Lane, 12 Post Office Square).
"""

from __future__ import annotations

import re
import unicodedata

# "PO Box 12", "P.O. Box 12", "P O Box", "POB 12", "P.O.B. 12", "Post Office Box 12", "PO Bx 12",
# "Pobox 12", "Postal Box 12", "P.O. Drawer 12", and a line that is only "Box 12" or "Lockbox 12".
# A private mailbox (PMB) is an address at a mail store and is kept.
_NUMBER = r"\W*(?:no\W*|number\W*|\#\s*)?\d"
_BOX = rf"""(?:
      (?:p\W*o\W+|post\W*office\W*|postal\W*)(?:box|bx|drawer)\b   # PO Box, P.O. Bx, Post Office Box
    | pobox(?={_NUMBER})                                            # Pobox 12
    | p\W*o\W*b\b(?={_NUMBER})                                      # POB 12, P.O.B. 12
)"""
_PO_BOX = re.compile(
    rf"^\s*(?:{_BOX}|(?:lock\W*)?box{_NUMBER}+\s*$)",  # or a line that is only "Box 12" / "Lockbox 12"
    re.IGNORECASE | re.VERBOSE,
)
# A PO Box written after a name or department: "Acme Ltd, PO Box 12", "Attn: POB 4".
_PO_BOX_INSIDE = re.compile(rf"(?:^|[\s,;:]){_BOX}", re.IGNORECASE | re.VERBOSE)


def _plain(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def is_po_box(*lines: str | None) -> bool:
    """Whether any of the address lines is a post-office box."""
    for line in lines:
        if not line:
            continue
        text = _plain(line)
        if _PO_BOX.match(text) or _PO_BOX_INSIDE.search(text):
            return True
    return False
