// Connects to hamcp with the official TypeScript SDK's OAuth client, as Claude and mcp-remote do:
// discovery from the 401, dynamic client registration (or, with $MCP_CLIENT_METADATA_URL, a client
// id that is that https URL: a client ID metadata document), the Home Assistant login and hamcp's
// consent page (played by a small cookie-keeping browser below), the code exchange, MCP calls,
// then two refreshes with the same refresh token at once. Then a non-administrator's login, which
// must come back to the client with error=access_denied.
// Every request to hamcp carries Origin: $MCP_ORIGIN when set (claude.ai's web app sends its own).
// Inside the session it also calls a method hamcp does not have: that must be an MCP error, not a
// transport failure. Usage: node oauth_client.cjs MCP_URL ADMIN_USER ADMIN_PASSWORD GUEST_USER
// GUEST_PASSWORD (NODE_PATH must reach @modelcontextprotocol/sdk). Prints one JSON object.
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StreamableHTTPClientTransport } = require('@modelcontextprotocol/sdk/client/streamableHttp.js');
const { UnauthorizedError, refreshAuthorization, discoverAuthorizationServerMetadata } = require('@modelcontextprotocol/sdk/client/auth.js');
const { McpError, ResultSchema } = require('@modelcontextprotocol/sdk/types.js');

const [mcpURL, adminUser, adminPass, guestUser, guestPass] = process.argv.slice(2);
const redirectURL = 'http://127.0.0.1:33418/callback';
const origin = process.env.MCP_ORIGIN || '';
const clientMetadataURL = process.env.MCP_CLIENT_METADATA_URL || undefined;

// claudeFetch is the client's fetch: the browser of claude.ai adds its Origin to every request.
function claudeFetch(url, init = {}) {
  const headers = new Headers(init.headers || {});
  if (origin) headers.set('Origin', origin);
  return fetch(url, { ...init, headers });
}
const transportFor = (provider) => new StreamableHTTPClientTransport(new URL(mcpURL), { authProvider: provider, fetch: claudeFetch });

