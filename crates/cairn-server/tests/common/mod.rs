#![allow(dead_code)]
//! A real server on a free loopback port, over a real memory (the installed embedding
//! model), driven by a plain HTTP client.
use cairn::Memory;
use cairn_server::{AppState, ServerConfig};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;
use std::sync::{Arc, Mutex};

pub const ADMIN: &str = "test-admin-key-0123456789abcdef";

pub struct Server {
    pub base: String,
    pub state: Option<Arc<AppState>>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
    /// (method, route template) of every request made, to prove coverage.
    pub hit: Mutex<BTreeSet<(String, String)>>,
}

/// Starts a server over `dir`, or None (SKIPPED; a failure under `CAIRN_REQUIRE_MODEL`)
/// when the embedding model is absent.
pub fn start(dir: &Path, config: ServerConfig) -> Option<Server> {
    let memory = match Memory::open(dir) {
        Ok(m) => m,
        Err(cairn::Error::Model(e)) => {
            cairn_testkit::model_missing(e);
            return None;
        }
        Err(e) => panic!("open failed: {e}"),
    };
    Some(serve(memory, config))
}

/// A server over a memory the test opened (another backend, another embedder).
pub fn serve(memory: Memory, config: ServerConfig) -> Server {
    let state = AppState::new(Arc::new(memory), config).expect("state");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let (addr_tx, addr_rx) = std::sync::mpsc::channel();
    let st = state.clone();
    let thread = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("runtime");
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                .await
                .expect("bind");
            addr_tx
                .send(listener.local_addr().expect("addr"))
                .expect("send");
            cairn_server::serve(listener, st, async {
                let _ = stopped.await;
            })
            .await
            .expect("serve");
        });
    });
    let addr = addr_rx.recv().expect("server address");
    Server {
        base: format!("http://{addr}"),
        state: Some(state),
        stop: Some(stop),
        thread: Some(thread),
        hit: Mutex::new(BTreeSet::new()),
    }
}

pub fn admin_config() -> ServerConfig {
    ServerConfig {
        auth: cairn_server::AuthMode::Keys {
            admin_key: Some(ADMIN.into()),
        },
        ..Default::default()
    }
}

/// A response: status and body (JSON when it parses, else a string).
#[derive(Debug)]
pub struct Resp {
    pub status: u16,
    pub content_type: String,
    pub body: Value,
    pub text: String,
    /// The answer carried `Idempotency-Replayed: true`.
    pub replayed: bool,
}

impl Resp {
    /// The problem `code` of an error response.
    pub fn code(&self) -> &str {
        self.body["code"].as_str().unwrap_or("")
    }
}

fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b':' | b'@' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

impl Server {
    /// `template` is a route of the table (`/v1/spaces/{space}/recall`); `args` fill its
    /// `{...}` parts in order (percent-encoded). `query` is appended as is.
    pub fn call(
        &self,
        method: &str,
        template: &str,
        args: &[&str],
        query: &str,
        key: Option<&str>,
        body: Option<(&str, &str)>,
    ) -> Resp {
        self.call_with(method, template, args, query, key, body, &[])
    }

    /// [`Server::call`] with extra request headers.
    #[allow(clippy::too_many_arguments)]
    pub fn call_with(
        &self,
        method: &str,
        template: &str,
        args: &[&str],
        query: &str,
        key: Option<&str>,
        body: Option<(&str, &str)>,
        headers: &[(&str, &str)],
    ) -> Resp {
        self.hit
            .lock()
            .unwrap()
            .insert((method.to_string(), template.to_string()));
        let mut path = String::new();
        let mut rest = template;
        let mut args = args.iter();
        while let Some(open) = rest.find('{') {
            let close = rest[open..].find('}').expect("closing brace") + open;
            path.push_str(&rest[..open]);
            path.push_str(&encode(args.next().expect("an argument per {param}")));
            rest = &rest[close + 1..];
        }
        path.push_str(rest);
        let url = format!("{}{path}{query}", self.base);
        let agent = cairn_load::client::agent(std::time::Duration::from_secs(120));
        // MCP's streamable HTTP asks clients to accept both; the REST routes ignore it.
        let bearer = key.map(|k| format!("Bearer {k}"));
        let mut all = vec![("Accept", "application/json, text/event-stream")];
        all.extend(bearer.as_deref().map(|b| ("Authorization", b)));
        all.extend_from_slice(headers);
        let body = body.map(|(ctype, b)| (ctype, b.as_bytes()));
        let resp = cairn_load::client::send(&agent, method, &url, &all, body)
            .unwrap_or_else(|e| panic!("{e}"));
        let status = resp.status;
        let content_type = resp.header("content-type").unwrap_or("").to_string();
        let replayed = resp.header("idempotency-replayed") == Some("true");
        let text = resp.text;
        let body = serde_json::from_str(&text).unwrap_or(Value::String(text.clone()));
        if content_type.starts_with("application/json") && template.starts_with("/v1") {
            if let Err(e) = conforms_to_spec(method, template, status, &body) {
                panic!("{method} {template} -> {status}: the body is not what openapi.json says: {e}\n{text}");
            }
        }
        Resp {
            status,
            content_type,
            body,
            text,
            replayed,
        }
    }

