// The shape of generated/operations.json (and of generated/mcp-tools.json's rows): written by
// scripts/lib/codegen.ts, read by the executor, the REST adapter, the MCP adapter and the tests.
// One definition for all of them.

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
export type JsonObject = { [k: string]: Json };

export interface ParamInfo {
  name: string;
  in: 'path' | 'query' | 'header';
  required: boolean;
  array: boolean;
  schema: JsonObject;
  description?: string;
}

export interface McpToolEntry {
  name: string;
  description?: string;
  fixed?: JsonObject;
}

/** What the executor runs, the same for a REST operation and an MCP-only tool. */
interface IndexEntryCommon {
  /** The operationId; for an MCP-only tool, its tool name. Unique across both kinds. */
  operationId: string;
  tag: string;
  summary: string;
  description: string;
  deprecated: boolean;
  aliasOf: string | null;
  /** Name of the rate-limit policy (`x-rate-limit`) that counts calls of this entry, if any. */
  rateLimit: string | null;
  /** Any one of these scopes grants access; empty means no authentication. */
  scopes: string[];
  /** Whether the caller's workspace needs an active paid plan (every authenticated operation does). */
  requiresPaidPlan: boolean;
  params: ParamInfo[];
  /** limitBytes: the body size limit the contract declares (`x-body-limit-bytes`), null: the server's default. */
  requestBody: { required: boolean; contentTypes: string[]; limitBytes: number | null } | null;
  responses: Record<string, { contentType: string | null; description: string }>;
  successStatus: number;
  mcpTools: McpToolEntry[];
}

/** A REST operation (spec `paths`). */
export interface OperationIndexEntry extends IndexEntryCommon {
  transport: 'http';
  method: string;
  path: string;
  routePath: string;
  /** The operation's own server URL when the spec overrides the document's (`/` for the health probes); absent: under the document's server (/api/v1). */
  server?: string;
}

/**
 * An MCP-only tool (spec `x-mcp-only-tools`): an entry of the same shape with no method or path.
 * Its arguments are its body, validated by the generated `mcp__<name>` validator.
 */
export interface McpOnlyToolIndexEntry extends IndexEntryCommon {
  transport: 'mcp';
  method: null;
  path: null;
  routePath: null;
}

/** Anything the executor runs. */
export type IndexEntry = OperationIndexEntry | McpOnlyToolIndexEntry;

export interface OperationIndex {
  title: string;
  version: string;
  operations: OperationIndexEntry[];
  mcpOnlyTools: McpOnlyToolIndexEntry[];
}

/** The generated validator of an entry's JSON body (an MCP-only tool's arguments). */
export const bodyValidatorName = (entry: IndexEntry) => (entry.transport === 'mcp' ? `mcp__${entry.operationId}` : entry.operationId);

/** A tool's input or output schema: a self-contained JSON Schema of an object. */
export type ToolSchema = JsonObject & { type: 'object'; properties?: { [name: string]: JsonObject }; required?: string[] };

/**
 * One row of generated/mcp-tools.json, the MCP tool table: written by scripts/lib/codegen.ts,
 * served by src/mcp/tools.ts. Schemas are self-contained JSON Schema.
 */
export interface McpToolRow {
  name: string;
  title: string;
  description: string;
  inputSchema: ToolSchema;
  outputSchema?: ToolSchema;
  /** The behaviour hints (the title is the row's own `title`, not repeated here). */
  annotations: { readOnlyHint: boolean; destructiveHint: boolean; idempotentHint: boolean; openWorldHint: boolean };
  /** The REST operation the tool runs; null for MCP-only tools (the executor runs the tool's own entry). */
  operationId: string | null;
  /** Arguments the tool always sends (removed from inputSchema). */
  fixed: JsonObject;
  /** Any one of these scopes grants access; empty means any valid token. */
  scopes: string[];
  requiresPaidPlan: boolean;
  /** Argument name → where it goes (fixed arguments included). */
  routes: Record<string, McpArgRoute>;
  /** The result's media URL fields (spec `x-mcp-media`), listed as resource_link content. */
  media: McpMediaField[];
}

/**
 * A media URL field of a tool result: its path from the result (`url`, `media.url`, `slides[].image_url`:
 * `[]` is every item of an array) and its MIME type, given or read from a field beside the URL.
 */
export interface McpMediaField {
  path: string;
  mimeType?: string;
  mimeTypeField?: string;
}

/** Where a tool argument goes when the call is replayed as the REST operation ('tool': the MCP-only tool's arguments). */
export type McpArgRoute = 'path' | 'query' | 'body' | 'body:whole' | `header:${string}` | 'tool';
