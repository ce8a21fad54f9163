"""stayer as an Agent Client Protocol agent (`stayer acp`; reference: protocols.md §2), built on
the `agent-client-protocol` package: `files` gives the tools the editor's files."""