    pub fn get(&self, template: &str, args: &[&str], key: &str) -> Resp {
        self.call("GET", template, args, "", Some(key), None)
    }

    pub fn post(&self, template: &str, args: &[&str], key: &str, json: &Value) -> Resp {
        self.call(
            "POST",
            template,
            args,
            "",
            Some(key),
            Some(("application/json", &json.to_string())),
        )
    }

    pub fn delete(&self, template: &str, args: &[&str], key: &str) -> Resp {
        self.call("DELETE", template, args, "", Some(key), None)
    }

    /// Stops the server and closes the memory (flushing its indexes).
    pub fn stop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.thread.take() {
            t.join().expect("server thread");
        }
        self.state = None;
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Checks a JSON answer against the schema `openapi.json` gives for it: every object key
/// must be a declared property (so a renamed or added library field cannot reach the wire
/// unnoticed), and declared properties must have their declared types.
pub fn conforms_to_spec(
    method: &str,
    template: &str,
    status: u16,
    body: &Value,
) -> Result<(), String> {
    let spec: Value = serde_json::from_str(cairn_server::OPENAPI).map_err(|e| e.to_string())?;
    let op = &spec["paths"][template][method.to_ascii_lowercase()];
    let mut response = &op["responses"][status.to_string()];
    if let Some(r) = response["$ref"].as_str() {
        response = resolve(&spec, r);
    }
    let schema = &response["content"]["application/json"]["schema"];
    if schema.is_null() {
        return Ok(());
    }
    check(&spec, schema, body, "$")
}

fn resolve<'a>(spec: &'a Value, reference: &str) -> &'a Value {
    reference
        .trim_start_matches("#/")
        .split('/')
        .fold(spec, |v, k| &v[k])
}

fn check(spec: &Value, schema: &Value, v: &Value, at: &str) -> Result<(), String> {
    let schema = match schema["$ref"].as_str() {
        Some(r) => resolve(spec, r),
        None => schema,
    };
    if v.is_null() {
        return Ok(());
    }
    if let Some(alts) = schema["oneOf"].as_array().or(schema["anyOf"].as_array()) {
        return match alts.iter().any(|a| check(spec, a, v, at).is_ok()) {
            true => Ok(()),
            false => Err(format!("{at}: matches none of its alternatives")),
        };
    }
    let types: Vec<&str> = match &schema["type"] {
        Value::String(t) => vec![t.as_str()],
        Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
        _ => vec![],
    };
    let kind = match v {
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
        Value::Null => "null",
    };
    let fits = types.is_empty()
        || types.contains(&kind)
        || (kind == "integer" && types.contains(&"number"));
    if !fits {
        return Err(format!("{at}: a {kind}, the spec says {types:?}"));
    }
    match v {
        Value::Object(map) => {
            let Some(props) = schema["properties"].as_object() else {
                return Ok(());
            };
            for (k, x) in map {
                match props.get(k) {
                    Some(p) => check(spec, p, x, &format!("{at}.{k}"))?,
                    None if schema["additionalProperties"].is_object()
                        || schema["additionalProperties"] == Value::Bool(true) => {}
                    None => return Err(format!("{at}.{k}: not in the spec")),
                }
            }
            Ok(())
        }
        Value::Array(items) => items
            .iter()
            .enumerate()
            .try_for_each(|(i, x)| check(spec, &schema["items"], x, &format!("{at}[{i}]"))),
        _ => Ok(()),
    }
}

pub fn ok(r: &Resp) {
    assert!(r.status < 300, "{} {}", r.status, r.text);
}

pub fn mcp(s: &Server, key: &str, id: u64, method: &str, params: Value) -> Resp {
    s.call(
        "POST",
        "/mcp",
        &[],
        "",
        Some(key),
        Some((
            "application/json",
            &serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
                .to_string(),
        )),
    )
}

pub fn mcp_init(s: &Server, key: &str) -> Resp {
    mcp(
        s,
        key,
        1,
        "initialize",
        serde_json::json!({"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "cairn-test", "version": "1"}}),
    )
}

/// The text of a tool result (the tools answer JSON as text) and whether it is an error.
pub fn tool(s: &Server, key: &str, name: &str, args: Value) -> (bool, Value) {
    let r = mcp(
        s,
        key,
        2,
        "tools/call",
        serde_json::json!({"name": name, "arguments": args}),
    );
    ok(&r);
    let result = &r.body["result"];
    let text = result["content"][0]["text"]
        .as_str()
        .unwrap_or("")
        .to_string();
    let is_error = result["isError"].as_bool().unwrap_or(false);
    (
        is_error,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

pub fn session(id: &str, text: &str, reply: &str, metadata: Value) -> Value {
    serde_json::json!({
        "id": id, "date": "2024-03-01 09:30", "metadata": metadata,
        "messages": [{"role": "user", "text": text}, {"role": "assistant", "text": reply}]
    })
}
