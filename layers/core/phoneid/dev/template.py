"""Reads ``template.yaml``: the single source of routes, functions, tables, keys and environment.

The local stack and the tests take everything from here; nothing lists a route or table twice.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[4]
TEMPLATE_PATH = ROOT / "template.yaml"

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
    path: str
    function: str  # logical id
    authorized: bool

    def matches(self, method: str, path: str) -> bool:
        return self.method == method.upper() and self.path == path


@dataclass(frozen=True)
class Function:
    logical_id: str
    code_uri: str
    handler: str
    environment: Mapping[str, Any]

    @property
    def module_path(self) -> Path:
        module, _, _ = self.handler.rpartition(".")
        return ROOT / self.code_uri / f"{module.replace('.', '/')}.py"

    @property
    def handler_name(self) -> str:
        return self.handler.rpartition(".")[2]


@dataclass(frozen=True)
class GatewayResponse:
    status: int | None
    headers: Mapping[str, str]
    body: str


class Template:
    def __init__(self, document: Mapping[str, Any]) -> None:
        self.document = document
        self.resources: Mapping[str, Any] = document.get("Resources", {})

    @classmethod
    def load(cls, path: Path = TEMPLATE_PATH) -> Template:
        return cls(yaml.load(path.read_text(), Loader=_CfnLoader))  # noqa: S506 - SafeLoader subclass

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
        api_name, _ = self.api
        routes = []
        for name, props in self.of_type("AWS::Serverless::Function").items():
            for event in props.get("Events", {}).values():
                if event.get("Type") != "Api":
                    continue
                spec = event["Properties"]
                if spec.get("RestApiId", {}).get("Ref") != api_name:
                    continue
                authorizer = spec.get("Auth", {}).get("Authorizer")
                routes.append(Route(spec["Method"].upper(), spec["Path"], name, authorizer != "NONE"))
        return routes

    @property
    def authorizer(self) -> tuple[str, re.Pattern[str]]:
        """The TOKEN authorizer's function and the header pattern API Gateway checks before calling it."""
        _, props = self.api
        auth = props["Auth"]
        spec = auth["Authorizers"][auth["DefaultAuthorizer"]]
        function = spec["FunctionArn"]["Fn::GetAtt"][0]
        return function, re.compile(spec["Identity"]["ValidationExpression"])

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
