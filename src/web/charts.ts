// Small server-rendered SVG charts for the dashboard's Insights page: pure functions from numbers to
// markup (every label escaped by `html`), styled by classes in couvert.css (no inline style, so the
// CSP needs no 'unsafe-inline'). Each chart is an <svg role="img"> with a <title> and <desc>; the page
// puts the same numbers in a table beside it. Geometry is in the viewBox's units; the SVG scales to
// its column.
import { type Html, html, raw } from './html';

export const CHART_WIDTH = 360;

/** The smallest 1, 2 or 5 × 10^k at or above `max` (1 for max ≤ 0): the top of an axis. */
export function niceMax(max: number): number {
  if (!(max > 0)) return 1;
  const p = 10 ** Math.floor(Math.log10(max));
  for (const m of [1, 2, 5, 10]) if (m * p >= max - 1e-9) return m * p;
  return 10 * p;
}

/** Evenly spaced ticks from 0 to niceMax(max) inclusive (`count` intervals, fewer when they would not be whole). */
export function ticks(max: number, count = 4): number[] {
  const top = niceMax(max);
  let n = count;
  // Whole-number axes (counts) get whole ticks.
  if (top >= 1 && Number.isInteger(top)) while (n > 1 && top % n !== 0) n--;
  return Array.from({ length: n + 1 }, (_, i) => (top * i) / n);
}

/** A linear map from [d0, d1] to [r0, r1]. */
export function linear(d0: number, d1: number, r0: number, r1: number): (v: number) => number {
  const k = d1 === d0 ? 0 : (r1 - r0) / (d1 - d0);
  return (v) => r0 + (v - d0) * k;
}

/** `n` bands over [x0, x1], `gap` a fraction of a band left empty between them: each band's x and width. */
export function bands(n: number, x0: number, x1: number, gap = 0.2): { x: number; width: number }[] {
  if (n <= 0) return [];
  const step = (x1 - x0) / n;
  const width = step * (1 - gap);
  return Array.from({ length: n }, (_, i) => ({ x: x0 + i * step + (step - width) / 2, width }));
}

/** Which of `n` labels to print on an axis so at most `max` show (always the first and the last). */
export function labelEvery(n: number, max: number): (i: number) => boolean {
  const every = Math.max(1, Math.ceil(n / Math.max(1, max)));
  return (i) => i === n - 1 || (i % every === 0 && n - 1 - i >= every / 2);
}

const r = (v: number) => Math.round(v * 10) / 10;

export interface Series {
  key: string;
  label: string;
  /** CSS class of its marks (couvert.css: .s-… ). */
  cls: string;
}

function frame(id: string, title: string, desc: string, height: number, body: Html): Html {
  return html`<svg class="chart" viewBox="0 0 ${CHART_WIDTH} ${height}" role="img" aria-labelledby="${id}-t ${id}-d" preserveAspectRatio="xMidYMid meet">
<title id="${id}-t">${title}</title>
<desc id="${id}-d">${desc}</desc>
${body}
</svg>`;
}

/** A legend (HTML, so it wraps on a phone). */
export function legend(series: readonly Series[]): Html {
  return html`<ul class="legend">${series.map((s) => html`<li><span class="swatch ${s.cls}" aria-hidden="true"></span>${s.label}</li>`)}</ul>`;
}

const PAD = { top: 10, right: 8, bottom: 24, left: 36 };

function yAxis(tickValues: number[], y: (v: number) => number, format: (v: number) => string): Html {
  return html`${tickValues.map(
    (
      t,
    ) => html`<line class="grid" x1="${PAD.left}" x2="${CHART_WIDTH - PAD.right}" y1="${r(y(t))}" y2="${r(y(t))}"></line>
<text class="tick" x="${PAD.left - 4}" y="${r(y(t) + 4)}" text-anchor="end">${format(t)}</text>`,
  )}`;
}

function xLabels(labels: readonly string[], at: { x: number; width: number }[], y: number): Html {
  const show = labelEvery(labels.length, 7);
  return html`${labels.map((l, i) =>
    show(i)
      ? html`<text class="tick" x="${r((at[i] as { x: number; width: number }).x + (at[i] as { width: number }).width / 2)}" y="${y}" text-anchor="middle">${l}</text>`
      : '',
  )}`;
}

/**
 * Stacked columns: one column per label, one segment per series (values[i][s]), a y axis of counts.
 * Each segment carries a <title> (its label and value) for a pointer's tooltip.
 */
