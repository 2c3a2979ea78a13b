/**
 * The daemon's end of the control socket (protocol in control-api.ts): a unix socket speaking JSON lines.
 * Each line is one request; each answer carries the request's id, so a client may pipeline several
 * requests on one connection and answers may come back in any order. Who may connect is decided by the
 * socket's permissions (0660, the daemon's group) inside its runtime directory.
 */
import { chmod, lstat, mkdir, unlink } from "node:fs/promises";
import { createConnection, createServer, type Server, type Socket } from "node:net";
import { dirname } from "node:path";
import * as z from "zod/mini";
import "../../shared/wire/zod-english.ts";
import { CONTROL_ERROR, CONTROL_METHODS, type ControlApi } from "./control-api.ts";

// The codes live with the protocol, which parkctl imports without the server's zod schemas.
export { CONTROL_ERROR };

/** Throw this from a ControlApi method to answer with a specific error code. */
export class ControlError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = "ControlError";
  }
}

export type ControlRequest = { id: number | string; method: string; params?: Record<string, unknown> };
export type ControlAnswer =
  | { id: number | string | null; result: unknown }
  | { id: number | string | null; error: { code: string; message: string } };

/** A pino logger fits this shape. */
export type ControlLog = {
  debug(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
};

export type ControlServer = { readonly path: string; close(): Promise<void> };

/** Longest request line accepted; longer input closes the connection (no unbounded buffering). */
const MAX_LINE_BYTES = 64 * 1024;

const Alias = z.string().check(z.minLength(1), z.maxLength(200));
const Who = z.string().check(z.minLength(1), z.maxLength(200));
const ParamSchemas = {
  status: z.object({}),
  devices: z.object({}),
  device: z.object({ alias: Alias }),
  actuate: z.object({
    alias: Alias,
    action: z.enum(["lock", "unlock"]),
    who: Who,
    why: z.string().check(z.minLength(1), z.maxLength(1000)),
  }),
  testCycle: z.object({ alias: Alias, who: Who }),
  outbox: z.object({}),
  keys: z.object({ card: z.string().check(z.minLength(1), z.maxLength(64)) }),
  probeSerial: z.object({}),
  doctor: z.object({}),
} satisfies Record<(typeof CONTROL_METHODS)[number], z.ZodMiniType>;

const Request = z.object({
  id: z.union([z.number(), z.string().check(z.maxLength(100))]),
  method: z.string().check(z.maxLength(100)),
  params: z.optional(z.record(z.string(), z.unknown())),
});

type Method = (typeof CONTROL_METHODS)[number];
const isMethod = (m: string): m is Method => (CONTROL_METHODS as readonly string[]).includes(m);

/** Runs one request against the api; never throws. Exported for tests of the dispatch alone. */
export async function dispatch(api: ControlApi, line: string): Promise<ControlAnswer> {
  let raw: unknown;
  try {
    raw = JSON.parse(line);
  } catch {
    return errorAnswer(null, CONTROL_ERROR.badRequest, "request is not valid JSON");
  }
  const req = Request.safeParse(raw);
  if (!req.success) {
    const id = idOf(raw);
    return errorAnswer(id, CONTROL_ERROR.badRequest, "request needs an id (number or string) and a method");
  }
  const { id, method } = req.data;
  if (!isMethod(method)) return errorAnswer(id, CONTROL_ERROR.unknownMethod, `unknown method: ${method}`);
  const params = ParamSchemas[method].safeParse(req.data.params ?? {});
  if (!params.success) {
    const problems = params.error.issues.map((i) => `params.${i.path.join(".")}: ${i.message}`);
    return errorAnswer(id, CONTROL_ERROR.badRequest, problems.join("; "));
  }
  try {
    return { id, result: await call(api, method, params.data as Record<string, string>) };
  } catch (err) {
    const own = err instanceof Error ? (err as Error & { code?: unknown }).code : undefined;
    const code = typeof own === "string" ? own : CONTROL_ERROR.failed;
    return errorAnswer(id, /^[a-z][a-z0-9_]*$/.test(code) ? code : CONTROL_ERROR.failed, messageOf(err));
  }
}

function call(api: ControlApi, method: Method, p: Record<string, string>): Promise<unknown> {
  switch (method) {
    case "status":
      return api.status();
    case "devices":
      return api.devices();
    case "device":
      return api.device(p.alias as string);
    case "actuate":
      return api.actuate(p.alias as string, p.action as "lock" | "unlock", p.who as string, p.why as string);
    case "testCycle":
      return api.testCycle(p.alias as string, p.who as string);
    case "outbox":
      return api.outbox();
    case "keys":
      return api.keys(p.card as string);
    case "probeSerial":
      return api.probeSerial();
    case "doctor":
      return api.doctor();
  }
}

function errorAnswer(id: number | string | null, code: string, message: string): ControlAnswer {
  return { id, error: { code, message } };
}

function idOf(raw: unknown): number | string | null {
  if (raw && typeof raw === "object" && "id" in raw) {
    const id = (raw as { id: unknown }).id;
    if (typeof id === "number" || (typeof id === "string" && id.length <= 100)) return id;
  }
  return null;
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Listens on `path`. A socket file left behind by a crashed daemon is removed first; a socket another
 * live process still answers on, or a path that is not a socket, is refused (never deleted).
 */
export async function startControlServer(opts: {
  path: string;
  api: ControlApi;
  log: ControlLog;
}): Promise<ControlServer> {
  const { path, api, log } = opts;
  await mkdir(dirname(path), { recursive: true });
  await removeStaleSocket(path);
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    serveConnection(socket, api, log);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(path, () => {
      server.off("error", reject);
      resolve();
    });
  });
  server.on("error", (err) => log.warn({ err, path }, "control socket error"));
  await chmod(path, 0o660);
  return {
    path,
    close: () => closeServer(server, sockets),
  };
}

function serveConnection(socket: Socket, api: ControlApi, log: ControlLog): void {
  let buffered = "";
  socket.setEncoding("utf8");
  socket.on("error", (err) => log.debug({ err }, "control connection error"));
  const answer = (a: ControlAnswer) => {
    if (socket.writable) socket.write(`${JSON.stringify(a)}\n`);
  };
  socket.on("data", (chunk: string) => {
    buffered += chunk;
    let nl = buffered.indexOf("\n");
    while (nl >= 0) {
      const line = buffered.slice(0, nl).replace(/\r$/, "");
      buffered = buffered.slice(nl + 1);
      if (line.trim() !== "") void dispatch(api, line).then(answer);
      nl = buffered.indexOf("\n");
    }
    if (Buffer.byteLength(buffered) > MAX_LINE_BYTES) {
      answer(errorAnswer(null, CONTROL_ERROR.badRequest, `request line longer than ${MAX_LINE_BYTES} bytes`));
      socket.end();
      buffered = "";
    }
  });
}

async function removeStaleSocket(path: string): Promise<void> {
  let st: Awaited<ReturnType<typeof lstat>>;
  try {
    st = await lstat(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return;
    throw err;
  }
  if (!st.isSocket())
    throw new Error(`control socket path ${path} exists and is not a socket; refusing to remove it`);
  if (await answers(path)) throw new Error(`control socket ${path} is in use by another running daemon`);
  await unlink(path);
}

/** True when some process accepts connections on the socket. */
function answers(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createConnection(path);
    probe.once("connect", () => {
      probe.destroy();
      resolve(true);
    });
    probe.once("error", () => resolve(false));
  });
}

function closeServer(server: Server, sockets: Set<Socket>): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    for (const s of sockets) s.destroy();
  });
}
