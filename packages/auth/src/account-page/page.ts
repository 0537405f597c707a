import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Router, type Response } from 'express';
import type { AuthConfig } from '../identity/config.js';
import { serviceIconPath, serviceIconSvg } from '../identity/service-icon.js';
import type { ConsentView } from '../oauth/provider.js';
import { GRANT_LIFETIME_DAYS } from '../oauth/repository.js';

// The build copies this folder's assets beside the compiled page.js (dist/account-page/).
const read = (file: string) => readFileSync(join(__dirname, file), 'utf8');
const TEMPLATE = read('index.html');
const ASSETS: Record<string, { type: string; body: string }> = {
  'account.js': { type: 'text/javascript; charset=utf-8', body: read('account.js') },
  'account.css': { type: 'text/css; charset=utf-8', body: read('account.css') },
};

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** What one rendering of the page differs in. */
interface PageState {
  signedIn: boolean;
  /** `account`: the account page; `authorize`: an OAuth authorize step (sign-in, then consent). */
  mode: 'account' | 'authorize';
  /** The consent section (authorize mode, signed in), already escaped. */
  consent?: string;
}

const PER_RENDER = new Set(['signedIn', 'mode', 'consent']);

/** The page for one service, with everything but {@link PageState} filled in once. */
function render(
  cfg: AuthConfig,
  keysPath: string,
  signup: 'open' | 'closed',
  connectionsPath = '',
): (state: PageState) => string {
  const values: Record<string, string> = {
    connectionsPath: escapeHtml(connectionsPath),
    connections: connectionsPath ? CONNECTIONS_SECTION : '',
    service: escapeHtml(cfg.service),
    title: escapeHtml(cfg.service.charAt(0).toUpperCase() + cfg.service.slice(1)),
    keysPath: escapeHtml(keysPath),
    signup,
    signupButton:
      signup === 'open' ? '<button type="submit" value="signup" class="secondary">Create account</button>' : '',
    scopeBoxes: cfg.scopes
      .map((s) => `<label><input type="checkbox" name="scope" value="${escapeHtml(s)}"> ${escapeHtml(s)}</label>`)
      .join('\n            '),
  };
  const page = TEMPLATE.replace(/\{\{(\w+)\}\}/g, (whole, name: string) =>
    PER_RENDER.has(name) ? whole : (values[name] ?? whole),
  );
  return (state) =>
    page.replace(/\{\{(signedIn|mode|consent)\}\}/g, (_whole, name: string) =>
      name === 'consent' ? (state.consent ?? '') : String(state[name as 'signedIn' | 'mode']),
    );
}

/** The services this account connects to (account.js fills it from `data-connections-path`). */
const CONNECTIONS_SECTION = `
      <section class="card" aria-labelledby="connections-title">
        <h2 id="connections-title" tabindex="-1">Connected services</h2>
        <p class="hint">Other services of this product this account works with, through their own sign-in and consent.</p>
        <table id="connections-table">
          <caption class="visually-hidden">Your connected services</caption>
          <thead>
            <tr><th scope="col">Service</th><th scope="col">Status</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr>
          </thead>
          <tbody id="connections-body"></tbody>
        </table>
      </section>
`;

/** What a scope lets an app do, in words for the consent page. */
function scopeMeaning(scope: string): string {
  const [resource, access] = scope.split(':');
  if (access === 'read') return `read your ${resource}`;
  if (access === 'write') return `create, change and delete your ${resource}`;
  return `use ${scope}`;
}

function consentSection(cfg: AuthConfig, view: Extract<ConsentView, { signedIn: true }>): string {
  const title = escapeHtml(cfg.service.charAt(0).toUpperCase() + cfg.service.slice(1));
  const client = escapeHtml(view.clientName);
  // A metadata document's client: its name is its own word; the host its document came from is not.
  const from = view.clientHost ? ` (${escapeHtml(view.clientHost)})` : '';
  const scopes = view.scopes
    .map((s) => `<li><code>${escapeHtml(s)}</code>: ${escapeHtml(scopeMeaning(s))}</li>`)
    .join('');
  return `    <section id="consent" class="card narrow" aria-labelledby="consent-title">
      <h1 id="consent-title" tabindex="-1">Connect ${client}${from} to your ${title} account?</h1>
      <p><strong>${client}</strong> asks to act as you through the ${title} MCP server. It will be able to:</p>
      <ul class="scope-list">${scopes}</ul>
      <p>Its access is for <code>${escapeHtml(view.resource)}</code> only, and ends ${GRANT_LIFETIME_DAYS} days from now at the latest.</p>
      <p class="hint">You can disconnect it at any time under "Connected apps" on your account page. Your answer goes back to <code>${escapeHtml(new URL(view.redirectUri).origin)}</code>.</p>
      <form method="post" action="/oauth/${escapeHtml(cfg.service)}/consent" class="actions">
        <input type="hidden" name="request" value="${escapeHtml(view.requestId)}">
        <button type="submit" name="decision" value="allow">Allow</button>
        <button type="submit" name="decision" value="deny" class="secondary">Deny</button>
      </form>
    </section>
`;
}

