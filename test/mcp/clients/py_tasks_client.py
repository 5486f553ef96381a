"""A real MCP client process with tasks: the official Python SDK (`mcp`) at revision 2025-11-25.

Usage: python py_tasks_client.py <mcp url> <bearer token> run|cancel

The SDK has no task helpers, but its types carry the 2025-11-25 core tasks (CallToolRequest with
`task`, GetTaskRequest, GetTaskPayloadRequest, CancelTaskRequest, CreateTaskResult): this script
sends tasks/get, tasks/result and tasks/cancel with ClientSession.send_request over the SDK's
streamable HTTP client, after the initialize handshake.

The task-augmented tools/call cannot go through send_request in mcp 2.3.0: before parsing into the
asked result type, send_request checks every tools/call result against the revision's
CallToolResult (mcp_types.methods.SERVER_RESULTS, a read-only table), so the CreateTaskResult the
revision prescribes for a request with `task` fails with "content: Field required" (the gap a
review of modelcontextprotocol/python-sdk#3005 points out). That one request is sent through the
session's own JSON-RPC dispatcher (the SDK's JSONRPCDispatcher, handed to ClientSession with its
`dispatcher=` parameter), with the version header the session stamps, and its result parsed with
CreateTaskResult. Both modes take a voice id from list_workspace_assets and call
create_faceless_video (a short script, 5 seconds) as a task. `run` polls tasks/get at the task's
pollInterval until the task ends, then asks tasks/result for the final tool result; `cancel`
sends tasks/cancel and then tasks/get. Prints one JSON line.
"""

import asyncio
import json
import sys
import time

import httpx2
import mcp_types as types
from mcp import ClientSession, MCPError
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher

TERMINAL = {"completed", "failed", "cancelled"}


def dump(model):
    return model.model_dump(by_alias=True, mode="json", exclude_none=True)


async def create_video_task(session, dispatcher, mode):
    """A voice from the workspace's assets, then create_faceless_video as a task."""
    assets = await session.call_tool("list_workspace_assets", {})
    voices = (assets.structured_content or {}).get("voices") or []
    if not voices:
        raise RuntimeError(f"list_workspace_assets listed no voice: {dump(assets)}")
    request = types.CallToolRequest(
        params=types.CallToolRequestParams(
            name="create_faceless_video",
            arguments={
                "script": "Cold brew is smooth. Make it tonight and drink it tomorrow.",
                "duration": "5",
                "voice_id": voices[0]["id"],
                "image_style": "comic",
                "idempotency_key": f"py-tasks-{mode}-{time.time_ns()}",
            },
            task=types.TaskMetadata(ttl=600_000),
        )
    )
    params = request.model_dump(by_alias=True, mode="json", exclude_none=True)["params"]
    headers = {"mcp-protocol-version": session.protocol_version}
    raw = await dispatcher.send_raw_request(request.method, params, {"headers": headers})
    return types.CreateTaskResult.model_validate(raw, by_name=False).task


async def get_task(session, task_id):
    request = types.GetTaskRequest(params=types.GetTaskRequestParams(task_id=task_id))
    return await session.send_request(request, types.GetTaskResult)


async def follow(session, task):
    """tasks/get at the suggested interval until the task ends, then tasks/result."""
    statuses = [task.status]
    deadline = time.monotonic() + 240
    while task.status not in TERMINAL:
        if time.monotonic() > deadline:
            raise RuntimeError(f"task {task.task_id} still {task.status} after 240 s")
        await asyncio.sleep((task.poll_interval or 1000) / 1000)
        task = await get_task(session, task.task_id)
        if statuses[-1] != task.status:
            statuses.append(task.status)
    payload = types.GetTaskPayloadRequest(params=types.GetTaskPayloadRequestParams(task_id=task.task_id))
    result = await session.send_request(payload, types.CallToolResult)
    return {"statuses": statuses, "pollInterval": task.poll_interval, "result": dump(result)}


async def cancel(session, task):
    """tasks/cancel (its answer, or the error refusing it), then tasks/get."""
    request = types.CancelTaskRequest(params=types.CancelTaskRequestParams(task_id=task.task_id))
    try:
        answer = {"cancelled": dump(await session.send_request(request, types.CancelTaskResult))}
    except MCPError as err:
        answer = {"cancelError": {"code": err.code, "message": err.message}}
    return {**answer, "after": dump(await get_task(session, task.task_id))}


async def main(url, token, mode):
    headers = {"authorization": f"Bearer {token}"}
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=300)) as http:
        async with streamable_http_client(url, http_client=http) as (read, write):
            info = types.Implementation(name="py-tasks-client-test", version="1.0.0")
            dispatcher = JSONRPCDispatcher(read, write)
            async with ClientSession(client_info=info, dispatcher=dispatcher) as session:
                init = await session.initialize()
                out = {
                    "protocolVersion": init.protocol_version,
                    "serverTasks": dump(init.capabilities.tasks) if init.capabilities.tasks else None,
                }
                task = await create_video_task(session, dispatcher, mode)
                out["created"] = dump(task)
                out.update(await (cancel(session, task) if mode == "cancel" else follow(session, task)))
                print(json.dumps(out), flush=True)


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:4]))
