// A real OpenID provider (panva's certified oidc-provider) for Berth's tests,
// on 127.0.0.1. Its login page (devInteractions) accepts any password; the
// login name picks one of the accounts below.
//
//   PORT=4410 REDIRECT_URIS=http://127.0.0.1:3190/auth/callback node oidc/provider.mjs
//
// Environment:
//   PORT           where to listen (the issuer is http://127.0.0.1:PORT)
//   REDIRECT_URIS  comma-separated redirect URIs of the `berth` client
//   POST_LOGOUT_REDIRECT_URIS  comma-separated, optional
//   CLIENT_SECRET  defaults to "berth-test-secret"
//   FORGE          optional: tamper with every ID token the token endpoint
//                  returns, to prove the relying party refuses it:
//                  aud | iss | signature | none | nonce | no-nonce | expired
//                  | kid (signed by an unpublished key under an unknown kid)
//                  | kid-many (the same while three keys are published)
//                  | no-kid-many (no kid while three keys are published)
//                  | discovery-issuer (discovery names another issuer)
// Each start makes a fresh signing key with a fresh `kid`, so restarting the
// provider is a key rotation.

import Provider from 'oidc-provider';
import * as jose from 'jose';
import { randomUUID } from 'node:crypto';

const port = Number(process.env.PORT || 4410);
const issuer = `http://127.0.0.1:${port}`;
const list = (v) => (v || '').split(',').map((s) => s.trim()).filter(Boolean);

// login name -> claims. Groups follow the portal's default mapping:
// berth-admins, berth-managers, and berth-team-<tenant>.
const accounts = {
  ada: { name: 'Ada Lovelace', groups: ['berth-team-a'] },
  bob: { name: 'Bob Builder', groups: ['berth-team-b'] },
  mia: { name: 'Mia Manager', groups: ['berth-managers', 'berth-team-a'] },
  root: { name: 'Root Admin', groups: ['berth-admins'] },
  nobody: { name: 'No Tenant', groups: ['unrelated'] },
  // Claims an address it has not verified (one an admin created an account for).
  // One of the demo history's people (berth seed-demo --history).
  demo: { name: 'Grace Demo', groups: ['berth-team-demo'], email: 'grace@berth.local' },
  eve: { name: 'Eve', groups: ['berth-team-a'], email: 'victim@example.test', email_verified: false },
};

// What a Berth token may do (app/src/rules/scope.rs), as OAuth scopes of /mcp.
const BERTH_SCOPES = ['read', 'book', 'full'];

const forge = process.env.FORGE;
const privateJwk = async () => {
  const { privateKey } = await jose.generateKeyPair('RS256', { extractable: true });
  return { privateKey, jwk: { ...(await jose.exportJWK(privateKey)), kid: randomUUID(), alg: 'RS256', use: 'sig' } };
};
const { privateKey, jwk: signingJwk } = await privateJwk();
// Published besides the signing key when a forgery needs several keys.
const moreJwks = forge && forge.endsWith('-many') ? [(await privateJwk()).jwk, (await privateJwk()).jwk] : [];

