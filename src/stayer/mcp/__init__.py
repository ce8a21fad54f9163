"""MCP servers as a tool source (the official `mcp` SDK): their tools, resources and prompts.

Nothing here is imported at start-up unless a server is configured; the SDK itself loads in a
worker thread while the first request is on its way.
"""
