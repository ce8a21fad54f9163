"""The commands that change the conversation or the session: /clear, /compact, /model,
/resume and /exit. What they change, they hand to the driver as an operation (or to the REPL,
for /resume and /exit); the driver reports what it cannot do in one line."""

from __future__ import annotations

import asyncio
import datetime
import os
from pathlib import Path

from stayer.driver import Clear, Compact, SetModel
from stayer.providers.model_list import fresh_listing
from stayer.providers.models import BUILT_IN as MODEL_TABLE
from stayer.providers.models import PLAN_ALIAS, alias_model
from stayer.session.paths import config_root, project_slug
from stayer.session.session import Session
from stayer.session.transcript import Summary, summaries

from .commands_entry import Command
from .surface import Repl

CLAUDE_ALIASES = ("opus", "sonnet", "haiku", "fable", PLAN_ALIAS)
"""The names /model offers first on Anthropic's protocol, in Claude Code's order."""
LISTED_MODELS = 20
"""At most this many models of the provider's own list are offered besides the aliases."""


async def _clear(repl: Repl, argument: str) -> None:
    repl.send(Clear())
    kept = repl.session.transcript_path is not None
    repl.say(
        "Started a new conversation"
        + ("; the last one is saved (/resume goes back to it)" if kept else "")
    )


async def _compact(repl: Repl, argument: str) -> None:
    if not repl.session.history:
        repl.say("Nothing to compact: the conversation is empty")
        return
    repl.send(Compact(argument or None))
    repl.say("Compacting the conversation" + (f" ({argument})" if argument else "") + "…")


async def _exit(repl: Repl, argument: str) -> None:
    repl.exit()


async def _model(repl: Repl, argument: str) -> None:
    if argument:
        repl.send(SetModel(argument))
        repl.say(f"Switching to {argument} from the next prompt on")
        return
    session = repl.session
    now = session.setup.started.model
    offered = model_choices(session)
    if not offered:
        repl.say(f"Model: {now}. Name another with /model NAME")
        return
    chosen = await repl.pick(f"Model (now {now})", [label for _, label in offered])
    if chosen is None:
        repl.say(f"Kept {now}")
        return
    name = offered[chosen][0]
    repl.send(SetModel(name))
    repl.say(f"Switching to {name} from the next prompt on")


def model_choices(session: Session) -> list[tuple[str, str]]:
    """What /model offers for the session's provider: (the name to send, its label). On
    Anthropic's protocol the aliases with the model each stands for now, then the provider's
    own list when a fresh one is cached; on OpenAI's, its general model and the list. The
    model in use is marked."""
    resolved = session.setup.resolved
    if resolved is None:
        return []
    env, choice = resolved.env, resolved.choice
    offered: list[tuple[str, str]] = []
    if choice.provider == "anthropic":
        for alias in CLAUDE_ALIASES:
            model = alias_model(alias, env) or alias
            if alias == PLAN_ALIAS:
                using = choice.plan_model is not None
            else:
                using = choice.plan_model is None and model == choice.model
            if alias == PLAN_ALIAS:
                model = f"{alias_model('opus', env)} in plan mode, else {model}"
            offered.append((alias, f"{alias:<9} {model}" + ("  (current)" if using else "")))
    elif choice.provider == "openai":
        gpt = MODEL_TABLE["gpt"]
        offered.append((gpt, gpt + ("  (current)" if gpt == choice.model else "")))
    else:
        return []
    listing = fresh_listing(choice.provider, env)
    named = {name for name, _ in offered} | {alias_model(a, env) for a in CLAUDE_ALIASES}
    listed = sorted(listing.models if listing else (), key=lambda m: m.created, reverse=True)
    for model in [m.id for m in listed if m.id not in named][:LISTED_MODELS]:
        offered.append((model, model + ("  (current)" if model == choice.model else "")))
    return offered


async def _resume(repl: Repl, argument: str) -> None:
    session = repl.session
    saved = await asyncio.to_thread(saved_sessions, session)  # reads transcripts: off the loop
    found = [summary for summary in saved if summary.session_id != session.session_id]
    if not found:
        repl.say("No other saved session to resume in this folder")
        return
    chosen = await repl.pick("Resume which conversation?", [_described(s) for s in found])
    if chosen is None:
        repl.say("Nothing resumed")
        return
    await repl.resume(found[chosen].session_id)


def saved_sessions(session: Session) -> list[Summary]:
    """The sessions saved for the session's folder, newest first (as `--resume` lists them)."""
    resolved = session.setup.resolved
    env = os.environ if resolved is None else resolved.env
    cwd = Path(session.setup.started.cwd)
    return summaries(config_root(env) / "projects" / project_slug(cwd), cwd=cwd)


def _described(summary: Summary) -> str:
    when = datetime.datetime.fromtimestamp(summary.modified).strftime("%Y-%m-%d %H:%M")
    first = " ".join(summary.first_prompt.split()) or "(no prompt)"
    first = first if len(first) <= 60 else first[:59] + "…"
    turns = f"{summary.turns} turn" + ("" if summary.turns == 1 else "s")
    return f"{when}  {turns:>9}  {first}"


clear_command = Command("clear", "start a new conversation (the last one stays saved)", _clear)
compact_command = Command(
    "compact",
    "summarise the conversation so far to free the context window",
    _compact,
    argument_hint="[instructions]",
)
model_command = Command(
    "model", "show the model, or switch to another", _model, argument_hint="[name]"
)
resume_command = Command("resume", "go back to a saved conversation of this folder", _resume)
exit_command = Command("exit", "leave stayer", _exit, aliases=("quit",), while_running=True)
