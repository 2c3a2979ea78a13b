import { useEffect, useState } from "preact/hooks";
import { Alert } from "./alert.tsx";
import { useLive } from "./live.ts";
import { Link } from "./router.tsx";
import { type ConsoleAuditPage, listAudit } from "./sessions-api.ts";
import { ListTable } from "./table-part.tsx";
import type { ViewProps } from "./view-props.ts";
import { When } from "./when.tsx";

type Entry = ConsoleAuditPage["data"][number];

const FILTERS = ["actor_kind", "actor_id", "subject_type", "subject_id", "action", "from", "before"];

/** The subjects the console has a page for. */
const PAGES: Record<string, string> = {
  device: "/console/devices/",
  session: "/console/sessions/",
  whitelist: "/console/whitelists/",
  access_list: "/console/access-lists/",
  rider: "/console/riders/",
  webhook_endpoint: "/console/webhooks/",
};

const shown = (value: unknown) => (value === null || value === undefined ? "—" : JSON.stringify(value));

function Subject({ subject }: { subject: Entry["subject"] }) {
  const page = PAGES[subject.type];
  const text = `${subject.type} ${subject.id}`;
  return page ? <Link href={`${page}${subject.id}`}>{text}</Link> : <span>{text}</span>;
}

function Changes({ changes }: { changes: Entry["changes"] }) {
  const fields = Object.entries(changes);
  if (fields.length === 0) return <>—</>;
  return (
    <ul class="changes">
      {fields.map(([field, { from, to }]) => (
        <li key={field}>
          <code>{field}</code>: {shown(from)} → {shown(to)}
        </li>
      ))}
    </ul>
  );
}

/**
 * `/console/audit`: who did what, when and why, newest first, a page at a time; the address's query
 * (actor, subject, action, time range) filters it, so a filtered log is a deep link.
 */
export function AuditView(_: ViewProps) {
  const [filters] = useState(() => {
    const q = new URLSearchParams(location.search);
    return Object.fromEntries(FILTERS.flatMap((k) => (q.get(k) ? [[k, q.get(k) as string]] : [])));
  });
  // The cursors of the pages read so far; the last one is the page shown (undefined: the newest).
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  const [page, setPage] = useState<ConsoleAuditPage | null>(null);
  const [error, setError] = useState<string | null>(null);
  const cursor = cursors.at(-1);

  useEffect(() => {
    setError(null);
    listAudit({ ...filters, limit: "50", cursor }).then(setPage, (e: unknown) =>
      setError(e instanceof Error ? e.message : String(e)),
    );
  }, [filters, cursor]);
  useLive(["audit"], () => listAudit({ ...filters, limit: "50", cursor }).then(setPage));

  return (
    <section>
      <h1>Audit</h1>
      <Alert error={error} />
      <ListTable
        rows={page?.data}
        error={error}
        empty="Nothing recorded."
        head={
          <>
            <th>When</th>
            <th>Who</th>
            <th>What</th>
            <th>Subject</th>
            <th>Reason</th>
            <th>Changes</th>
          </>
        }
        row={(e) => (
          <tr key={e.id}>
            <td>
              <When at={e.at} />
            </td>
            <td>{e.actor.name ?? `${e.actor.kind} ${e.actor.id}`}</td>
            <td>{e.action}</td>
            <td>
              <Subject subject={e.subject} />
            </td>
            <td>{[e.reason, e.comment].filter(Boolean).join(": ") || "—"}</td>
            <td>
              <Changes changes={e.changes} />
            </td>
          </tr>
        )}
      />
      <p class="paging">
        {cursors.length > 1 && (
          <button type="button" onClick={() => setCursors([undefined])}>
            Newest
          </button>
        )}
        {page?.next_cursor && (
          <button type="button" onClick={() => setCursors([...cursors, page.next_cursor ?? undefined])}>
            Older
          </button>
        )}
      </p>
    </section>
  );
}
