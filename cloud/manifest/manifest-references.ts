import { didYouMean } from "../../shared/cli/did-you-mean.ts";
import { DEFAULT_MAX_WHITELISTS_PER_DEVICE } from "../../shared/domain/whitelist-entity.ts";
import { arr, isObj, type ManifestPath, type Obj, type RawProblem, str } from "./manifest-paths.ts";

/**
 * Cross-references the schema cannot see: ids, codes and aliases unique where they must be, and every
 * reference (a public area's locations, a price list, a whitelist's targets) naming something declared.
 */
export function crossReferences(data: unknown): RawProblem[] {
  const out: RawProblem[] = [];
  if (!isObj(data)) return out;
  const firstClient = new Map<string, ManifestPath>();
  const firstGateway = new Map<string, ManifestPath>();
  const firstArea = new Map<string, ManifestPath>();
  const firstAccessList = new Map<string, ManifestPath>();
  const firstRiderId = new Map<string, ManifestPath>();
  const firstWebhook = new Map<string, ManifestPath>();
  const firstWhitelist = new Map<string, ManifestPath>();
  // Staff emails are unique whatever their case, superadmins and every operator's staff together.
  const firstEmail = new Map<string, ManifestPath>();
  const uniqueEmail = (s: unknown, path: ManifestPath) => {
    const email = isObj(s) ? str(s.email) : null;
    if (email !== null) unique(firstEmail, email.toLowerCase(), [...path, "email"], "staff email");
  };
  const unique = (
    seen: Map<string, ManifestPath>,
    value: unknown,
    path: ManifestPath,
    what: string,
    scope = "",
  ) => {
    const v = str(value);
    if (v === null) return;
    const first = seen.get(v);
    if (first) out.push({ path, message: `duplicate ${what} ${JSON.stringify(v)}${scope}`, related: first });
    else seen.set(v, path);
  };
  arr(data.superadmins).forEach((s, i) => {
    uniqueEmail(s, ["superadmins", i]);
  });
  arr(data.operators).forEach((op, i) => {
    if (!isObj(op)) return;
    const opPath = ["operators", i];
    arr(op.staff).forEach((s, j) => {
      uniqueEmail(s, [...opPath, "staff", j]);
    });
    arr(op.clients).forEach((c, j) => {
      if (isObj(c)) unique(firstClient, c.client_id, [...opPath, "clients", j, "client_id"], "client_id");
    });
    const codes = new Map<string, ManifestPath>();
    arr(op.locations).forEach((loc, j) => {
      if (!isObj(loc)) return;
      const locPath = [...opPath, "locations", j];
      unique(codes, loc.code, [...locPath, "code"], "location code", " in this operator");
      arr(loc.access_lists).forEach((al, k) => {
        if (isObj(al))
          unique(firstAccessList, al.id, [...locPath, "access_lists", k, "id"], "access list id");
      });
      const aliases = new Map<string, ManifestPath>();
      arr(loc.gateways).forEach((gw, k) => {
        if (!isObj(gw)) return;
        const gwPath = [...locPath, "gateways", k];
        unique(firstGateway, gw.id, [...gwPath, "id"], "gateway id");
        arr(gw.devices).forEach((device, n) => {
          if (isObj(device))
            unique(
              aliases,
              device.alias,
              [...gwPath, "devices", n, "alias"],
              "device alias",
              " in this location",
            );
        });
      });
    });
    out.push(...priceListReferences(op, opPath));
    out.push(...whitelistReferences(op, opPath, firstWhitelist));
    const riderUserIds = new Map<string, ManifestPath>();
    arr(op.riders).forEach((r, j) => {
      if (!isObj(r)) return;
      const rPath = [...opPath, "riders", j];
      unique(riderUserIds, r.user_id, [...rPath, "user_id"], "rider user_id", " in this operator");
      const id = str(r.service_user_id);
      if (id !== null)
        unique(firstRiderId, id.toLowerCase(), [...rPath, "service_user_id"], "service_user_id");
    });
    arr(op.webhooks).forEach((w, j) => {
      const id = isObj(w) ? str(w.id) : null;
      if (id !== null) unique(firstWebhook, id.toLowerCase(), [...opPath, "webhooks", j, "id"], "webhook id");
    });
    arr(op.public_areas).forEach((pa, j) => {
      if (!isObj(pa)) return;
      const paPath = [...opPath, "public_areas", j];
      unique(firstArea, pa.id, [...paPath, "id"], "public area id");
      arr(pa.locations).forEach((code, n) => {
        const c = str(code);
        if (c !== null && !codes.has(c))
          out.push({
            path: [...paPath, "locations", n],
            message: `no location with code ${c} in this operator${didYouMean(c, codes.keys())}`,
          });
      });
    });
  });
  return out;
}

