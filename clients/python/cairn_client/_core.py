"""The wire mapping without I/O, shared by the sync and the async client.

A builder (``_api.py``) turns a method call into a :class:`Call`: the request to send,
how to read the answer, and how safe it is to send twice. The clients only move bytes
(``httpx.Client`` or ``httpx.AsyncClient``) and sleep between attempts; every decision
(retry or not, how long to wait, which error) is made here, once.
"""

from __future__ import annotations

import email.utils
import enum
import random
import re
import time
import uuid
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Generic, Mapping, Optional, Tuple, TypeVar, Union
from urllib.parse import quote

import httpx

from .errors import ApiError, CairnError, CairnWarning, ConnectionError, TimeoutError

T = TypeVar("T")


class Safety(enum.Enum):
    """How a call may be repeated when an attempt's outcome is unknown."""

    #: Reads (and recall): repeating changes nothing.
    READ = "read"
    #: Writes that carry an ``Idempotency-Key``: the server answers a repeat with the
    #: first answer, so repeating is safe.
    IDEMPOTENT = "idempotent"
    #: Deletes and MCP messages: repeated only when the server surely did not act
    #: (the connection never opened, or it answered 429).
    UNSAFE = "unsafe"


@dataclass
class Call(Generic[T]):
    method: str
    #: The route as the spec writes it, e.g. ``/v1/spaces/{space}/recall``.
    template: str
    path: str
    parse: Callable[[httpx.Response], T]
    safety: Safety = Safety.READ
    params: Optional[Dict[str, Any]] = None
    json: Any = None
    content: Optional[bytes] = None
    headers: Dict[str, str] = field(default_factory=dict)

    def request_args(self) -> Dict[str, Any]:
        args: Dict[str, Any] = {"method": self.method, "url": self.path, "headers": self.headers}
        if self.params:
            args["params"] = self.params
        if self.json is not None:
            args["json"] = self.json
        if self.content is not None:
            args["content"] = self.content
        return args


_SEGMENT = re.compile(r"\{([a-z_]+)\}")


def path(template: str, **segments: Any) -> str:
    """Fills a route template, percent-encoding each segment (a ``/`` in an id too)."""
    return _SEGMENT.sub(lambda m: quote(str(segments[m.group(1)]), safe=""), template)


IDEMPOTENCY_HEADER = "Idempotency-Key"
REPLAYED_HEADER = "Idempotency-Replayed"
_KEY = re.compile(r"^[\x21-\x7e]{1,255}$")


def idempotency_key(given: Optional[str]) -> str:
    """The caller's key (checked: 1-255 visible ASCII characters) or a fresh uuid4."""
    if given is None:
        return str(uuid.uuid4())
    if not isinstance(given, str) or not _KEY.match(given):
        raise ValueError("idempotency_key must be 1-255 visible ASCII characters (no spaces)")
    return given


@dataclass(frozen=True)
class RetryPolicy:
    """Retries with exponential backoff and jitter.

    An attempt is retried (at most ``max_retries`` times) when it failed to connect, timed
    out, lost its connection, or was answered 429 or 5xx, and when repeating it is safe
    (see :class:`Safety`). The wait before retry ``n`` (0-based) is drawn from
    ``[d/2, d]`` with ``d = min(max_backoff, backoff * 2**n)``; a ``Retry-After`` from the
    server is waited instead when longer. One longer than ``max_retry_after`` is not
    waited for: the error is raised at once.
    """

    max_retries: int = 3
    backoff: float = 0.5
    max_backoff: float = 8.0
    max_retry_after: float = 60.0
    #: Called before each wait as ``on_retry(attempt, delay_seconds, error)``.
    on_retry: Optional[Callable[[int, float, CairnError], None]] = None

    @classmethod
    def none(cls) -> "RetryPolicy":
        return cls(max_retries=0)

    def backoff_delay(self, attempt: int) -> float:
        d = min(self.max_backoff, self.backoff * (2 ** attempt))
        return d / 2 + random.uniform(0, d / 2)


