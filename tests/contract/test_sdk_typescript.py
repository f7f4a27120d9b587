"""The TypeScript server SDK's types are docs/openapi.json's, and it depends on nothing at run time
(docs/adr/0107-the-typescript-server-sdk.md). That it has a method for every server operation is
checked on the build tests/e2e/test_sdk_typescript.py makes."""

from __future__ import annotations

import json
from pathlib import Path

from tests.typescript_sdk import PACKAGE, ROOT, generate_command, run


def test_the_committed_types_are_what_the_generator_makes_of_docs_openapi_json(tmp_path: Path) -> None:
    # Given the types generated again from the document, as `npm run generate` does
    generated = run(generate_command(tmp_path / "schema.ts"), PACKAGE)
    assert generated.returncode == 0, generated.stderr

    # Then they are the committed ones, byte for byte (regenerate: make typescript-sdk-types)
    assert (tmp_path / "schema.ts").read_bytes() == (PACKAGE / "src" / "schema.ts").read_bytes()


def test_the_package_has_no_runtime_dependency_and_its_tools_are_pinned() -> None:
    package = json.loads((PACKAGE / "package.json").read_text())
    root = json.loads((ROOT / "package.json").read_text())

    assert "dependencies" not in package
    assert package["type"] == "module"
    assert package["engines"] == {"node": ">=18"}
    for tool in ("openapi-typescript", "typescript", "@types/node"):
        assert root["devDependencies"][tool][0].isdigit(), f"{tool} is not pinned to one version"
    assert package["devDependencies"]["typescript"] == root["devDependencies"]["typescript"]
