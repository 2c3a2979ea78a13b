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

type Run = { form: number; signIn: number; state: number; cold: number; warm: number };

/** One cold open (its phases: the sign-in form shown, signed in, the state shown) and one warm reload, in ms. */
async function timeDevicePage(browser: Browser, demo: ConsoleDemo): Promise<Run> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  try {
    const page = await context.newPage();
    const state = page.getByTestId("device-state");
    const t0 = performance.now();
    await page.goto(`${demo.base}/console/devices/${demo.deviceId}`);
    await page.getByRole("button", { name: "Sign in" }).waitFor();
    const t1 = performance.now();
    await signInForm(page, demo.password);
    const t2 = performance.now();
    await state.waitFor();
    const t3 = performance.now();
    await page.reload();
    await state.waitFor();
    const warm = performance.now() - t3;
    return { form: t1 - t0, signIn: t2 - t1, state: t3 - t2, cold: t3 - t0, warm };
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
  const runs: Run[] = [];
  for (let i = 0; i < RUNS; i++) {
    box.step(`timing the device page, run ${i + 1}`);
    runs.push(await timeDevicePage(browser, demo));
  }
  const of = (k: keyof Run, p: number) =>
    percentile(
      runs.map((r) => r[k]),
      p,
    ).toFixed(0);
  const line = (k: keyof Run) => `p50 ${of(k, 50)} ms, p90 ${of(k, 90)} ms`;
  console.log(
    `time to device page ${line("cold")} (new context: deep link, sign-in form, state shown; ${RUNS} runs)`,
  );
  console.log(
    `  of which: sign-in form shown p50 ${of("form", 50)} ms, signed in p50 ${of("signIn", 50)} ms, state shown p50 ${of("state", 50)} ms`,
  );
  console.log(`device page reload ${line("warm")} (signed in, assets cached)`);
} finally {
  box.step("stopping");
  await browser?.close();
  await demo.stop();
}
box.finished();
