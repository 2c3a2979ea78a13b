import type { BrowserContext, Page } from "playwright-core";
import type { StaffRole } from "../../shared/domain/staff-roles.ts";
import { HOSTILE, KEYS } from "./console-keys-fixture.ts";
import type { ConsoleSeeds } from "./console-seeds.ts";
import { CONSOLE_PASSWORD } from "./console-site.ts";

/**
 * One view of the console as the quality checks open it (test/browser/console-quality.test.ts): who opens
 * it (null: nobody signed in), its address, what shows once it is drawn, and the action controls a phone
 * must reach. A new view appends its row to CONSOLE_VIEWS and is checked for accessibility, width and
 * screenshots with the others.
 */
export type ConsoleView = {
  /** A file name: its screenshot is test-results/console/<name>.png. */
  name: string;
  role: StaffRole | null;
  path: (s: ConsoleSeeds) => string;
  /** Waits for what the view shows once drawn (specific text, never a count or a sleep). */
  ready: (page: Page, s: ConsoleSeeds) => Promise<void>;
  /** Buttons (by name) a phone must be able to reach, scrolling if need be. */
  actions?: string[];
};

/** The Force unlock dialog of the device page, open: a view of its own for the checks. */
export async function openForceUnlock(page: Page): Promise<void> {
  await page.getByRole("button", { name: "Force unlock" }).click();
  await page.getByRole("dialog", { name: "Force unlock" }).getByLabel("Reason").waitFor();
}

const deviceReady = (page: Page) => page.getByRole("table", { name: "Timeline" }).waitFor();

/** Opens the action dialog behind the button `name` (titled the same) and waits for its field `field`. */
async function openDialog(page: Page, name: string, field: string): Promise<void> {
  await page.getByRole("button", { name, exact: true }).click();
  await page.getByRole("dialog", { name }).getByLabel(field).waitFor();
}

const riderReady = (page: Page) =>
  page.getByRole("row").filter({ hasText: "active" }).getByRole("link").first().waitFor();
const whitelistReady = (page: Page) =>
  page.getByTestId("sync-gw-a2").getByText("gw-a2: in sync at version 1").waitFor();
const accessListReady = (page: Page) =>
  page
    .getByRole("table", { name: "Invites" })
    .getByRole("row")
    .filter({ hasText: KEYS.invitedPhone })
    .waitFor();
const webhookReady = (page: Page) =>
  page.getByTestId("delivery").getByRole("cell", { name: "HTTP 200" }).first().waitFor();

