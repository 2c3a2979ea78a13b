/** One server-sent event as a client reads it: its name (`message` when none) and its data, parsed. */
export type SseEvent = { event: string; data: unknown };

export type SseStream = {
  status: number;
  /** Every event read so far, oldest first. */
  events: SseEvent[];
  /** The first event (read already or still to come) that `matches`, or a rejection after `timeoutMs`. */
  next(matches: (e: SseEvent) => boolean, timeoutMs?: number): Promise<SseEvent>;
  /** Resolves when the server ends the stream. */
  ended: Promise<void>;
  close(): void;
};

/** Splits a text/event-stream into events (the WHATWG parsing rules, enough for one-line JSON data). */
function parser(onEvent: (e: SseEvent) => void) {
  let buffer = "";
  let event = "";
  let data: string[] = [];
  return (chunk: string) => {
    buffer += chunk;
    let nl = buffer.search(/\r\n|\n|\r/);
    while (nl >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + (buffer.startsWith("\r\n", nl) ? 2 : 1));
      if (line === "") {
        if (data.length > 0) onEvent({ event: event || "message", data: JSON.parse(data.join("\n")) });
        event = "";
        data = [];
      } else if (!line.startsWith(":")) {
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
        if (field === "event") event = value;
        else if (field === "data") data.push(value);
      }
      nl = buffer.search(/\r\n|\n|\r/);
    }
  };
}

/** Opens `url` with fetch and reads its events as they come (no sleeps: `next` waits for one). */
export async function openSse(url: string, headers: Record<string, string> = {}): Promise<SseStream> {
  const abort = new AbortController();
  const res = await fetch(url, {
    headers: { accept: "text/event-stream", ...headers },
    signal: abort.signal,
  });
  const events: SseEvent[] = [];
  const waiters = new Set<{ matches: (e: SseEvent) => boolean; resolve: (e: SseEvent) => void }>();
  const feed = parser((e) => {
    events.push(e);
    for (const w of waiters)
      if (w.matches(e)) {
        waiters.delete(w);
        w.resolve(e);
      }
  });
  const ended = (async () => {
    if (!res.body || !res.headers.get("content-type")?.startsWith("text/event-stream")) return;
    const decoder = new TextDecoder();
    try {
      for await (const chunk of res.body) feed(decoder.decode(chunk as Uint8Array, { stream: true }));
    } catch {
      // closed by us
    }
  })();
  return {
    status: res.status,
    events,
    ended,
    next(matches, timeoutMs = 5_000) {
      const seen = events.find(matches);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const w = { matches, resolve };
        waiters.add(w);
        setTimeout(() => {
          if (!waiters.delete(w)) return;
          reject(new Error(`no matching event within ${timeoutMs} ms; got ${JSON.stringify(events)}`));
        }, timeoutMs).unref();
      });
    },
    close: () => abort.abort(),
  };
}