export function stackedColumns(o: {
  id: string;
  title: string;
  desc: string;
  labels: readonly string[];
  series: readonly Series[];
  values: readonly (readonly number[])[];
  height?: number;
}): Html {
  const height = o.height ?? 200;
  const totals = o.values.map((v) => v.reduce((a, b) => a + b, 0));
  const tv = ticks(Math.max(0, ...totals));
  const y = linear(0, tv[tv.length - 1] as number, height - PAD.bottom, PAD.top);
  const at = bands(o.labels.length, PAD.left, CHART_WIDTH - PAD.right, o.labels.length > 40 ? 0.1 : 0.25);
  const cols = o.labels.map((label, i) => {
    let base = 0;
    const band = at[i] as { x: number; width: number };
    return o.series.map((s, k) => {
      const v = o.values[i]?.[k] ?? 0;
      if (v <= 0) return '';
      const y0 = y(base);
      base += v;
      const y1 = y(base);
      return html`<rect class="${s.cls}" x="${r(band.x)}" y="${r(y1)}" width="${r(band.width)}" height="${r(y0 - y1)}"><title>${label}: ${s.label} ${v}</title></rect>`;
    });
  });
  return frame(
    o.id,
    o.title,
    o.desc,
    height,
    html`${yAxis(tv, y, (t) => String(t))}${cols}<line class="axis" x1="${PAD.left}" x2="${CHART_WIDTH - PAD.right}" y1="${height - PAD.bottom}" y2="${height - PAD.bottom}"></line>${xLabels(o.labels, at, height - 8)}`,
  );
}

/** Columns of a rate (0–1) per label; null is a gap (no data that day). The axis reads in percent. */
export function rateColumns(o: {
  id: string;
  title: string;
  desc: string;
  labels: readonly string[];
  values: readonly (number | null)[];
  cls?: string;
  height?: number;
}): Html {
  const height = o.height ?? 170;
  const max = Math.max(0, ...o.values.map((v) => v ?? 0));
  const top = Math.min(1, niceMax(Math.max(max, 0.05) * 100) / 100);
  const tv = ticks(top * 100).map((t) => t / 100);
  const y = linear(0, top, height - PAD.bottom, PAD.top);
  const at = bands(o.labels.length, PAD.left, CHART_WIDTH - PAD.right, o.labels.length > 40 ? 0.1 : 0.25);
  const cols = o.values.map((v, i) => {
    if (v === null) return '';
    const band = at[i] as { x: number; width: number };
    const y1 = y(Math.min(v, top));
    return html`<rect class="${o.cls ?? 's-no-show'}" x="${r(band.x)}" y="${r(y1)}" width="${r(band.width)}" height="${r(height - PAD.bottom - y1)}"><title>${o.labels[i]}: ${percent(v)}</title></rect>`;
  });
  return frame(
    o.id,
    o.title,
    o.desc,
    height,
    html`${yAxis(tv, y, (t) => percent(t, 0))}${cols}<line class="axis" x1="${PAD.left}" x2="${CHART_WIDTH - PAD.right}" y1="${height - PAD.bottom}" y2="${height - PAD.bottom}"></line>${xLabels(o.labels, at, height - 8)}`,
  );
}

export interface BarItem {
  label: string;
  value: number;
  /** What is printed at the bar's end (the value and its share, say). */
  text: string;
  cls?: string;
}

/**
 * Horizontal bars, one row per item, lengths proportional to `value` against `max` (default: the
 * largest value); labels above each bar so long names fit on a phone.
 */
export function barRows(o: {
  id: string;
  title: string;
  desc: string;
  items: readonly BarItem[];
  max?: number;
}): Html {
  const row = 34;
  const height = Math.max(row, o.items.length * row) + 4;
  const max = o.max ?? Math.max(0, ...o.items.map((i) => i.value));
  const x = linear(0, max > 0 ? max : 1, 0, CHART_WIDTH - 110);
  const rows = o.items.map((it, i) => {
    const top = i * row + 4;
    const w = Math.max(it.value > 0 ? 1.5 : 0, x(it.value));
    return html`<text class="label" x="0" y="${top + 9}">${it.label}</text>
<rect class="track" x="0" y="${top + 14}" width="${CHART_WIDTH - 110}" height="12" rx="2"></rect>
<rect class="${it.cls ?? 's-bar'}" x="0" y="${top + 14}" width="${r(w)}" height="12" rx="2"><title>${it.label}: ${it.text}</title></rect>
<text class="value" x="${CHART_WIDTH - 104}" y="${top + 24}">${it.text}</text>`;
  });
  return frame(o.id, o.title, o.desc, height, html`${rows}`);
}

/** 0.1234 → "12.3%" (digits after the point: 1 by default). */
export function percent(v: number | null, digits = 1): string {
  if (v === null || !Number.isFinite(v)) return '—';
  const s = (v * 100).toFixed(digits);
  return `${digits > 0 ? s.replace(/\.0+$/, '') : s}%`;
}

/**
 * A data table: the numbers of a chart, for screen readers and for whoever wants them exact. Its box
 * scrolls (wide on a phone, 90 rows tall), so it is a named region that takes the keyboard's focus:
 * without a focusable element inside, a keyboard could not scroll it.
 */
export function dataTable(
  caption: string,
  headers: readonly string[],
  rows: readonly (readonly (string | number)[])[],
): Html {
  return html`<details class="chart-data"><summary>${caption}: the numbers</summary>
<div class="table-scroll" tabindex="0" role="region" aria-label="${caption}: the numbers"><table><thead><tr>${headers.map((h, i) => html`<th scope="col"${i > 0 ? raw(' class="num"') : ''}>${h}</th>`)}</tr></thead>
<tbody>${rows.map((row) => html`<tr>${row.map((c, i) => (i === 0 ? html`<th scope="row">${c}</th>` : html`<td class="num">${c}</td>`))}</tr>`)}</tbody></table></div>
</details>`;
}
