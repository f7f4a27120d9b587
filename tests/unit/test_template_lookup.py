"""Where the local stack finds the repository: ``PHONEID_TEMPLATE``, else the current directory or one
above it holding ``template.yaml`` beside ``functions/``, else above the installed package (an
editable install); none of these is an error that says how to name it."""

from __future__ import annotations

from pathlib import Path

import pytest

from phoneid_dev import server, statefile
from phoneid_dev import template as templates
from phoneid_dev.template import RepositoryNotFound, Template, find_template

TEMPLATE = """\
Resources:
  HelloFunction:
    Type: AWS::Serverless::Function
    Properties:
      CodeUri: functions/hello/
      Handler: app.handler
"""


def repository(directory: Path) -> Path:
    """A repository's skeleton: its template and a function's code."""
    (directory / "functions" / "hello").mkdir(parents=True)
    (directory / "functions" / "hello" / "app.py").write_text("def handler(event, context): ...\n")
    (directory / "template.yaml").write_text(TEMPLATE)
    return directory


@pytest.fixture
def installed_elsewhere(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The package as a wheel installs it: nowhere near a repository."""
    site = tmp_path / "site-packages" / "phoneid" / "dev"
    site.mkdir(parents=True)
    monkeypatch.setattr(templates, "__file__", str(site / "template.py"))


def test_the_repository_is_found_from_a_directory_inside_it(
    tmp_path: Path, installed_elsewhere: None
) -> None:
    root = repository(tmp_path / "checkout")
    inside = root / "docs" / "deep"
    inside.mkdir(parents=True)

    assert find_template(start=inside) == root / "template.yaml"


def test_a_template_yaml_without_functions_beside_it_is_not_the_repository(
    tmp_path: Path, installed_elsewhere: None
) -> None:
    root = repository(tmp_path / "checkout")
    other = root / "examples"
    other.mkdir()
    (other / "template.yaml").write_text("Resources: {}\n")

    assert find_template(start=other) == root / "template.yaml"


def test_phoneid_template_names_the_template_or_its_directory(
    tmp_path: Path, installed_elsewhere: None
) -> None:
    root = repository(tmp_path / "checkout")

    assert find_template(str(root / "template.yaml"), start=tmp_path) == root / "template.yaml"
    assert find_template(str(root), start=tmp_path) == root / "template.yaml"


def test_phoneid_template_naming_nothing_says_so(tmp_path: Path, installed_elsewhere: None) -> None:
    with pytest.raises(RepositoryNotFound) as raised:
        find_template(str(tmp_path / "missing.yaml"), start=tmp_path)

    assert str(raised.value) == f"PHONEID_TEMPLATE={tmp_path / 'missing.yaml'}: no template.yaml there"


def test_outside_a_repository_an_installed_package_says_how_to_name_one(
    tmp_path: Path, installed_elsewhere: None
) -> None:
    with pytest.raises(RepositoryNotFound) as raised:
        find_template(start=tmp_path)

    assert str(raised.value) == (
        f"no PhoneID repository (template.yaml beside functions/) in {tmp_path.resolve()} or any "
        "directory above it: run from the repository, or set PHONEID_TEMPLATE=/path/to/phoneid/template.yaml"
    )


def test_an_editable_install_finds_its_own_repository_from_anywhere(tmp_path: Path) -> None:
    this_repository = Path(__file__).resolve().parents[2]

    assert find_template(start=tmp_path) == this_repository / "template.yaml"


def test_the_current_directory_and_the_setting_decide_which_repository(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, installed_elsewhere: None
) -> None:
    first, second = repository(tmp_path / "first"), repository(tmp_path / "second")
    monkeypatch.delenv("PHONEID_TEMPLATE", raising=False)
    monkeypatch.chdir(first)

    assert templates.repository_root() == first
    monkeypatch.setenv("PHONEID_TEMPLATE", str(second))
    assert templates.repository_root() == second
    named = templates.ROOT  # the module's name for it, read when used
    assert named == second


def test_a_loaded_templates_functions_are_in_its_own_repository(tmp_path: Path) -> None:
    root = repository(tmp_path / "checkout")

    loaded = Template.load(root / "template.yaml")

    assert loaded.root == root
    assert loaded.functions["HelloFunction"].module_path == root / "functions" / "hello" / "app.py"


def test_outside_a_repository_the_state_file_is_looked_for_here_and_none_is_running(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, installed_elsewhere: None
) -> None:
    monkeypatch.delenv("PHONEID_TEMPLATE", raising=False)
    monkeypatch.delenv("PHONEID_DEV_STATE", raising=False)
    monkeypatch.chdir(tmp_path)

    path = statefile.default_state_file()

    assert path == tmp_path / ".phoneid" / "dev.json"
    with pytest.raises(FileNotFoundError, match="no local stack is running here"):
        statefile.read_state(path)


def test_phoneid_dev_outside_a_repository_says_so_before_it_starts_anything(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, installed_elsewhere: None
) -> None:
    monkeypatch.delenv("PHONEID_TEMPLATE", raising=False)
    monkeypatch.chdir(tmp_path)
    started: list[object] = []
    monkeypatch.setattr(server, "DevStack", lambda *args, **kwargs: started.append(args))

    with pytest.raises(RepositoryNotFound, match="run from the repository, or set PHONEID_TEMPLATE="):
        server.serve(host="127.0.0.1", port=0, tier="sandbox", region="US")
    assert started == []
