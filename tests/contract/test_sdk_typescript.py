"""The TypeScript server SDK's types are docs/openapi.json's, and it has a method for every server
operation (docs/adr/0107-the-typescript-server-sdk.md)."""

from __future__ import annotations

import json
from pathlib import Path

from phoneid_dev.openapi import openapi_path
from tests.typescript_sdk import PACKAGE, ROOT, build, generate_command, run


def test_the_committed_types_are_what_the_generator_makes_of_docs_openapi_json(tmp_path: Path) -> None:
    # Given the types generated again from the document, as `npm run generate` does
    generated = run(generate_command(tmp_path / "schema.ts"), PACKAGE)
    assert generated.returncode == 0, generated.stderr

    # Then they are the committed ones, byte for byte (regenerate: make typescript-sdk-types)
    assert (tmp_path / "schema.ts").read_bytes() == (PACKAGE / "src" / "schema.ts").read_bytes()


def test_every_server_operation_of_the_document_has_a_method(tmp_path: Path) -> None:
    # Given the server operations of the document: /token and /v3, which an integrator's backend calls
    document = json.loads(openapi_path().read_text())
    operations = {
        (method.upper(), path)
        for path, item in document["paths"].items()
        if path == "/token" or path.startswith("/v3/")
        for method in item
    }

    # When the SDK is built and asked for its routes and its client's methods
    package = build(tmp_path)
    script = (
        "const sdk = await import(process.argv[1]);"
        "console.log(JSON.stringify({routes: sdk.ROUTES, token: sdk.TOKEN_ROUTE,"
        " methods: Object.getOwnPropertyNames(sdk.PhoneIdClient.prototype)}));"
    )
    listed = run(["node", "--input-type=module", "-e", script, str(package / "dist" / "index.js")], ROOT)
    assert listed.returncode == 0, listed.stderr
    sdk = json.loads(listed.stdout)

    # Then each operation is the route of a method of PhoneIdClient (the token its own), and no more
    routes = {name: (route["method"], route["path"]) for name, route in sdk["routes"].items()}
    assert set(routes.values()) | {(sdk["token"]["method"], sdk["token"]["path"])} == operations
    assert len(set(routes.values())) == len(routes)
    assert set(routes) <= set(sdk["methods"])


def test_the_package_has_no_runtime_dependency_and_its_tools_are_pinned() -> None:
    package = json.loads((PACKAGE / "package.json").read_text())
    root = json.loads((ROOT / "package.json").read_text())

    assert "dependencies" not in package
    assert package["type"] == "module"
    assert package["engines"] == {"node": ">=18"}
    for tool in ("openapi-typescript", "typescript", "@types/node"):
        assert root["devDependencies"][tool][0].isdigit(), f"{tool} is not pinned to one version"
    assert package["devDependencies"]["typescript"] == root["devDependencies"]["typescript"]
