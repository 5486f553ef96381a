// A real MCP client process: the official TypeScript SDK 1.x client (@modelcontextprotocol/sdk),
// which opens with the initialize handshake at its latest revision (2025-11-25). Usage:
//   node v1-client.ts <mcp url> <bearer token> <tool to call>
// Prints one JSON line: the negotiated revision, the listed tool names in order, the tool result.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const [url, token, tool] = process.argv.slice(2);
const client = new Client({ name: 'v1-client-test', version: '1.0.0' });
const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${token}` } } });
await client.connect(transport);
const listed = await client.listTools();
const result = await client.callTool({ name: tool, arguments: {} });
process.stdout.write(`${JSON.stringify({ protocolVersion: transport.protocolVersion, tools: listed.tools.map((t) => t.name), result })}\n`);
await client.close();
