"""template.yaml is the single source of truth: handlers, routes, tables and environment in the code
must match it, in both directions."""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from phoneid.config import LOCAL_STACK_VARIABLE, Settings
from phoneid_dev.template import ROOT, template

# Variables read by Powertools itself rather than by Settings.
POWERTOOLS_VARIABLES = {"POWERTOOLS_SERVICE_NAME", "POWERTOOLS_METRICS_NAMESPACE", "POWERTOOLS_LOG_LEVEL"}
# Read by boto3: empty in AWS, the local stack's endpoint under `sam local start-api --env-vars`.
BOTO3_VARIABLES = {"AWS_ENDPOINT_URL"}


def test_every_handler_in_the_code_is_in_the_template_and_back() -> None:
    # Given the handler modules on disk and the functions of the template
    on_disk = {path.parent.name for path in (ROOT / "functions").glob("*/app.py")}
    in_template = {Path(f.code_uri).name for f in template().functions.values()}

    # Then they are the same set, and each template function points at an existing handler
    assert on_disk == in_template
    for function in template().functions.values():
        assert function.module_path.exists(), function.logical_id
        assert function.handler == "app.handler"


def test_handlers_import_without_environment_or_network() -> None:
    # Given a fresh interpreter with no AWS settings and no PhoneID settings at all
    script = (
        "import importlib.util, sys\n"
        "for i, path in enumerate(sys.argv[1:]):\n"
        "    spec = importlib.util.spec_from_file_location(f'fn{i}', path)\n"
        "    module = importlib.util.module_from_spec(spec)\n"
        "    spec.loader.exec_module(module)\n"
        "    assert callable(module.handler), path\n"
    )
    paths = [str(f.module_path) for f in template().functions.values()]

    # When every handler module is imported
    result = subprocess.run(  # noqa: S603 - our own interpreter and files
        [sys.executable, "-c", script, *paths], env={"PATH": ""}, capture_output=True, text=True, check=False
    )

    # Then importing needs no environment variable, client or network call
    assert result.returncode == 0, result.stderr


def test_environment_variables_match_settings() -> None:
    # Given every variable the template gives any function
    declared = {name for f in template().functions.values() for name in f.environment}

    # Then it is exactly what Settings reads plus what Powertools and boto3 read
    assert declared == Settings.variable_names() | POWERTOOLS_VARIABLES | BOTO3_VARIABLES


def test_every_function_has_boto3s_endpoint_and_it_is_empty_in_aws() -> None:
    # SAM sets a variable from --env-vars only where the template declares it; boto3 ignores it empty
    assert {f.logical_id: f.environment.get("AWS_ENDPOINT_URL") for f in template().functions.values()} == {
        f.logical_id: "" for f in template().functions.values()
    }


def test_no_function_of_the_template_is_told_it_runs_on_the_local_stack() -> None:
    # Given every variable the template gives any function, with placeholder values
    declared = {name: "1" for f in template().functions.values() for name in f.environment}
    environment = declared | {"PHONEID_TIER": "production", "PHONEID_REGION": "US", "CONNECT_TRANSPORT": "s3"}

    # Then none says "local stack" (only phoneid dev sets it), so webhooks never reach loopback on AWS
    assert LOCAL_STACK_VARIABLE not in declared
    assert Settings.from_env(environment).local_stack is False


def test_every_table_is_configured_and_every_table_setting_names_a_table() -> None:
    tables = set(template().of_type("AWS::DynamoDB::Table"))
    table_settings = {name for name in Settings.variable_names() if name.endswith("_TABLE")}
    # Every function's table variables, the shared ones and those only some functions get
    # (IDEMPOTENCY_TABLE: the six write routes that keep answers)
    environments = [function.environment for function in template().functions.values()]
    given = {name: env[name]["Ref"] for env in environments for name in table_settings if name in env}

    assert set(given.values()) == tables
    assert set(given) == table_settings


def test_each_function_registers_exactly_its_template_route() -> None:
    # Given the routes the template gives each function
    by_function: dict[str, set[tuple[str, str]]] = {}
    for route in template().routes:
        by_function.setdefault(route.function, set()).add((route.method, route.path))

    for function_id, expected in by_function.items():
        # When the handler module is loaded
        function = template().functions[function_id]
        spec = importlib.util.spec_from_file_location(f"contract_{function_id}", function.module_path)
        assert spec is not None
        assert spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)

        # Then its resolver serves exactly those routes
        registered = {
            (method.upper(), re.sub(r"<(\w+)>", r"{\1}", route.path))
            for route in module.app._static_routes + module.app._dynamic_routes
            for method in ([route.method] if isinstance(route.method, str) else route.method)
        }
        assert registered == expected, function_id


