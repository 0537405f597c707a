// `@app/auth/mcp`: the types a service's MCP notes, prompts and tool table are written against (the
// tools themselves are generated from its OpenAPI document by the runtime).
export type { CallOperation, McpPrompt, RestAnswer } from './context.js';
export type { ToolTableEntry } from './toolsets.js';
