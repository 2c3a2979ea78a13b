import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";

/**
 * systemd's side of sd_notify(3) for a test: an AF_UNIX datagram socket that keeps every assignment the
 * daemon sends, with when it came. Node has no unix datagram sockets, so the receiver is a few lines of
 * the system's Python; it closes the fd systemd-notify passes with BARRIER=1 at once, as the manager
 * does, so the daemon's sender never waits on it (socat keeps the first one open and stalls it).
 */
const RECEIVER = `
import array, os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); s.bind(sys.argv[1])
print("LISTENING", flush=True)
while True:
    msg, anc, _, _ = s.recvmsg(4096, socket.CMSG_SPACE(64))
    for lvl, typ, data in anc:
        if lvl == socket.SOL_SOCKET and typ == socket.SCM_RIGHTS:
            fds = array.array("i"); fds.frombytes(data[: len(data) - len(data) % fds.itemsize])
            for fd in fds: os.close(fd)
    for line in msg.decode(errors="replace").split("\\n"):
        if line: print(line, flush=True)
`;

export type NotifyMessage = { line: string; at: number };

export type NotifySocket = {
  readonly path: string;
  readonly messages: readonly NotifyMessage[];
  /** How many `KEY=value` lines equal `line` (e.g. "READY=1") came so far. */
  count(line: string): number;
  /** When the last `line` came (Date.now()), or null. */
  last(line: string): number | null;
  /** Resolves the moment the next `line` comes (read as it arrives, not polled). */
  next(line: string): Promise<void>;
  close(): void;
};

export async function startNotifySocket(): Promise<NotifySocket> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "notify-"));
  const sock = path.join(dir, "notify.sock");
  const child: ChildProcess = spawn("/usr/bin/python3", ["-c", RECEIVER, sock], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const messages: NotifyMessage[] = [];
  const waiting: { line: string; resolve: () => void }[] = [];
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  await new Promise<void>((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`notify receiver exited (${code})`)));
    lines.on("line", (line) => {
      if (line === "LISTENING") return resolve();
      messages.push({ line, at: Date.now() });
      for (const w of waiting.filter((w) => w.line === line)) {
        waiting.splice(waiting.indexOf(w), 1);
        w.resolve();
      }
    });
  });
  return {
    path: sock,
    messages,
    count: (line) => messages.filter((m) => m.line === line).length,
    last: (line) => messages.findLast((m) => m.line === line)?.at ?? null,
    next: (line) => new Promise<void>((resolve) => waiting.push({ line, resolve })),
    close() {
      child.kill("SIGKILL");
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