def test_gateway_responses_use_the_error_body_shape() -> None:
    _, api = template().api
    for kind in api["GatewayResponses"]:
        body = json.loads(template().gateway_response(kind).body)
        assert set(body) == {"code", "message"}, kind
        assert body["code"] in {8000, 8001, 8002, 8018}, kind


def test_gateway_responses_are_written_as_the_handlers_write_their_error_bodies() -> None:
    # A client comparing or logging bodies sees one format, whoever answered (compact JSON).
    from phoneid.api.errors import to_json

    _, api = template().api
    for kind in api["GatewayResponses"]:
        body = template().gateway_response(kind).body
        assert body == to_json(json.loads(body)), kind


def test_only_token_keys_the_customers_phone_and_the_operator_reach_the_api_without_a_bearer_token() -> None:
    open_routes = {route.path for route in template().routes if not route.authorized}
    # /token and the public keys; the operator's Mobile Auth redirect and the Instant Link opened on
    # the phone carry their own single-use secrets instead, and the operator's notifications the
    # token of their subscription, which the function checks.
    assert open_routes == {
        "/token",
        "/.well-known/jwks.json",
        "/client/v1/mobile-auth/callback",
        "/l/{token}",
        "/operator/v1/notifications",
    }
    by_authorizer = {route.path: route.authorizer for route in template().routes if route.authorized}
    assert all(
        authorizer == ("AccessTokenAuthorizer" if path.startswith("/v3/") else "FlowTokenAuthorizer")
        for path, authorizer in by_authorizer.items()
    )


def test_only_the_client_api_answers_cross_origin_preflights() -> None:
    # /v3 and /token are server-to-server: no CORS there, not even API-wide.
    assert "Cors" not in template().api[1]
    browser_calls = {
        (route.path, route.function)
        for route in template().routes
        if route.path.startswith("/client/v1/") and route.method == "POST"
    }
    preflights = {(route.path, route.function) for route in template().preflights}
    assert preflights == browser_calls
    assert all(not route.authorized for route in template().preflights)  # a preflight has no token
    missing = template().gateway_response("MISSING_AUTHENTICATION_TOKEN")
    assert "Access-Control-Allow-Origin" not in missing.headers


def test_sandbox_doc_lists_the_catalogue() -> None:
    from phoneid_cli.tables import sandbox_markdown

    document = (ROOT / "docs" / "sandbox.md").read_text()
    start = document.index("-->\n", document.index("<!-- generated")) + len("-->\n")
    end = document.index("<!-- end of generated table -->")
    assert document[start:end] == sandbox_markdown()


def test_fraud_policy_doc_lists_the_default_policy() -> None:
    from phoneid_cli.tables import policy_markdown

    document = (ROOT / "docs" / "fraud-policy.md").read_text()
    start = document.index("-->\n", document.index("<!-- generated")) + len("-->\n")
    end = document.index("<!-- end of generated table -->")
    assert document[start:end] == policy_markdown()


# Tables that hold personal data (phone numbers, names, SSN and date of birth, sealed or not).
PERSONAL_DATA_TABLES = {
    "SessionsTable",
    "IdentitiesTable",
    "DeviceKeysTable",
    "EnrollmentsTable",
    "RateLimitsTable",
    "SignalListsTable",
    "ActivityTable",
}


def test_every_table_holding_personal_data_is_encrypted_with_a_customer_managed_key() -> None:
    keys = set(template().of_type("AWS::KMS::Key"))
    tables = template().of_type("AWS::DynamoDB::Table")
    assert set(tables) >= PERSONAL_DATA_TABLES
    for name in PERSONAL_DATA_TABLES:
        sse = tables[name]["SSESpecification"]
        assert sse["SSEEnabled"] is True, name
        assert sse["SSEType"] == "KMS", name
        key = sse["KMSMasterKeyId"]
        assert (key.get("Ref") or key["Fn::GetAtt"][0]) in keys, name


def test_every_log_group_keeps_logs_for_the_configured_retention() -> None:
    groups = template().of_type("AWS::Logs::LogGroup")
    assert groups
    for name, props in groups.items():
        assert props.get("RetentionInDays") == {"Ref": "LogRetentionDays"}, name
    # Every function logs into a group of the stack (no implicit, never-expiring /aws/lambda group).
    shared = template().document["Globals"]["Function"].get("LoggingConfig", {}).get("LogGroup")
    for name, props in template().of_type("AWS::Serverless::Function").items():
        target = props.get("LoggingConfig", {}).get("LogGroup", shared)
        assert target is not None, name
        assert target["Ref"] in groups, name


