import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Router } from 'express';
import type { AuthConfig } from '../identity/config.js';

// The build copies this folder's assets beside the compiled page.js (dist/account-page/).
const read = (file: string) => readFileSync(join(__dirname, file), 'utf8');
const TEMPLATE = read('index.html');
const ASSETS: Record<string, { type: string; body: string }> = {
  'account.js': { type: 'text/javascript; charset=utf-8', body: read('account.js') },
  'account.css': { type: 'text/css; charset=utf-8', body: read('account.css') },
};

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The page for one service, with everything but the signed-in flag filled in once. */
function render(cfg: AuthConfig, keysPath: string, signup: 'open' | 'closed'): (signedIn: boolean) => string {
  const values: Record<string, string> = {
    service: escapeHtml(cfg.service),
    title: escapeHtml(cfg.service.charAt(0).toUpperCase() + cfg.service.slice(1)),
    keysPath: escapeHtml(keysPath),
    signup,
    signupButton: signup === 'open' ? '<button type="submit" value="signup" class="secondary">Create account</button>' : '',
    scopeBoxes: cfg.scopes
      .map((s) => `<label><input type="checkbox" name="scope" value="${escapeHtml(s)}"> ${escapeHtml(s)}</label>`)
      .join('\n            '),
  };
  const page = TEMPLATE.replace(/\{\{(\w+)\}\}/g, (whole, name: string) => (name === 'signedIn' ? whole : (values[name] ?? whole)));
  const [before, after] = page.split('{{signedIn}}') as [string, string];
  return (signedIn) => `${before}${signedIn}${after}`;
}

/**
 * `GET /account/<service>`: the account page (sign in or sign up; then the time zone and the API
 * keys), and its script and stylesheet under `/account/<service>/`. No inline script or style,
 * so helmet's default Content-Security-Policy holds. Mounted after the caller is identified, so
 * a signed-in visitor gets the signed-in page without a failing request first.
 */
export function accountPageRouter(cfg: AuthConfig, keysPath: string, signup: 'open' | 'closed'): Router {
  const page = render(cfg, keysPath, signup);
  const router = Router();
  router.get(`/account/${cfg.service}`, (req, res) => {
    res.set('Cache-Control', 'no-store').type('html').send(page(req.caller?.kind === 'session'));
  });
  router.get(`/account/${cfg.service}/:asset`, (req, res, next) => {
    const asset = ASSETS[req.params.asset!];
    if (!asset) return next();
    res.set('Cache-Control', 'no-cache').type(asset.type).send(asset.body);
  });
  return router;
}
