/**
 * Everything wrong with a site manifest, found in one pass and told the way its author wrote it: the file
 * line, the object by its name (operator, client, public area, location code, gateway id, device alias)
 * rather than its index, the key, and for a misspelt key or value the one probably meant. Schema problems,
 * cross-references (duplicates, unknown location codes) and what `apply` needs from the environment
 * (`secret_env` variables) are all reported together.
 */
import type { z } from "zod";
import { didYouMean } from "../../shared/cli/did-you-mean.ts";
import { DEFAULT_MAX_WHITELISTS_PER_DEVICE } from "../../shared/domain/whitelist-entity.ts";
import { DERIVED_LOCATION_FIELDS } from "../locations/location-attrs.ts";
import { DERIVED_DEVICE_FIELDS } from "../store/tables/device-attrs.ts";
import { MANIFEST_KEYS, type ManifestObjectKind, SiteManifest } from "./manifest-schema.ts";

export type ManifestPath = (string | number)[];
type Env = Record<string, string | undefined>;

/** A problem at a path of the manifest's data; `related` is another place it concerns (a duplicate's first). */
export type RawProblem = { path: ManifestPath; message: string; related?: ManifestPath };

/** A problem as people read it: `file:line: where: key: message`. */
export type ManifestProblem = {
  /** 1-based line in the file, when known. */
  line: number | null;
  /** The object, by name: `location CS-L › gateway gw-cs-lockers › device "4"`; "" for the top level. */
  where: string;
  /** The key within that object: `bus.channel`, `secret_env`; "" for the object itself. */
  key: string;
  message: string;
};

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const str = (v: unknown): string | null => (typeof v === "string" ? v : null);

/** Every problem of the parsed data: schema, unknown keys, cross-references and, with `env`, secrets. */
export function findProblems(
  data: unknown,
  env?: Env,
): { problems: RawProblem[]; manifest: SiteManifest | null } {
  const problems: RawProblem[] = [];
  const checkedObjects = new Set<string>();
  problems.push(...unknownKeys(data, checkedObjects));
  const parsed = SiteManifest.safeParse(data);
  if (!parsed.success)
    for (const issue of parsed.error.issues) problems.push(...fromIssue(issue, data, checkedObjects));
  problems.push(...crossReferences(data));
  if (env) problems.push(...missingSecrets(data, env));
  return { problems, manifest: parsed.success && problems.length === 0 ? parsed.data : null };
}

// ---------------------------------------------------------------------------------------------------------
// Unknown keys, with "did you mean".

/** Fields the API shows that are derived from other data: named with the reason, not as unknown. */
const DERIVED_KEYS: Partial<Record<ManifestObjectKind, Readonly<Record<string, string>>>> = {
  attrs: DERIVED_LOCATION_FIELDS,
  device: DERIVED_DEVICE_FIELDS,
};

