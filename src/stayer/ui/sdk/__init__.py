"""stayer as the CLI claude-agent-sdk drives: stream-json in and out, and the control protocol
(`--input-format stream-json --output-format stream-json`; reference: protocols.md §1)."""
