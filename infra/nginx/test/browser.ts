import { findExecutable } from '@app/devstack';
import { chromium, type Browser } from 'playwright-core';

/**
 * Debian's Chromium (.ci/run installs it when missing; CHROMIUM_PATH overrides), launched for a
 * browser test. playwright-core never downloads a browser. Root in a container has no user
 * namespaces for Chromium's sandbox, hence no sandbox.
 */
export async function launchChromium(): Promise<Browser> {
  const executablePath = process.env.CHROMIUM_PATH || findExecutable('chromium') || findExecutable('chromium-browser');
  if (!executablePath) throw new Error('chromium is not installed: apt-get install -y chromium (.ci/run does this)');
  return chromium.launch({ executablePath, chromiumSandbox: false, args: ['--disable-dev-shm-usage'] });
}