function unknownKeys(data: unknown, checked: Set<string>): RawProblem[] {
  const out: RawProblem[] = [];
  const check = (value: unknown, path: ManifestPath, kind: ManifestObjectKind) => {
    if (!isObj(value)) return;
    checked.add(JSON.stringify(path));
    const known: readonly string[] = MANIFEST_KEYS[kind];
    const derived = DERIVED_KEYS[kind] ?? {};
    for (const key of Object.keys(value)) {
      if (known.includes(key)) continue;
      if (Object.hasOwn(derived, key)) {
        out.push({ path: [...path, key], message: `not settable: ${derived[key]}` });
        continue;
      }
      const hint = didYouMean(key, known);
      out.push({
        path: [...path, key],
        message: `unknown key${hint || `; the keys here are ${known.join(", ")}`}`,
      });
    }
  };
  check(data, [], "root");
  if (!isObj(data)) return out;
  arr(data.operators).forEach((op, i) => {
    const opPath = ["operators", i];
    check(op, opPath, "operator");
    if (!isObj(op)) return;
    arr(op.clients).forEach((c, j) => {
      check(c, [...opPath, "clients", j], "client");
    });
    arr(op.public_areas).forEach((pa, j) => {
      check(pa, [...opPath, "public_areas", j], "public_area");
    });
    check(op.external_users, [...opPath, "external_users"], "external_users");
    arr(op.price_lists).forEach((pl, j) => {
      check(pl, [...opPath, "price_lists", j], "price_list");
    });
    arr(op.riders).forEach((r, j) => {
      check(r, [...opPath, "riders", j], "rider");
    });
    arr(op.webhooks).forEach((w, j) => {
      check(w, [...opPath, "webhooks", j], "webhook");
    });
    arr(op.whitelists).forEach((wl, j) => {
      const wlPath = [...opPath, "whitelists", j];
      check(wl, wlPath, "whitelist");
      if (!isObj(wl)) return;
      arr(wl.targets).forEach((t, k) => {
        check(t, [...wlPath, "targets", k], "whitelist_target");
      });
      arr(wl.entities).forEach((e, k) => {
        check(e, [...wlPath, "entities", k], "whitelist_entity");
      });
    });
    arr(op.locations).forEach((loc, j) => {
      const locPath = [...opPath, "locations", j];
      check(loc, locPath, "location");
      if (!isObj(loc)) return;
      check(loc.attrs, [...locPath, "attrs"], "attrs");
      arr(loc.access_lists).forEach((al, k) => {
        check(al, [...locPath, "access_lists", k], "access_list");
      });
      arr(loc.gateways).forEach((gw, k) => {
        const gwPath = [...locPath, "gateways", k];
        check(gw, gwPath, "gateway");
        if (!isObj(gw)) return;
        arr(gw.devices).forEach((device, n) => {
          const dPath = [...gwPath, "devices", n];
          check(device, dPath, "device");
          if (isObj(device)) check(device.bus, [...dPath, "bus"], "bus");
        });
      });
    });
  });
  return out;
}

// ---------------------------------------------------------------------------------------------------------
// Schema issues in the manifest's words.

function valueAt(data: unknown, path: readonly PropertyKey[]): unknown {
  let v = data;
  for (const seg of path) {
    if (v === null || typeof v !== "object") return undefined;
    v = (v as Record<PropertyKey, unknown>)[seg];
  }
  return v;
}

function typeName(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "a list";
  if (typeof v === "object") return "a mapping";
  return `${typeof v} ${JSON.stringify(v)}`;
}

function fromIssue(issue: z.core.$ZodIssue, data: unknown, checked: Set<string>): RawProblem[] {
  const path = issue.path.filter((p): p is string | number => typeof p !== "symbol");
  const value = valueAt(data, path);
  switch (issue.code) {
    case "unrecognized_keys":
      // Reported with suggestions by unknownKeys for every object it walks.
      if (checked.has(JSON.stringify(path))) return [];
      return issue.keys.map((k) => ({ path: [...path, k], message: "unknown key" }));
    case "invalid_type":
      if (value === undefined) return [{ path, message: `missing (${issue.expected} required)` }];
      return [{ path, message: `expected ${issue.expected}, got ${typeName(value)}` }];
    case "invalid_value": {
      const options = issue.values.map((v) => String(v));
      const hint = typeof value === "string" ? didYouMean(value, options) : "";
      if (value === undefined) return [{ path, message: `missing (one of ${options.join(", ")})` }];
      return [{ path, message: `${JSON.stringify(value)} is not one of ${options.join(", ")}${hint}` }];
    }
    default: {
      const m = issue.message;
      return [{ path, message: m.charAt(0).toLowerCase() + m.slice(1) }];
    }
  }
}

