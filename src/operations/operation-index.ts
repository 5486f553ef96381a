// The shape of generated/operations.json: written by scripts/lib/codegen.ts, read by the
// executor, the REST adapter, the MCP adapter and the tests. One definition for all of them.

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

export interface OperationIndexEntry {
  operationId: string;
  method: string;
  path: string;
  routePath: string;
  /** The operation's own server URL when the spec overrides the document's (`/` for the health probes); absent: under the document's server (/api/v1). */
  server?: string;
  tag: string;
  summary: string;
  description: string;
  deprecated: boolean;
  aliasOf: string | null;
  /** Name of the rate-limit policy (`x-rate-limit`) that counts calls of this operation, if any. */
  rateLimit: string | null;
  /** Any one of these scopes grants access; empty means no authentication. */
  scopes: string[];
  params: ParamInfo[];
  /** limitBytes: the body size limit the contract declares (`x-body-limit-bytes`), null: the server's default. */
  requestBody: { required: boolean; contentTypes: string[]; limitBytes: number | null } | null;
  responses: Record<string, { contentType: string | null; description: string }>;
  successStatus: number;
  mcpTools: McpToolEntry[];
}

export interface OperationIndex {
  title: string;
  version: string;
  operations: OperationIndexEntry[];
  mcpOnlyTools: JsonObject[];
}
