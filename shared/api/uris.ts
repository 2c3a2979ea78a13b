/** The canonical paths of resources other resources refer to (spec: every reference is `{id, uri}`). */
export const deviceUri = (id: string) => `/device/v1/devices/${id}`;
export const locationUri = (id: string) => `/location/v1/locations/${id}`;
export const priceListUri = (id: string) => `/location/v1/price-lists/${id}`;
