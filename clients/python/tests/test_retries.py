"""Retries, idempotency keys, timeouts and connection errors, against the real server.

Network faults are injected by a transport wrapped around the real one (`Faulty`): it
refuses a connection, loses the server's answer after the server acted, or answers for
the server (503, 429) before the request reaches it. Everything else is the real
`cairn serve`. Real sockets give the timeout and the refused connection.
"""

import builtins
import socket
import threading
import time

import httpx
import pytest

from cairn_client import ApiError, AsyncCairn, Cairn, CairnError, ConnectionError, RetryPolicy, TimeoutError

FAST = dict(backoff=0.01, max_backoff=0.05)


class Faulty(httpx.BaseTransport):
    """Plays `plan` (one action per request, then passes everything): "refuse" (never
    sent), "lose" (sent, handled, answer lost), or (status, headers) answered here."""

    def __init__(self, plan):
        self.inner = httpx.HTTPTransport()
        self.plan = list(plan)
        self.seen = []

    def handle_request(self, request):
        self.seen.append(request)
        action = self.plan.pop(0) if self.plan else "pass"
        if action == "refuse":
            raise httpx.ConnectError("injected: connection refused", request=request)
        if action == "html":
            return httpx.Response(200, text="<html>a captive portal</html>", request=request)
        if isinstance(action, tuple):
            status, headers = action
            return httpx.Response(status, headers=headers, request=request,
                                  json={"code": "injected", "detail": "injected", "status": status})
        response = self.inner.handle_request(request)
        if action == "lose":
            response.read()
            response.close()
            raise httpx.ReadError("injected: connection lost before the answer", request=request)
        return response


class AsyncFaulty(httpx.AsyncBaseTransport):
    def __init__(self, plan):
        self.inner = httpx.AsyncHTTPTransport()
        self.plan = list(plan)
        self.seen = []

    async def handle_async_request(self, request):
        self.seen.append(request)
        action = self.plan.pop(0) if self.plan else "pass"
        if action == "refuse":
            raise httpx.ConnectError("injected: connection refused", request=request)
        if isinstance(action, tuple):
            status, headers = action
            return httpx.Response(status, headers=headers, request=request, json={"code": "injected"})
        response = await self.inner.handle_async_request(request)
        if action == "lose":
            await response.aread()
            await response.aclose()
            raise httpx.ReadError("injected: connection lost before the answer", request=request)
        return response


def client(server, plan, **retry):
    transport = Faulty(plan)
    delays = []
    policy = RetryPolicy(on_retry=lambda n, d, e: delays.append((n, d, e)), **{**FAST, **retry})
    return Cairn(server["url"], api_key=server["admin"], retry=policy, transport=transport), transport, delays


def keys(transport):
    return [r.headers.get("idempotency-key") for r in transport.seen]


def test_a_write_whose_answer_was_lost_is_sent_again_with_the_same_key(idempotent_server):
    c, tr, delays = client(idempotent_server, ["lose"])
    r = c.add_messages("py-retry", "chat", [{"role": "user", "text": "My locker code is 7731."}])
    assert len(tr.seen) == 2 and keys(tr)[0] == keys(tr)[1] and keys(tr)[0]
    assert r.replayed is True and r.messages_added == 1
    assert [m.text for m in c.session("py-retry", "chat").session.messages] == ["My locker code is 7731."]
    assert isinstance(delays[0][2], ConnectionError)


def test_a_key_reused_with_another_body_is_refused(idempotent_server):
    c, _, _ = client(idempotent_server, [])
    c.add_messages("py-retry", "reuse", [{"role": "user", "text": "one"}], idempotency_key="py-key-1")
    again = c.add_messages("py-retry", "reuse", [{"role": "user", "text": "one"}], idempotency_key="py-key-1")
    assert again.replayed is True
    with pytest.raises(ApiError) as e:
        c.add_messages("py-retry", "reuse", [{"role": "user", "text": "two"}], idempotency_key="py-key-1")
    assert (e.value.status, e.value.code) == (422, "idempotency_key_reused")


def test_each_write_call_gets_its_own_key_and_a_given_key_is_sent_verbatim(server):
    c, tr, _ = client(server, [])
    c.ingest_session("py-keys", {"id": "a", "messages": [{"role": "user", "text": "hello"}]})
    c.ingest_sessions("py-keys", [{"id": "b", "messages": [{"role": "user", "text": "hi"}]}],
                      idempotency_key="caller-chosen-key")
    c.recall("py-keys", "hello")
    first, given, read = keys(tr)
    assert first and len(first) == 36 and given == "caller-chosen-key" and read is None
    with pytest.raises(ValueError):
        c.ingest_session("py-keys", {"id": "c", "messages": []}, idempotency_key="has space")
    assert len(tr.seen) == 3


