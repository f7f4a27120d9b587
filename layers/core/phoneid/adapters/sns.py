"""SMS delivery through SNS. Sandbox stacks never text a phone: their messages go to a topic."""

from __future__ import annotations

from typing import Any

from phoneid.adapters.aws import provider_errors


class SnsSmsSender:
    """Production: a transactional SMS to the number (E.164)."""

    def __init__(self, sns: Any, sender_id: str | None = None) -> None:
        self._sns = sns
        self._attributes = {
            "AWS.SNS.SMS.SMSType": {"DataType": "String", "StringValue": "Transactional"},
            **(
                {"AWS.SNS.SMS.SenderID": {"DataType": "String", "StringValue": sender_id}}
                if sender_id
                else {}
            ),
        }

    def send(self, phone_number: str, text: str) -> None:
        with provider_errors("SMS delivery"):
            self._sns.publish(PhoneNumber=phone_number, Message=text, MessageAttributes=self._attributes)


class TopicSmsSender:
    """Sandbox: the message is published to a topic (subscribe to read it); no SMS leaves."""

    def __init__(self, sns: Any, topic_arn: str) -> None:
        self._sns = sns
        self._topic_arn = topic_arn

    def send(self, phone_number: str, text: str) -> None:
        with provider_errors("Sandbox message"):
            self._sns.publish(
                TopicArn=self._topic_arn,
                Message=text,
                Subject="PhoneID Sandbox SMS",
                MessageAttributes={"phoneNumber": {"DataType": "String", "StringValue": phone_number}},
            )
