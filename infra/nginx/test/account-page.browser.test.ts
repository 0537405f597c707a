// The callbacks passed to page.evaluate run in the browser.
/// <reference lib="dom" />
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from './browser.js';
import { startStack, type Stack } from './stack.js';

// Screenshots stay out of the repository.
const SCREENSHOT = process.env.ACCOUNT_PAGE_SCREENSHOT || '/tmp/account-page-tasks.png';

let stack: Stack;
let browser: Browser;
let page: Page;
const consoleErrors: string[] = [];

beforeAll(async () => {
  browser = await launchChromium();
  stack = await startStack({ tasks: { SIGNUP: 'open', RATE_LIMIT_PER_MINUTE: '100000' } });
  const context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
  page = await context.newPage();
  page.on('console', (msg) => {
    if (msg.type() === 'error' || msg.type() === 'warning') consoleErrors.push(`${msg.type()}: ${msg.text()}`);
  });
  page.on('pageerror', (err) => consoleErrors.push(`pageerror: ${err.message}`));
  // Injected by the browser, not by the page, so the CSP does not apply to this listener itself.
  await context.addInitScript(() => {
    (window as any).__cspViolations = [];
    document.addEventListener('securitypolicyviolation', (e: SecurityPolicyViolationEvent) =>
      (window as any).__cspViolations.push(`${e.violatedDirective} ${e.blockedURI}`),
    );
  });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

const email = `browser-${Date.now()}@example.test`;
const password = 'a long enough passphrase';
let key = '';

const api = (path: string, init: RequestInit = {}) =>
  fetch(`${stack.gateway}${path}`, {
    ...init,
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', ...init.headers },
  });

async function expectSignedIn(): Promise<void> {
  await page.getByText(`Signed in as ${email}`).waitFor();
  expect(await page.getByRole('button', { name: 'Sign out' }).isVisible()).toBe(true);
  expect(await page.getByLabel('Email').isVisible()).toBe(false);
}

describe('the tasks account page in Chromium, through the gateway', () => {
  it('offers sign-in and sign-up to a visitor', async () => {
    await page.goto(`${stack.gateway}/account/tasks`);
    await page.getByLabel('Email').waitFor();
    expect(await page.getByLabel('Password').isVisible()).toBe(true);
    expect(await page.getByRole('button', { name: 'Sign in' }).isVisible()).toBe(true);
    expect(await page.getByRole('button', { name: 'Create account' }).isVisible()).toBe(true);
    expect(await page.getByText('Key name').isVisible()).toBe(false);
    await page.screenshot({ path: SCREENSHOT.replace(/\.png$/, '-signed-out.png') });
  });

  it('creates an account and is signed in, focus on the account heading', async () => {
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Create account' }).click();
    await expectSignedIn();
    await page.waitForFunction(() => document.activeElement?.id === 'account-title');
    expect(await page.getByLabel('Time zone').inputValue()).toMatch(/\w/);
  });

  it('signs out, then signs in again by keyboard alone', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Email').waitFor();
    await page.waitForFunction(() => document.activeElement?.id === 'email');
    await page.keyboard.type(email);
    await page.keyboard.press('Tab');
    await page.keyboard.type(password);
    await page.keyboard.press('Enter');
    await expectSignedIn();
  });

  it('changes the time zone', async () => {
    await page.getByLabel('Time zone').fill('Asia/Tokyo');
    await page.getByRole('button', { name: 'Save time zone' }).click();
    await page.getByText('Time zone set to Asia/Tokyo.').waitFor();
    const me = (await page.evaluate(() => fetch('/auth/tasks/me').then((r) => r.json()))) as { timezone: string };
    expect(me.timezone).toBe('Asia/Tokyo');
  });

  it('creates a read-only key and shows it once, beside Copy and the warning', async () => {
    await page.getByLabel('Key name').fill('read only script');
    await page.getByRole('checkbox', { name: 'tasks:read' }).check();
    await page.getByRole('button', { name: 'Create key' }).click();
    const shown = page.getByTestId('new-key');
    await shown.waitFor();
    key = (await shown.textContent()) ?? '';
    expect(key).toMatch(/^tasks_[A-Za-z0-9_-]{43}$/);
    expect(await page.getByRole('button', { name: 'Copy' }).isVisible()).toBe(true);
    expect(await page.getByText('Copy it now: this key will not be shown again.', { exact: true }).isVisible()).toBe(
      true,
    );
    const row = page.getByRole('row', { name: /read only script/ });
    await row.getByRole('cell', { name: 'tasks:read', exact: true }).waitFor();
    await page.waitForFunction(() => document.activeElement?.id === 'new-key-box');
    await page.screenshot({ path: SCREENSHOT, fullPage: true });
  });

  it('the key reads but may not write', async () => {
    expect((await api('/api/v1/tasks')).status).toBe(200);
    const write = await api('/api/v1/tasks', { method: 'POST', body: JSON.stringify({ title: 'nope' }) });
    expect(write.status).toBe(403);
    expect((await write.json()).error.code).toBe('insufficient_scope');
  });

  it('after a reload the key is listed (now with a last use) but never shown again', async () => {
    let lastUsed = 'Never';
    for (let i = 0; i < 20 && lastUsed === 'Never'; i++) {
      await page.reload();
      await expectSignedIn();
      const row = page.getByRole('row', { name: /read only script/ });
      await row.waitFor();
      lastUsed = (await row.getByRole('cell').nth(3).textContent()) ?? '';
      if (lastUsed === 'Never') await new Promise((r) => setTimeout(r, 250));
    }
    expect(lastUsed).not.toBe('Never');
    expect(await page.getByTestId('new-key').isVisible()).toBe(false);
    expect(await page.content()).not.toContain(key);
  });

  it('revokes the key only after confirmation; the key is then refused', async () => {
    await page.getByRole('button', { name: 'Revoke read only script' }).click();
    // Nothing is revoked yet: the button asks first.
    expect((await api('/api/v1/tasks')).status).toBe(200);
    await page.getByRole('button', { name: 'Confirm revoke' }).click();
    await page.getByText('Key read only script revoked.').waitFor();
    await page.getByRole('row', { name: /read only script/ }).waitFor({ state: 'detached' });
    const refused = await api('/api/v1/tasks');
    expect(refused.status).toBe(401);
  });

  it('logged no console errors and no Content-Security-Policy violations', async () => {
    const violations = await page.evaluate(() => (window as any).__cspViolations as string[]);
    expect(violations).toEqual([]);
    expect(consoleErrors).toEqual([]);
  });
});
