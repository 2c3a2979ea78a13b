/**
 * The README's pictures of the operator console, taken from the demo in Debian's Chromium:
 *   npm run screenshots      (writes docs/images/console-*.png)
 * The demo runs in this process on free ports with its data in a temporary directory; the device page is
 * shown after a Force lock made through the console, so its timeline has something in it.
 */
import { mkdirSync, statSync } from "node:fs";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { type ConsoleDemo, signInForm, startConsoleDemo } from "../bench/console-demo.ts";
import { launchBrowser } from "../test/support/browser.ts";

const OUT = path.resolve(import.meta.dirname, "../docs/images");
const DESKTOP = { width: 1100, height: 760 };
const PHONE = { width: 390, height: 844 };
/** A README picture bigger than this is a sign the page or the viewport grew: say so. */
const MAX_BYTES = 150 * 1024;

async function shot(page: Page, name: string): Promise<void> {
  const file = path.join(OUT, `console-${name}.png`);
  await page.screenshot({ path: file });
  const size = statSync(file).size;
  console.log(`${path.relative(process.cwd(), file)}  ${(size / 1024).toFixed(0)} KB`);
  if (size > MAX_BYTES) throw new Error(`${file} is ${size} bytes, over ${MAX_BYTES}`);
}

async function signedIn(browser: Browser, demo: ConsoleDemo, viewport: typeof DESKTOP, at: string) {
  const page = await browser.newPage({ viewport, colorScheme: "light" });
  await page.goto(`${demo.base}${at}`);
  await signInForm(page, demo.password);
  return page;
}

async function take(browser: Browser, demo: ConsoleDemo): Promise<void> {
  const grid = `/console/locations/${demo.locationId}`;
  const desk = await signedIn(browser, demo, DESKTOP, grid);
  // The location online: its gateway's first heartbeat has come.
  await desk.locator("main .conn-online").waitFor({ timeout: 15_000 });
  await shot(desk, "location");

  await desk.goto(`${demo.base}/console/devices/${demo.deviceId}`);
  await desk.getByRole("button", { name: "Force lock" }).click();
  await desk.getByRole("dialog", { name: "Force lock" }).getByRole("button", { name: "Confirm" }).click();
  await desk.getByTestId("command-status").getByText("SUCCESS").waitFor({ timeout: 15_000 });
  await desk.getByTestId("device-state").getByText("LOCKED").waitFor();
  await shot(desk, "device");

  const phone = await signedIn(browser, demo, PHONE, grid);
  await phone.getByRole("list", { name: "Devices" }).waitFor();
  await shot(phone, "location-phone");
}

mkdirSync(OUT, { recursive: true });
const demo = await startConsoleDemo();
const browser = await launchBrowser();
try {
  await take(browser, demo);
} finally {
  await browser.close();
  await demo.stop();
}
