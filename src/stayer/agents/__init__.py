"""Agents, skills, commands and plugins as Claude Code keeps them in files: data and parsing only.

A custom agent is a Markdown file with YAML front matter (`.claude/agents/*.md`), a skill a
folder with a `SKILL.md`, a command a Markdown file (`.claude/commands/*.md`), a plugin a folder
with `.claude-plugin/plugin.json` and any of those inside. This package finds them, reads them
into the frozen records of `model`, and says in one line each what it could not use; the
session turns them into prompts, tools and messages. Nothing here starts a process or a model
call.

    model        the records (agent, skill or command, plugin, catalog)
    catalog      `load_catalog`: where to look, which definition of a name wins
    frontmatter  a Markdown file's front matter and body; loose booleans and lists
    builtin      general-purpose, Explore, Plan
    definitions  agent files and `--agents`
    skills       skill folders and command files
    plugins      plugin folders, from `--plugin-dir` or `enabledPlugins`
    arguments    a body's placeholders filled, its `!` commands found and filled
    shell_context  where a value stands in a shell command, and it quoted for there
    guard        reading files a repository wrote without trusting them; clean text to show
"""
