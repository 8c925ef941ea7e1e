"""Drives `tollgate mcp` with the official Python MCP client (PyPI `mcp`), as agents built on it do.

Usage: mcp_client_smoke.py MODE SERVER DIFF_FILE [TOLLGATE_BIN REPO]
  MODE    `auto` (negotiates 2026-07-28) or `legacy` (the 2025-11-25 initialize handshake)
  SERVER  an http:// URL of a running server, or `stdio` to start TOLLGATE_BIN mcp --repo REPO
Prints one JSON line with what was observed; any failed check raises (exit status 1).

The client validates every structured result against the tool's output schema, so a schema that
does not describe what the server sends fails here even when the Rust tests agree with it.
"""

import asyncio
import json
import sys

from mcp import Client, StdioServerParameters


async def exercise(client: Client, diff: str) -> dict:
    listing = await client.list_tools()
    names = sorted(tool.name for tool in listing.tools)
    for tool in listing.tools:
        assert tool.output_schema is not None, tool.name
        assert tool.annotations is not None and tool.annotations.read_only_hint is not None, tool.name

    review = await client.call_tool(
        "review_diff", {"diff": diff, "options": {"fail_on_severity": "HIGH", "include_sarif": True}}
    )
    assert not review.is_error, review.content
    result = review.structured_content
    hits = [f for f in result["findings"] if f["rule_id"] == "no-eval"]
    assert hits and hits[0]["location"]["start_line"] == 2, result["findings"]
    assert result["should_fail"] is True
    assert json.loads(result["sarif"])["version"] == "2.1.0"
    assert json.loads(review.content[0].text) == result

    for name, arguments in [
        ("check_invariants", {"diff": diff}),
        ("scrub_secrets", {"content": "token ghp_" + "a1B2" * 9, "show_start": 4}),
        ("get_workspace_info", {}),
        ("tool_manifest", {}),
    ]:
        answer = await client.call_tool(name, arguments)
        assert not answer.is_error, (name, answer.content)
        assert answer.structured_content is not None, name

    refused = await client.call_tool(
        "check_invariants", {"diff": diff, "invariants_path": "../../etc/passwd"}
    )
    assert refused.is_error
    error = json.loads(refused.content[0].text)["error"]
    assert error["code"] == "PATH_OUTSIDE_WORKSPACE", error

    return {"protocol_version": str(client.session.protocol_version), "tools": names}


async def main() -> None:
    mode, server, diff_file = sys.argv[1:4]
    with open(diff_file, encoding="utf-8") as handle:
        diff = handle.read()
    if server == "stdio":
        binary, repo = sys.argv[4:6]
        target = StdioServerParameters(command=binary, args=["mcp", "--repo", repo])
    else:
        target = server
    async with Client(target, mode=mode, read_timeout_seconds=60) as client:
        observed = await exercise(client, diff)
    print(json.dumps(observed))


if __name__ == "__main__":
    asyncio.run(main())
