"""Transcripts on disk: one append-only JSONL file per session, and reading one back.

`~/.stayer/projects/<folder-slug>/<session-id>.jsonl` (see `paths`). Each message of the
conversation is one record, flushed as it is written, so a killed process loses at most the
record being written; a tool call's result is a record of its own as well, written when the
call finishes, which its round's record supersedes once the round ends. Records chain by
`parentUuid`, as Claude Code's do: when the conversation is rewritten (a compaction, a dropped
answer), the new records hang off the last one still shared, and the conversation the model
last saw is the chain from the newest message record back to its root. Compaction boundaries,
model switches, interruptions and the model's todo list are `system` records beside the chain;
every record carries the session's permission mode (`permissionMode`). The values of
environment variables whose names say they are secret (`…_KEY`, `…_TOKEN`, `…_SECRET`,
`…PASSWORD`, `…_PWD`, …), and passwords inside URLs in the environment, are replaced by the
variable's name (thinking blocks excepted: their signature covers their text).

Reading follows the same chain over every record that has a `uuid`, so Claude Code's own files
(one record per content block of an answer and per tool result, parallel calls written as a fan
beside the chain, attachments in it) load as well; records that are not messages are counted
and skipped, and a line that is not JSON (a crash mid-write) is skipped with a warning, never
an error; the calls of an answer whose line was torn are recovered so the results after it stay
(`transcript_damage`). A writer that opens a file ending in a torn line ends that line first.

Writing is `transcript_write`, reading `transcript_read`, the secrets `scrub`; this module
gathers the names the rest of stayer uses.
"""

from .scrub import MIN_SECRET_CHARS, Scrubber
from .transcript_read import Loaded, Summary, load, recorded_cwd, summaries
from .transcript_write import TranscriptWriter, now

__all__ = [
    "MIN_SECRET_CHARS",
    "Loaded",
    "Scrubber",
    "Summary",
    "TranscriptWriter",
    "load",
    "now",
    "recorded_cwd",
    "summaries",
]