def test_retry_after_is_honoured_and_reads_retry_on_5xx(server):
    c, tr, delays = client(server, [(503, {"Retry-After": "1"}), (500, {})])
    assert c.health().status == "ok"
    assert len(tr.seen) == 3
    assert delays[0][1] >= 1.0 and delays[1][1] < 1.0
    assert isinstance(delays[0][2], ApiError) and delays[0][2].retry_after == 1.0


def test_retries_stop_at_max_retries_and_raise_the_last_error(server):
    c, tr, _ = client(server, [(503, {})] * 5, max_retries=2)
    with pytest.raises(ApiError) as e:
        c.spaces()
    assert e.value.status == 503 and len(tr.seen) == 3
    c, tr, _ = client(server, [(503, {"Retry-After": "3600"})])
    with pytest.raises(ApiError):
        c.spaces()
    assert len(tr.seen) == 1, "a Retry-After past max_retry_after is not waited for"


def test_deletes_are_retried_only_when_the_server_surely_did_not_act(server):
    with Cairn(server["url"], api_key=server["admin"]) as admin:
        for sid in ("d1", "d2", "d3"):
            admin.ingest_session("py-del", {"id": sid, "messages": [{"role": "user", "text": f"note {sid}"}]})
    c, tr, _ = client(server, ["lose"])
    with pytest.raises(ConnectionError):
        c.forget_session("py-del", "d1")
    assert len(tr.seen) == 1
    c, tr, _ = client(server, [(500, {})])
    with pytest.raises(ApiError):
        c.forget_session("py-del", "d2")
    assert len(tr.seen) == 1
    c, tr, _ = client(server, ["refuse", (429, {"Retry-After": "0"})])
    assert c.forget_session("py-del", "d3") > 0
    assert len(tr.seen) == 3


def test_an_answer_of_the_wrong_shape_is_a_cairn_error_not_retried(server):
    c, tr, _ = client(server, ["html"])
    with pytest.raises(CairnError) as e:
        c.recall("py-keys", "anything")
    assert not isinstance(e.value, (ApiError, ConnectionError)) and "unexpected answer" in str(e.value)
    assert len(tr.seen) == 1


def test_a_server_that_never_answers_times_out():
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    port = listener.getsockname()[1]
    try:
        c = Cairn(f"http://127.0.0.1:{port}", timeout=0.2, retry=RetryPolicy(max_retries=1, **FAST))
        t0 = time.monotonic()
        with pytest.raises(TimeoutError) as e:
            c.health()
        assert isinstance(e.value, CairnError) and isinstance(e.value, builtins.TimeoutError)
        assert 0.4 <= time.monotonic() - t0 < 5, "two attempts of 0.2 s each"
    finally:
        listener.close()


def test_a_closed_port_is_a_connection_error_after_the_retries():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    seen = []
    c = Cairn(f"http://127.0.0.1:{port}",
              retry=RetryPolicy(max_retries=2, on_retry=lambda n, d, e: seen.append(n), **FAST))
    with pytest.raises(ConnectionError):
        c.forget_session("s", "x")
    assert seen == [1, 2], "never sent, so even a delete is retried"


@pytest.mark.anyio
async def test_async_client_retries_a_lost_write_with_the_same_key(idempotent_server):
    tr = AsyncFaulty(["refuse", "lose"])
    async with AsyncCairn(idempotent_server["url"], api_key=idempotent_server["admin"],
                          retry=RetryPolicy(**FAST), transport=tr) as c:
        r = await c.add_group_messages("py-aretry", [
            {"speaker": "Ines", "group": "ops", "time": "2025-01-02 10:00", "text": "Deploys freeze on Friday."}])
        assert r.replayed is True and r.messages_added == 1
        assert len({k for k in (q.headers.get("idempotency-key") for q in tr.seen)}) == 1
        assert len(tr.seen) == 3


@pytest.mark.anyio
async def test_async_client_does_not_retry_a_lost_delete(server):
    tr = AsyncFaulty(["lose"])
    async with AsyncCairn(server["url"], api_key=server["admin"], retry=RetryPolicy(**FAST),
                          transport=tr) as c:
        await c.ingest_session("py-adel", {"id": "x", "messages": [{"role": "user", "text": "bye"}]})
        tr.plan = ["lose"]
        with pytest.raises(ConnectionError):
            await c.forget_session("py-adel", "x")
        assert tr.seen[-1].method == "DELETE" and sum(r.method == "DELETE" for r in tr.seen) == 1


def test_concurrent_threads_share_one_client(server):
    with Cairn(server["url"], api_key=server["admin"]) as c:
        errors = []

        def work(i):
            try:
                c.add_messages("py-threads", f"t{i}", [{"role": "user", "text": f"thread {i} was here"}])
            except Exception as e:  # noqa: BLE001 (collected and asserted below)
                errors.append(e)

        threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors and c.stats("py-threads")[0].sessions == 8
