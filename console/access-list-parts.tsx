/** An access list page's parts: its members and its invites. */
import type { ConsoleAccessList } from "../shared/api/console-access-lists.ts";
import { Link } from "./router.tsx";
import { RowAction, TablePart } from "./table-part.tsx";
import { When } from "./when.tsx";

export function Members(props: {
  list: ConsoleAccessList;
  mayAct: boolean;
  onRemove: (userId: string) => void;
}) {
  const paid = props.list.kind === "paid";
  return (
    <TablePart
      title="Members"
      empty="No members."
      rows={props.list.members.length}
      head={
        <>
          <th>Rider</th>
          <th>Status</th>
          <th>Joined</th>
          <th>Ends</th>
          {paid && <th>Next payment</th>}
          <th>Comment</th>
          <th>External id</th>
          {props.mayAct && <th>Actions</th>}
        </>
      }
    >
      {props.list.members.map((m) => (
        <tr key={m.user_id}>
          <td>
            <Link href={`/console/riders/${m.user_id}`}>{m.user_id}</Link>
          </td>
          <td>{m.status}</td>
          <td>
            <When at={m.joined_at} />
          </td>
          <td>
            <When at={m.expires_at} />
          </td>
          {paid && (
            <td>
              <When at={m.next_payment_at} />
            </td>
          )}
          <td>{m.comment}</td>
          <td>{m.external_id}</td>
          {props.mayAct && (
            <td class="actions">
              {m.status.startsWith("included:") && (
                <RowAction
                  label="Remove member"
                  subject={m.user_id}
                  onClick={() => props.onRemove(m.user_id)}
                />
              )}
            </td>
          )}
        </tr>
      ))}
    </TablePart>
  );
}

export function Invites(props: {
  list: ConsoleAccessList;
  mayAct: boolean;
  onRevoke: (phone: string) => void;
}) {
  return (
    <TablePart
      title="Invites"
      empty="No invites."
      rows={props.list.invites.length}
      head={
        <>
          <th>Phone number</th>
          <th>Status</th>
          <th>Created</th>
          <th>Expires</th>
          <th>Comment</th>
          {props.mayAct && <th>Actions</th>}
        </>
      }
    >
      {props.list.invites.map((i) => (
        <tr key={i.phone_number}>
          <td>{i.phone_number}</td>
          <td>{i.status}</td>
          <td>
            <When at={i.created_at} />
          </td>
          <td>
            <When at={i.expires_at} />
          </td>
          <td>{i.comment}</td>
          {props.mayAct && (
            <td class="actions">
              <RowAction
                label="Revoke invite"
                subject={i.phone_number}
                onClick={() => props.onRevoke(i.phone_number)}
              />
            </td>
          )}
        </tr>
      ))}
    </TablePart>
  );
}
