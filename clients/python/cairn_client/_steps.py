"""Multi-call operations written once for both clients.

An adapter operation (a LangGraph ``put`` is a read, a forget and an ingest) is a
generator that yields ``(method name, args, kwargs)`` of a client call and receives its
result (or has the client's :class:`CairnError` thrown into it). :func:`run_sync` drives
it with a :class:`Cairn`, :func:`run_async` with an :class:`AsyncCairn`.
"""

from __future__ import annotations

from typing import Any, Dict, Generator, Tuple, TypeVar

from .errors import CairnError

T = TypeVar("T")
Step = Tuple[str, Tuple[Any, ...], Dict[str, Any]]
Steps = Generator[Step, Any, T]


def call(name: str, *args: Any, **kwargs: Any) -> Step:
    return name, args, kwargs


def run_sync(steps: Steps[T], client: Any) -> T:
    try:
        step = next(steps)
        while True:
            name, args, kwargs = step
            try:
                result = getattr(client, name)(*args, **kwargs)
            except CairnError as e:
                step = steps.throw(e)
                continue
            step = steps.send(result)
    except StopIteration as done:
        return done.value


async def run_async(steps: Steps[T], client: Any) -> T:
    try:
        step = next(steps)
        while True:
            name, args, kwargs = step
            try:
                result = await getattr(client, name)(*args, **kwargs)
            except CairnError as e:
                step = steps.throw(e)
                continue
            step = steps.send(result)
    except StopIteration as done:
        return done.value


class Clients:
    """The sync and async client an adapter runs its steps with: given, or made from
    ``url`` and ``api_key`` on first use (each adapter has sync and async methods). With
    neither a client nor ``url``, the clients are made from ``CAIRN_URL`` and
    ``CAIRN_API_KEY``, as :class:`~cairn_client.Cairn` reads them."""

    def __init__(self, client: Any = None, async_client: Any = None,
                 url: Any = None, api_key: Any = None, **options: Any):
        self._client, self._async = client, async_client
        self._url, self._key, self._options = url, api_key, options
        # A client of one kind given alone is not a promise to make the other.
        self._make = url is not None or (client is None and async_client is None)

    @property
    def sync(self) -> Any:
        if self._client is None:
            if not self._make:
                raise RuntimeError("this adapter was given only an async client: use its a* methods")
            from .client import Cairn

            self._client = Cairn(self._url, self._key, **self._options)
        return self._client

    @property
    def aio(self) -> Any:
        if self._async is None:
            if not self._make:
                raise RuntimeError("this adapter was given only a sync client: pass async_client= too")
            from .client import AsyncCairn

            self._async = AsyncCairn(self._url, self._key, **self._options)
        return self._async

    def run(self, steps: Steps[T]) -> T:
        return run_sync(steps, self.sync)

    async def arun(self, steps: Steps[T]) -> T:
        return await run_async(steps, self.aio)
