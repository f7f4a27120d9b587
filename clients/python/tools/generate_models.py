"""Writes ``phoneid_client/models.py`` from the API's OpenAPI document (``docs/openapi.json``).

``python clients/python/tools/generate_models.py`` (or ``make sdk-models``) regenerates the committed
module; ``--output PATH`` writes elsewhere (the contract test compares the two byte for byte). The
generator is datamodel-code-generator, pinned in the repository's uv.lock: another version may write
other code. Why generated types and a hand-written client:
docs/adr/0104-server-sdks-generated-types-thin-client.md.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

SDK = Path(__file__).resolve().parent.parent
DOCUMENT = SDK.parent.parent / "docs" / "openapi.json"
MODELS = SDK / "src" / "phoneid_client" / "models.py"

HEADER = """\
# The API's request and answer bodies, generated from docs/openapi.json by datamodel-code-generator.
# Do not edit: regenerate with `make sdk-models` (clients/python/tools/generate_models.py)."""

# Pydantic v2 models for Python 3.10 and later; a constrained string is an annotated type alias, so
# a field reads as a plain `str` and its rule is still checked; no timestamp, so that the same
# document always gives the same bytes.
OPTIONS = (
    "--input-file-type", "openapi",
    "--output-model-type", "pydantic_v2.BaseModel",
    "--target-python-version", "3.10",
    "--use-standard-collections",
    "--use-union-operator",
    "--use-annotated",
    "--field-constraints",
    "--use-type-alias",
    "--enum-field-as-literal", "all",
    "--use-double-quotes",
    "--use-schema-description",
    "--use-field-description",
    "--disable-timestamp",
    "--formatters", "ruff-check", "ruff-format",
    "--custom-file-header", HEADER,
)  # fmt: skip


def generate(output: Path) -> None:
    # Written to standard output from the SDK's folder, so that the formatters read the repository's
    # ruff settings wherever the command was started and wherever the module goes.
    command = [str(Path(sys.executable).parent / "datamodel-codegen"), "--input", str(DOCUMENT), *OPTIONS]
    written = subprocess.run(command, cwd=SDK, check=True, capture_output=True, text=True)  # noqa: S603
    output.write_text(written.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, default=MODELS, help="where to write (default: the SDK's)")
    generate(parser.parse_args().output)


if __name__ == "__main__":
    main()
