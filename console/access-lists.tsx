import { useState } from "preact/hooks";
import type { ConsoleAccessList } from "../shared/api/console-access-lists.ts";
import { Invites, Members } from "./access-list-parts.tsx";
import { addMember, getAccessList, listAccessLists, removeMember } from "./access-lists-api.ts";
import { ActionDialog } from "./action-dialog.tsx";
import { Alert, Awaiting } from "./alert.tsx";
import { Link } from "./router.tsx";
import { queryOf } from "./sessions-api.ts";
import { ListTable } from "./table-part.tsx";
import { useLoad } from "./use-load.ts";
import type { ViewProps } from "./view-props.ts";

/** `/console/access-lists`: the operator's lists in force (every operator's for a superadmin). */
export function AccessListsView({ staff }: ViewProps) {
  const { data, error } = useLoad(listAccessLists, "");
  const everyone = staff.operator_id === null;
  return (
    <section>
      <h1>Access lists</h1>
      <Alert error={error} />
      <ListTable
        rows={data?.data}
        error={error}
        empty="No access lists."
        head={
          <>
            <th>Name</th>
            {everyone && <th>Operator</th>}
            <th>Kind</th>
            <th>Location</th>
            <th>With access</th>
            <th>Members</th>
            <th>Invites</th>
          </>
        }
        row={(l) => (
          <tr key={l.id}>
            <td>
              <Link href={`/console/access-lists/${l.id}`}>{l.name}</Link>
            </td>
            {everyone && <td>{l.operator_id}</td>}
            <td>{l.kind}</td>
            <td>
              <Link href={`/console/locations/${l.location_id}`}>{l.location}</Link>
            </td>
            <td>{l.included}</td>
            <td>{l.members}</td>
            <td>{l.invites}</td>
          </tr>
        )}
      />
    </section>
  );
}

/** What a dialog on the page is about to do. */
type Pending =
  | { kind: "add" }
  | { kind: "invite" }
  | { kind: "remove"; userId: string }
  | { kind: "revoke"; phone: string };

/** `/console/access-lists/:id`: its members and phone invites, and what an operator may do to them. */
export function AccessListView({ params, staff }: ViewProps) {
  const id = params.id ?? "";
  const { data: list, error, reload } = useLoad(() => getAccessList(id), id);
  const [pending, setPending] = useState<Pending | null>(null);
  const mayAct = staff.role !== "viewer";

  if (!list) return <Awaiting title="Access list" error={error} />;
  return (
    <section>
      <h1>{list.name}</h1>
      <dl class="facts">
        <dt>Kind</dt>
        <dd>{list.kind}</dd>
        <dt>Location</dt>
        <dd>
          <Link href={`/console/locations/${list.location_id}`}>{list.location}</Link>
        </dd>
      </dl>
      <Alert error={error} />
      <div class="actions">
        {mayAct && (
          <>
            <button type="button" onClick={() => setPending({ kind: "add" })}>
              Add member
            </button>
            <button type="button" onClick={() => setPending({ kind: "invite" })}>
              Invite
            </button>
          </>
        )}
        <button type="button" onClick={reload}>
          Refresh
        </button>
      </div>
      <Members list={list} mayAct={mayAct} onRemove={(userId) => setPending({ kind: "remove", userId })} />
      <p>
        <Link href={`/console/audit${queryOf({ subject_type: "access_list", subject_id: list.id })}`}>
          This list in the audit log
        </Link>
      </p>
      <Invites list={list} mayAct={mayAct} onRevoke={(phone) => setPending({ kind: "revoke", phone })} />
      {pending && (
        <ListDialog
          list={list}
          pending={pending}
          onClose={() => setPending(null)}
          onDone={() => {
            setPending(null);
            reload();
          }}
        />
      )}
    </section>
  );
}

/** The dialog of each action, with the public API's fields; the cloud checks them and its refusal shows. */
function ListDialog(props: {
  list: ConsoleAccessList;
  pending: Pending;
  onClose: () => void;
  onDone: () => void;
}) {
  const { list, pending } = props;
  const text = (form: FormData, name: string) => String(form.get(name) ?? "").trim();
  const comment = (form: FormData) => (text(form, "comment") ? { comment: text(form, "comment") } : {});
  const common = { onClose: props.onClose, onDone: props.onDone };
  const commentField = (
    <label>
      Comment
      <textarea name="comment" maxLength={1000} rows={2} />
    </label>
  );
  switch (pending.kind) {
    case "add":
      return (
        <ActionDialog
          title="Add member"
          {...common}
          act={(f) => addMember(list.id, { user_id: text(f, "user_id"), ...comment(f) })}
        >
          <label>
            User id
            <input name="user_id" required autocomplete="off" placeholder="the rider's service user id" />
          </label>
          {commentField}
        </ActionDialog>
      );
    case "invite":
      return (
        <ActionDialog
          title="Invite"
          {...common}
          act={(f) => addMember(list.id, { phone_number: text(f, "phone_number"), ...comment(f) })}
        >
          <label>
            Phone number
            <input name="phone_number" type="tel" required autocomplete="off" placeholder="+31612345678" />
          </label>
          <p>
            Someone who already has an account with this number joins at once; anyone else on their next
            sign-in.
          </p>
          {commentField}
        </ActionDialog>
      );
    case "remove":
      return (
        <ActionDialog
          title={`Remove member ${pending.userId}`}
          {...common}
          act={(f) =>
            removeMember(list.id, {
              user_id: pending.userId,
              ...(list.kind === "paid" ? { remove_now: f.get("remove_now") === "on" } : {}),
            })
          }
        >
          {list.kind === "paid" ? (
            <label class="check">
              <input type="checkbox" name="remove_now" /> Remove now (else at the end of the paid period)
            </label>
          ) : (
            <p>Their access ends at once.</p>
          )}
        </ActionDialog>
      );
    case "revoke":
      return (
        <ActionDialog
          title={`Revoke invite ${pending.phone}`}
          {...common}
          act={() => removeMember(list.id, { phone_number: pending.phone })}
        >
          <p>A member whose account has this number is removed too, as through the API.</p>
        </ActionDialog>
      );
  }
}
