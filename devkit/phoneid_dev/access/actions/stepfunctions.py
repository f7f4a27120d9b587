"""Step Functions' operations as IAM authorizes them."""

from __future__ import annotations

from phoneid_dev.access.actions.requests import Call, Mappers, Request, Stack

MAPPERS = Mappers()


@MAPPERS.maps("stepfunctions", "StartExecution", "StartSyncExecution")
def _states_start(call: Call, _: Stack) -> list[Request]:
    return [Request(f"states:{call.operation}", str(call.params["stateMachineArn"]))]


@MAPPERS.maps("stepfunctions", "DescribeExecution", "StopExecution")
def _states_execution(call: Call, _: Stack) -> list[Request]:
    return [Request(f"states:{call.operation}", str(call.params["executionArn"]))]
