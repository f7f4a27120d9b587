"""What the mappers speak: a botocore call, its stack, and the IAM requests AWS authorizes for it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

# A condition key's value: one string, or several (a multivalued key such as dynamodb:Attributes).
Value = str | tuple[str, ...]


class Unmapped(Exception):
    """An operation (or a form of its parameters) this module does not know how AWS authorizes."""


@dataclass(frozen=True)
class Request:
    """One IAM authorization: the action on the resource, with the request's condition keys."""

    action: str
    resource: str
    context: Mapping[str, Value] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        context = {
            key: list(value) if isinstance(value, tuple) else value for key, value in self.context.items()
        }
        return {"action": self.action, "resource": self.resource, "context": context}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Request:
        context = {
            key: tuple(value) if isinstance(value, list) else str(value)
            for key, value in (data.get("context") or {}).items()
        }
        return cls(str(data["action"]), str(data["resource"]), context)


@dataclass(frozen=True)
class Call:
    """A botocore call as its handlers see it."""

    service: str  # botocore's service name: "dynamodb", "sesv2", "apigatewaymanagementapi"
    operation: str  # "TransactWriteItems"
    params: Mapping[str, Any]
    region: str
    account: str
    url: str | None = None  # where the request went
    response: Mapping[str, Any] | None = None  # botocore's parsed answer, errors included

    @property
    def error_code(self) -> str | None:
        error = (self.response or {}).get("Error") or {}
        code = error.get("Code")
        return str(code) if code else None


@dataclass(frozen=True)
class Stack:
    """What mapping a call needs of its stack beside the call itself."""

    endpoints: Mapping[str, str] = field(default_factory=dict)  # local endpoint -> the AWS one
    bucket_keys: Mapping[str, str] = field(default_factory=dict)  # bucket -> its default KMS key ARN


Mapper = Callable[[Call, Stack], list[Request]]


class Mappers(dict[tuple[str, str], Mapper]):
    """One service's mappers by (botocore service, operation); ``maps`` registers one."""

    def maps(self, service: str, *operations: str) -> Callable[[Mapper], Mapper]:
        def register(mapper: Mapper) -> Mapper:
            for operation in operations:
                self[(service, operation)] = mapper
            return mapper

        return register
