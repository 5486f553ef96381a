// Handler typing, from openapi-typescript's `operations` (and, for the MCP-only tools, the
// generated McpOnlyTools). A handler gets validated, typed input and an auth context, and returns
// the operation's success body (or a Reply for a different status, headers or a pre-serialised
// body). It never sees request or reply.
import type { McpOnlyTools } from '../generated/mcp-only-tools.d.ts';
import type { operations } from '../generated/openapi.d.ts';
import type { AppContext } from './context.ts';
import type { Readable } from 'node:stream';

/** Who is calling: the workspace, the key (or OAuth grant), its scopes and the workspace's plan. */
export interface AuthContext {
  orgId: string;
  keyId: string;
  scopes: string[];
  plan: 'paid' | 'none';
}

export type OperationId = keyof operations;

type Params<O extends OperationId, W extends 'path' | 'query' | 'header'> = operations[O] extends {
  parameters: { [K in W]?: infer P };
}
  ? Exclude<P, undefined>
  : Record<string, never>;

/** Header names arrive lower-cased (HTTP headers are case-insensitive). */
type LowerKeys<T> = { [K in keyof T as Lowercase<K & string>]: T[K] };

type JsonBody<O extends OperationId> = operations[O] extends { requestBody: { content: { 'application/json': infer B } } }
  ? B
  : operations[O] extends { requestBody?: { content: { 'application/json': infer B } } }
    ? B | undefined
    : undefined;

type Responses<O extends OperationId> = operations[O] extends { responses: infer R } ? R : never;
type ContentOf<R> = R extends { content: infer C } ? C[keyof C] : undefined;
type SuccessKeys<O extends OperationId> = Extract<keyof Responses<O>, 200 | 201 | 202 | 204>;
export type SuccessBody<O extends OperationId> = ContentOf<Responses<O>[SuccessKeys<O>]>;

export interface HandlerInput<O extends OperationId> {
  path: Params<O, 'path'>;
  query: Params<O, 'query'>;
  headers: LowerKeys<Params<O, 'header'>>;
  body: JsonBody<O>;
  /** null only for public operations. */
  auth: O extends PublicOperation ? AuthContext | null : AuthContext;
  ctx: AppContext;
  operationId: O;
  /** Aborted when the caller went away (REST: the client's connection closed before the answer). */
  signal?: AbortSignal;
}

export type PublicOperation = 'listModels' | 'getOpenApiDocument' | 'getSkill' | 'getSkillPage' | 'getHealth' | 'getReadiness';

/** A response with a status, headers or content type other than the default JSON 2xx. */
export class Reply {
  readonly status: number;
  readonly body: unknown;
  readonly headers: Record<string, string>;
  readonly contentType: string;
  /** True when `body` is already serialised (string or Buffer). */
  readonly raw: boolean;
  constructor(opts: { status?: number; body: unknown; headers?: Record<string, string>; contentType?: string; raw?: boolean }) {
    this.status = opts.status ?? 200;
    this.body = opts.body;
    this.headers = opts.headers ?? {};
    this.contentType = opts.contentType ?? 'application/json; charset=utf-8';
    this.raw = opts.raw ?? false;
  }
}

export type Handler<O extends OperationId> = (input: HandlerInput<O>) => Promise<SuccessBody<O> | Reply> | SuccessBody<O> | Reply;

/** The name of an MCP-only tool (spec `x-mcp-only-tools`). */
export type ToolName = keyof McpOnlyTools;

/** What an MCP-only tool's handler gets: its validated arguments as `body`, as an operation gets its JSON body. */
export interface ToolHandlerInput<N extends ToolName> {
  body: McpOnlyTools[N]['input'];
  auth: AuthContext;
  ctx: AppContext;
  operationId: N;
  /** Aborted when the MCP client went away. */
  signal?: AbortSignal;
}

export type ToolHandler<N extends ToolName> = (
  input: ToolHandlerInput<N>,
) => Promise<McpOnlyTools[N]['output']> | McpOnlyTools[N]['output'];

/** Handlers by operationId or MCP-only tool name (the two never share a name: the generator refuses it). */
export type HandlerMap = { [O in OperationId]?: Handler<O> } & { [N in ToolName]?: ToolHandler<N> };

/** What the executor calls: any bound handler, operation or MCP-only tool. */
export type AnyHandler = (input: never) => unknown;

/** Helper so a handler module gets per-operation typing: `export const handlers = defineHandlers({...})`. */
export const defineHandlers = <M extends HandlerMap>(m: M & { [K in Exclude<keyof M, OperationId | ToolName>]: never }): M => m;

// A multipart/form-data body as the executor hands it to a handler: not parsed up front, but a
// lazy stream of parts the handler consumes after authentication, scopes and the content type
// were checked (so an unauthenticated upload is never written anywhere). The REST adapter builds
// it from the request (src/http/multipart.ts); JSON bodies stay plain objects.

export type UploadPart =
  | { kind: 'field'; name: string; value: string }
  | { kind: 'file'; name: string; filename: string; mimetype: string; stream: Readable };

export class MultipartBody {
  readonly parts: () => AsyncIterable<UploadPart>;
  constructor(parts: () => AsyncIterable<UploadPart>) {
    this.parts = parts;
  }
}
