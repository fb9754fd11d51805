"""ClearSide as an MCP server (``python -m clearside mcp``): tools an AI agent calls to map both sides of a question,
challenge an element, fetch a saved debate, list its cruxes and list saved debates (docs/reference/mcp.md).

- :mod:`~clearside.mcp.server`: the process: the SDK's FastMCP, this process a runtime host, stdio or streamable
  HTTP;
- :mod:`~clearside.mcp.tools`: the tools, their typed inputs and descriptions, errors and progress notifications;
- :mod:`~clearside.mcp.work`: what each tool does, with the operations the command line and the dashboard use;
- :mod:`~clearside.mcp.summary`: a debate and a challenge's answer as an agent reads them;
- :mod:`~clearside.mcp.auth`: streamable HTTP's tokens, the HTTP API's, and what each may see and start.

Only :mod:`clearside.cli` imports this package (``.importlinter``); it imports the official ``mcp`` SDK, and
the HTTP API's token check.
"""
