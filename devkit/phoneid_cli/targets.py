"""The stack a command acts on, and the context commands reach it through.

``--local`` names a running local stack (``local_stacks``: its AWS endpoint and its functions'
environment), ``--stack NAME`` a deployed one (its environment resolved from CloudFormation), and
without either the environment's settings are the stack's. Each gives a ``Settings`` built
explicitly, which the container is built on: nothing here writes ``os.environ``.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from phoneid.config import Settings
from phoneid_cli.adapters.cloudformation import CloudFormationStacks, DeployedStacks
from phoneid_cli.errors import CommandError, first_problem
from phoneid_cli.local_stacks import local_stack_facts

if TYPE_CHECKING:
    from botocore.config import Config

    from phoneid.bootstrap import Container

# The container's AWS clients by its names, pointed at the local stack's moto:
# docs/adr/0094-operator-tooling-beside-the-service.md#decision.
CONTAINER_CLIENTS = {
    "dynamodb": "dynamodb",
    "kms": "kms",
    "sns": "sns",
    "sqs": "sqs",
    "s3": "s3",
    "ses": "sesv2",
}


@dataclass(frozen=True)
class Target:
    """A stack: its settings, and where its AWS answers (``aws_endpoint``: the local stack's moto;
    None: AWS as boto3 finds it from the operator's profile)."""

    settings: Settings
    aws_endpoint: str | None = None
    facts: dict[str, Any] = field(default_factory=dict)  # the local stack's, as it says them

    def client(self, service: str, config: Config | None = None) -> Any:
        """A boto3 client of this stack's AWS: on a local stack its moto, with moto's credentials."""
        import boto3

        from phoneid.adapters.aws import client_config

        chosen = config or client_config(service)
        if self.aws_endpoint is None:
            return boto3.client(service, config=chosen)  # type: ignore[call-overload]
        from phoneid_dev.emulation.server import FAKE_CREDENTIALS

        session = boto3.Session(
            aws_access_key_id=FAKE_CREDENTIALS["AWS_ACCESS_KEY_ID"],
            aws_secret_access_key=FAKE_CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
            aws_session_token=FAKE_CREDENTIALS["AWS_SESSION_TOKEN"],
            region_name=FAKE_CREDENTIALS["AWS_DEFAULT_REGION"],
        )
        return session.client(service, endpoint_url=self.aws_endpoint, config=chosen)  # type: ignore[call-overload]

    @property
    def signs_with_session_credentials(self) -> bool:
        """Whether presigned URLs are signed with temporary credentials (not on the local stack, whose
        moto checks neither signatures nor expiry)."""
        if self.aws_endpoint is not None:
            return False
        import boto3

        credentials = boto3.Session().get_credentials()
        return bool(credentials is not None and credentials.token)


def resolve(args: argparse.Namespace, stacks: DeployedStacks) -> Target:
    """The stack ``args`` name (``--local``, ``--stack``) or, without either, the environment's."""
    local = getattr(args, "local", None)
    if local is not None:
        facts = local_stack_facts(local)
        return Target(Settings.from_env(facts["environment"]), facts["awsEndpointUrl"], facts)
    stack_name = getattr(args, "stack", None)
    if stack_name:
        return Target(Settings.from_env(stacks.environment(stack_name)))
    return Target(_environment_settings(args))


def _environment_settings(args: argparse.Namespace) -> Settings:
    """Without --local or --stack the settings come from the environment: say which are missing."""
    from pydantic import ValidationError

    try:
        return Settings.from_env()
    except ValidationError as error:
        command = " ".join(part for part in (args.command, getattr(args, "action", None)) if part)
        missing = [str(e["loc"][0]) for e in error.errors() if e["type"] == "missing" and e["loc"]]
        problem = (
            f"{len(missing)} of its settings, such as {missing[0]}, are not set"
            if missing
            else f"its settings are invalid ({first_problem(error)})"
        )
        raise CommandError(
            f"{command} needs a stack: add --local (the running local stack) or --stack NAME "
            f"(a deployed one), or set the stack's environment ({problem})"
        ) from None


def where(args: argparse.Namespace) -> str:
    """The target options a follow-up command needs: `` --stack NAME``, `` --local``."""
    if getattr(args, "stack", None):
        return f" --stack {args.stack}"
    local = getattr(args, "local", None)
    if local is True:
        return " --local"
    return f" --local {local}" if local is not None else ""


class Context:
    """What a command reaches the world through: the stack its arguments name (resolved once, when
    first asked, so a bad file is said before any stack is looked for) and that stack's services."""

    def __init__(self, stacks: DeployedStacks | None = None) -> None:
        self.stacks: DeployedStacks = stacks if stacks is not None else CloudFormationStacks()
        self._target: Target | None = None
        self._services_built = False

    def target(self, args: argparse.Namespace) -> Target:
        if self._target is None:
            self._target = resolve(args, self.stacks)
        return self._target

    @property
    def local_aws(self) -> str | None:
        """The local stack's AWS endpoint once a command targeted one (errors.py names it)."""
        return self._target.aws_endpoint if self._target is not None else None

    def services(self, args: argparse.Namespace) -> Container:
        """The container of the targeted stack, built on its settings (a fresh one per command)."""
        from phoneid import bootstrap

        if not self._services_built:
            target = self.target(args)
            bootstrap.reset(target.settings)
            if target.aws_endpoint is not None:
                bootstrap.override(**_local_clients(target))
            self._services_built = True
        return bootstrap.container()


def _local_clients(target: Target) -> dict[str, Any]:
    """The container's parts that reach AWS, made for the local stack's moto."""
    from botocore.config import Config

    from phoneid.adapters.s3_urls import S3PresignedUrls

    clients = {name: target.client(service) for name, service in CONTAINER_CLIENTS.items()}
    # Connect's URLs, signed as phoneid.adapters.s3_urls.signing_client signs them (SigV4).
    signing = target.client("s3", Config(signature_version="s3v4"))
    return clients | {"presigned_urls": S3PresignedUrls(signing, target.settings.connect_bucket)}
