import net from "node:net";

export type RawResponse = {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
  json(): unknown;
  /** From connecting until the server closed the connection. */
  elapsedMs: number;
};

/**
 * Talks HTTP/1.1 by hand over a fresh TCP connection, for what app.inject cannot send (malformed
 * header lines, oversized headers, a body that stalls), and reads until the server closes the
 * connection. `talk` writes to the socket; it may keep writing (a trickle) until the socket closes.
 */
export function rawExchange(
  port: number,
  talk: (socket: net.Socket) => void,
  opts: { giveUpMs?: number } = {},
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const socket = net.connect(port, "127.0.0.1");
    const chunks: Buffer[] = [];
    const giveUp = setTimeout(() => {
      socket.destroy();
      reject(new Error(`the server did not close the connection within ${opts.giveUpMs ?? 4_000} ms`));
    }, opts.giveUpMs ?? 4_000);
    socket.on("connect", () => talk(socket));
    socket.on("data", (d) => chunks.push(d));
    // The server may close while a trickle is still writing; what it answered is what counts.
    socket.on("error", () => {});
    socket.on("close", () => {
      clearTimeout(giveUp);
      let raw = Buffer.concat(chunks).toString("utf8");
      // An interim answer (100 Continue to `Expect: 100-continue`) comes before the real one.
      while (/^HTTP\/1\.[01] 1\d\d /.test(raw) && raw.includes("\r\n\r\n")) {
        raw = raw.slice(raw.indexOf("\r\n\r\n") + 4);
      }
      const split = raw.indexOf("\r\n\r\n");
      if (split < 0) return reject(new Error(`no HTTP response: ${JSON.stringify(raw)}`));
      const [statusLine = "", ...lines] = raw.slice(0, split).split("\r\n");
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(":");
        headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      const body = raw.slice(split + 4);
      resolve({
        statusCode: Number(statusLine.split(" ")[1]),
        headers,
        body,
        json: () => JSON.parse(body),
        elapsedMs: performance.now() - started,
      });
    });
  });
}
