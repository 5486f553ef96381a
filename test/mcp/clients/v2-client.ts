// A real MCP client process: the official TypeScript SDK v2 client (@modelcontextprotocol/client),
// pinned to the 2026-07-28 revision (server/discover, no initialize). Usage:
//   node v2-client.ts <mcp url> <bearer token> <tool to call>
// Prints one JSON line: the negotiated revision and era, the listed tool names in order, the tool
// result, and the result of get_generation for an id that does not exist (a tool error).
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const [url, token, tool] = process.argv.slice(2);
const client = new Client({ name: 'v2-client-test', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${token}` } } });
await client.connect(transport);
const listed = await client.listTools();
const result = await client.callTool({ name: tool, arguments: {} });
const again = await client.listTools();
const missing = await client.callTool({ name: 'get_generation', arguments: { id: '00000000-0000-4000-8000-000000000000' } });
process.stdout.write(
  `${JSON.stringify({
    protocolVersion: client.getNegotiatedProtocolVersion(),
    era: client.getProtocolEra(),
    tools: listed.tools.map((t) => t.name),
    toolsAgain: again.tools.map((t) => t.name),
    result,
    missing,
  })}\n`,
);
await client.close();
