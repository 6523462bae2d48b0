// The official TypeScript SDK client, with its OAuth provider, against the `protected` example
// and a real authorization server (oidc_provider.mjs).
//
//   node protected_client.mjs <server url> <issuer>
//
// The person's part of the flow (log in, consent) is played by `browse`, which follows the
// authorization server's redirects and submits its interaction forms as a browser would.
// Checks: a request without a token gets 401 with `resource_metadata`; the metadata names the
// issuer and the resource; the client discovers, registers, authorizes (PKCE, resource,
// scope `notes:read` from the challenge) and calls `whoami` (the subject is the login name);
// `write_note` needs `notes:write`, so the client steps up on the 403, and the note is written
// after the confirmation form. Exits non-zero on the first failed check.

import { strict as assert } from 'node:assert';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const [serverUrl, issuer] = process.argv.slice(2);
if (!serverUrl || !issuer) {
  console.error('usage: node protected_client.mjs <server url> <issuer>');
  process.exit(2);
}
// Never listened on: `browse` stops at the redirect to it and reads the code from its URL.
const REDIRECT = 'http://127.0.0.1:1/callback';
const USER = 'alice';

function check(name, fn) {
  return Promise.resolve(fn()).then(
    (v) => {
      console.log(`ok - ${name}`);
      return v;
    },
    (e) => {
      console.log(`not ok - ${name}: ${e?.stack ?? e}`);
      process.exit(1);
    },
  );
}

/** The OAuth client state the SDK asks for, kept in memory. */
class MemoryProvider {
  constructor() {
    this.pending = undefined;
  }
  get redirectUrl() {
    return REDIRECT;
  }
  get clientMetadata() {
    return {
      client_name: 'mcp-sdk interop',
      redirect_uris: [REDIRECT],
      // No refresh token: this SDK version answers a 403 by refreshing when it can, which
      // cannot add a scope, so the step-up would never reach the user.
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation() {
    return this.info;
  }
  saveClientInformation(info) {
    this.info = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url) {
    this.pending = url;
  }
  saveCodeVerifier(verifier) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}

/** Goes through the authorization server's pages as `login` would, consenting to what is
 * asked; returns the URL it redirects to at the end (the client's redirect URI). */
async function browse(start, login) {
  const jar = new Map();
  let url = new URL(start);
  let method = 'GET';
  let body;
  for (let step = 0; step < 20; step++) {
    const headers = { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') };
    if (body) headers['content-type'] = 'application/x-www-form-urlencoded';
    const response = await fetch(url, { method, body, headers, redirect: 'manual' });
    for (const cookie of response.headers.getSetCookie()) {
      const [pair] = cookie.split(';');
      const eq = pair.indexOf('=');
      jar.set(pair.slice(0, eq), pair.slice(eq + 1));
    }
    if (response.status >= 300 && response.status < 400) {
      const next = new URL(response.headers.get('location'), url);
      if (next.href.startsWith(REDIRECT)) return next;
      url = next;
      method = 'GET';
      body = undefined;
      continue;
    }
    const html = await response.text();
    const action = html.match(/<form[^>]*action="([^"]+)"/)?.[1];
    const prompt = html.match(/name="prompt" value="([^"]+)"/)?.[1];
    if (!action || !prompt) throw new Error(`no interaction form at ${url} (${response.status}): ${html.slice(0, 400)}`);
    const form = new URLSearchParams({ prompt });
    if (prompt === 'login') {
      form.set('login', login);
      form.set('password', 'unused');
    }
    url = new URL(action, url);
    method = 'POST';
    body = form.toString();
  }
  throw new Error('too many steps through the authorization server');
}

/** Completes a pending authorization: browses it, checks the response, hands the code over. */
async function authorize(provider, transport, wantScope) {
  const pending = provider.pending;
  assert.ok(pending, 'the SDK did not ask for authorization');
  provider.pending = undefined;
  assert.equal(pending.searchParams.get('code_challenge_method'), 'S256');
  assert.equal(pending.searchParams.get('resource'), serverUrl);
  const scopes = (pending.searchParams.get('scope') ?? '').split(' ');
  for (const s of wantScope) assert.ok(scopes.includes(s), `scope ${pending.searchParams.get('scope')} lacks ${s}`);
  const back = await browse(pending, USER);
  assert.equal(back.searchParams.get('iss'), issuer, 'RFC 9207 iss in the authorization response');
  assert.equal(back.searchParams.get('state'), pending.searchParams.get('state'));
  const code = back.searchParams.get('code');
  assert.ok(code, `no code in ${back}`);
  await transport.finishAuth(code);
}

const metadataUrl = await check('no token: 401 with resource_metadata', async () => {
  const response = await fetch(serverUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
  assert.equal(response.status, 401);
  const challenge = response.headers.get('www-authenticate');
  const url = challenge?.match(/resource_metadata="([^"]+)"/)?.[1];
  assert.ok(url, `challenge without resource_metadata: ${challenge}`);
  assert.match(challenge, /scope="notes:read"/);
  return url;
});

await check('the metadata names the issuer and the resource', async () => {
  const doc = await (await fetch(metadataUrl)).json();
  assert.equal(doc.resource, serverUrl);
  assert.deepEqual(doc.authorization_servers, [issuer]);
  assert.deepEqual(doc.scopes_supported, ['notes:read', 'notes:write']);
});

const provider = new MemoryProvider();
let transport = new StreamableHTTPClientTransport(new URL(serverUrl), { authProvider: provider });
const client = new Client({ name: 'interop-protected', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } } });
client.setRequestHandler(ElicitRequestSchema, async (request) => {
  assert.match(request.params.message, /Write the note "hello"/);
  return { action: 'accept', content: { confirm: true } };
});

await check('connecting asks for authorization (scope notes:read)', async () => {
  await assert.rejects(client.connect(transport), UnauthorizedError);
  await authorize(provider, transport, ['notes:read']);
  assert.ok(provider.info?.client_id, 'the client registered dynamically');
});

await check('connected with a token from the authorization server', async () => {
  transport = new StreamableHTTPClientTransport(new URL(serverUrl), { authProvider: provider });
  await client.connect(transport);
  const [, payload] = provider.tokens().access_token.split('.');
  const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
  assert.equal(claims.aud, serverUrl);
  assert.equal(claims.iss, issuer);
  assert.equal(claims.scope, 'notes:read');
});

await check('whoami returns the subject', async () => {
  const result = await client.callTool({ name: 'whoami', arguments: {} });
  assert.equal(result.content[0].text, USER);
});

await check('write_note without notes:write: step-up on 403 insufficient_scope', async () => {
  await assert.rejects(
    client.callTool({ name: 'write_note', arguments: { title: 'hello', body: 'world' } }),
    UnauthorizedError,
  );
  await authorize(provider, transport, ['notes:read', 'notes:write']);
  const result = await client.callTool({ name: 'write_note', arguments: { title: 'hello', body: 'world' } });
  assert.equal(result.isError ?? false, false, JSON.stringify(result));
  assert.match(result.content[0].text, /Wrote note "hello" for alice/);
});

await client.close();
console.log('all checks passed');
