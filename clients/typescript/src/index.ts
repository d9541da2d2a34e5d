export { Cairn, type CairnOptions, type CallOptions, type WriteOptions } from "./client.js";
export { ApiError, CairnError, ConnectionError, TimeoutError } from "./errors.js";
export { DEFAULT_RETRY, type RetryPolicy, type Safety } from "./core.js";
export { ROUTES, type Route } from "./routes.js";
export { VERSION } from "./version.js";
export type * from "./types.js";
