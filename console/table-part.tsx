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
        <div class="scroll">
          <table aria-label={props.title}>
            <thead>
              <tr>{props.head}</tr>
            </thead>
            <tbody>{props.children}</tbody>
          </table>
        </div>
      )}
    </>
  );
}

/** A row's action: the button says `label`; its name adds the row's `subject`, so each is told apart. */
export function RowAction(props: { label: string; subject: string; onClick: () => void }) {
  return (
    <button type="button" aria-label={`${props.label} ${props.subject}`} onClick={props.onClick}>
      {props.label}
    </button>
  );
}
