// A real MCP client process with tasks: the official TypeScript SDK v2 client
// (@modelcontextprotocol/client), pinned to revision 2026-07-28, and the tasks extension's own
// requester (@modelcontextprotocol/ext-tasks: createTaskSessionFromClient). Usage:
//   node v2-tasks-client.ts <mcp url> <bearer token> run|cancel
// Both modes take a voice id from list_workspace_assets and call create_faceless_video (a short
// script, 5 seconds) as a task. `run` follows the task to its end with the package's settle()
// (which polls tasks/get at the server's pollIntervalMs); `cancel` cancels the task through the
// package (tasks/cancel: the execution's cancel() resolves on the server's acknowledgement) and
// reads it again (tasks/get). Prints one JSON line, with the methods the package sent and, when
// cancelling, the acknowledgement as it was answered.
//
// The SDK Client cannot carry the extension's wire shapes itself: it rejects a tools/call answer
// with `resultType: "task"` (UnsupportedResultType) and frames requests with its own capabilities.
// The package therefore asks the host for `rawDispatch` (a request path that owns request ids and
// matches responses) and `v2RequestFraming` (the revision, client info and capabilities the SDK
// client was created with), which it stamps on tools/call and tasks/* requests. RawRequests below
// is that request path, on the SDK client's own transport: requests go out through the transport
// (so authorization and the revision's routing headers are the transport's), with ids of their
// own that the SDK's protocol layer never issues, and responses to those ids are taken off the
// transport before the SDK's protocol layer sees them.
import { Client, StreamableHTTPClientTransport, type JSONRPCMessage } from '@modelcontextprotocol/client';
import {
  createTaskSessionFromClient,
  resultFromTaskOutcome,
  type RawClientDispatch,
  type TaskExecutionEvent,
} from '@modelcontextprotocol/ext-tasks/client';

type Obj = Record<string, unknown>;
type RawResponse = Awaited<ReturnType<RawClientDispatch>>;

/** Requests of the host, sent on the SDK client's transport with ids of their own, their responses matched here. */
class RawRequests {
  #next = 1;
  readonly #pending = new Map<string, (message: JSONRPCMessage) => void>();
  readonly #transport: StreamableHTTPClientTransport;
  /** Every request sent this way: its method and its response. */
  readonly log: { method: string; response: Obj }[] = [];

  /** Call after client.connect(): the SDK's protocol layer has installed its message handler by then. */
  constructor(transport: StreamableHTTPClientTransport) {
    this.#transport = transport;
    const sdk = transport.onmessage;
    transport.onmessage = (message: JSONRPCMessage) => {
      const id = 'id' in message && !('method' in message) ? message.id : undefined;
      const settle = typeof id === 'string' ? this.#pending.get(id) : undefined;
      if (settle) {
        this.#pending.delete(id as string);
        settle(message);
      } else sdk?.(message);
    };
  }

  dispatch: RawClientDispatch = async (request, options = {}) => {
    const id = `ext-tasks-${this.#next++}`;
    const answered = new Promise<JSONRPCMessage>((resolve, reject) => {
      this.#pending.set(id, resolve);
      options.signal?.addEventListener(
        'abort',
        () => {
          this.#pending.delete(id);
          reject(options.signal!.reason);
        },
        { once: true },
      );
    });
    const message = { ...(request as Obj), jsonrpc: '2.0', id } as JSONRPCMessage;
    try {
      await this.#transport.send(message, { requestSignal: options.signal, headers: options.context?.headers });
    } catch (err) {
      this.#pending.delete(id);
      throw err;
    }
    const response = (await answered) as Obj;
    this.log.push({ method: String((request as Obj).method), response });
    return ('error' in response ? { kind: 'error', error: response.error } : { kind: 'result', result: response.result }) as RawResponse;
  };
}

const [url, token, mode] = process.argv.slice(2);
const PROTOCOL_VERSION = '2026-07-28';
const clientInfo = { name: 'v2-tasks-client-test', version: '1.0.0' };
const capabilities = {};
const client = new Client(clientInfo, { capabilities, versionNegotiation: { mode: { pin: PROTOCOL_VERSION } } });
const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${token}` } } });
await client.connect(transport);
const raw = new RawRequests(transport);
const session = createTaskSessionFromClient(client, {
  endpointId: url,
  rawDispatch: raw.dispatch,
  v2RequestFraming: {
    protocolVersion: client.getNegotiatedProtocolVersion() ?? PROTOCOL_VERSION,
    clientInfo,
    clientCapabilities: capabilities,
  },
});

try {
  // A voice of the workspace's catalog (a plain tool call, answered at once).
  const assets = await client.callTool({ name: 'list_workspace_assets', arguments: {} });
  const voices = ((assets.structuredContent as Obj | undefined)?.voices ?? []) as { id: string }[];
  if (!voices[0]) throw new Error(`list_workspace_assets listed no voice: ${JSON.stringify(assets).slice(0, 300)}`);
  const execution = await session.callTool('create_faceless_video', {
    script: 'Cold brew is smooth. Make it tonight and drink it tomorrow.',
    duration: '5',
    voice_id: voices[0].id,
    image_style: 'comic',
    idempotency_key: `v2-tasks-${mode}-${Date.now()}`,
  });
  const out: Obj = { kind: execution.kind, taskId: execution.handle?.taskId, voiceId: voices[0].id };
  if (mode === 'cancel') {
    if (!execution.handle) throw new Error('not a task');
    await execution.cancel();
    out.cancelAck = raw.log.find((x) => x.method === 'tasks/cancel')?.response;
    out.outcome = (await execution.result()).status;
    out.after = (await session.task(execution.handle.taskId).snapshot()).raw;
  } else {
    const statuses: string[] = [];
    const onEvent = (event: TaskExecutionEvent<unknown>) => {
      if (event.type === 'task' && statuses.at(-1) !== event.task.status) statuses.push(event.task.status);
    };
    const { outcome, lastTask } = await execution.settle({ onEvent });
    if (lastTask && statuses.at(-1) !== lastTask.status) statuses.push(lastTask.status);
    Object.assign(out, {
      statuses,
      pollIntervalMs: lastTask?.suggestedPollIntervalMs,
      outcome: outcome.status,
      result: resultFromTaskOutcome(outcome),
    });
  }
  out.methods = raw.log.map((x) => x.method);
  process.stdout.write(`${JSON.stringify(out)}\n`);
} finally {
  await session.close();
  await client.close();
}