/**
 * The OAuth authorize step as a page: signed out, the account page's own sign-in form (the page
 * reloads once signed in); signed in, the consent for one stored request, whose Allow and Deny
 * post a plain form. The form's answer is a redirect to the app, so this page's CSP lets forms
 * go to that origin too (form-action applies to the redirect).
 */
export function authorizePageRenderer(
  cfg: AuthConfig,
  keysPath: string,
  signup: 'open' | 'closed',
): (res: Response, view: ConsentView) => void {
  const page = render(cfg, keysPath, signup);
  return (res, view) => {
    // helmet's no-referrer would make the browser send `Origin: null` with the form's POST, which
    // the origin rule refuses; same-origin sends the page's own origin and nothing elsewhere.
    res.set('Referrer-Policy', 'same-origin');
    if (view.signedIn) {
      const csp = String(res.getHeader('Content-Security-Policy') ?? '');
      const target = new URL(view.redirectUri).origin;
      if (csp) res.set('Content-Security-Policy', csp.replace(/form-action [^;]*/, `form-action 'self' ${target}`));
    }
    res.type('html').send(
      page({
        signedIn: view.signedIn,
        mode: 'authorize',
        ...(view.signedIn ? { consent: consentSection(cfg, view) } : {}),
      }),
    );
  };
}

/** Where {@link accountPageRouter} serves the page and its assets: `/account/<service>`. */
export const accountPagePath = (service: string): string => `/account/${service}`;

/**
 * `GET /account/<service>`: the account page (sign in or sign up; then the time zone and the API
 * keys; with `connectionsPath`, the services it connects to), and its script and stylesheet under
 * `/account/<service>/`. No inline script or style,
 * so helmet's default Content-Security-Policy holds. Mounted after the caller is identified, so
 * a signed-in visitor gets the signed-in page without a failing request first.
 */
export function accountPageRouter(
  cfg: AuthConfig,
  keysPath: string,
  signup: 'open' | 'closed',
  connectionsPath?: string,
): Router {
  const page = render(cfg, keysPath, signup, connectionsPath);
  const path = accountPagePath(cfg.service);
  const router = Router();
  router.get(path, (req, res) => {
    res
      .set('Cache-Control', 'no-store')
      .type('html')
      .send(page({ signedIn: req.caller?.kind === 'session', mode: 'account' }));
  });
  const icon = serviceIconSvg(cfg.service);
  router.get(serviceIconPath(cfg.service), (_req, res) => {
    res.set('Cache-Control', 'public, max-age=86400').type('image/svg+xml').send(icon);
  });
  router.get(`${path}/:asset`, (req, res, next) => {
    // Own names only: `constructor` or `__proto__` is no asset (a 404, not Object's own members).
    const asset = Object.hasOwn(ASSETS, req.params.asset) ? ASSETS[req.params.asset] : undefined;
    if (!asset) return next();
    res.set('Cache-Control', 'no-cache').type(asset.type).send(asset.body);
  });
  return router;
}

/**
 * An authorize request this server will not answer (an unknown client, scope or resource, a
 * malformed parameter), shown to the person at the browser and sent nowhere: before the user has
 * answered the consent page, a redirect would let anyone who registered a client bounce a
 * browser to any address (RFC 9700 4.11.2). No script; the account page's stylesheet.
 */
export function authorizeErrorPage(cfg: AuthConfig): (res: Response, error: string, description: string) => void {
  const service = escapeHtml(cfg.service);
  const title = escapeHtml(cfg.service.charAt(0).toUpperCase() + cfg.service.slice(1));
  return (res, error, description) => {
    res.set('Cache-Control', 'no-store').type('html').send(`<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>${title}: the app cannot connect</title>
  <link rel="icon" href="/account/${service}/icon.svg">
  <link rel="stylesheet" href="/account/${service}/account.css">
</head>
<body>
  <main id="main" class="wrap">
    <section class="card narrow" aria-labelledby="error-title">
      <h1 id="error-title">The app cannot connect to ${title}</h1>
      <p>${escapeHtml(description)}</p>
      <p class="hint">Error <code>${escapeHtml(error)}</code>. Nothing was shared with the app. Go back to it and connect again, or tell its makers.</p>
    </section>
  </main>
</body>
</html>
`);
  };
}
