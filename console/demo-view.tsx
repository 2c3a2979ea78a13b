import { useEffect, useState } from "preact/hooks";
import type {
  DemoAction,
  DemoCard,
  DemoDevice,
  DemoLocation,
  DemoPanel,
} from "../shared/api/console-demo.ts";
import { Alert } from "./alert.tsx";
import { getDemoPanel, playDemo } from "./demo-api.ts";
import type { ViewProps } from "./view-props.ts";

/** What the panel shows after an act: the stdin console's words, or why it was refused. */
type Outcome = { ok: boolean; text: string };
type Play = (action: DemoAction) => void;
/** An act on one device, before the device is named (each kind of act keeps its own fields). */
type ActOn<T = DemoAction> = T extends unknown ? Omit<T, "location_id" | "device"> : never;

/** The gateway's answer to an act (a tap unlocks a door, a latch moves) takes a moment: read again then. */
const SETTLE_MS = 1500;

/**
 * The demo hardware panel (`npm start` only): each location's simulated devices as the simulator holds them,
 * and buttons that play the hardware as the stdin console does — a card at a reader, a door pushed, a latch
 * turned by hand, a tamper switch. A viewer sees the drawing without the buttons.
 */
export function DemoView({ staff }: ViewProps) {
  const [panel, setPanel] = useState<DemoPanel | null | undefined>(undefined);
  const [error, setError] = useState<string | null>(null);
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const [loads, setLoads] = useState(0);
  const mayAct = staff.role !== "viewer";

  useEffect(() => {
    let current = true;
    getDemoPanel().then(
      (p) => {
        if (!current) return;
        setPanel(p);
        setError(null);
      },
      (err: unknown) => current && setError(err instanceof Error ? err.message : String(err)),
    );
    return () => {
      current = false;
    };
  }, [loads]);

  const play: Play = (action) => {
    playDemo(action).then(
      (text) => setOutcome({ ok: true, text }),
      (err: unknown) => setOutcome({ ok: false, text: err instanceof Error ? err.message : String(err) }),
    );
    // Read the simulator now and once the gateway has answered (the reads are cheap and in-process).
    setTimeout(() => setLoads((n) => n + 1), 300);
    setTimeout(() => setLoads((n) => n + 1), SETTLE_MS);
  };

  if (error && !panel)
    return (
      <section>
        <h1>Demo hardware</h1>
        <Alert error={error} />
      </section>
    );
  if (panel === undefined) return <p aria-busy="true">Loading…</p>;
  return (
    <section>
      <h1>Demo hardware</h1>
      {panel === null ? (
        <p>The demo hardware panel runs only with the demo (npm start); this cloud simulates no hardware.</p>
      ) : (
        <>
          <p>
            The simulated site of each location, as the simulator holds it.{" "}
            {mayAct ? "Each button does what a person does at the site." : "A viewer looks, without acting."}{" "}
            <button type="button" onClick={() => setLoads((n) => n + 1)}>
              Refresh
            </button>
          </p>
          <p role="status" class={outcome && !outcome.ok ? "error" : undefined}>
            {outcome?.text ?? ""}
          </p>
          {panel.locations.length === 0 && (
            <p>No simulated location yet: the demo's gateways are starting.</p>
          )}
          {panel.locations.map((l) => (
            <Site key={l.id} l={l} play={mayAct ? play : null} />
          ))}
        </>
      )}
    </section>
  );
}

function Site({ l, play }: { l: DemoLocation; play: Play | null }) {
  return (
    <section class="demo-site" aria-label={`Location ${l.code}`}>
      <h2>
        {l.code} <small>{l.label}</small>
      </h2>
      <ul class="grid" aria-label={`Devices of ${l.code}`}>
        {l.devices.map((d) => (
          <Device key={`${d.gateway_id}/${d.alias}`} l={l} d={d} play={play} />
        ))}
      </ul>
    </section>
  );
}

const onOff = (v: boolean | null, on: string, off: string) => (v === null ? "—" : v ? on : off);

function Device({ l, d, play }: { l: DemoLocation; d: DemoDevice; play: Play | null }) {
  const at = `${l.code} ${d.alias}`;
  const act = (a: ActOn) => play?.({ ...a, location_id: l.id, device: d.alias });
  return (
    <li class="tile" aria-label={`Device ${at}`}>
      <strong>{d.alias}</strong> <small>{d.type}</small>
      {!d.simulated && <p>Not simulated here: its gateway runs elsewhere.</p>}
      <dl>
        <dt>Latch</dt>
        <dd>{d.latch ?? "—"}</dd>
        <dt>Door</dt>
        <dd>{onOff(d.door_open, "open", "closed")}</dd>
        <dt>Tamper</dt>
        <dd>{onOff(d.tamper, "tripped", "at rest")}</dd>
        {d.reader && (
          <>
            <dt>Reader</dt>
            <dd>RFID</dd>
          </>
        )}
      </dl>
      {play && d.simulated && d.latch !== null && (
        <div class="actions">
          {d.door_open ? (
            <Button at={at} text="Close door" onClick={() => act({ action: "close" })} />
          ) : (
            <Button at={at} text="Open door" onClick={() => act({ action: "open" })} />
          )}
          <Button
            at={at}
            text={d.latch === "locked" ? "Turn latch to unlocked" : "Turn latch to locked"}
            onClick={() => act({ action: "turn", latch: d.latch === "locked" ? "unlocked" : "locked" })}
          />
          {d.tamper ? (
            <Button at={at} text="Reset tamper" onClick={() => act({ action: "untamper" })} />
          ) : (
            <Button at={at} text="Trip tamper" onClick={() => act({ action: "tamper" })} />
          )}
        </div>
      )}
      {play && d.simulated && d.reader && (
        <Cards at={at} cards={l.cards} tap={(card) => act({ action: "tap", card })} />
      )}
    </li>
  );
}

function Cards({ at, cards, tap }: { at: string; cards: DemoCard[]; tap: (card: number) => void }) {
  return (
    <fieldset class="actions demo-cards">
      <legend>Cards at the reader</legend>
      {cards.map((c) => (
        <Button
          key={c.index}
          at={`reader ${at}`}
          text={`Tap ${c.label} ${c.card}`}
          onClick={() => tap(c.index)}
        />
      ))}
    </fieldset>
  );
}

/** A button whose name says where it acts (its text first, as a person reads it: "Open door, HB-H 1"). */
function Button({ at, text, onClick }: { at: string; text: string; onClick: () => void }) {
  return (
    <button type="button" aria-label={`${text}, ${at}`} onClick={onClick}>
      {text}
    </button>
  );
}
