"""The local outbox: every message is printed exactly once, however often the list is read."""

from __future__ import annotations

from phoneid_dev.outbox import Outbox, printed_line


class FakeSent:
    """What moto recorded, as the outbox reads it: texts and emails, oldest first."""

    def __init__(self) -> None:
        self.texts: list[dict[str, str]] = []
        self.emails: list[dict[str, str]] = []

    def sms(self, to: str, text: str) -> None:
        self.texts.append({"to": to, "text": text, "via": "sandbox-topic"})

    def email(self, to: str, subject: str) -> None:
        self.emails.append({"to": to, "subject": subject, "text": "body", "via": "email", "from": "a@b"})

    def outbox(self) -> Outbox:
        # Fresh dicts on every read, as moto's backends give
        return Outbox(
            texts=lambda: [dict(m) for m in self.texts],
            emails=lambda: [dict(m) for m in self.emails],
            stamp=lambda: "2026-05-01T10:00:00Z",
        )


def test_reading_the_outbox_does_not_keep_a_message_from_the_terminal() -> None:
    # Given a stack that sends seven texts, its outbox read right after each one
    sent = FakeSent()
    outbox = sent.outbox()
    printed: list[str] = []
    for n in range(7):
        sent.sms("+12025550101", f"code {n}")
        outbox.messages()
        # When the printer's rounds fall between some of the reads
        if n % 2:
            printed += [printed_line(m) for m in outbox.unprinted()]
    printed += [printed_line(m) for m in outbox.unprinted()]

    # Then every text is printed exactly once, in order
    assert printed == [f"SMS to +12025550101: code {n}" for n in range(7)]
    # And the outbox still lists all seven
    assert [m["text"] for m in outbox.messages()] == [f"code {n}" for n in range(7)]


def test_interleaved_reads_print_each_text_and_email_once() -> None:
    # Given texts and an email sent between reads of the list and rounds of the printer
    sent = FakeSent()
    outbox = sent.outbox()
    printed: list[str] = []
    sent.sms("+12025550101", "one")
    printed += [printed_line(m) for m in outbox.unprinted()]
    sent.sms("+12025550103", "two")
    listed_early = outbox.messages()
    sent.email("ops@example.com", "Batch done")
    listed_late = outbox.messages()
    printed += [printed_line(m) for m in outbox.unprinted()]
    printed += [printed_line(m) for m in outbox.unprinted()]  # nothing new: nothing printed again
    sent.sms("+12025550101", "three")
    printed += [printed_line(m) for m in outbox.unprinted()]

    # Then the terminal shows each message once
    assert printed == [
        "SMS to +12025550101: one",
        "SMS to +12025550103: two",
        "EMAIL to ops@example.com: Batch done",
        "SMS to +12025550101: three",
    ]
    # And each read of the list had everything sent so far, stamped when first seen
    assert [m["to"] for m in listed_early] == ["+12025550101", "+12025550103"]
    assert [m.get("subject", m["text"]) for m in listed_late] == ["one", "two", "Batch done"]
    assert {m["at"] for m in outbox.messages()} == {"2026-05-01T10:00:00Z"}