/** Price list codes are unique per operator, and every location's or device's `price_list` names one. */
function priceListReferences(op: Obj, opPath: ManifestPath): RawProblem[] {
  const out: RawProblem[] = [];
  const codes = new Map<string, ManifestPath>();
  arr(op.price_lists).forEach((pl, j) => {
    const code = isObj(pl) ? str(pl.code) : null;
    if (code === null) return;
    const path = [...opPath, "price_lists", j, "code"];
    const first = codes.get(code);
    if (first)
      out.push({
        path,
        message: `duplicate price list code ${JSON.stringify(code)} in this operator`,
        related: first,
      });
    else codes.set(code, path);
  });
  const named = (value: unknown, path: ManifestPath) => {
    const code = str(value);
    if (code !== null && !codes.has(code))
      out.push({
        path,
        message: `no price list with code ${code} in this operator${didYouMean(code, codes.keys())}`,
      });
  };
  arr(op.locations).forEach((loc, j) => {
    if (!isObj(loc)) return;
    const locPath = [...opPath, "locations", j];
    named(loc.price_list, [...locPath, "price_list"]);
    arr(loc.gateways).forEach((gw, k) => {
      if (!isObj(gw)) return;
      arr(gw.devices).forEach((device, n) => {
        if (isObj(device)) named(device.price_list, [...locPath, "gateways", k, "devices", n, "price_list"]);
      });
    });
  });
  return out;
}

/**
 * Whitelist ids are unique in the manifest; a target names a location code of this operator and, for a
 * device, an alias at that location (a gateway id names its GUARD); a card is declared once per whitelist;
 * no device is the target of more whitelists than a device may have.
 */
function whitelistReferences(op: Obj, opPath: ManifestPath, first: Map<string, ManifestPath>): RawProblem[] {
  const out: RawProblem[] = [];
  const aliases = new Map<string, Set<string>>();
  for (const loc of arr(op.locations)) {
    const code = isObj(loc) ? str(loc.code) : null;
    if (code === null || !isObj(loc)) continue;
    const names = new Set<string>();
    for (const gw of arr(loc.gateways)) {
      if (!isObj(gw)) continue;
      const id = str(gw.id);
      if (id !== null) names.add(id);
      for (const device of arr(gw.devices))
        if (isObj(device) && str(device.alias) !== null) names.add(device.alias as string);
    }
    aliases.set(code, names);
  }
  const perDevice = new Map<string, Set<number>>();
  const overLimit = new Set<string>();
  arr(op.whitelists).forEach((wl, j) => {
    if (!isObj(wl)) return;
    const wlPath = [...opPath, "whitelists", j];
    const id = str(wl.id);
    if (id !== null) {
      const seen = first.get(id.toLowerCase());
      if (seen)
        out.push({
          path: [...wlPath, "id"],
          message: `duplicate whitelist id ${JSON.stringify(id)}`,
          related: seen,
        });
      else first.set(id.toLowerCase(), [...wlPath, "id"]);
    }
    arr(wl.targets).forEach((t, k) => {
      if (!isObj(t)) return;
      const tPath = [...wlPath, "targets", k];
      const code = str(t.location);
      if (code === null) return;
      const names = aliases.get(code);
      if (!names) {
        out.push({
          path: [...tPath, "location"],
          message: `no location with code ${code} in this operator${didYouMean(code, aliases.keys())}`,
        });
        return;
      }
      const alias = str(t.device);
      if (alias === null) return;
      if (!names.has(alias)) {
        out.push({
          path: [...tPath, "device"],
          message: `no device with alias ${alias} at location ${code}${didYouMean(alias, names)}`,
        });
        return;
      }
      const key = JSON.stringify([code, alias]);
      const lists = perDevice.get(key) ?? new Set<number>();
      lists.add(j);
      perDevice.set(key, lists);
      if (lists.size > DEFAULT_MAX_WHITELISTS_PER_DEVICE && !overLimit.has(key)) {
        overLimit.add(key);
        out.push({
          path: [...tPath, "device"],
          message: `device ${alias} at location ${code} would be the target of more than ${DEFAULT_MAX_WHITELISTS_PER_DEVICE} whitelists, the most a device can have`,
        });
      }
    });
    // Card ids stay out of the message (they are keys): the path and the first place say which.
    const cards = new Map<string, ManifestPath>();
    arr(wl.entities).forEach((e, k) => {
      const card = isObj(e) ? str(e.id) : null;
      if (card === null) return;
      const path = [...wlPath, "entities", k, "id"];
      const seen = cards.get(card);
      if (seen) out.push({ path, message: "duplicate card id in this whitelist", related: seen });
      else cards.set(card, path);
    });
  });
  return out;
}
