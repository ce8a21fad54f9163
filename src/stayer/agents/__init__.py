"""Agents, skills, commands and plugins as Claude Code keeps them in files: data and parsing only.

A custom agent is a Markdown file with YAML front matter (`.claude/agents/*.md`), a skill a
folder with a `SKILL.md`, a command a Markdown file (`.claude/commands/*.md`), a plugin a folder
with `.claude-plugin/plugin.json` and any of those inside. This package finds them, reads them
into the frozen records of `model`, and says in one line each what it could not use; the
session turns them into prompts, tools and messages. Nothing here starts a process or a model
call.
"""
