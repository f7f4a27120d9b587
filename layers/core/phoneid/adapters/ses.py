"""Batch emails through SES (API v2): plain text, from the stack's sender (template parameter
``ConnectEmailSender``, an identity verified in SES). The sender is the only address the functions'
IAM policy lets them send from."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from phoneid.adapters.aws import provider_errors

_RECIPIENTS_PER_MESSAGE = 50  # SES's limit of destinations per message


class SesMailer:
    def __init__(self, ses: Any, sender: str) -> None:
        self._ses = ses
        self._sender = sender

    def send(self, to: Sequence[str], subject: str, text: str) -> None:
        """One message to ``to`` (one client's addresses, or the operator's); none: nothing is sent."""
        recipients = list(dict.fromkeys(address for address in to if address))
        for start in range(0, len(recipients), _RECIPIENTS_PER_MESSAGE):
            group = recipients[start : start + _RECIPIENTS_PER_MESSAGE]
            with provider_errors("batch email"):
                self._ses.send_email(
                    FromEmailAddress=self._sender,
                    Destination={"ToAddresses": group},
                    Content={
                        "Simple": {
                            "Subject": {"Data": subject, "Charset": "UTF-8"},
                            "Body": {"Text": {"Data": text, "Charset": "UTF-8"}},
                        }
                    },
                )
