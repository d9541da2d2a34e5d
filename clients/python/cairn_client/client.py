"""The clients: :class:`Cairn` (blocking, ``httpx.Client``) and :class:`AsyncCairn`
(``httpx.AsyncClient``), with the same methods and the same typed results.

Neither holds any wire mapping: each method is a builder of ``_api.py`` run by the
client's ``_run`` (send, then let ``_core.settle`` decide: return, retry after a wait, or
raise). A method is declared once per class as ``name = _sync(_api.name)`` /
``name = _async(_api.name)``; the descriptor keeps the builder's signature and docstring.
"""

from __future__ import annotations

import functools
import os
import time
from typing import Any, Awaitable, Callable, Generic, Mapping, Optional, ParamSpec, TypeVar, Union, overload

import anyio
import httpx

from . import _api, _core
from ._core import Call, RetryPolicy
from .version import __version__

P = ParamSpec("P")
T = TypeVar("T")

DEFAULT_URL = "http://127.0.0.1:7700"


def _checked(build: Callable[P, Call[T]]) -> Callable[P, Call[T]]:
    routes = getattr(build, "__cairn_routes__", ())

    @functools.wraps(build)
    def checked(*args: P.args, **kwargs: P.kwargs) -> Call[T]:
        call = build(*args, **kwargs)
        # The route table and the request built must agree (the contract test reads the
        # table, so a builder sending elsewhere would go unnoticed).
        if f"{call.method} {call.template}" not in routes:
            raise RuntimeError(f"{build.__name__} built {call.method} {call.template}, not one of {routes}")
        return call

    return checked


class _sync(Generic[P, T]):
    """A client method running builder ``build`` with the blocking client."""

    def __init__(self, build: Callable[P, Call[T]]):
        self._build = _checked(build)
        self.routes = getattr(build, "__cairn_routes__", ())
        self.__wrapped__, self.__name__, self.__doc__ = build, build.__name__, build.__doc__

    @overload
    def __get__(self, obj: None, owner: Any) -> "_sync[P, T]": ...
    @overload
    def __get__(self, obj: "Cairn", owner: Any) -> Callable[P, T]: ...
    def __get__(self, obj: Any, owner: Any = None) -> Any:
        if obj is None:
            return self
        build = self._build

        @functools.wraps(build)
        def method(*args: Any, **kwargs: Any) -> Any:
            return obj._run(build(*args, **kwargs))

        return method


class _async(Generic[P, T]):
    """A client method running builder ``build`` with the async client."""

    def __init__(self, build: Callable[P, Call[T]]):
        self._build = _checked(build)
        self.routes = getattr(build, "__cairn_routes__", ())
        self.__wrapped__, self.__name__, self.__doc__ = build, build.__name__, build.__doc__

    @overload
    def __get__(self, obj: None, owner: Any) -> "_async[P, T]": ...
    @overload
    def __get__(self, obj: "AsyncCairn", owner: Any) -> Callable[P, Awaitable[T]]: ...
    def __get__(self, obj: Any, owner: Any = None) -> Any:
        if obj is None:
            return self
        build = self._build

        @functools.wraps(build)
        async def method(*args: Any, **kwargs: Any) -> Any:
            return await obj._run(build(*args, **kwargs))

        return method


Timeout = Union[float, httpx.Timeout, None]


class _Options:
    """Constructor arguments both clients share."""

    def __init__(self, base_url: Optional[str], api_key: Optional[str], timeout: Timeout,
                 connect_timeout: Optional[float], retry: Optional[RetryPolicy],
                 headers: Optional[Mapping[str, str]]):
        # Like other API clients: what the caller leaves out comes from the environment.
        base_url = base_url or os.environ.get("CAIRN_URL") or DEFAULT_URL
        if api_key is None:
            api_key = os.environ.get("CAIRN_API_KEY") or None
        self.base_url = base_url.rstrip("/")
        self.headers = _core.client_headers(api_key, headers, __version__)
        self.timeout = _core.timeout(timeout, connect_timeout)
        self.retry = retry if retry is not None else RetryPolicy()