export const CONSOLE_VIEWS: ConsoleView[] = [
  {
    name: "sign-in",
    role: null,
    path: () => "/console/",
    ready: (page) => page.getByRole("button", { name: "Sign in" }).waitFor(),
    actions: ["Sign in"],
  },
  {
    name: "locations",
    role: "operator",
    path: () => "/console/",
    ready: (page) => page.getByRole("link", { name: "#L1 Lockers one" }).waitFor(),
  },
  {
    name: "location",
    role: "operator",
    path: (s) => `/console/locations/${s.locationId}`,
    ready: (page) => page.getByRole("article", { name: "Gateway gw-a1" }).waitFor(),
    actions: ["Refresh"],
  },
  {
    name: "device",
    role: "operator",
    path: (s) => `/console/devices/${s.deviceId}`,
    ready: deviceReady,
    actions: ["Force unlock", "Force lock", "Force cancel booking", "Sync device"],
  },
  {
    name: "force-unlock-dialog",
    role: "operator",
    path: (s) => `/console/devices/${s.deviceId}`,
    ready: async (page) => {
      await deviceReady(page);
      await openForceUnlock(page);
    },
    actions: ["Confirm", "Cancel"],
  },
  {
    name: "alarms",
    role: "operator",
    path: () => "/console/alarms",
    ready: (page, s) => page.getByRole("link", { name: `Device ${s.alarmDevice}`, exact: true }).waitFor(),
    actions: ["Filter", "History", "Acknowledge", "Assign", "Clear"],
  },
  {
    name: "sessions",
    role: "operator",
    path: () => "/console/sessions",
    ready: (page, s) => page.getByRole("link", { name: s.sessionId.slice(0, 8) }).waitFor(),
    actions: ["Filter"],
  },
  {
    name: "session",
    role: "operator",
    path: (s) => `/console/sessions/${s.sessionId}`,
    ready: (page) => page.getByTestId("session-status").getByText("active").waitFor(),
    actions: ["End session"],
  },
  {
    name: "audit",
    role: "operator",
    path: () => "/console/audit",
    ready: (page) => page.getByRole("cell", { name: "command.force-lock" }).waitFor(),
  },
  {
    name: "riders",
    role: "operator",
    path: () => "/console/riders",
    ready: (page) => page.getByRole("heading", { name: "Riders" }).waitFor(),
    actions: ["Look up"],
  },
  {
    name: "rider",
    role: "operator",
    path: (s) => `/console/riders/${s.riderId}`,
    ready: riderReady,
    actions: ["Look up", "Revoke tokens"],
  },
  {
    name: "revoke-tokens-dialog",
    role: "operator",
    path: (s) => `/console/riders/${s.riderId}`,
    ready: async (page) => {
      await riderReady(page);
      await openDialog(page, "Revoke tokens", "Reason");
    },
    actions: ["Confirm", "Cancel"],
  },
  {
    name: "whitelists",
    role: "operator",
    path: () => "/console/whitelists",
    ready: (page) => page.getByRole("link", { name: "Staff cards" }).waitFor(),
  },
  {
    name: "whitelist",
    role: "operator",
    path: (s) => `/console/whitelists/${s.whitelistId}`,
    ready: whitelistReady,
    actions: ["Add card", "Refresh", `Remove card ${KEYS.cards.master}`],
  },
  {
    name: "add-card-dialog",
    role: "operator",
    path: (s) => `/console/whitelists/${s.whitelistId}`,
    ready: async (page) => {
      await whitelistReady(page);
      await openDialog(page, "Add card", "Card id");
    },
    actions: ["Confirm", "Cancel"],
  },
  {
    name: "access-lists",
    role: "operator",
    path: () => "/console/access-lists",
    ready: (page) => page.getByRole("link", { name: HOSTILE }).waitFor(),
  },
  {
    name: "access-list",
    role: "operator",
    path: (s) => `/console/access-lists/${s.accessListId}`,
    ready: accessListReady,
    actions: ["Add member", "Invite", `Remove member ${KEYS.riderA}`, `Revoke invite ${KEYS.invitedPhone}`],
  },
  {
    name: "invite-dialog",
    role: "operator",
    path: (s) => `/console/access-lists/${s.accessListId}`,
    ready: async (page) => {
      await accessListReady(page);
      await openDialog(page, "Invite", "Phone number");
    },
    actions: ["Confirm", "Cancel"],
  },
  {
    name: "webhooks",
    role: "operator",
    path: () => "/console/webhooks",
    ready: (page) => page.getByRole("link", { name: /\/hooks$/ }).waitFor(),
  },
  {
    name: "webhook",
    role: "operator",
    path: (s) => `/console/webhooks/${s.webhookId}`,
    ready: webhookReady,
    actions: ["Send test event", "Refresh"],
  },
  {
    name: "send-test-event-dialog",
    role: "operator",
    path: (s) => `/console/webhooks/${s.webhookId}`,
    ready: async (page) => {
      await webhookReady(page);
      await page.getByRole("button", { name: "Send test event" }).click();
      await page
        .getByRole("dialog", { name: "Send test event" })
        .getByRole("button", { name: "Confirm" })
        .waitFor();
    },
    actions: ["Confirm", "Cancel"],
  },
];

/** Signs `context` in as `<role>@a.example` (the console site's staff) through the sign-in form. */
export async function signIn(context: BrowserContext, base: string, role: StaffRole): Promise<void> {
  const page = await context.newPage();
  await page.goto(`${base}/console/`);
  await page.getByLabel("Email").fill(`${role}@a.example`);
  await page.getByLabel("Password").fill(CONSOLE_PASSWORD);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByText("Signed in as").waitFor();
  await page.close();
}

/** Opens `view` in `context` (signed in as its role already, or not at all for the sign-in page). */
export async function openView(
  context: BrowserContext,
  base: string,
  view: ConsoleView,
  seeds: ConsoleSeeds,
): Promise<Page> {
  const page = await context.newPage();
  await page.goto(`${base}${view.path(seeds)}`);
  await view.ready(page, seeds);
  return page;
}
