// The callbacks passed to page.evaluate run in the browser.
/// <reference lib="dom" />
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from './browser.js';
import { startStack, type Stack } from './stack.js';

/*
 * DESIGN "Meetings: connected" on meetings' account page, in Chromium through the gateway: the
 * tasks connection is shown with Connect (through tasks' consent page and back) and Disconnect.
 */

let stack: Stack;
let browser: Browser;
let page: Page;
const consoleErrors: string[] = [];

beforeAll(async () => {
  browser = await launchChromium();
  // Meetings' Client ID Metadata Document is on the loopback gateway: tasks may fetch it, as under npm start.
  stack = await startStack({
    tasks: { SIGNUP: 'open', OAUTH_CIMD_ALLOW_PRIVATE: '1' },
    meetings: { SIGNUP: 'open' },
  });
  page = await (await browser.newContext({ viewport: { width: 1100, height: 900 } })).newPage();
  page.on('console', (msg) => {
    if (msg.type() === 'error') consoleErrors.push(`${msg.type()}: ${msg.text()}`);
  });
  page.on('pageerror', (err) => consoleErrors.push(`pageerror: ${err.message}`));
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

/** Creates an account on a service's account page; the page shows it signed in. */
async function signUp(service: 'tasks' | 'meetings'): Promise<void> {
  const email = `connect-browser-${service}-${Date.now()}@example.test`;
  await page.goto(`${stack.gateway}/account/${service}`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill('a long enough passphrase');
  await page.getByRole('button', { name: 'Create account' }).click();
  await page.getByText(`Signed in as ${email}`).waitFor();
}

const tasksRow = () => page.getByRole('row', { name: /^Tasks/ });

it('shows the tasks connection with Connect, which goes through tasks consent and back; Disconnect ends it', async () => {
  await signUp('tasks');
  await signUp('meetings');
  await page.getByRole('heading', { name: 'Connected services' }).waitFor();
  await tasksRow().getByText('Not connected').waitFor();

  await page.getByRole('button', { name: 'Connect Tasks' }).click();
  // Tasks' consent page names meetings' document.
  await page.getByRole('button', { name: 'Allow' }).waitFor();
  expect(await page.getByText('Meetings').first().isVisible()).toBe(true);
  await page.getByRole('button', { name: 'Allow' }).click();
  await page.waitForURL(`${stack.gateway}/account/meetings?tasks=connected`);
  await page.getByText('Tasks connected.').waitFor();
  await tasksRow()
    .getByText(/^Connected since /)
    .waitFor();

  await page.getByRole('button', { name: 'Disconnect Tasks' }).click();
  await page.getByRole('button', { name: 'Confirm disconnect' }).click();
  await page.getByText('Tasks disconnected.').waitFor();
  await tasksRow().getByText('Not connected').waitFor();
  expect(await page.getByRole('button', { name: 'Connect Tasks' }).isVisible()).toBe(true);
  const connections = await page.evaluate(async () => (await fetch('/api/me/connections')).json());
  expect(connections).toEqual({ tasks: { connected: false, since: null } });
  expect(consoleErrors).toEqual([]);
});

it("another service's account page has no connections section", async () => {
  await page.goto(`${stack.gateway}/account/tasks`);
  await page.getByRole('heading', { name: 'Connected apps' }).waitFor();
  expect(await page.getByRole('heading', { name: 'Connected services' }).count()).toBe(0);
});
