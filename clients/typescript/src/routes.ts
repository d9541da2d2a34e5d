/**
 * Route -> method of `Cairn`, for every route of `crates/cairn-server/openapi.json`.
 * `test/contract.test.mjs` fails when the spec has a route missing here, when a method
 * named here does not exist, or when it is not the Python client's method of the same
 * route (camelCase of the Python name). The inspector's page and files (`/ui`, tag
 * `inspector`) are for browsers, not clients, and have no method. Adding a route: one method in client.ts, one
 * line here.
 */
export const ROUTES = {
  "GET /v1/health": "health",
  "GET /v1/ready": "ready",
  "GET /v1/openapi.json": "openapi",
  "POST /mcp": "mcp",
  "GET /v1/me": "me",
  "POST /v1/keys": "createKey",
  "GET /v1/keys": "keys",
  "DELETE /v1/keys/{id}": "revokeKey",
  "GET /v1/spaces": "spaces",
  "POST /v1/spaces": "createSpace",
  "DELETE /v1/spaces/{space}": "deleteSpace",
  "GET /v1/stats": "stats",
  "GET /v1/spaces/{space}/stats": "stats",
  "POST /v1/spaces/{space}/sessions": "ingestSession",
  "POST /v1/spaces/{space}/sessions/batch": "ingestSessions",
  "POST /v1/spaces/{space}/messages": "addMessages",
  "POST /v1/spaces/{space}/group-messages": "addGroupMessages",
  "POST /v1/spaces/{space}/trajectories": "insertTrajectories",
  "POST /v1/spaces/{space}/import": "import",
  "POST /v1/spaces/{space}/recall": "recall",
  "GET /v1/spaces/{space}/sessions": "sessions",
  "GET /v1/spaces/{space}/sessions/{session}": "session",
  "GET /v1/spaces/{space}/sessions/{session}/units": "sessionUnits",
  "DELETE /v1/spaces/{space}/sessions/{session}": "forgetSession",
  "DELETE /v1/spaces/{space}/sessions/{session}/messages/{message}": "forgetMessage",
  "POST /v1/spaces/{space}/partitions/forget": "forgetPartition",
  "GET /v1/spaces/{space}/memories": "memories",
  "GET /v1/spaces/{space}/memories/{id}": "memory",
  "DELETE /v1/spaces/{space}/memories/{id}": "deleteMemory",
  "GET /v1/spaces/{space}/export": "export",
  "GET /v1/spaces/{space}/history": "history",
  "GET /v1/spaces/{space}/subjects": "subjects",
  "GET /v1/spaces/{space}/entities": "entities",
  "GET /v1/spaces/{space}/entities/{name}": "entity",
  "GET /v1/spaces/{space}/speakers": "speakers",
  "GET /v1/spaces/{space}/profiles/{speaker}": "profile",
  "GET /v1/spaces/{space}/trajectories": "trajectories",
  "GET /v1/spaces/{space}/trajectories/{id}": "trajectory",
  "GET /v1/spaces/{space}/trajectories/{id}/states/{index}": "trajectoryState",
  "DELETE /v1/spaces/{space}/trajectories/{id}": "forgetTrajectory",
  "GET /v1/spaces/{space}/trajectories/{id}/units": "trajectoryUnits",
  "GET /v1/spaces/{space}/trajectory-manifest": "trajectoryManifest",
  "GET /v1/spaces/{space}/trajectories/{id}/summary": "trajectorySummary",
  "GET /v1/spaces/{space}/trajectories/{id}/states/{index}/view": "trajectoryStateView",
  "GET /v1/spaces/{space}/trajectories/{id}/span": "trajectorySpan",
  "GET /v1/spaces/{space}/trajectories/{id}/match": "trajectoryMatch",
  "GET /v1/spaces/{space}/trajectory-search": "trajectorySearch",
  "POST /v1/spaces/{space}/trajectory-context": "trajectoryContext",
  "POST /v1/spaces/{space}/trajectory-inspect": "trajectoryInspect",
  "POST /v1/spaces/{space}/trajectory-agent": "trajectoryAgent",
} as const satisfies Record<string, keyof import("./client.js").Cairn>;

export type Route = keyof typeof ROUTES;
