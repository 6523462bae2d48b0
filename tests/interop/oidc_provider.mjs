// A real OAuth 2.1 / OpenID Connect authorization server for the tests: `oidc-provider`
// (OpenID-certified), pinned in package.json, on 127.0.0.1.
//
//   node oidc_provider.mjs <port> <resource> [<cert.pem> <key.pem>]
//
// With a certificate chain and its key (PEM), it serves https:// (node's https module), and
// its issuer is https://127.0.0.1:<port>.
//
// It issues JWT access tokens (RFC 9068, ES256, keys made at start-up and published in its
// JWKS) for <resource> (resource indicators, RFC 8707) with the scopes `notes:read` and
// `notes:write`, lets clients register themselves (RFC 7591), requires PKCE (S256), and says
// who it is in authorization responses (RFC 9207 `iss`). Logging in and consenting go through
// its own interaction pages (`/interaction/<uid>`): any login name is accepted, and consent
// grants what was asked. Prints `listening <issuer>` once it accepts connections.
//
// Machines too: client credentials for `machine-secret` (secret `machine-secret-value`,
// `client_secret_basic`) and, when MACHINE_JWKS holds a JWKS (JSON), `machine-jwt`
// (`private_key_jwt` with those keys); tokens are DPoP-bound (RFC 9449, `cnf.jkt`) whenever
// the token request carries a proof.

import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import Provider from 'oidc-provider';
import { exportJWK, generateKeyPair } from 'jose';

const [port, resource, certFile, keyFile] = process.argv.slice(2);
if (!port || !resource || Boolean(certFile) !== Boolean(keyFile)) {
  console.error('usage: node oidc_provider.mjs <port> <resource> [<cert.pem> <key.pem>]');
  process.exit(2);
}
const tls = certFile ? { cert: readFileSync(certFile), key: readFileSync(keyFile) } : null;
const issuer = `${tls ? 'https' : 'http'}://127.0.0.1:${port}`;

const { privateKey } = await generateKeyPair('ES256', { extractable: true });
const signing = { ...(await exportJWK(privateKey)), kid: 'test-es256', alg: 'ES256', use: 'sig' };

const RESOURCE_SCOPES = 'notes:read notes:write';

const machine = { grant_types: ['client_credentials'], redirect_uris: [], response_types: [], scope: RESOURCE_SCOPES };
const clients = [
  { ...machine, client_id: 'machine-secret', client_secret: 'machine-secret-value', token_endpoint_auth_method: 'client_secret_basic' },
];
if (process.env.MACHINE_JWKS) {
  clients.push({
    ...machine,
    client_id: 'machine-jwt',
    token_endpoint_auth_method: 'private_key_jwt',
    token_endpoint_auth_signing_alg: 'ES256',
    jwks: JSON.parse(process.env.MACHINE_JWKS),
  });
}

const provider = new Provider(issuer, {
  jwks: { keys: [signing] },
  clients,
  findAccount: async (_ctx, id) => ({ accountId: id, claims: async () => ({ sub: id }) }),
  scopes: ['openid', 'offline_access', 'notes:read', 'notes:write'],
  pkce: { required: () => true },
  clientDefaults: {
    token_endpoint_auth_method: 'none',
    grant_types: ['authorization_code', 'refresh_token'],
    id_token_signed_response_alg: 'ES256',
  },
  features: {
    devInteractions: { enabled: true },
    clientCredentials: { enabled: true },
    dPoP: { enabled: true },
    registration: { enabled: true },
    revocation: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => resource,
      useGrantedResource: () => true,
      getResourceServerInfo: (_ctx, indicator) => {
        if (indicator !== resource) {
          throw new Provider.errors.InvalidTarget(`unknown resource ${indicator}`);
        }
        return {
          scope: RESOURCE_SCOPES,
          audience: resource,
          accessTokenTTL: 600,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'ES256' } },
        };
      },
    },
  },
  // Refresh tokens for public clients too, so that a client can refresh.
  issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
  ttl: { AccessToken: 600, AuthorizationCode: 60, Interaction: 600, Session: 600, Grant: 600, RefreshToken: 3600 },
});
provider.proxy = false;

// A client registers with the scope it asks for first; oidc-provider would then refuse it any
// other, and MCP clients step up to more scopes as they need them (a 403 `insufficient_scope`
// names them). This server lets a registered client ask for any of its scopes: it drops the
// `scope` of a registration request before the provider reads it.
provider.use(async (ctx, next) => {
  if (ctx.method === 'POST' && ctx.path === '/reg') {
    const chunks = [];
    for await (const chunk of ctx.req) chunks.push(chunk);
    const metadata = JSON.parse(Buffer.concat(chunks).toString() || '{}');
    delete metadata.scope;
    ctx.request.body = metadata;
  }
  await next();
});

const listening = () => console.log(`listening ${issuer}`);
const server = tls
  ? createServer(tls, provider.callback()).listen(Number(port), '127.0.0.1', listening)
  : provider.listen(Number(port), '127.0.0.1', listening);
const stop = () => server.close(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
