"""The documentation sites WebFetch may reach without asking, as Claude Code pre-approves its own.

The session turns each into an allow rule, ``WebFetch(domain:<host>)``, unless
``STAYER_NO_PREAPPROVED_HOSTS=1`` (in the environment or a settings file's ``env``) turns the
list off; deny and ask rules naming one of them still win. WebFetch also lets the small model
quote these sites at length. The list lives apart from the tool so the session can read it
without loading the tools.
"""

from __future__ import annotations

PREAPPROVED_HOSTS = frozenset(
    {
        "docs.python.org",
        "peps.python.org",
        "packaging.python.org",
        "developer.mozilla.org",
        "doc.rust-lang.org",
        "go.dev",
        "nodejs.org",
        "www.typescriptlang.org",
        "docs.djangoproject.com",
        "git-scm.com",
        "www.postgresql.org",
        "www.sqlite.org",
        "docs.anthropic.com",
        "docs.claude.com",
        "modelcontextprotocol.io",
    }
)
"""Documentation sites that may be fetched without asking and quoted at length (Claude Code
keeps a longer list). Each is maintained by its project and serves no pages that anyone may
publish (unlike docs.rs, pkg.go.dev or a wiki), so a page there cannot carry a stranger's
instructions, and a question sent there reaches no stranger's logs."""