def test_both_api_stages_write_json_access_logs_without_bodies_or_query_strings() -> None:
    _, api = template().api
    [stage] = template().of_type("AWS::ApiGatewayV2::Stage").values()
    groups = set(template().of_type("AWS::Logs::LogGroup"))
    for setting, caller_route in (
        (api["AccessLogSetting"], "$context.resourcePath"),
        (stage["AccessLogSettings"], "$context.routeKey"),
    ):
        assert setting["DestinationArn"]["Fn::GetAtt"][0] in groups
        fields = json.loads(setting["Format"])
        values = set(fields.values())
        assert {"$context.requestId", "$context.identity.sourceIp", caller_route, "$context.status"} <= values
        assert "$context.integration.error" in values
        assert any("atency" in value for value in values)
        # No body, no query string, and no raw path (the Instant Link's token is in it).
        assert not any(
            "body" in value.lower() or "querystring" in value.lower() or value == "$context.path"
            for value in values
        )
    access_groups = {api["AccessLogSetting"]["DestinationArn"]["Fn::GetAtt"][0]}
    access_groups.add(stage["AccessLogSettings"]["DestinationArn"]["Fn::GetAtt"][0])
    assert len(access_groups) == 2, "each API logs into a group of its own"


# The functions a Distributed Map runs at once reserve its concurrency parameter.
SCALED_BY = ({"Ref": "ConnectMaxConcurrency"}, {"Ref": "MonitorMaxConcurrency"})


def test_every_function_has_its_reserved_concurrency_behind_the_parameter() -> None:
    for name, props in template().of_type("AWS::Serverless::Function").items():
        condition, reserved, otherwise = props["ReservedConcurrentExecutions"]["Fn::If"]
        assert condition == "ReservesConcurrency", name
        assert otherwise == {"Ref": "AWS::NoValue"}, name
        assert isinstance(reserved, int) or reserved in SCALED_BY, name
    assert "ReservesConcurrency" in template().document["Conditions"]


def test_every_function_is_in_the_operations_concurrency_table() -> None:
    document = (ROOT / "docs" / "operations.md").read_text()
    rows = {
        found[1]: found[2]
        for found in re.finditer(r"^\| `(\w+Function)` \|[^|]*\|[^|]*\| (\S+) \|", document, re.MULTILINE)
    }
    for name, props in template().of_type("AWS::Serverless::Function").items():
        reserved = props["ReservedConcurrentExecutions"]["Fn::If"][1]
        expected = f"`{reserved['Ref']}`" if isinstance(reserved, dict) else str(reserved)
        assert rows.get(name) == expected, name


def test_the_reserved_total_the_docs_state_is_the_templates() -> None:
    # Given what the functions reserve with ReservedConcurrency=enabled and the other defaults
    defaults = template().parameter_defaults()
    total = sum(
        int(defaults[reserved["Ref"]]) if isinstance(reserved, dict) else reserved
        for props in template().of_type("AWS::Serverless::Function").values()
        for reserved in [props["ReservedConcurrentExecutions"]["Fn::If"][1]]
    )
    # (Lambda keeps 100 of the account's quota unreserved)
    needed = total + 100
    document = " ".join((ROOT / "docs" / "operations.md").read_text().split())
    description = " ".join(template().document["Parameters"]["ReservedConcurrency"]["Description"].split())
    samconfig = " ".join(line.lstrip("# ") for line in (ROOT / "samconfig.toml").read_text().splitlines())

    # Then the operator is told the true figures, where they decide on reservations
    assert f"the stack reserves {total} of the account's concurrency" in document
    assert f"({total} in all); the account's Lambda concurrency quota" in document
    assert document.count(f"at least {needed}") >= 2
    assert f"{total} in all" in description
    assert f"at least {needed}" in description
    # and the config environments that turn reservations on say so too
    assert f"{total} reserved in all" in samconfig
    assert f"at least {needed} unreserved" in samconfig


def test_every_checkov_skip_gives_its_reason() -> None:
    for name, resource in template().resources.items():
        for skip in resource.get("Metadata", {}).get("checkov", {}).get("skip", []):
            assert re.fullmatch(r"CKV2?_AWS_\d+", skip["id"]), name
            assert len(skip.get("comment", "").strip()) > 20, (name, skip["id"])


def test_alarms_notify_the_alarm_topic() -> None:
    alarms = template().of_type("AWS::CloudWatch::Alarm")
    watched = {name for props in alarms.values() for name, _ in alarm_metrics(props)}
    assert {
        "5XXError",
        "Error8000",
        "Throttles",
        "AuthorizerDenies",
        "SMSMonthToDateSpentUSD",
        "SmsBudgetRefusals",
        "ApproximateNumberOfMessagesVisible",
    } <= watched
    for name, props in alarms.items():
        assert props["AlarmActions"] == [{"Ref": "AlarmTopic"}], name
    # Both dead-letter queues are watched.
    queues = {
        props["Dimensions"][0]["Value"]["Fn::GetAtt"][0]
        for props in alarms.values()
        if props.get("MetricName") == "ApproximateNumberOfMessagesVisible"
    }
    assert queues == {"WebhookDeadLetterQueue", "ConnectUploadDeadLetterQueue"}