class Cairn:
    """A Cairn server, called synchronously.

    ``base_url``: the server (default ``CAIRN_URL``, else ``http://127.0.0.1:7700``).
    ``api_key``: a key from ``cairn keys create`` or the admin key (default
    ``CAIRN_API_KEY``; none with ``--no-auth``). ``timeout``: seconds to wait for an answer (read and write);
    ``connect_timeout``: seconds to open the connection. ``retry``: a
    :class:`RetryPolicy` (``RetryPolicy.none()`` to never retry). ``transport``: an
    ``httpx`` transport (proxies, test doubles); ``client``: a whole ``httpx.Client`` to
    use instead of making one (its own base URL, headers and timeouts then apply).
    """

    def __init__(self, base_url: Optional[str] = None, api_key: Optional[str] = None, *,
                 timeout: Timeout = 60.0, connect_timeout: Optional[float] = 5.0,
                 retry: Optional[RetryPolicy] = None, headers: Optional[Mapping[str, str]] = None,
                 transport: Optional[httpx.BaseTransport] = None,
                 client: Optional[httpx.Client] = None):
        o = _Options(base_url, api_key, timeout, connect_timeout, retry, headers)
        self.retry = o.retry
        self._http = client or httpx.Client(base_url=o.base_url, headers=o.headers,
                                            timeout=o.timeout, transport=transport)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> "Cairn":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _run(self, call: Call[T]) -> T:
        attempt = 0
        while True:
            outcome: _core.Outcome
            try:
                outcome = self._http.request(**call.request_args())
            except httpx.TransportError as e:
                outcome = e
            value, delay = _core.settle(call, outcome, attempt, self.retry)
            if delay is None:
                if isinstance(value, Exception):
                    raise value
                return value
            time.sleep(delay)
            attempt += 1

    health = _sync(_api.health)
    ready = _sync(_api.ready)
    openapi = _sync(_api.openapi)
    mcp = _sync(_api.mcp)
    me = _sync(_api.me)
    create_key = _sync(_api.create_key)
    keys = _sync(_api.keys)
    revoke_key = _sync(_api.revoke_key)
    spaces = _sync(_api.spaces)
    create_space = _sync(_api.create_space)
    delete_space = _sync(_api.delete_space)
    stats = _sync(_api.stats)
    ingest_session = _sync(_api.ingest_session)
    ingest_sessions = _sync(_api.ingest_sessions)
    add_messages = _sync(_api.add_messages)
    add_group_messages = _sync(_api.add_group_messages)
    insert_trajectories = _sync(_api.insert_trajectories)
    import_ = _sync(_api.import_)
    recall = _sync(_api.recall)
    sessions = _sync(_api.sessions)
    session = _sync(_api.session)
    session_units = _sync(_api.session_units)
    forget_session = _sync(_api.forget_session)
    forget_message = _sync(_api.forget_message)
    forget_partition = _sync(_api.forget_partition)
    memories = _sync(_api.memories)
    memory = _sync(_api.memory)
    delete_memory = _sync(_api.delete_memory)
    export = _sync(_api.export)
    history = _sync(_api.history)
    subjects = _sync(_api.subjects)
    speakers = _sync(_api.speakers)
    entities = _sync(_api.entities)
    entity = _sync(_api.entity)
    profile = _sync(_api.profile)
    trajectories = _sync(_api.trajectories)
    trajectory = _sync(_api.trajectory)
    trajectory_state = _sync(_api.trajectory_state)
    forget_trajectory = _sync(_api.forget_trajectory)
    trajectory_units = _sync(_api.trajectory_units)
    trajectory_manifest = _sync(_api.trajectory_manifest)
    trajectory_summary = _sync(_api.trajectory_summary)
    trajectory_state_view = _sync(_api.trajectory_state_view)
    trajectory_span = _sync(_api.trajectory_span)
    trajectory_match = _sync(_api.trajectory_match)
    trajectory_search = _sync(_api.trajectory_search)
    trajectory_context = _sync(_api.trajectory_context)
    trajectory_inspect = _sync(_api.trajectory_inspect)
    trajectory_agent = _sync(_api.trajectory_agent)


