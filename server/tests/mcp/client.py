"""A real MCP client (PyPI `mcp`, the reference SDK) for Berth's tests.

Reads a plan as JSON on stdin: {"url" or "command", "token", "client",
"calls": [{"tool", "arguments"}], "read": [uri]}; connects over Streamable HTTP (with the
token as a bearer) or over stdio (`command`, e.g. `berth mcp`), lists the
tools, makes each call in order, and prints what it saw as JSON: the tools
with their annotations and input schemas, and each call's error flag, text
and structured content.
"""

import asyncio
import json
import sys

import httpx2
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp.types import Implementation


async def session_run(read, write, plan):
    client = Implementation(name=plan.get("client", "berth-tests"), version="1.0")
    async with ClientSession(read, write, client_info=client) as session:
        await session.initialize()
        listed = await session.list_tools()
        tools = [
            {
                "name": tool.name,
                "title": tool.title,
                "description": tool.description,
                "input_schema": tool.input_schema,
                "annotations": tool.annotations.model_dump(by_alias=True, exclude_none=True) if tool.annotations else None,
            }
            for tool in listed.tools
        ]
        calls = []
        for call in plan.get("calls", []):
            try:
                result = await session.call_tool(call["tool"], call.get("arguments", {}))
            except MCPError as error:
                calls.append({"tool": call["tool"], "protocol_error": error.message})
                continue
            calls.append(
                {
                    "tool": call["tool"],
                    "is_error": bool(result.is_error),
                    "text": [block.text for block in result.content if getattr(block, "type", "") == "text"],
                    "structured": result.structured_content,
                }
            )
        resources = [
            {"uri": str(r.uri), "name": r.name, "title": r.title, "mime_type": r.mime_type}
            for r in (await session.list_resources()).resources
        ]
        read = []
        for uri in plan.get("read", []):
            try:
                contents = (await session.read_resource(uri)).contents
                read.append({"uri": uri, "text": [c.text for c in contents], "mime_type": contents[0].mime_type})
            except MCPError as error:
                read.append({"uri": uri, "protocol_error": error.message})
        return {"tools": tools, "calls": calls, "resources": resources, "read": read}


async def main():
    plan = json.load(sys.stdin)
    if "command" in plan:
        server = StdioServerParameters(command=plan["command"][0], args=plan["command"][1:], env=plan.get("env"))
        async with stdio_client(server) as streams:
            out = await session_run(streams[0], streams[1], plan)
    else:
        headers = {"Authorization": f"Bearer {plan['token']}"}
        async with httpx2.AsyncClient(headers=headers, timeout=60) as http:
            async with streamable_http_client(plan["url"], http_client=http) as streams:
                out = await session_run(streams[0], streams[1], plan)
    json.dump(out, sys.stdout)


asyncio.run(main())