def retry_after(response: httpx.Response) -> Optional[float]:
    """``Retry-After`` in seconds: delta-seconds or an HTTP date."""
    raw = response.headers.get("retry-after")
    if raw is None:
        return None
    raw = raw.strip()
    if raw.isdigit():
        return float(raw)
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def api_error(response: httpx.Response) -> ApiError:
    try:
        problem = response.json()
    except ValueError:
        problem = None
    if not isinstance(problem, dict):
        problem = {"code": "http_error", "detail": response.text.strip() or response.reason_phrase}
    return ApiError(
        response.status_code,
        str(problem.get("code") or "http_error"),
        str(problem.get("detail") or ""),
        problem.get("field"),
        problem,
        retry_after(response),
    )


#: Transport failures after which the server surely did not see the request.
_NOT_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)


def transport_error(exc: httpx.TransportError) -> CairnError:
    if isinstance(exc, httpx.TimeoutException):
        err: CairnError = TimeoutError(f"timed out: {exc}")
    else:
        err = ConnectionError(f"connection failed: {exc}")
    err.__cause__ = exc
    return err


Outcome = Union[httpx.Response, httpx.TransportError]


def settle(call: Call[T], outcome: Outcome, attempt: int, policy: RetryPolicy) -> Tuple[Any, Optional[float]]:
    """Decides what an attempt's outcome means: ``(value, None)`` to return, or
    ``(error, delay)`` where ``delay`` is the wait before the next attempt, or ``None``
    when the error is to be raised now."""
    if isinstance(outcome, httpx.Response) and outcome.status_code < 400:
        try:
            value = call.parse(outcome)
            warn_of(outcome)
            return value, None
        except (ValueError, KeyError, TypeError) as e:
            # A 2xx that is not the documented shape (a proxy's page, another server).
            bad = CairnError(f"unexpected answer to {call.method} {call.path}: {e}")
            bad.__cause__ = e
            return bad, None
    if isinstance(outcome, httpx.Response):
        err: CairnError = api_error(outcome)
        status = outcome.status_code
        # 429 means the request was refused before it was handled; a 5xx may have
        # come after a write happened.
        retryable = status == 429 or (status >= 500 and call.safety is not Safety.UNSAFE)
        asked = retry_after(outcome) if retryable else None
    else:
        err = transport_error(outcome)
        retryable = isinstance(outcome, _NOT_SENT) or call.safety is not Safety.UNSAFE
        asked = None
    if not retryable or attempt >= policy.max_retries:
        return err, None
    if asked is not None and asked > policy.max_retry_after:
        return err, None
    delay = max(policy.backoff_delay(attempt), asked or 0.0)
    if policy.on_retry is not None:
        policy.on_retry(attempt + 1, delay, err)
    return err, delay


def warn_of(response: httpx.Response) -> None:
    """Emits each of an answer's ``warnings`` as a :class:`CairnWarning` (a method that
    returns a bare list has no field to carry them)."""
    if not response.headers.get("content-type", "").startswith("application/json"):
        return
    body = response.json()
    for w in body.get("warnings", []) if isinstance(body, dict) else []:
        if isinstance(w, dict):
            message = f"{w.get('message', '')} ({w.get('field', '')})"
            warnings.warn(CairnWarning(message, w.get("code", ""), w.get("field", "")), stacklevel=4)


def client_headers(api_key: Optional[str], extra: Optional[Mapping[str, str]], version: str) -> Dict[str, str]:
    headers = {"User-Agent": f"cairn-client-python/{version}", "Accept": "application/json"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    headers.update(extra or {})
    return headers


def timeout(seconds: Union[float, httpx.Timeout, None], connect: Optional[float]) -> httpx.Timeout:
    """``seconds`` for reading and writing, ``connect`` for opening the connection."""
    if isinstance(seconds, httpx.Timeout):
        return seconds
    return httpx.Timeout(seconds, connect=connect)
