// A client nobody here wrote: the official TypeScript MCP SDK, against agentic-search's server.
//   node client.mjs COMMAND [ARGS...]   (stdio: launches it, as a desktop client does)
//   node client.mjs http://HOST:PORT/mcp (streamable HTTP)
// Lists the tools, calls `search` and validates its structuredContent against the outputSchema
// the server advertised (Ajv, JSON Schema 2020-12); prints one JSON line with what it saw and
// exits 1 with the reason on any failure.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import Ajv2020 from "ajv/dist/2020.js";

const [target, ...args] = process.argv.slice(2);
const query = process.env.MCP_QUERY || "free code editor";

function fail(why) {
  process.stderr.write(`mcp node client: ${why}\n`);
  process.exit(1);
}

if (!target) fail("usage: node client.mjs COMMAND [ARGS...] | URL");
const transport = /^https?:\/\//.test(target)
  ? new StreamableHTTPClientTransport(new URL(target))
  : new StdioClientTransport({ command: target, args, env: process.env, stderr: "inherit" });
const client = new Client({ name: "agentic-search-node-check", version: "1.0.0" });
await client.connect(transport);
const { tools } = await client.listTools();
const search = tools.find((t) => t.name === "search");
if (!search) fail(`no search tool among ${tools.map((t) => t.name).join(", ")}`);
if (!search.outputSchema) fail("the search tool advertises no outputSchema");
const result = await client.callTool({ name: "search", arguments: { query, limit: 3 } });
if (result.isError) fail(`search answered an error: ${JSON.stringify(result.content)}`);
if (!result.structuredContent) fail("search answered no structuredContent");
const ajv = new Ajv2020({ strict: false, allErrors: true });
const validate = ajv.compile(search.outputSchema);
if (!validate(result.structuredContent)) {
  fail(`structuredContent does not match the outputSchema: ${ajv.errorsText(validate.errors)}`);
}
const bad = await client.callTool({ name: "search", arguments: { query, domain: "nope" } });
process.stdout.write(
  JSON.stringify({
    server: client.getServerVersion(),
    tools: tools.map((t) => ({ name: t.name, readOnly: t.annotations?.readOnlyHint === true })),
    ids: result.structuredContent.candidates.map((c) => c.id),
    valid: true,
    unknownDomain: { isError: bad.isError === true, text: bad.content?.[0]?.text },
  }) + "\n",
);
await client.close();
