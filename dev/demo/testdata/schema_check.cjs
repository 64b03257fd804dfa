// Lists hamcp's tools with the official TypeScript SDK client (which checks the tools/list result
// against the MCP schema and refuses a malformed tool) and compiles every input schema with Ajv in
// strict mode under both JSON Schema 2020-12 (MCP's default dialect) and draft-07 (what many
// clients still use). Usage: node schema_check.cjs MCP_URL TOKEN (NODE_PATH must reach the SDK
// and ajv). Prints one JSON object: {tools, problems[]}.
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StreamableHTTPClientTransport } = require('@modelcontextprotocol/sdk/client/streamableHttp.js');
const Ajv2020 = require('ajv/dist/2020').default;
const Ajv07 = require('ajv').default;
const addFormats = require('ajv-formats').default;

const [mcpURL, token] = process.argv.slice(2);

(async () => {
  const client = new Client({ name: 'schema-check', version: '1' });
  const transport = new StreamableHTTPClientTransport(new URL(mcpURL), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  const { tools } = await client.listTools();
  const problems = [];
  for (const [name, Ajv] of [['2020-12', Ajv2020], ['draft-07', Ajv07]]) {
    const ajv = new Ajv({ strict: true, strictTypes: true, strictTuples: true, strictRequired: true, allErrors: true });
    addFormats(ajv);
    for (const tool of tools) {
      try {
        ajv.compile(tool.inputSchema);
      } catch (e) {
        problems.push(`${tool.name} (${name}): ${e.message}`);
      }
    }
  }
  await client.close();
  console.log(JSON.stringify({ tools: tools.length, problems }));
})().catch((e) => {
  console.log(JSON.stringify({ error: String(e && e.stack || e) }));
  process.exit(1);
});
