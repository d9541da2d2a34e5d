/**
 * Every error a client call throws is a `CairnError`: `ApiError` (the server answered
 * with a problem document), `ConnectionError` (no answer: refused, reset, closed) or
 * `TimeoutError` (no answer in time). A caller's own abort is rethrown as it came.
 */

export class CairnError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** RFC 9457 problem details with a stable `code` (`space_not_found`, `invalid_field`,
 * `idempotency_key_reused`, ...), the HTTP `status`, a `detail`, and for bad input the
 * `field` at fault (a JSON path such as `messages[0].text`). */
export class ApiError extends CairnError {
  readonly status: number;
  readonly code: string;
  readonly detail: string;
  readonly field: string | undefined;
  /** The whole problem document as the server sent it. */
  readonly problem: Record<string, unknown>;
  /** Seconds the server asked to wait (`Retry-After`), if it said. */
  readonly retryAfter: number | undefined;

  constructor(status: number, problem: Record<string, unknown>, retryAfter?: number) {
    const code = typeof problem.code === "string" && problem.code ? problem.code : "http_error";
    const detail = typeof problem.detail === "string" ? problem.detail : "";
    const field = typeof problem.field === "string" ? problem.field : undefined;
    super(`${status} ${code}: ${detail}${field ? ` (field ${field})` : ""}`);
    this.status = status;
    this.code = code;
    this.detail = detail;
    this.field = field;
    this.problem = problem;
    this.retryAfter = retryAfter;
  }
}

export class ConnectionError extends CairnError {}

export class TimeoutError extends CairnError {}
