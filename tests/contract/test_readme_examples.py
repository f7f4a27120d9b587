"""The README's examples work when pasted: no placeholder a shell reads as a redirection, the test
user's own data where the text sends the reader through a flow with another number, and the wait
for Connect's results said where the transcript fetches them."""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator

from phoneid.domain.sandbox import Catalogue
from phoneid_dev.template import ROOT

README = (ROOT / "README.md").read_text()


def _shell_commands(block: str) -> Iterator[list[str]]:
    """The commands of a shell block as a shell splits them (continuation lines joined, comments
    dropped); an unquoted ``<`` or ``>`` is a token of its own."""
    # Comments go first, their line ends kept (shlex's own would swallow them, joining commands).
    text = re.sub(r"(^|\s)#(\s.*)?$", "", block.replace("\\\n", " "), flags=re.MULTILINE)
    lexer = shlex.shlex(text, posix=True, punctuation_chars="();<>|&\n")
    lexer.whitespace = " \t\r"
    lexer.whitespace_split = True
    lexer.commenters = ""
    command: list[str] = []
    for token in lexer:
        if set(token) <= {"\n", ";", "&", "|"}:  # a command's end: a line end, ;, && or ||
            if command:
                yield command
            command = []
        else:
            command.append(token)
    if command:
        yield command


def _curl_commands() -> list[list[str]]:
    blocks = re.findall(r"```sh\n(.*?)```", README, flags=re.DOTALL)
    return [command for block in blocks for command in _shell_commands(block) if command[0] == "curl"]


def test_no_curl_line_of_the_readme_holds_a_shell_redirection() -> None:
    # Given the README's curl commands, as a shell reads them when pasted
    commands = _curl_commands()

    # Then none redirects: a placeholder such as <serviceId> is a variable or a quoted string
    assert len(commands) > 10
    redirected = [" ".join(command) for command in commands if {"<", ">", "<<", ">>"} & set(command)]
    assert redirected == []


def test_the_staged_flow_with_the_sim_swap_user_gives_that_users_own_data() -> None:
    # Given the sentence that sends the reader through the staged flow with the 9135 user
    user = Catalogue.load("US").find("+14045550135")
    assert user is not None
    paragraph = next(p for p in README.split("\n\n") if "The same flow with\n`+14045550135`" in p)

    # Then it gives that user's date of birth (another's fails the challenge) and the name to complete
    identity = user.identity
    assert f'"dob": "{identity.dob}"' in paragraph
    assert f'"firstName": "{identity.first_name}", "lastName": "{identity.last_name}"' in paragraph


def test_the_sftp_transcript_waits_for_the_results() -> None:
    # Given the SFTP transcript: the put, then the get of the output file
    transcript = README[README.index("sftp> put ") : README.index("sftp> get /download/")]

    # Then between them it says that the results take a moment, and lists /download again
    assert "1 to 3 seconds after the upload" in transcript
    assert transcript.count("sftp> ls /download") >= 1
