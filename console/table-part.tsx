import type { ComponentChildren } from "preact";

/**
 * A titled part of a page: its heading, then `empty` when it has no rows, else its table named by the title
 * (scrolling inside itself on a narrow screen, not the page).
 */
export function TablePart(props: {
  title: string;
  empty: string;
  rows: number;
  head: ComponentChildren;
  children: ComponentChildren;
}) {
  return (
    <>
      <h2>{props.title}</h2>
      {props.rows === 0 ? (
        <p>{props.empty}</p>
      ) : (
        <Table label={props.title} head={props.head}>
          {props.children}
        </Table>
      )}
    </>
  );
}

/** A table that scrolls inside itself on a narrow screen, not the page; `head` is its header row's cells. */
export function Table(props: { label?: string; head: ComponentChildren; children: ComponentChildren }) {
  return (
    <div class="scroll">
      <table aria-label={props.label}>
        <thead>
          <tr>{props.head}</tr>
        </thead>
        <tbody>{props.children}</tbody>
      </table>
    </div>
  );
}

/**
 * A list read from the cloud: "Loading…" until it comes (nothing more when the read failed: the page says
 * why), `empty` when it has no rows, else its table with a row of `row` each.
 */
export function ListTable<T>(props: {
  rows: T[] | null | undefined;
  error?: string | null;
  empty: string;
  head: ComponentChildren;
  row: (item: T) => ComponentChildren;
}) {
  if (!props.rows) return props.error ? null : <p aria-busy="true">Loading…</p>;
  if (props.rows.length === 0) return <p>{props.empty}</p>;
  return <Table head={props.head}>{props.rows.map(props.row)}</Table>;
}

/** A row's action: the button says `label`; its name adds the row's `subject`, so each is told apart. */
export function RowAction(props: { label: string; subject: string; onClick: () => void }) {
  return (
    <button type="button" aria-label={`${props.label} ${props.subject}`} onClick={props.onClick}>
      {props.label}
    </button>
  );
}
