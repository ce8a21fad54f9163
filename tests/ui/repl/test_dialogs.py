"""The REPL's questions: a permission prompt answered by number, Up/Down and Enter, or Escape;
option 2 keeps the suggested rule; option 3 carries the person's note to the model."""

from __future__ import annotations

from pathlib import Path

from stayer.events import PermissionRequested
from stayer.permissions import Decision
from stayer.ui.repl.dialogs import (
    Chosen,
    Dialog,
    Option,
    decision_for,
    kept_rule,
    permission_dialog,
)


def _asked(
    name: str = "Bash", suggestions: tuple[str, ...] = ("Bash(make test)",), **given: str
) -> PermissionRequested:
    return PermissionRequested("toolu_1", name, dict(given), "asks", None, suggestions)


def _answer(dialog: Dialog, request: PermissionRequested, kept: list[str]) -> Decision | None:
    assert dialog.answer.done()
    return decision_for(dialog.answer.result(), dialog, request, kept.append)


async def test_the_permission_question_offers_what_claude_code_offers(tmp_path: Path) -> None:
    request = _asked(command="make test")
    dialog = permission_dialog(request, "Bash(make test)\n", tmp_path)

    assert dialog.heading == "Bash(make test)\nDo you want to proceed?"
    assert [label for _, label in dialog.option_lines()] == [
        "1. Yes",
        "2. Yes, and don't ask again for Bash(make test) in this project",
        "3. No, and tell the model what to do instead",
    ]
    assert dialog.option_lines()[0][0]  # the first is selected


async def test_without_a_suggested_rule_there_is_no_option_to_keep_one(tmp_path: Path) -> None:
    dialog = permission_dialog(_asked(suggestions=()), "", tmp_path)
    assert [label for _, label in dialog.option_lines()] == [
        "1. Yes",
        "2. No, and tell the model what to do instead",
    ]


async def test_a_file_change_is_asked_about_by_its_path(tmp_path: Path) -> None:
    request = _asked("Edit", file_path=str(tmp_path / "src" / "app.py"))
    dialog = permission_dialog(request, "diff\n", tmp_path)
    assert dialog.heading.endswith("Do you want to make this change to src/app.py?")


async def test_yes_allows_and_keeps_no_rule(tmp_path: Path) -> None:
    request = _asked(command="make test")
    dialog = permission_dialog(request, "", tmp_path)
    kept: list[str] = []
    assert dialog.choose(0)
    assert _answer(dialog, request, kept) == Decision("allow", by="user")
    assert kept == []


async def test_yes_and_dont_ask_again_keeps_the_suggested_rule(tmp_path: Path) -> None:
    request = _asked(command="make test")
    dialog = permission_dialog(request, "", tmp_path)
    kept: list[str] = []
    dialog.move(1)
    assert dialog.choose()  # Enter on the selected option
    assert _answer(dialog, request, kept) == Decision("allow", by="user")
    assert kept == ["Bash(make test)"]


async def test_no_opens_a_note_and_the_note_is_the_denial(tmp_path: Path) -> None:
    request = _asked(command="rm -rf build")
    dialog = permission_dialog(request, "", tmp_path)
    assert not dialog.choose(2)  # the note line opens first
    assert dialog.noting and not dialog.answer.done()
    dialog.give_note("  run make clean instead \n")
    decision = _answer(dialog, request, [])
    assert decision == Decision("deny", "run make clean instead", by="user")


async def test_escape_says_no_and_escape_in_the_note_goes_back(tmp_path: Path) -> None:
    request = _asked(command="rm -rf build")
    dialog = permission_dialog(request, "", tmp_path)
    dialog.choose(2)
    dialog.dismiss()  # out of the note line, the question still open
    assert not dialog.noting and not dialog.answer.done()
    dialog.dismiss()
    assert _answer(dialog, request, []) == Decision("deny", "", by="user")


async def test_a_question_nobody_answers_decides_nothing(tmp_path: Path) -> None:
    request = _asked(command="make")
    dialog = permission_dialog(request, "", tmp_path)
    dialog.cancel("interrupted")
    assert _answer(dialog, request, []) is None  # the driver has denied it already
    dialog.choose(0)  # a late key changes nothing
    assert dialog.answer.result() == Chosen(None, "interrupted")


async def test_a_picker_dismissed_chooses_nothing_and_wraps_around() -> None:
    picker = Dialog("Resume which?", [Option("a"), Option("b")], dismiss_is_last=False)
    picker.move(-1)
    assert picker.selected == 1
    picker.dismiss()
    assert picker.answer.result() == Chosen(None)


async def test_dont_ask_again_is_offered_only_for_a_rule_no_wider_than_its_words() -> None:
    """ "Don't ask again for X in this project": a bare Bash or WebFetch rule would allow every
    command or site, so it is not offered; a file-writing tool's is held to the project; a
    suggestion that is not one rule is not offered."""
    cases = {
        ("Bash", ("Bash",)): None,  # a command whose reads cannot be told
        ("WebFetch", ("WebFetch",)): None,  # a URL with no host
        ("Grep", ("Grep",)): None,  # reading somewhere unknown: Grep(/**) would not cover it
        ("Edit", ("Edit",)): "Edit(/**)",
        ("NotebookEdit", ("NotebookEdit",)): "NotebookEdit(/**)",
        ("Bash", ("Bash(make [*])", "Bash")): "Bash(make [*])",
        ("Bash", ('Bash(echo ")" done)',)): None,  # does not read as one rule
        ("WebFetch", ("WebFetch(domain:example.com)", "WebFetch")): "WebFetch(domain:example.com)",
    }
    for (tool, suggestions), kept in cases.items():
        request = _asked(tool, suggestions)
        assert kept_rule(request) == kept, (tool, suggestions)
    dialog = permission_dialog(_asked("Bash", ("Bash",)), "", Path("/"))
    assert [label for _, label in dialog.option_lines()] == [
        "1. Yes",
        "2. No, and tell the model what to do instead",
    ]