// browse follows redirects with its own cookies until the browser would leave for the client's
// redirect URI (returned as {back}) or a page is shown (returned as {page, status}).
async function browse(url, jar, init = {}) {
  for (let i = 0; i < 12; i++) {
    const u = new URL(url);
    const headers = { ...(init.headers || {}) };
    const cookies = jar.get(u.host);
    if (cookies && cookies.size) headers.Cookie = [...cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const res = await fetch(url, { ...init, headers, redirect: 'manual' });
    for (const c of res.headers.getSetCookie()) {
      const [kv] = c.split(';');
      const eq = kv.indexOf('=');
      if (!jar.has(u.host)) jar.set(u.host, new Map());
      jar.get(u.host).set(kv.slice(0, eq), kv.slice(eq + 1));
    }
    if (res.status < 300 || res.status >= 400) return { page: await res.text(), status: res.status, url };
    const next = new URL(res.headers.get('location'), url).toString();
    if (next.startsWith(redirectURL)) return { back: new URL(next) };
    url = next;
    init = {};
  }
  throw new Error('too many redirects');
}

// HTML attribute values as a browser decodes them (html/template writes + as &#43;).
const unescape = (s) => s.replace(/&#(\d+);/g, (_, n) => String.fromCharCode(Number(n)))
  .replace(/&quot;/g, '"').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');

function form(page) {
  const action = (page.match(/<form method="post" action="([^"]+)">/) || [])[1];
  if (!action) throw new Error('no form on the page: ' + page.slice(0, 300));
  const fields = new URLSearchParams();
  for (const m of page.matchAll(/<input type="hidden" name="(\w+)" value="([^"]*)">/g)) fields.set(m[1], unescape(m[2]));
  return { action: unescape(action), fields };
}

async function post(base, page, jar, extra) {
  const { action, fields } = form(page);
  for (const [k, v] of Object.entries(extra)) fields.set(k, v);
  const url = new URL(action, base);
  return browse(url.toString(), jar, {
    method: 'POST', body: fields.toString(),
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', Origin: url.origin },
  });
}

// signIn is the person in the browser: the HA login as user, then Allow if hamcp asks.
async function signIn(authURL, user, pass) {
  const jar = new Map();
  const login = await browse(authURL.toString(), jar);
  if (!login.page || !login.page.includes('name="password"')) throw new Error('no Home Assistant login page');
  // Each form posts to the site that showed it: HA's login page, then hamcp's consent page.
  const afterLogin = await post(login.url, login.page, jar, { username: user, password: pass });
  if (afterLogin.back || !afterLogin.page.includes('value="allow"')) return afterLogin;
  return post(afterLogin.url, afterLogin.page, jar, { action: 'allow' });
}

class Provider {
  constructor() { this.info = undefined; this.toks = undefined; this.verifier = ''; this.back = undefined; this.user = ''; this.pass = ''; }
  get redirectUrl() { return redirectURL; }
  // The SDK uses it as the client id when hamcp advertises client_id_metadata_document_supported.
  get clientMetadataUrl() { return clientMetadataURL; }
  get clientMetadata() {
    return { client_name: 'Claude (TypeScript SDK)', redirect_uris: [redirectURL], grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'], token_endpoint_auth_method: 'none' };
  }
  state() { this.st = 'st-' + Math.random().toString(36).slice(2); return this.st; }
  clientInformation() { return this.info; }
  saveClientInformation(i) { this.info = i; }
  tokens() { return this.toks; }
  saveTokens(t) { this.toks = t; }
  saveCodeVerifier(v) { this.verifier = v; }
  codeVerifier() { return this.verifier; }
  async redirectToAuthorization(url) { this.result = await signIn(url, this.user, this.pass); }
}

let mcpBase;

(async () => {
  mcpBase = new URL(mcpURL).origin;
  const out = {};
  // 1. The administrator connects with DCR.
  const p = new Provider();
  p.user = adminUser; p.pass = adminPass;
  let client = new Client({ name: 'claude-ts', version: '1.0.0' });
  let transport = transportFor(p);
  try {
    await client.connect(transport);
    throw new Error('connected without signing in');
  } catch (e) {
    if (!(e instanceof UnauthorizedError)) throw e;
  }
  if (!p.result || !p.result.back) throw new Error('the admin login did not return to the client: ' + JSON.stringify(p.result && p.result.status));
  const code = p.result.back.searchParams.get('code');
  out.adminState = p.result.back.searchParams.get('state') === p.st;
  out.iss = p.result.back.searchParams.get('iss');
  out.clientId = p.info.client_id;
  await transport.finishAuth(code);
  client = new Client({ name: 'claude-ts', version: '1.0.0' });
  await client.connect(transportFor(p));
  out.toolsBefore = (await client.listTools()).tools.length;
  try {
    await client.request({ method: 'tools/frobnicate', params: {} }, ResultSchema);
    out.unknownMethod = 'answered';
  } catch (e) {
    out.unknownMethod = e instanceof McpError ? e.code : 'transport error: ' + e.message;
  }
  out.toolsAfterUnknown = (await client.listTools()).tools.length;
  await client.close();

  // 2. Two refreshes with the same refresh token at once.
  const metadata = await discoverAuthorizationServerMetadata(mcpBase);
  const args = { metadata, clientInformation: p.info, refreshToken: p.toks.refresh_token, resource: new URL(mcpURL) };
  const [a, b] = await Promise.all([refreshAuthorization(mcpBase, { ...args, fetchFn: claudeFetch }), refreshAuthorization(mcpBase, { ...args, fetchFn: claudeFetch })]);
  out.sameAccess = a.access_token === b.access_token;
  out.sameRefresh = a.refresh_token === b.refresh_token;
  out.rotated = a.refresh_token !== p.toks.refresh_token;
  p.saveTokens(a);
  client = new Client({ name: 'claude-ts', version: '1.0.0' });
  await client.connect(transportFor(p));
  out.toolsAfter = (await client.listTools()).tools.length;
  await client.close();
  const again = await refreshAuthorization(mcpBase, { ...args, refreshToken: a.refresh_token });
  out.refreshAfter = !!again.access_token;

  // 3. A non-administrator: the page says why, its link returns to the client with access_denied.
  const g = new Provider();
  g.user = guestUser; g.pass = guestPass;
  try {
    await new Client({ name: 'claude-ts', version: '1.0.0' }).connect(transportFor(g));
  } catch (e) {
    if (!(e instanceof UnauthorizedError)) throw e;
  }
  const refused = g.result;
  out.guestStatus = refused.status;
  const link = refused.page && (refused.page.match(/<a id="continue" href="([^"]+)">/) || [])[1];
  if (link) {
    const back = new URL(unescape(link));
    out.guestError = back.searchParams.get('error');
    out.guestState = back.searchParams.get('state') === g.st;
  }
  console.log(JSON.stringify(out));
})().catch((e) => { console.error('FAIL ' + (e && e.stack || e)); process.exit(1); });
