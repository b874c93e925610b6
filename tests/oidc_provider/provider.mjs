// A real OpenID provider for Lagscope's single sign-on tests: panva's certified oidc-provider,
// with one static client, its development login form (any login named in the accounts file,
// any password), and accounts read from a JSON file at every request, so a test can take
// someone out of a group between two sign-ins.
//
//   node provider.mjs <config.json>
//
// config.json: {"issuer": "http://127.0.0.1:PORT", "port": PORT, "client": {client_id,
// client_secret, redirect_uris}, "accounts_file": "...", "jwks_file": "..."}; accounts file:
// {"<login>": {"preferred_username": ..., "email": ..., "groups": [...]}}; jwks file: the
// provider's private signing keys (the tests make them, so they can also sign an expired
// token with the provider's own key). Prints "listening" once it answers.
import { readFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { Provider } from "oidc-provider";

const config = JSON.parse(readFileSync(process.argv[2], "utf8"));
const accounts = () => JSON.parse(readFileSync(config.accounts_file, "utf8"));

const provider = new Provider(config.issuer, {
  clients: [
    {
      grant_types: ["authorization_code"],
      response_types: ["code"],
      token_endpoint_auth_method: "client_secret_basic",
      ...config.client,
    },
  ],
  jwks: JSON.parse(readFileSync(config.jwks_file, "utf8")),
  cookies: { keys: [randomBytes(32).toString("hex")] },
  // "groups" is a scope of its own, as at most providers; the ID token of a code flow carries
  // only the subject (conformIdTokenClaims, the default): groups and names come from userinfo.
  claims: {
    openid: ["sub"],
    profile: ["preferred_username", "name"],
    email: ["email"],
    groups: ["groups"],
  },
  scopes: ["openid", "profile", "email", "groups"],
  pkce: { required: () => true },
  features: { devInteractions: { enabled: true } },
  async findAccount(ctx, sub) {
    const account = accounts()[sub];
    if (!account) return undefined;
    return { accountId: sub, claims: async () => ({ sub, ...account }) };
  },
  // A first-party client: no consent screen (the grant covers what it asks).
  async loadExistingGrant(ctx) {
    const grantId =
      ctx.oidc.result?.consent?.grantId || ctx.oidc.session.grantIdFor(ctx.oidc.client.clientId);
    if (grantId) return ctx.oidc.provider.Grant.find(grantId);
    const grant = new ctx.oidc.provider.Grant({
      clientId: ctx.oidc.client.clientId,
      accountId: ctx.oidc.session.accountId,
    });
    grant.addOIDCScope(ctx.oidc.params.scope);
    await grant.save();
    return grant;
  },
});

provider.on("server_error", (ctx, error) => console.error("server_error", error));

provider.listen(config.port, "127.0.0.1", () => console.log("listening"));
