/**
 * The operator console as a browser sees it, on the demo (`npm start`, in this process on free ports):
 * - the first load's size: the script and style the console's page names, as the cloud serves them, and
 *   their gzip and brotli sizes (what a compressing proxy in front would send);
 * - the time to a device page: a new browser context (empty cache, no cookie) opens the device's address,
 *   signs in on the form it shows, and waits until the device's state is shown; then the same page
 *   reloaded, signed in and with the assets cached. Median and p90 of RUNS runs each, in Debian's Chromium.
 *   npm run bench:console     (RUNS=10 by default)
 */
import { brotliCompressSync, gzipSync, constants as zlib } from "node:zlib";
import type { Browser } from "playwright-core";
import { launchBrowser } from "../test/support/browser.ts";
import { type ConsoleDemo, signInForm, startConsoleDemo } from "./console-demo.ts";
import { printRuntime } from "./runtime.ts";
import { timeBox } from "./time-box.ts";

const RUNS = Number(process.env.RUNS ?? 10);

const kb = (bytes: number) => (bytes / 1024).toFixed(1);

/** The script and style the console's HTML names, fetched as served. */
async function firstLoad(base: string): Promise<{ name: string; body: Buffer }[]> {
  const html = await (await fetch(`${base}/console/`)).text();
  const names = [...html.matchAll(/(?:src|href)="\/console\/assets\/([^"]+)"/g)].map((m) => m[1] as string);
  if (names.length === 0) throw new Error("the console's page names no script or style");
  return Promise.all(
    names.map(async (name) => {
      const res = await fetch(`${base}/console/assets/${name}`);
      if (!res.ok) throw new Error(`${name}: ${res.status}`);
      return { name, body: Buffer.from(await res.arrayBuffer()) };
    }),
  );
}

/** Each file compressed on its own, as a server sends them, and the sizes added up. */
async function printSizes(base: string): Promise<void> {
  const files = await firstLoad(base);
  const sum = (size: (b: Buffer) => number) => files.reduce((n, f) => n + size(f.body), 0);
  const raw = sum((b) => b.length);
  const gzip = sum((b) => gzipSync(b, { level: 9 }).length);
  const brotli = sum((b) => brotliCompressSync(b, { params: { [zlib.BROTLI_PARAM_QUALITY]: 11 } }).length);
  console.log(`console first load: ${files.map((f) => `${f.name} (${kb(f.body.length)} KB)`).join(", ")}`);
  console.log(
    `console first load js+css: ${kb(gzip)} KB gzip, ${kb(brotli)} KB brotli (${kb(raw)} KB as served)`,
  );
}

const percentile = (xs: number[], p: number) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
};

/** One cold open and one warm reload of the device page: milliseconds until its state is shown. */
async function timeDevicePage(browser: Browser, demo: ConsoleDemo): Promise<{ cold: number; warm: number }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  try {
    const page = await context.newPage();
    const state = page.getByTestId("device-state");
    const started = performance.now();
    await page.goto(`${demo.base}/console/devices/${demo.deviceId}`);
    await signInForm(page, demo.password);
    await state.waitFor();
    const cold = performance.now() - started;
    const reloaded = performance.now();
    await page.reload();
    await state.waitFor();
    return { cold, warm: performance.now() - reloaded };
  } finally {
    await context.close();
  }
}

printRuntime();
const box = timeBox("bench:console");
box.step("starting the demo");
const demo = await startConsoleDemo();
let browser: Browser | undefined;
try {
  await printSizes(demo.base);
  browser = await launchBrowser();
  // One run first, not counted: the cloud's and the browser's first requests pay for warming up.
  await timeDevicePage(browser, demo);
  const cold: number[] = [];
  const warm: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    box.step(`timing the device page, run ${i + 1}`);
    const t = await timeDevicePage(browser, demo);
    cold.push(t.cold);
    warm.push(t.warm);
  }
  const line = (xs: number[]) =>
    `p50 ${percentile(xs, 50).toFixed(0)} ms, p90 ${percentile(xs, 90).toFixed(0)} ms`;
  console.log(
    `time to device page ${line(cold)} (new context: deep link, sign-in form, state shown; ${RUNS} runs)`,
  );
  console.log(`device page reload ${line(warm)} (signed in, assets cached)`);
} finally {
  box.step("stopping");
  await browser?.close();
  await demo.stop();
}
box.finished();
