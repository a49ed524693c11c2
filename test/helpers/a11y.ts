// The accessibility check of the page tests: axe-core run in the page as it stands, against the WCAG
// 2.1 A and AA rules and axe's best practices, failing with what a person can act on (rule, impact,
// the elements' selectors).
//
// The pages' CSP allows no script at all (default-src 'none', no script-src): a <script> tag
// (page.addScriptTag) would be refused. axe's source is evaluated through the DevTools protocol instead
// (page.evaluate), which the CSP does not govern. Most page tests run with JavaScript off, where axe's
// promise never settles (its work is scheduled through timers and message channels, which do not run):
// such a page's document, as it stands, is checked in a twin page with scripts on, which is served the
// same markup at the same URL (the stylesheet then loads from the service as it did for the page).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };

/**
 * The rule sets run: WCAG 2.0 and 2.1, levels A and AA (what "WCAG 2.1 AA" asks), and axe's best
 * practices, which hold what WCAG leaves to judgement but the pages keep: one main landmark and all
 * content in landmarks, one h1, headings that skip no level.
 */
export const AXE_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'];

interface Violation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: unknown[]; failureSummary?: string }[];
}

/** One line per rule broken, then each element it was broken on: readable in a test's failure. */
export function describeViolations(violations: Violation[]): string {
  return violations
    .map((v) => {
      const nodes = v.nodes.map((n) => {
        const why = (n.failureSummary ?? '').split('\n').slice(1).join(' ').trim();
        return `    ${n.target.map(String).join(' > ')}${why ? ` — ${why}` : ''}`;
      });
      return `  ${v.id} (${v.impact ?? 'no impact given'}): ${v.help}\n${nodes.join('\n')}`;
    })
    .join('\n');
}

/**
 * Rules that do not count inside one subtree of a page, each with why: only for markup that is not ours
 * (a library renders it) and cannot be changed from outside it. The rest of the page, and every other
 * rule inside the subtree, is checked. Never to pass markup of ours.
 */
export interface Exceptions {
  /** A CSS selector for the subtree the library renders. */
  within: string;
  rules: Record<string, string>;
}

/** The violations axe finds on the page as it stands (its document fully loaded). */
export async function a11yViolations(page: Page, exceptions?: Exceptions): Promise<Violation[]> {
  await page.waitForLoadState('load');
  if (!(await page.evaluate("matchMedia('(scripting: none)').matches"))) return runAxe(page, exceptions);
  const browser = page.context().browser();
  if (!browser) throw new Error('a11yViolations: the page has no browser to open its twin in');
  const html = await page.content();
  const url = page.url();
  const twin = await browser.newContext({ viewport: page.viewportSize() ?? DESKTOP });
  try {
    const copy = await twin.newPage();
    // A request's URL carries no #fragment: routed with one, the twin would load the page again from
    // the service (perhaps no longer the same markup) instead of this copy.
    await copy.route(url.split('#')[0] as string, (route) =>
      route.fulfill({ status: 200, contentType: 'text/html; charset=utf-8', body: html }),
    );
    await copy.goto(url, { waitUntil: 'load' });
    // Contrast and layout are judged with the page's own stylesheet: one that did not load in the twin
    // would have them judged on the browser's defaults.
    const unloaded = (await copy.evaluate(
      "[...document.querySelectorAll('link[rel=stylesheet]')].filter((l) => { try { return !l.sheet || l.sheet.cssRules.length === 0; } catch { return true; } }).map((l) => l.href)",
    )) as string[];
    if (unloaded.length > 0)
      throw new Error(
        `a11yViolations: in the twin page of ${url}, the stylesheet(s) ${unloaded.join(', ')} did not load`,
      );
    return await runAxe(copy, exceptions);
  } finally {
    await twin.close();
  }
}

type Found = Omit<Violation, 'nodes'> & { nodes: (Violation['nodes'][number] & { inside: boolean })[] };

async function runAxe(page: Page, exceptions: Exceptions | undefined): Promise<Violation[]> {
  const loaded = await page.evaluate('typeof window.axe === "object"');
  if (!loaded) await page.evaluate(AXE_SOURCE);
  const within = JSON.stringify(exceptions?.within ?? null);
  const found = (await page.evaluate(
    `axe.run(document, { runOnly: { type: 'tag', values: ${JSON.stringify(AXE_TAGS)} }, resultTypes: ['violations'], elementRef: true }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => ({ target: n.target, failureSummary: n.failureSummary, inside: ${within} !== null && n.element instanceof Element && n.element.closest(${within}) !== null })) })))`,
  )) as Found[];
  const excepted = new Set(Object.keys(exceptions?.rules ?? {}));
  return found
    .map((v) => ({
      ...v,
      nodes: v.nodes.filter((n) => !(excepted.has(v.id) && n.inside)).map(({ inside: _, ...n }) => n),
    }))
    .filter((v) => v.nodes.length > 0);
}

/**
 * Fails when axe finds a WCAG 2.1 A/AA violation on the page; `where` names the page and state in
 * the message (with the viewport's width, since a phone's layout is checked too).
 */
export async function assertAccessible(page: Page, where: string, exceptions?: Exceptions): Promise<void> {
  const violations = await a11yViolations(page, exceptions);
  if (violations.length === 0) return;
  const width = page.viewportSize()?.width;
  throw new Error(
    `accessibility: ${violations.length} WCAG 2.1 A/AA or best-practice rule(s) broken on ${where} (${width} px wide, ${page.url()}):\n${describeViolations(violations)}`,
  );
}

/**
 * assertAccessible at a desktop's width and then a phone's (a phone's layout hides, stacks and wraps
 * differently), leaving the page at the viewport it had.
 */
export async function assertAccessibleAtBothWidths(page: Page, where: string): Promise<void> {
  const had = page.viewportSize();
  try {
    for (const size of [DESKTOP, PHONE]) {
      await page.setViewportSize(size);
      await assertAccessible(page, where);
    }
  } finally {
    if (had) await page.setViewportSize(had);
  }
}