class AsyncCairn:
    """A Cairn server, called with ``await``: the methods and results of :class:`Cairn`.
    ``transport`` is an ``httpx.AsyncBaseTransport``; ``client`` an ``httpx.AsyncClient``.
    Use ``async with AsyncCairn(...) as c:`` or ``await c.aclose()``."""

    def __init__(self, base_url: Optional[str] = None, api_key: Optional[str] = None, *,
                 timeout: Timeout = 60.0, connect_timeout: Optional[float] = 5.0,
                 retry: Optional[RetryPolicy] = None, headers: Optional[Mapping[str, str]] = None,
                 transport: Optional[httpx.AsyncBaseTransport] = None,
                 client: Optional[httpx.AsyncClient] = None):
        o = _Options(base_url, api_key, timeout, connect_timeout, retry, headers)
        self.retry = o.retry
        self._http = client or httpx.AsyncClient(base_url=o.base_url, headers=o.headers,
                                                 timeout=o.timeout, transport=transport)

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> "AsyncCairn":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()

    async def _run(self, call: Call[T]) -> T:
        attempt = 0
        while True:
            outcome: _core.Outcome
            try:
                outcome = await self._http.request(**call.request_args())
            except httpx.TransportError as e:
                outcome = e
            value, delay = _core.settle(call, outcome, attempt, self.retry)
            if delay is None:
                if isinstance(value, Exception):
                    raise value
                return value
            await anyio.sleep(delay)
            attempt += 1

    health = _async(_api.health)
    ready = _async(_api.ready)
    openapi = _async(_api.openapi)
    mcp = _async(_api.mcp)
    me = _async(_api.me)
    create_key = _async(_api.create_key)
    keys = _async(_api.keys)
    revoke_key = _async(_api.revoke_key)
    spaces = _async(_api.spaces)
    create_space = _async(_api.create_space)
    delete_space = _async(_api.delete_space)
    stats = _async(_api.stats)
    ingest_session = _async(_api.ingest_session)
    ingest_sessions = _async(_api.ingest_sessions)
    add_messages = _async(_api.add_messages)
    add_group_messages = _async(_api.add_group_messages)
    insert_trajectories = _async(_api.insert_trajectories)
    import_ = _async(_api.import_)
    recall = _async(_api.recall)
    sessions = _async(_api.sessions)
    session = _async(_api.session)
    session_units = _async(_api.session_units)
    forget_session = _async(_api.forget_session)
    forget_message = _async(_api.forget_message)
    forget_partition = _async(_api.forget_partition)
    memories = _async(_api.memories)
    memory = _async(_api.memory)
    delete_memory = _async(_api.delete_memory)
    export = _async(_api.export)
    history = _async(_api.history)
    subjects = _async(_api.subjects)
    speakers = _async(_api.speakers)
    entities = _async(_api.entities)
    entity = _async(_api.entity)
    profile = _async(_api.profile)
    trajectories = _async(_api.trajectories)
    trajectory = _async(_api.trajectory)
    trajectory_state = _async(_api.trajectory_state)
    forget_trajectory = _async(_api.forget_trajectory)
    trajectory_units = _async(_api.trajectory_units)
    trajectory_manifest = _async(_api.trajectory_manifest)
    trajectory_summary = _async(_api.trajectory_summary)
    trajectory_state_view = _async(_api.trajectory_state_view)
    trajectory_span = _async(_api.trajectory_span)
    trajectory_match = _async(_api.trajectory_match)
    trajectory_search = _async(_api.trajectory_search)
    trajectory_context = _async(_api.trajectory_context)
    trajectory_inspect = _async(_api.trajectory_inspect)
    trajectory_agent = _async(_api.trajectory_agent)
