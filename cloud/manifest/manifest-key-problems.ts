import type { z } from "zod";
import { didYouMean } from "../../shared/cli/did-you-mean.ts";
import { DERIVED_LOCATION_FIELDS } from "../locations/location-attrs.ts";
import { DERIVED_DEVICE_FIELDS } from "../store/tables/device-attrs.ts";
import { arr, isObj, type ManifestPath, type RawProblem, valueAt } from "./manifest-paths.ts";
import { MANIFEST_KEYS, type ManifestObjectKind } from "./manifest-schema.ts";

// Unknown keys, with "did you mean", and the schema's issues in the manifest's words.

/** Fields the API shows that are derived from other data: named with the reason, not as unknown. */
const DERIVED_KEYS: Partial<Record<ManifestObjectKind, Readonly<Record<string, string>>>> = {
  attrs: DERIVED_LOCATION_FIELDS,
  device: DERIVED_DEVICE_FIELDS,
};

export function unknownKeys(data: unknown, checked: Set<string>): RawProblem[] {
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
  arr(data.superadmins).forEach((s, i) => {
    check(s, ["superadmins", i], "staff");
  });
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
    arr(op.staff).forEach((s, j) => {
      check(s, [...opPath, "staff", j], "staff");
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

function typeName(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "a list";
  if (typeof v === "object") return "a mapping";
  return `${typeof v} ${JSON.stringify(v)}`;
}

export function fromIssue(issue: z.core.$ZodIssue, data: unknown, checked: Set<string>): RawProblem[] {
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
