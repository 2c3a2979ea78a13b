import { derivedId } from "../../cloud/manifest/apply-manifest.ts";
import type { ManifestInput } from "../../cloud/manifest/manifest-schema.ts";
import { PERMISSIONS } from "../../shared/api/permissions.ts";

/** Two operators (A and B) so every test can check tenancy; ids are derived exactly as the manifest does. */
export const OP_A = "aaaaaaaa-0000-4000-8000-000000000001";
export const OP_B = "bbbbbbbb-0000-4000-8000-000000000002";

/** Every client's secret in the fixture site. */
export const SECRET = "fixture-secret-123";

export const CLIENTS = {
  /** Operator A, every permission. */
  admin: "a-admin",
  /** Operator A, no extra permission. */
  basic: "a-basic",
  /** Operator A, public tag management only. */
  tagger: "a-tagger",
  /** Operator B, every permission. */
  other: "b-admin",
} as const;

export function fixtureManifest(secretHash: string): ManifestInput {
  const secret = { secret_hash: secretHash };
  return {
    version: 1,
    operators: [
      {
        id: OP_A,
        name: "Operator A",
        clients: [
          { client_id: CLIENTS.admin, permissions: [...PERMISSIONS], ...secret },
          { client_id: CLIENTS.basic, permissions: [], ...secret },
          { client_id: CLIENTS.tagger, permissions: ["PUBLIC_TAG_MANAGEMENT"], ...secret },
        ],
        public_areas: [{ id: "city-a", name: "City A", locations: ["L1", "D1"] }],
        // Lockers 2 and 3 of L1 and the docks of D1 are priced; locker 1 of L1 is not.
        price_lists: [
          {
            code: "standard",
            name: "Standard",
            currency: "EUR",
            free_minutes: 0,
            period_minutes: 60,
            price_per_period: "2.00",
            max_fee: "10.00",
          },
        ],
        locations: [
          {
            code: "L1",
            label: "Lockers one",
            type: "BIKE_LOCKERS",
            latitude: 52.37,
            longitude: 4.89,
            tags: ["covered", "station"],
            attrs: {
              address: "Street 1",
              comment: "internal note",
              private_tags: ["vip"],
              max_user_sessions: 2,
            },
            gateways: [
              {
                id: "gw-a1",
                camera: true,
                ...secret,
                devices: [
                  { alias: "1", type: "LOCKER", bus: { board: 1, channel: 1 } },
                  { alias: "2", type: "LOCKER", bus: { board: 1, channel: 2 }, price_list: "standard" },
                  { alias: "3", type: "LOCKER", bus: { board: 1, channel: 3 }, price_list: "standard" },
                  {
                    alias: "4",
                    type: "LOCKER",
                    power_save_strategy: "REMOTE_WAKEUP",
                    bus: { board: 1, channel: 4 },
                  },
                  {
                    alias: "5",
                    type: "LOCKER",
                    power_save_strategy: "LOCAL_WAKEUP",
                    bus: { board: 1, channel: 5 },
                  },
                ],
              },
            ],
          },
          {
            code: "D1",
            label: "Docks one",
            type: "BIKE_DOCKS",
            latitude: 52.36,
            longitude: 4.88,
            tags: ["station"],
            price_list: "standard",
            gateways: [
              {
                id: "gw-a2",
                ...secret,
                devices: [
                  { alias: "1", type: "BIKE_DOCK" },
                  { alias: "2", type: "DOCK" },
                  { alias: "3", type: "DOCK_SESSIONLESS" },
                ],
              },
            ],
          },
          {
            code: "H1",
            label: "House one",
            type: "BIKE_HOUSE",
            latitude: 51.92,
            longitude: 4.48,
            gateways: [
              {
                id: "gw-a3",
                ...secret,
                devices: [
                  { alias: "door", type: "BIKE_HOUSE_DOOR" },
                  { alias: "legacy-door", type: "DOOR" },
                  { alias: "1", type: "LOCKER" },
                ],
              },
            ],
          },
        ],
      },
      {
        id: OP_B,
        name: "Operator B",
        clients: [{ client_id: CLIENTS.other, permissions: [...PERMISSIONS], ...secret }],
        public_areas: [{ id: "b-area", name: "B area", locations: ["B1"] }],
        locations: [
          {
            code: "B1",
            label: "B lockers",
            type: "BIKE_LOCKERS",
            latitude: 52.0,
            longitude: 5.0,
            gateways: [{ id: "gw-b1", ...secret, devices: [{ alias: "1", type: "LOCKER" }] }],
          },
        ],
      },
    ],
  };
}

/** Ids of fixture objects, derived the way applyManifest derives them. */
export const fx = {
  priceList: (code: string, operatorId = OP_A) => derivedId(operatorId, "price-list", code),
  location: (code: string) => derivedId(code.startsWith("B") ? OP_B : OP_A, "location", code),
  device: (locationCode: string, alias: string) => derivedId(fx.location(locationCode), "device", alias),
  guard: (gatewayId: string) => derivedId("gateway", gatewayId),
};
