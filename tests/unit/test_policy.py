"""Policy documents: validation that names the bad entry, actions, and a client's own policy."""

from __future__ import annotations

import copy
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml

from phoneid.domain.evaluation import Category, default_policy, evaluate
from phoneid.domain.policy import InvalidPolicy, Signal, parse_policy
from phoneid.services.clients import ClientAdmin, InvalidClientSpec
from phoneid.services.policies import PolicyBook
from phoneid_cli.main import main
from tests.fakes import FakeClock, InMemoryClientStore

DEFAULT = Path(__file__).resolve().parents[2] / "layers/core/phoneid/policy/default.yaml"


def document() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(DEFAULT.read_text())
    return copy.deepcopy(loaded)


def rule_of(doc: dict[str, Any], code: int) -> dict[str, Any]:
    found: dict[str, Any] = next(rule for rule in doc["rules"] if rule["code"] == code)
    return found


@pytest.mark.parametrize(
    ("change", "named"),
    [
        (lambda d: rule_of(d, 9135)["when"][0].update(below="soon"), "rules[18] (code 9135).when[0].below"),
        (lambda d: rule_of(d, 9135)["when"][0].update(signal="simSwapMinutes"), "when[0].signal"),
        (lambda d: rule_of(d, 9135).update(category="risk"), "code 9135 belongs to authentication"),
        (lambda d: rule_of(d, 9135).update(code=9999), "9999 is not a reason code"),
        (lambda d: rule_of(d, 9135)["when"][0].pop("below"), "a condition needs at least one test"),
        (lambda d: rule_of(d, 9135).update(action="shout"), "rules[18] (code 9135).action"),
        (lambda d: rule_of(d, 9135).update(colour="red"), "rules[18] (code 9135).colour"),
        (lambda d: d["rules"].append(copy.deepcopy(rule_of(d, 9135))), "code 9135 has more than one rule"),
        (lambda d: d.pop("version"), "version"),
        (lambda d: d["windows"].update(recentActivityHours=0), "windows.recentActivityHours"),
        (lambda d: d["assurance"][0]["reasons"]["-1A"].update(codes=[1]), "assurance[0].reasons.-1A.codes"),
    ],
)
def test_a_bad_policy_is_refused_naming_the_entry(change: Any, named: str) -> None:
    # Given the default policy with one entry broken
    doc = document()
    change(doc)

    # When it is loaded
    with pytest.raises(InvalidPolicy) as refused:
        parse_policy(doc)

    # Then the error names the entry
    assert named in str(refused.value)


def test_a_policy_must_be_a_mapping() -> None:
    with pytest.raises(InvalidPolicy, match="must be a mapping"):
        parse_policy(["rules"])


def test_a_monitoring_rule_records_its_code_without_failing() -> None:
    # Given SIM swap rules turned to monitor
    doc = document()
    rule_of(doc, 9135)["action"] = "monitor"
    policy = parse_policy(doc)

    # When a fresh SIM swap is observed
    evaluation = evaluate({Signal.SIM_SWAP_HOURS_AGO: 1}, policy)

    # Then authentication passes and 9135 is only monitored
    assert evaluation.results == {Category.AUTHENTICATION: ()}
    assert evaluation.monitored == (9135,)


def test_a_rule_turned_off_is_not_evaluated_and_its_signal_not_needed() -> None:
    # Given call forwarding turned off
    doc = document()
    rule_of(doc, 9137)["action"] = "off"
    policy = parse_policy(doc)

    # When forwarding is on
    evaluation = evaluate({Signal.CALL_FORWARDING: True}, policy)

    # Then nothing is raised and no source would be asked for it
    assert evaluation.results == {}
    assert Signal.CALL_FORWARDING not in policy.needed_signals("verify")


def test_thresholds_live_in_the_policy() -> None:
    # Given a client policy that calls a SIM swap recent for 72 hours
    doc = document()
    rule_of(doc, 9135)["when"][0]["below"] = 72
    policy = parse_policy(doc)

    # When a swap 48 hours ago is evaluated by both policies
    observed = {Signal.SIM_SWAP_HOURS_AGO: 48}

    # Then only the client's policy raises 9135
    assert evaluate(observed, policy).results[Category.AUTHENTICATION] == (9135,)
    assert evaluate(observed).passed


def test_a_client_policy_is_used_for_that_client_only_and_refreshed_within_a_minute() -> None:
    # Given two clients and the book of policies
    clock, store = FakeClock(), InMemoryClientStore()
    admin = ClientAdmin(store, clock, "sandbox", "US")
    mine, other = admin.create().client, admin.create().client
    book = PolicyBook(store, clock)
    assert book.for_client(mine.client_id) is default_policy()

    # When the operator gives one client its own policy
    doc = document()
    doc["version"] = "acme-1"
    admin.update(mine.client_id, policy=doc)

    # Then after a minute that client's requests use it, the other's do not
    clock.advance(seconds=61)
    assert book.for_client(mine.client_id).version == "acme-1"
    assert book.for_client(other.client_id) is default_policy()

    # And going back to the default takes effect the same way
    admin.update(mine.client_id, default_policy=True)
    clock.advance(minutes=1, seconds=1)
    assert book.for_client(mine.client_id) is default_policy()
    assert timedelta(seconds=60) > timedelta(0)


def test_the_admin_refuses_an_invalid_policy_and_an_unknown_client() -> None:
    clock, store = FakeClock(), InMemoryClientStore()
    admin = ClientAdmin(store, clock, "sandbox", "US")
    client = admin.create().client
    doc = document()
    rule_of(doc, 9201)["onSourceFailure"] = "maybe"

    with pytest.raises(InvalidPolicy, match="code 9201"):
        admin.update(client.client_id, policy=doc)
    with pytest.raises(InvalidClientSpec):
        admin.update("nobody", policy=document())
    assert store.get(client.client_id) is not None
    assert store.items[client.client_id].policy is None


def test_policy_check_names_the_bad_entry(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Given a policy file with a broken threshold and a good one
    bad, good = tmp_path / "bad.yaml", tmp_path / "good.json"
    doc = document()
    rule_of(doc, 9302)["when"][0]["atLeast"] = "many"
    bad.write_text(yaml.safe_dump(doc))
    import json

    good.write_text(json.dumps(document()))

    # When checked with the CLI
    # Then the bad one fails naming code 9302, the good one passes
    assert main(["policy", "check", str(bad)]) == 2
    assert "code 9302" in capsys.readouterr().err
    assert main(["policy", "check", str(good)]) == 0
    assert "a valid policy" in capsys.readouterr().out


def test_a_misspelt_signal_is_named_with_the_closest_signals_and_nothing_else(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a policy file whose SIM swap rule misspells its signal
    doc = document()
    rule_of(doc, 9135)["when"][0]["signal"] = "simSwapHoursAgp"
    bad = tmp_path / "typo.yaml"
    bad.write_text(yaml.safe_dump(doc))

    # When checked with the CLI
    assert main(["policy", "check", str(bad)]) == 2

    # Then one line names the misspelt signal and the closest names, not every signal, and no
    # follow-on complaint about the rule's conditions
    out, err = capsys.readouterr()
    assert out == ""
    assert err == (
        "phoneid: invalid policy: rules[18] (code 9135).when[0].signal: unknown signal 'simSwapHoursAgp';"
        " closest: simSwapHoursAgo\n"
    )