const provider = new Provider(issuer, {
  clients: [{
    client_id: 'berth',
    client_secret: process.env.CLIENT_SECRET || 'berth-test-secret',
    redirect_uris: list(process.env.REDIRECT_URIS),
    post_logout_redirect_uris: list(process.env.POST_LOGOUT_REDIRECT_URIS),
    grant_types: ['authorization_code'],
    response_types: ['code'],
    token_endpoint_auth_method: 'client_secret_basic',
  }, {
    // An AI assistant signing its person in for Berth's /mcp (a public
    // client: PKCE, no secret). It asks for an access token for the
    // resource http://<portal>/mcp with the scopes read, book or full.
    client_id: 'assistant',
    redirect_uris: ['http://127.0.0.1:1/auth/callback'],
    grant_types: ['authorization_code'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  }],
  jwks: { keys: [signingJwk, ...moreJwks] },
  cookies: { keys: [randomUUID()] },
  // Profile and groups claims go into the ID token itself, not only userinfo.
  conformIdTokenClaims: false,
  claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'], groups: ['groups'] },
  scopes: ['openid', 'email', 'profile', 'groups'],
  features: {
    devInteractions: { enabled: true },
    rpInitiatedLogout: { enabled: true },
    // RFC 8707: an access token names the resource it is for. For any
    // resource, a JWT access token (RFC 9068) whose audience is that
    // resource, with Berth's token scopes.
    resourceIndicators: {
      enabled: true,
      defaultResource: async () => undefined,
      useGrantedResource: async () => true,
      getResourceServerInfo: async (ctx, resource) => ({
        scope: BERTH_SCOPES.join(' '),
        audience: resource,
        accessTokenFormat: 'jwt',
        accessTokenTTL: 600,
        jwt: { sign: { alg: 'RS256' } },
      }),
    },
  },
  pkce: { required: () => true },
  // Berth is a first-party client: no consent screen.
  async loadExistingGrant(ctx) {
    const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client.clientId, accountId: ctx.oidc.session.accountId });
    grant.addOIDCScope('openid email profile groups');
    grant.addOIDCClaims(['email', 'email_verified', 'name', 'groups']);
    const resource = ctx.oidc.params.resource;
    if (resource) {
      const asked = String(ctx.oidc.params.scope || '').split(' ').filter((s) => BERTH_SCOPES.includes(s));
      grant.addResourceScope(resource, asked.join(' '));
    }
    await grant.save();
    return grant;
  },
  async findAccount(ctx, id) {
    const account = accounts[id] || { name: id, groups: [] };
    return {
      accountId: id,
      async claims() {
        return {
          sub: id,
          email: account.email || `${id}@example.test`,
          email_verified: account.email_verified ?? true,
          name: account.name,
          groups: account.groups,
        };
      },
    };
  },
});

if (forge) {
  const otherKey = (await jose.generateKeyPair('RS256')).privateKey;
  provider.use(async (ctx, next) => {
    await next();
    if (forge === 'discovery-issuer' && ctx.path === '/.well-known/openid-configuration' && ctx.body) {
      ctx.body = { ...ctx.body, issuer: 'http://127.0.0.1:1/evil' };
      return;
    }
    if (ctx.path !== '/token' || !ctx.body || !ctx.body.id_token) return;
    ctx.body = { ...ctx.body, id_token: await tamper(ctx.body.id_token, forge, otherKey) };
  });
}

async function tamper(token, how, otherKey) {
  const claims = jose.decodeJwt(token);
  const header = jose.decodeProtectedHeader(token);
  const sign = (c, key = privateKey) => new jose.SignJWT(c).setProtectedHeader(header).sign(key);
  switch (how) {
    case 'aud': return sign({ ...claims, aud: 'someone-else' });
    case 'iss': return sign({ ...claims, iss: 'http://127.0.0.1:1/evil' });
    case 'nonce': return sign({ ...claims, nonce: 'not-the-nonce' });
    case 'no-nonce': {
      const { nonce, ...rest } = claims;
      return sign(rest);
    }
    case 'kid':
    case 'kid-many':
      return new jose.SignJWT(claims).setProtectedHeader({ ...header, kid: randomUUID() }).sign(otherKey);
    case 'no-kid-many': {
      const { kid, ...rest } = header;
      return new jose.SignJWT(claims).setProtectedHeader(rest).sign(privateKey);
    }
    case 'expired': {
      const past = Math.floor(Date.now() / 1000) - 3600;
      return sign({ ...claims, iat: past - 600, exp: past });
    }
    // Same header and kid, signed by a key the provider never published.
    case 'signature': return sign(claims, otherKey);
    case 'none': return new jose.UnsecuredJWT(claims).encode();
    default: throw new Error(`unknown FORGE mode ${how}`);
  }
}

provider.listen(port, '127.0.0.1', () => {
  console.log(`oidc-provider ready at ${issuer}${forge ? ` (forging: ${forge})` : ''}`);
});
