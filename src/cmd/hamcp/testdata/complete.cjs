// Drives `hamcp stdio --demo` with the official TypeScript SDK client and checks
// completion/complete against every prompt and resource template it lists.
// Usage: node complete.cjs HAMCP_BINARY   (NODE_PATH must reach @modelcontextprotocol/sdk)
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');

function fail(msg) { console.error('FAIL ' + msg); process.exitCode = 1; }

(async () => {
  const transport = new StdioClientTransport({ command: process.argv[2], args: ['stdio', '--demo'], stderr: 'ignore' });
  const client = new Client({ name: 'hamcp-completion-test', version: '1.0.0' });
  await client.connect(transport);
  if (!client.getServerCapabilities().completions) fail('completions capability not advertised');
  const seen = [];
  const check = async (ref, arg, value, label) => {
    // complete() parses the result with the SDK's schema: values must be an array of strings.
    const r = await client.complete({ ref, argument: { name: arg, value } });
    const c = r.completion;
    if (!Array.isArray(c.values)) return fail(`${label}: values is not an array`);
    if (c.values.length > 100) fail(`${label}: ${c.values.length} values, more than 100`);
    if (c.total !== undefined && c.total < c.values.length) fail(`${label}: total ${c.total} < ${c.values.length}`);
    if (c.hasMore && !(c.total > c.values.length)) fail(`${label}: hasMore without a larger total`);
    seen.push({ label, value, values: c.values, total: c.total, hasMore: !!c.hasMore });
  };
  const { prompts } = await client.listPrompts();
  for (const p of prompts) {
    for (const a of p.arguments || []) {
      for (const v of ['', 'li', 'zzzz-nothing']) await check({ type: 'ref/prompt', name: p.name }, a.name, v, `prompt ${p.name} ${a.name}`);
    }
  }
  const { resourceTemplates } = await client.listResourceTemplates();
  for (const t of resourceTemplates) {
    for (const m of t.uriTemplate.matchAll(/\{([^}]+)\}/g)) {
      for (const v of ['', 'light.', 'zzzz-nothing']) await check({ type: 'ref/resource', uri: t.uriTemplate }, m[1], v, `template ${t.uriTemplate} ${m[1]}`);
    }
  }
  for (const bad of [{ type: 'ref/prompt', name: 'no_such_prompt' }, { type: 'ref/resource', uri: 'hass://nothing/{x}' }]) {
    try {
      await client.complete({ ref: bad, argument: { name: 'x', value: '' } });
      fail(`unknown ref ${JSON.stringify(bad)} answered`);
    } catch (e) {
      if (e.code !== -32602) fail(`unknown ref ${JSON.stringify(bad)}: code ${e.code}, want -32602`);
    }
  }
  console.log(JSON.stringify({ prompts: prompts.length, templates: resourceTemplates.length, results: seen }));
  await client.close();
})().catch((e) => { fail(e.stack || String(e)); });
