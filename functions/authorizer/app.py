"""Lambda TOKEN authorizer: verifies the integrator's access token; anything else is a 401."""

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from phoneid.api.authorizer import allow_policy
from phoneid.bootstrap import container
from phoneid.domain.errors import Unauthorized
from phoneid.tasks import logger


@logger.inject_lambda_context
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    try:
        caller = container().tokens.authorize(event.get("authorizationToken"))
    except Unauthorized as error:
        logger.info("token refused", extra={"reason": error.message})
        # This exact message makes API Gateway answer 401 (the UNAUTHORIZED gateway response).
        raise Exception("Unauthorized") from None
    return allow_policy(caller, event["methodArn"])
