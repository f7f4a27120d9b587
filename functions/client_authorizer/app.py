"""Lambda TOKEN authorizer of the client API: the flow's authToken, never an access token."""

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from phoneid.api.authorizer import allow_flow_policy
from phoneid.bootstrap import container
from phoneid.domain.errors import Unauthorized
from phoneid.tasks import logger


@logger.inject_lambda_context
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    try:
        flow = container().tokens.authorize_flow(event.get("authorizationToken"))
    except Unauthorized as error:
        logger.info("authToken refused", extra={"reason": error.message})
        raise Exception("Unauthorized") from None
    return allow_flow_policy(flow, event["methodArn"])
