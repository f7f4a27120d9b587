"""Lambda's invocations as IAM authorizes them."""

from __future__ import annotations

from phoneid_dev.access.actions.requests import Call, Mappers, Request, Stack

MAPPERS = Mappers()


def _function_arn(call: Call, name: str, qualifier: str | None) -> str:
    if not name.startswith("arn:"):
        name = f"arn:aws:lambda:{call.region}:{call.account}:function:{name}"
    return f"{name}:{qualifier}" if qualifier and name.count(":") == 6 else name


@MAPPERS.maps("lambda", "Invoke", "InvokeWithResponseStream")
def _lambda_invoke(call: Call, _: Stack) -> list[Request]:
    arn = _function_arn(call, str(call.params["FunctionName"]), call.params.get("Qualifier"))
    return [Request("lambda:InvokeFunction", arn)]
