import type { Browser, Page } from 'playwright-core';
import { launchChromium } from './browser.js';
import { SERVICES, startStack, type Stack } from './stack.js';

let stack: Stack;
let browser: Browser;

beforeAll(async () => {
  browser = await launchChromium();
  stack = await startStack();
}, 120000);
afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

/** Opens a page and records what would show up red in the devtools: console errors, page errors, CSP violations, failed requests. */
async function open(path: string, origin = stack.gateway): Promise<{ page: Page; problems: string[] }> {
  const page = await browser.newPage();
  const problems: string[] = [];
  page.on('console', (msg) => {
    if (msg.type() === 'error' || msg.type() === 'warning') problems.push(`console ${msg.type()}: ${msg.text()}`);
  });
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  page.on('requestfailed', (req) => problems.push(`request failed: ${req.url()} ${req.failure()?.errorText}`));
  page.on('response', (res) => {
    if (res.status() >= 400) problems.push(`HTTP ${res.status()}: ${res.url()}`);
  });
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) =>
      console.error(`CSP violation: ${e.violatedDirective} ${e.blockedURI}`),
    );
  });
  await page.goto(`${origin}${path}`, { waitUntil: 'load' });
  return { page, problems };
}

describe('the API reference pages in Chromium, through the gateway', () => {
  it("/docs links every service's reference", async () => {
    const { page, problems } = await open('/docs');
    const links = await page.locator('a').evaluateAll((as) => as.map((a) => a.getAttribute('href')));
    expect(links).toEqual(expect.arrayContaining(SERVICES.map((svc) => `/docs/${svc}`)));
    await page.click('a[href="/docs/meetings"]');
    await page.waitForURL(/\/docs\/meetings$/);
    await page.close();
    expect(problems).toEqual([]);
  });

  const services = [
    {
      svc: 'tasks',
      title: 'Tasks API',
      operations: ['listTasks', 'createTask', 'completeTask'],
      summary: 'Create a task',
    },
    {
      svc: 'meetings',
      title: 'Meetings API',
      operations: ['listMeetings', 'carryItem', 'putNote'],
      summary: 'Carry one open top-level talking point',
    },
    {
      svc: 'clipboard',
      title: 'Clipboard API',
      operations: ['listItems', 'pullClipboardChanges', 'replaceSnippets'],
      summary: 'Changes after a cursor (sync protocol)',
    },
  ];

  it.each(services)(
    '/docs/$svc renders every operation of the document, with no console error or CSP violation',
    async ({ svc, title, operations, summary }) => {
      const { page, problems } = await open(`/docs/${svc}`);
      await page.locator('.opblock').first().waitFor({ state: 'attached', timeout: 60_000 });
      expect(await page.locator('.info .title').innerText()).toContain(title);
      const doc = (await (await fetch(`${stack.gateway}/openapi/${svc}.json`)).json()) as {
        paths: Record<string, Record<string, unknown>>;
        webhooks: Record<string, Record<string, unknown>>;
      };
      // The operations and the webhooks map's events (one POST each), each a block of its own.
      const ops = [...Object.values(doc.paths), ...Object.values(doc.webhooks)];
      const count = ops.reduce((n, item) => n + Object.keys(item).length, 0);
      expect(await page.locator('.opblock').count()).toBe(count);
      const text = await page.locator('#reference').innerText();
      for (const id of operations) expect(text).toContain(id);
      expect(text).toContain(summary);
      // Expanding an operation renders its parameters and responses (the document is fully parsed).
      await page.locator(`.opblock:has-text("${operations[0]}") .opblock-summary-control`).first().click();
      await page.locator('.responses-wrapper').first().waitFor();
      expect(await page.locator('.responses-wrapper').first().innerText()).toContain('401');
      await page.screenshot({ path: `/tmp/docs-${svc}.png`, fullPage: false });
      expect(problems).toEqual([]);
      // The page runs under the service's strict CSP, and a violation would have been seen: an
      // injected inline script does not run and is reported.
      const ran = await page.evaluate(() => {
        const script = document.createElement('script');
        script.textContent = 'window.inlineRan = true';
        document.head.append(script);
        return (window as unknown as { inlineRan?: boolean }).inlineRan === true;
      });
      expect(ran).toBe(false);
      for (let i = 0; i < 50 && !problems.some((p) => p.includes('CSP violation')); i++)
        await new Promise((r) => setTimeout(r, 100));
      expect(problems).toEqual(
        expect.arrayContaining([expect.stringMatching(/^console error: CSP violation: script-src/)]),
      );
      await page.close();
    },
    120000,
  );

  it("/docs/clipboard renders the same on the service's own port, without the gateway", async () => {
    const { page, problems } = await open('/docs/clipboard', `http://127.0.0.1:${stack.ports.clipboard}`);
    await page.locator('.opblock').first().waitFor({ state: 'attached', timeout: 60_000 });
    expect(await page.locator('#reference').innerText()).toContain('pullClipboardChanges');
    await page.close();
    expect(problems).toEqual([]);
  }, 120000);

  it('/docs/tasks calls the API through the gateway with "Authorize" and "Try it out"', async () => {
    const { accountId } = await stack.admin('tasks', 'create-account', '--email', 'docs-try@example.test');
    const { key } = await stack.admin('tasks', 'create-key', '--account', accountId);
    await fetch(`${stack.gateway}/api/v1/tasks`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ title: 'Seen from the reference page' }),
    });
    const { page, problems } = await open('/docs/tasks');
    await page.locator('.btn.authorize').click();
    await page.locator('.auth-container').first().locator('input').fill(key);
    await page.locator('.auth-container').first().locator('button.authorize').click();
    await page.locator('.btn-done').first().click();
    const op = page.locator('#operations-Tasks-listTasks');
    await op.locator('.opblock-summary-control').click();
    await op.locator('.try-out__btn').click();
    await op.locator('.execute').click();
    await op.locator('.live-responses-table tr.response .response-col_status').first().waitFor();
    expect(
      (await op.locator('.live-responses-table tr.response .response-col_status').first().innerText()).trim(),
    ).toBe('200');
    expect(
      await op.locator('.live-responses-table tr.response .response-col_description').first().innerText(),
    ).toContain('Seen from the reference page');
    await page.close();
    expect(problems).toEqual([]);
  }, 120000);
});
