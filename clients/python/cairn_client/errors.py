"""The errors every client call raises: all are :class:`CairnError`.

``CairnError`` -> ``ApiError`` (the server answered with a problem document),
``ConnectionError`` (no answer: refused, reset, closed), ``TimeoutError`` (no answer in
time). The last two also subclass Python's built-in exceptions of the same name, so code
that already catches those keeps working.
"""

from __future__ import annotations

import builtins
from typing import Any, Dict, Optional


class CairnError(Exception):
    """Base of every error raised by the Cairn clients."""


class CairnWarning(UserWarning):
    """A warning the server answered beside a result (``warnings`` in its JSON), emitted
    with :func:`warnings.warn` by every call, including those that return a bare list
    (``subjects``, ``entities``, ``speakers``): ``code`` (``unknown_filter_key``: a
    ``filter`` names a metadata key no session carries, most often a misspelling) and
    ``field`` (``filter.userid``). Turn it into an error with
    ``warnings.simplefilter("error", CairnWarning)``."""

    def __init__(self, message: str, code: str = "", field: str = ""):
        super().__init__(message)
        self.code = code
        self.field = field


class ApiError(CairnError):
    """The server answered with an error: RFC 9457 problem details with a stable ``code``
    (``space_not_found``, ``invalid_field``, ``idempotency_key_reused``, ...), the HTTP
    ``status``, a human ``detail`` and, for bad input, the ``field`` at fault (a JSON
    path such as ``messages[0].text``)."""

    def __init__(
        self,
        status: int,
        code: str,
        detail: str,
        field: Optional[str] = None,
        problem: Optional[Dict[str, Any]] = None,
        retry_after: Optional[float] = None,
    ):
        super().__init__(f"{status} {code}: {detail}" + (f" (field {field})" if field else ""))
        self.status = status
        self.code = code
        self.detail = detail
        self.field = field
        #: The whole problem document as the server sent it.
        self.problem = problem or {}
        #: Seconds the server asked to wait (``Retry-After``), if it said.
        self.retry_after = retry_after


class ConnectionError(CairnError, builtins.ConnectionError):  # noqa: A001 (by design)
    """The server could not be reached, or the connection broke before an answer."""


class TimeoutError(CairnError, builtins.TimeoutError):  # noqa: A001 (by design)
    """No answer within the client's timeout (connect or read)."""
