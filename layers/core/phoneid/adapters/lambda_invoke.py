"""Lambda invocations the functions make themselves: a signer asks the key rotation to run now."""

from __future__ import annotations

from typing import Any

from phoneid.adapters.aws import internal_error, provider_errors


class LambdaRotationTrigger:
    """Runs the key-rotation function synchronously. It creates the keys of the windows its own
    clock names, never one the caller chooses: a signer may ask for keys, not plant one."""

    def __init__(self, lambda_client: Any, function_name: str) -> None:
        self._lambda = lambda_client
        self._function_name = function_name

    def rotate_now(self) -> None:
        with provider_errors("key rotation"):
            response = self._lambda.invoke(
                FunctionName=self._function_name, InvocationType="RequestResponse", Payload=b"{}"
            )
        if response.get("FunctionError"):
            raise internal_error("key rotation")