def alarm_metrics(props: dict[str, Any]) -> list[tuple[str, list[Any]]]:
    """(metric name, dimensions) of an alarm on one metric or on metric math."""
    if "MetricName" in props:
        return [(props["MetricName"], props.get("Dimensions", []))]
    return [
        (query["MetricStat"]["Metric"]["MetricName"], query["MetricStat"]["Metric"].get("Dimensions", []))
        for query in props["Metrics"]
        if "MetricStat" in query
    ]


@pytest.mark.parametrize("machine", ["ConnectStateMachine", "MonitorStateMachine"])
def test_executions_that_did_not_succeed_raise_an_alarm_and_none_runs_for_ever(machine: str) -> None:
    # The state machine's failed, timed-out and stopped executions are one alarm on the topic
    [alarm] = [
        props
        for props in template().of_type("AWS::CloudWatch::Alarm").values()
        if any(
            name == "ExecutionsFailed" and dimensions[0]["Value"] == {"Ref": machine}
            for name, dimensions in alarm_metrics(props)
        )
    ]
    metrics = alarm_metrics(alarm)
    assert {name for name, _ in metrics} == {"ExecutionsFailed", "ExecutionsTimedOut", "ExecutionsAborted"}
    assert all(
        dimensions == [{"Name": "StateMachineArn", "Value": {"Ref": machine}}] for _, dimensions in metrics
    )
    assert (alarm["Threshold"], alarm["ComparisonOperator"]) == (0, "GreaterThanThreshold")
    # And an execution ends: the definition has a timeout
    props = template().of_type("AWS::Serverless::StateMachine")[machine]
    definition = json.loads((ROOT / props["DefinitionUri"]).read_text())
    assert 0 < definition["TimeoutSeconds"] <= 7 * 24 * 3600


def test_every_alarm_is_on_the_dashboard() -> None:
    body = template().resources["Dashboard"]["Properties"]["DashboardBody"]["Fn::Sub"]
    for name in template().of_type("AWS::CloudWatch::Alarm"):
        assert "${" + name + ".Arn}" in body, name


def _references(value: Any) -> set[str]:
    """The resources ``value`` names: ``Ref``, ``Fn::GetAtt`` and ``${Name...}`` in ``Fn::Sub``."""
    found: set[str] = set()
    if isinstance(value, dict):
        for key, argument in value.items():
            if key == "Ref" and isinstance(argument, str):
                found.add(argument)
            elif key == "Fn::GetAtt":
                found.add(argument[0])
            elif key == "Fn::Sub":
                text = argument if isinstance(argument, str) else argument[0]
                found |= {name.split(".")[0] for name in re.findall(r"\$\{([^}!]+)\}", text)}
            found |= _references(argument)
    elif isinstance(value, list):
        for item in value:
            found |= _references(item)
    return found


def _trusts_transfer(resource: dict[str, Any]) -> bool:
    trust = resource.get("Properties", {}).get("AssumeRolePolicyDocument", {})
    return "transfer.amazonaws.com" in json.dumps(trust)


def test_no_transfer_family_resource_exists_unless_sftp_is_the_connect_transport() -> None:
    # Given the template's Connect transport parameter and its SFTP condition
    document = template().document
    parameter = document["Parameters"]["ConnectTransport"]
    assert parameter["Default"] == "s3"  # no always-on server unless a stack asks for one
    assert sorted(parameter["AllowedValues"]) == ["none", "s3", "sftp"]
    assert document["Conditions"]["ConnectOverSftp"] == {"Fn::Equals": [{"Ref": "ConnectTransport"}, "sftp"]}

    # Then every Transfer Family resource and every role Transfer Family assumes is conditional on it
    resources = template().resources
    sftp_only = {
        name
        for name, resource in resources.items()
        if resource["Type"].startswith("AWS::Transfer::") or _trusts_transfer(resource)
    }
    assert {"ConnectSftpServer", "ConnectSftpLoggingRole", "ConnectSftpUserRole"} <= sftp_only
    for name in sftp_only:
        assert resources[name].get("Condition") == "ConnectOverSftp", name
    # And so is every resource or output that names one of them (a policy, an output, the
    # dashboard), or the stack could not be created without them
    named = {**resources, **{f"output {key}": value for key, value in document["Outputs"].items()}}
    for name, entry in named.items():
        if _references({key: value for key, value in entry.items() if key != "Condition"}) & sftp_only:
            assert entry.get("Condition") == "ConnectOverSftp", name
