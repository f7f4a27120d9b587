"""Reads ``template.yaml``: the single source of routes, functions, tables, keys and environment.

The local stack and the tests take everything from here; nothing lists a route or table twice.

The template (and beside it the repository: ``functions/``, the web SDK, the docs) is found where
``PHONEID_TEMPLATE`` says, else in the current directory or the nearest one above it holding
``template.yaml`` and ``functions/``, else above this package (an editable install in the
repository); none of these: ``RepositoryNotFound``, saying how to name it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import yaml

# Names the template (or the directory holding it) when the repository is not where ``phoneid`` runs.
TEMPLATE_VARIABLE = "PHONEID_TEMPLATE"
TEMPLATE_NAME = "template.yaml"


class RepositoryNotFound(LookupError):
    """No PhoneID repository (its ``template.yaml`` and ``functions/``) where the local stack looked."""


def _is_repository(directory: Path) -> bool:
    return (directory / TEMPLATE_NAME).is_file() and (directory / "functions").is_dir()


def _upwards(start: Path) -> Iterator[Path]:
    yield start
    yield from start.parents


def find_template(explicit: str | None = None, start: Path | None = None) -> Path:
    """The repository's ``template.yaml``: ``explicit`` (a file, or the directory holding it), else
    the first repository from ``start`` (the current directory) upwards, else from this package's
    own location upwards."""
    if explicit:
        named = Path(explicit).expanduser().resolve()
        found = named / TEMPLATE_NAME if named.is_dir() else named
        if not found.is_file():
            raise RepositoryNotFound(f"{TEMPLATE_VARIABLE}={explicit}: no {TEMPLATE_NAME} there")
        return found
    here = (start or Path.cwd()).resolve()
    for directory in (*_upwards(here), *_upwards(Path(__file__).resolve().parent)):
        if _is_repository(directory):
            return directory / TEMPLATE_NAME
    raise RepositoryNotFound(
        f"no PhoneID repository ({TEMPLATE_NAME} beside functions/) in {here} or any directory above "
        f"it: run from the repository, or set {TEMPLATE_VARIABLE}=/path/to/phoneid/{TEMPLATE_NAME}"
    )


@cache
def _found(explicit: str | None, start: Path) -> Path:
    return find_template(explicit, start)


def template_path() -> Path:
    """``find_template`` for this process's setting and directory, looked up once for each."""
    return _found(os.environ.get(TEMPLATE_VARIABLE) or None, Path.cwd())


def repository_root() -> Path:
    """The directory holding ``template.yaml``: where ``functions/``, ``clients/`` and ``docs/`` are."""
    return template_path().parent


def __getattr__(name: str) -> Path:
    # ``ROOT`` and ``TEMPLATE_PATH`` are looked up when first read, not when this module is imported:
    # importing the local stack outside a repository fails only when it needs the repository.
    if name == "ROOT":
        return repository_root()
    if name == "TEMPLATE_PATH":
        return template_path()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_TAGS = (
    "Ref",
    "Sub",
    "GetAtt",
    "If",
    "Equals",
    "Not",
    "And",
    "Or",
    "Select",
    "Join",
    "Split",
    "FindInMap",
    "Base64",
    "ImportValue",
    "GetAZs",
    "Condition",
    "Cidr",
    "Transform",
)


class _CfnLoader(yaml.SafeLoader):
    """YAML with CloudFormation's short-form intrinsic tags read as their long form."""


def _intrinsic(tag: str) -> Any:
    key = "Ref" if tag in ("Ref", "Condition") else f"Fn::{tag}"

    def construct(loader: yaml.SafeLoader, node: yaml.Node) -> dict[str, Any]:
        if isinstance(node, yaml.ScalarNode):
            value: Any = loader.construct_scalar(node)
            if tag == "GetAtt":
                value = str(value).split(".", 1)
        elif isinstance(node, yaml.SequenceNode):
            value = loader.construct_sequence(node, deep=True)
        else:
            value = loader.construct_mapping(node, deep=True)  # type: ignore[arg-type]
        return {key: value}

    return construct