// ---------------------------------------------------------------------------------------------------------
// Cross-references the schema cannot see.

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
  arr(data.operators).forEach((op, i) => {
    if (!isObj(op)) return;
    const opPath = ["operators", i];
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

// ---------------------------------------------------------------------------------------------------------
// What apply needs from the environment.

function missingSecrets(data: unknown, env: Env): RawProblem[] {
  const out: RawProblem[] = [];
  const check = (o: unknown, path: ManifestPath) => {
    if (!isObj(o)) return;
    const name = str(o.secret_env);
    if (name && !env[name])
      out.push({
        path: [...path, "secret_env"],
        message: `environment variable ${name} is not set (apply reads the secret from it)`,
      });
  };
  if (!isObj(data)) return out;
  arr(data.operators).forEach((op, i) => {
    if (!isObj(op)) return;
    arr(op.clients).forEach((c, j) => {
      check(c, ["operators", i, "clients", j]);
    });
    // Signing secrets: the current one and, during a rotation, the previous one.
    const signing = (o: unknown, path: ManifestPath) => {
      check(o, path);
      const previous = isObj(o) ? str(o.previous_secret_env) : null;
      if (previous && !env[previous])
        out.push({
          path: [...path, "previous_secret_env"],
          message: `environment variable ${previous} is not set (apply reads the secret from it)`,
        });
    };
    arr(op.webhooks).forEach((w, j) => {
      signing(w, ["operators", i, "webhooks", j]);
    });
    signing(op.external_users, ["operators", i, "external_users"]);
    arr(op.locations).forEach((loc, j) => {
      if (!isObj(loc)) return;
      arr(loc.gateways).forEach((gw, k) => {
        check(gw, ["operators", i, "locations", j, "gateways", k]);
      });
    });
  });
  return out;
}

// ---------------------------------------------------------------------------------------------------------
// Naming: paths of indexes → the names people gave the objects.

/** Lists whose items are named objects, and how each is called. */
const NAMED: Record<string, { noun: string; key: string; alt?: string }> = {
  operators: { noun: "operator", key: "name", alt: "id" },
  clients: { noun: "client", key: "client_id" },
  public_areas: { noun: "public area", key: "id" },
  locations: { noun: "location", key: "code" },
  gateways: { noun: "gateway", key: "id" },
  devices: { noun: "device", key: "alias" },
  price_lists: { noun: "price list", key: "code" },
  riders: { noun: "rider", key: "user_id" },
  access_lists: { noun: "access list", key: "name", alt: "id" },
  webhooks: { noun: "webhook", key: "id" },
  whitelists: { noun: "whitelist", key: "name", alt: "id" },
};

function nameOf(v: unknown, index: number): string {
  if (typeof v !== "string" || v.trim() === "") return `#${index + 1}`;
  return /^[A-Za-z][\w.:-]*$/.test(v) ? v : JSON.stringify(v);
}

/** `where` and `key` of a path: `location CS-L › gateway gw-1 › device "4"` and `bus.channel`. */
export function describePath(data: unknown, path: ManifestPath): { where: string; key: string } {
  const parts: string[] = [];
  let key: string[] = [];
  let node: unknown = data;
  for (let i = 0; i < path.length; i++) {
    const seg = path[i] as string | number;
    const next = path[i + 1];
    const named = typeof seg === "string" ? NAMED[seg] : undefined;
    const item = typeof next === "number" ? valueAt(node, [seg, next]) : undefined;
    if (named && typeof next === "number" && isObj(item)) {
      const name = str(item[named.key]) ?? (named.alt ? str(item[named.alt]) : null);
      parts.push(`${named.noun} ${nameOf(name, next)}`);
      key = [];
      node = item;
      i++;
      continue;
    }
    if (typeof seg === "number") key.push(`[${seg}]`);
    else key.push(key.length ? `.${seg}` : seg);
    node = valueAt(node, [seg]);
  }
  // With a single operator (the usual site), naming it on every line says nothing.
  const single = isObj(data) && arr(data.operators).length === 1;
  if (single && parts.length > 1 && parts[0]?.startsWith("operator ")) parts.shift();
  return { where: parts.join(" › "), key: key.join("") };
}

export function formatProblem(file: string, p: ManifestProblem): string {
  const at = p.line === null ? file : `${file}:${p.line}`;
  const subject = [p.where, p.key].filter(Boolean).join(": ");
  return `${at}: ${subject ? `${subject}: ` : ""}${p.message}`;
}
