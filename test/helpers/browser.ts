// Headless Chromium for the page tests: Debian's build driven by playwright-core (no browser
// download), with the flags this machine needs. .ci/run installs it and sets REQUIRE_BROWSER=1, so a
// missing browser fails CI instead of skipping the page tests silently.
import { existsSync } from 'node:fs';
import type { Browser } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

/** Whether the browser is here; logs a visible SKIP naming `what` when it is not (and CI allows it). */
export function browserAvailable(what: string): boolean {
  const have = existsSync(CHROMIUM);
  if (!have && process.env.REQUIRE_BROWSER === '1')
    throw new Error(`REQUIRE_BROWSER=1 but ${CHROMIUM} is missing (apt-get install chromium)`);
  if (!have) console.log(`SKIP ${what} in a browser: ${CHROMIUM} is missing (.ci/run installs it)`);
  return have;
}

export async function launchChromium(): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