for _tag in _TAGS:
    _CfnLoader.add_constructor(f"!{_tag}", _intrinsic(_tag))


@dataclass(frozen=True)
class Route:
    method: str  # upper case
    path: str  # as in the template, e.g. /l/{token}
    function: str  # logical id
    authorizer: str | None  # name of the Lambda authorizer, None for an open route

    @property
    def authorized(self) -> bool:
        return self.authorizer is not None

    def _pattern(self) -> re.Pattern[str]:
        parts = re.split(r"(\{[^/}]+\})", self.path)
        regex = "".join(
            f"(?P<{part[1:-1]}>[^/]+)" if part.startswith("{") else re.escape(part) for part in parts
        )
        return re.compile(f"^{regex}$")

    def parameters(self, path: str) -> dict[str, str] | None:
        """The path parameters when ``path`` is this route's path, else None."""
        found = self._pattern().match(path)
        return dict(found.groupdict()) if found else None

    def matches(self, method: str, path: str) -> bool:
        return self.method == method.upper() and self.parameters(path) is not None


@dataclass(frozen=True)
class Authorizer:
    function: str
    header_pattern: re.Pattern[str]
    # How long API Gateway keeps an answer per Authorization header (``ReauthorizeEvery``).
    reauthorize_every: int


@dataclass(frozen=True)
class Function:
    logical_id: str
    code_uri: str
    handler: str
    environment: Mapping[str, Any]
    root: Path | None = None  # the repository the code is in (None: ``repository_root()``)

    @property
    def module_path(self) -> Path:
        module, _, _ = self.handler.rpartition(".")
        return (self.root or repository_root()) / self.code_uri / f"{module.replace('.', '/')}.py"

    @property
    def handler_name(self) -> str:
        return self.handler.rpartition(".")[2]


@dataclass(frozen=True)
class GatewayResponse:
    status: int | None
    headers: Mapping[str, str]
    body: str


