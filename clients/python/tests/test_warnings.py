"""A filter naming a metadata key no session carries: the server answers ``warnings``
beside the result (docs/scope.md). The client keeps them on the result and emits each as a
:class:`CairnWarning`, also for the methods that return a bare list. The answers here are
the server's JSON, served by a mock transport (no server needed)."""

import warnings

import httpx
import pytest

from cairn_client import AsyncCairn, Cairn, CairnWarning
from cairn_client.types import Warning

WARNING = {"code": "unknown_filter_key", "field": "filter.userid",
           "message": 'no session of this space carries metadata key "userid" (keys seen: source, user_id)'}

ANSWERS = {
    "/v1/spaces/shared/recall": {"hits": [], "context": "", "context_tokens": 0, "hits_cut": 0,
                                 "hits_cut_ids": [], "no_relevant_memory": True,
                                 "context_unit_ids": [], "timings": {}, "warnings": [WARNING]},
    "/v1/spaces/shared/subjects": {"subjects": [], "warnings": [WARNING]},
    "/v1/spaces/shared/memories": {"items": [], "total": 0, "offset": 0, "warnings": [WARNING]},
    "/v1/spaces/shared/speakers": {"speakers": []},
}


def answer(request: httpx.Request) -> httpx.Response:
    return httpx.Response(200, json=ANSWERS[request.url.path])


def test_results_keep_their_warnings_and_each_is_emitted():
    with Cairn("http://cairn.test", transport=httpx.MockTransport(answer)) as c:
        with pytest.warns(CairnWarning) as caught:
            r = c.recall("shared", "cat?", filter={"userid": "u1"})
        assert r.warnings == [Warning(**WARNING)]
        assert caught[0].message.code == "unknown_filter_key"
        assert caught[0].message.field == "filter.userid"
        assert '"userid"' in str(caught[0].message)
        with pytest.warns(CairnWarning, match="keys seen: source, user_id"):
            assert c.subjects("shared", filter={"userid": "u1"}) == []
        with pytest.warns(CairnWarning):
            assert c.memories("shared", filter={"userid": "u1"}).warnings[0].field == "filter.userid"
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert c.speakers("shared") == []  # no warnings, nothing emitted


def test_the_async_client_emits_them_too():
    import asyncio

    async def run():
        async with AsyncCairn("http://cairn.test", transport=httpx.MockTransport(answer)) as c:
            with pytest.warns(CairnWarning):
                r = await c.recall("shared", "cat?", filter={"userid": "u1"})
            assert r.warnings[0].code == "unknown_filter_key"

    asyncio.run(run())
