"""The session's skills (`SessionSkills`): what the Skill tool loads, and a command's body.

Loading renders a skill for the model (`skill_render`), remembers the latest rendering of
each skill for the re-attachment after a compaction, counts its use for the listing (a small
JSON file in the user's stayer folder), and grants its `allowed-tools` (and denies its
`disallowed-tools`) until the user's next prompt, when the session calls `new_prompt`. Rules
granted here never loosen a deny or an ask rule: those win over any allow rule. A project's
skill grants nothing when the session reads no project settings (`--setting-sources` without
`project`, as `stayer batch` runs by default): the repository is not trusted to allow itself.

Every session makes one as it opens, so this module stays cheap to import: the rendering (and
the shell commands it may run) loads with the first skill invoked.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from stayer.agents.model import Catalog, Skill
from stayer.config.dirs import config_root
from stayer.errors import ConfigError
from stayer.loop.state import LoopParams
from stayer.permissions import Rule, parse_rules
from stayer.permissions.policy import Behavior, PermissionPolicy, PermissionState
from stayer.tools.base import LoadedSkill, SubagentRequest, ToolFailure

if TYPE_CHECKING:
    from .skill_render import Places

USAGE_FILE = "skill-usage.json"
"""In the user's stayer folder: how often each skill was invoked, for the listing's budget."""


MAX_NAMED = 20
"""The most skills an unknown name's error lists."""


class SessionSkills:
    """A session's skills, as the Skill tool and `/name` prompts reach them (a `SkillHost`)."""

    def __init__(
        self,
        *,
        catalog: Callable[[], Catalog],
        params: Callable[[], LoopParams],
        permissions: PermissionState,
        places: Callable[[Skill], Places],
        env: Mapping[str, str],
        project_grants: bool = True,
    ) -> None:
        """`project_grants`: whether the project's own skills and commands may grant their
        `allowed-tools` (only when the project's settings are read: a repository whose settings
        may not allow it tools must not do so through a skill's front matter either)."""
        self._catalog = catalog
        self._project_grants = project_grants
        self._params = params
        self._permissions = permissions
        self._places = places
        self._env = env
        self._rendered: dict[str, str] = {}
        """Each skill's latest rendering, oldest first (the re-attachment's newest first)."""
        self._granted: list[tuple[Behavior, Rule, tuple[Behavior, ...]]] = []

    async def load(self, name: str, args: str, tool_use_id: str | None) -> LoadedSkill:
        """Skill `name` rendered with `args` for the model (see `SkillHost.load`)."""
        skill = self._catalog().skill(name)
        if skill is None:
            raise ToolFailure(self._unknown(name))
        if skill.disable_model_invocation:
            raise ToolFailure(
                f"skill {skill.name} may only be run by the user (/{skill.name}); it cannot "
                "be loaded with the Skill tool"
            )
        body = await self.rendered(skill, args)
        if skill.context == "fork":
            fork = SubagentRequest(
                prompt=body,
                description=f"skill {skill.name}",
                subagent_type=skill.agent or "general-purpose",
                model=skill.model,
                background=skill.background is True,  # the invoking turn waits, unless told
                tool_use_id=tool_use_id or "",
            )
            return LoadedSkill(skill.name, f"Skill {skill.name} runs as a subagent", fork=fork)
        followup = f"Base directory for this skill: {skill.base_dir}\n\n{body}"
        if self._rendered.get(skill.name) == followup:
            again = f"Skill {skill.name} is already loaded above, with the same content: "
            return LoadedSkill(skill.name, again + "follow its instructions there")
        if skill.kind == "skill":  # a command's `!` output would be stale after a summary
            self.remember(skill.name, followup)
        return LoadedSkill(skill.name, f"Loaded skill {skill.name}", followup=followup)

    async def rendered(self, skill: Skill, args: str) -> str:
        """`skill`'s body for `args`, its commands run, its rules in force for this turn and
        its use counted; raises `ToolFailure` in one line when its rules cannot be read, or a
        command may not run or fails. Its own allow rules come after its commands: a file
        never lets its `!` commands run what the user's rules would not (its deny rules, which
        only take away, hold for them already)."""
        from .skill_render import render  # a session that loads no skill never needs it

        granted = skill.scope != "project" or self._project_grants
        allow = _rules(skill.allowed_tools, skill.name) if granted else ()
        self._grant("deny", _rules(skill.disallowed_tools, skill.name))
        body = await render(skill, args, params=self._params(), places=self._places(skill))
        self._grant("allow", allow)
        count_use(self._env, skill.name)
        return body

    def remember(self, name: str, text: str) -> None:
        """Keep `text` as the latest rendering of skill `name` in this conversation."""
        self._rendered.pop(name, None)
        self._rendered[name] = text

    def renderings(self) -> list[tuple[str, str]]:
        """The latest rendering of each skill invoked in the conversation, newest first."""
        return list(reversed(self._rendered.items()))

    def forget(self) -> None:
        """The conversation starts over: no skill is in it any more."""
        self._rendered.clear()

    def new_prompt(self) -> None:
        """The user submits a new prompt: the rules the last turn's skills granted end."""
        for _kind, rule, held in reversed(self._granted):
            self._permissions.remove_rule(rule)
            for before in held:  # the rule as the user had it stays
                self._permissions.add_rule(before, rule)
        self._granted.clear()

    def _grant(self, kind: Behavior, rules: tuple[Rule, ...]) -> None:
        for rule in rules:
            held = tuple(k for k, kept in _kinds(self._permissions.policy) if rule in kept)
            if self._permissions.add_rule(kind, rule):
                self._granted.append((kind, rule, held))

    def _unknown(self, name: str) -> str:
        import difflib

        loadable = [s.name for s in self._catalog().skills if not s.disable_model_invocation]
        close = difflib.get_close_matches(name.removeprefix("/"), loadable, n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        known = ", ".join(sorted(loadable)[:MAX_NAMED]) or "none"
        more = f" and {len(loadable) - MAX_NAMED} more" if len(loadable) > MAX_NAMED else ""
        return f"Unknown skill: {name}{hint} (skills: {known}{more})"


def _rules(texts: tuple[str, ...], name: str) -> tuple[Rule, ...]:
    try:
        return parse_rules(texts)
    except ConfigError as error:
        raise ToolFailure(f"skill {name}: {error}; fix its front matter") from None


def _kinds(policy: PermissionPolicy) -> tuple[tuple[Behavior, tuple[Rule, ...]], ...]:
    return (("allow", policy.allow), ("deny", policy.deny), ("ask", policy.ask))


def usage_path(env: Mapping[str, str]) -> Path:
    """Where the skills' use counts are kept."""
    return config_root(env) / USAGE_FILE


def usage_counts(env: Mapping[str, str]) -> dict[str, int]:
    """How often each skill was invoked; none when the file is missing or unreadable."""
    try:
        data = json.loads(usage_path(env).read_text(encoding="utf-8"))
    except (OSError, ValueError, ConfigError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {str(k): v for k, v in data.items() if isinstance(v, int) and not isinstance(v, bool)}


def count_use(env: Mapping[str, str], name: str) -> None:
    """Count one use of skill `name`, replacing the file whole (a crash leaves the old one);
    a folder that cannot be written loses the count, never the invocation."""
    counts = usage_counts(env)
    counts[name] = counts.get(name, 0) + 1
    try:
        path = usage_path(env)
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        temporary.write_text(json.dumps(counts, sort_keys=True), encoding="utf-8")
        os.replace(temporary, path)
    except (OSError, ConfigError):
        return
