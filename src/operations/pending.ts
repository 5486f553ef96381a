// Operations in the contract whose capability lands in a later issue. They authenticate and
// validate like any other, then answer 501 `not_implemented`; the spec declares that 501 on
// exactly these. When a capability lands, remove its ids here and the 501 from the spec
// (boot refuses the server if the two disagree). This is the only source of 501s.
export const PENDING_OPERATIONS: ReadonlySet<string> = new Set([]);

// MCP-only tools (spec: x-mcp-only-tools) whose capability lands in a later issue: they run
// through the executor like any operation (scope, plan, rate limit, arguments), then answer
// `not_implemented` (isError). The binder refuses boot when this list, the handler modules and
// the spec disagree.
export const PENDING_MCP_TOOLS: ReadonlySet<string> = new Set([]);