class Template:
    def __init__(self, document: Mapping[str, Any], root: Path | None = None) -> None:
        self.document = document
        self.resources: Mapping[str, Any] = document.get("Resources", {})
        self._root = root

    @classmethod
    def load(cls, path: Path | None = None) -> Template:
        path = template_path() if path is None else path
        document = yaml.load(path.read_text(), Loader=_CfnLoader)  # noqa: S506 - SafeLoader subclass
        return cls(document, root=path.resolve().parent)

    @property
    def root(self) -> Path:
        """The directory its relative paths (``CodeUri``, ``DefinitionUri``) start from."""
        return self._root or repository_root()

    def of_type(self, resource_type: str) -> dict[str, Mapping[str, Any]]:
        return {
            name: resource.get("Properties", {})
            for name, resource in self.resources.items()
            if resource.get("Type") == resource_type
        }

    def parameter_defaults(self) -> dict[str, str]:
        return {
            name: str(spec["Default"])
            for name, spec in self.document.get("Parameters", {}).items()
            if "Default" in spec
        }

    @property
    def functions(self) -> dict[str, Function]:
        shared = self.document.get("Globals", {}).get("Function", {})
        shared_env = shared.get("Environment", {}).get("Variables", {})
        functions = {}
        for name, props in self.of_type("AWS::Serverless::Function").items():
            own_env = props.get("Environment", {}).get("Variables", {})
            functions[name] = Function(
                logical_id=name,
                code_uri=props["CodeUri"],
                handler=props.get("Handler", shared.get("Handler", "")),
                environment={**shared_env, **own_env},
                root=self._root,
            )
        return functions

    @property
    def api(self) -> tuple[str, Mapping[str, Any]]:
        apis = self.of_type("AWS::Serverless::Api")
        if len(apis) != 1:
            raise ValueError("the template must declare exactly one AWS::Serverless::Api")
        return next(iter(apis.items()))

    @property
    def routes(self) -> list[Route]:
        """The REST API's calls (its CORS preflights apart: ``preflights``)."""
        return [route for route in self._api_routes if route.method != "OPTIONS"]

    @property
    def preflights(self) -> list[Route]:
        """The OPTIONS routes: browsers' CORS preflights, answered by the client API's functions."""
        return [route for route in self._api_routes if route.method == "OPTIONS"]

    @property
    def _api_routes(self) -> list[Route]:
        api_name, api = self.api
        default = api.get("Auth", {}).get("DefaultAuthorizer")
        routes = []
        for name, props in self.of_type("AWS::Serverless::Function").items():
            for event in props.get("Events", {}).values():
                if event.get("Type") != "Api":
                    continue
                spec = event["Properties"]
                if spec.get("RestApiId", {}).get("Ref") != api_name:
                    continue
                authorizer = spec.get("Auth", {}).get("Authorizer", default)
                routes.append(
                    Route(
                        spec["Method"].upper(),
                        spec["Path"],
                        name,
                        None if authorizer == "NONE" else authorizer,
                    )
                )
        return routes

    @property
    def authorizers(self) -> dict[str, Authorizer]:
        """The TOKEN authorizers: their functions and the header pattern API Gateway checks first."""
        _, props = self.api
        return {
            name: Authorizer(
                function=spec["FunctionArn"]["Fn::GetAtt"][0],
                header_pattern=re.compile(spec["Identity"]["ValidationExpression"]),
                reauthorize_every=int(spec["Identity"].get("ReauthorizeEvery", 300)),  # SAM's default
            )
            for name, spec in props["Auth"]["Authorizers"].items()
        }

    @property
    def cors(self) -> dict[str, str]:
        """The headers API Gateway's CORS preflight answers with (empty: no CORS)."""
        _, props = self.api
        spec = props.get("Cors") or {}
        names = {
            "AllowOrigin": "Access-Control-Allow-Origin",
            "AllowHeaders": "Access-Control-Allow-Headers",
            "AllowMethods": "Access-Control-Allow-Methods",
            "MaxAge": "Access-Control-Max-Age",
        }
        return {names[key]: str(value).strip("'") for key, value in spec.items() if key in names}

    @property
    def websocket_function(self) -> str:
        """The function behind the WebSocket API's routes."""
        for props in self.of_type("AWS::ApiGatewayV2::Integration").values():
            found = re.search(r"\$\{(\w+)\.Arn\}", props["IntegrationUri"]["Fn::Sub"])
            if found:
                return found.group(1)
        raise ValueError("the template declares no WebSocket integration")

    def gateway_response(self, kind: str) -> GatewayResponse:
        """A gateway response as configured, falling back to DEFAULT_4XX/5XX like API Gateway does."""
        _, props = self.api
        responses = props.get("GatewayResponses", {})
        defaults = {
            "UNAUTHORIZED": 401,
            "ACCESS_DENIED": 403,
            "MISSING_AUTHENTICATION_TOKEN": 403,
            "THROTTLED": 429,
            "REQUEST_TOO_LARGE": 413,
            "DEFAULT_4XX": None,
            "DEFAULT_5XX": None,
        }
        spec = responses.get(kind) or responses.get(
            "DEFAULT_5XX" if kind == "DEFAULT_5XX" else "DEFAULT_4XX", {}
        )
        headers = {
            name: value.strip("'")
            for name, value in spec.get("ResponseParameters", {}).get("Headers", {}).items()
        }
        return GatewayResponse(
            status=spec.get("StatusCode") or defaults.get(kind),
            headers=headers,
            body=spec.get("ResponseTemplates", {}).get("application/json", '{"message": null}'),
        )


@cache
def template() -> Template:
    return Template.load()
