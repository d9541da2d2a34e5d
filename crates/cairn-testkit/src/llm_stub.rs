//! A scripted OpenAI-compatible server on a loopback port, for tests of everything that
//! talks to an LLM (exact requests, retries, malformed answers, a server that goes away).
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A request the stub received.
#[derive(Debug, Clone)]
pub struct StubRequest {
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Value,
}

impl StubRequest {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The text of the last message of a chat request.
    pub fn last_message(&self) -> &str {
        self.body
            .pointer("/messages")
            .and_then(Value::as_array)
            .and_then(|m| m.last())
            .and_then(|m| m.get("content"))
            .and_then(Value::as_str)
            .unwrap_or("")
    }
}

/// What the stub answers.
pub enum StubReply {
    /// A chat completion with this content (usage 10 prompt / 2 completion tokens).
    Chat(String),
    /// Any status and JSON body.
    Raw(u16, Value),
    /// Wait this long before answering (to trip client timeouts), then answer.
    Slow(Duration, Box<StubReply>),
    /// Close the connection without answering.
    Hangup,
}

type Handler = dyn Fn(&StubRequest) -> StubReply + Send + Sync;

/// A running stub; stops when dropped.
pub struct Stub {
    pub url: String,
    pub requests: Arc<Mutex<Vec<StubRequest>>>,
    /// Replies written so far (a test proves a client gave up before an answer came by
    /// finding none written, never by timing it).
    answered: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
    port: u16,
}

impl Stub {
    /// Starts a stub answering every request with `handler`.
    pub fn start(handler: impl Fn(&StubRequest) -> StubReply + Send + Sync + 'static) -> Stub {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind stub");
        let port = listener.local_addr().expect("addr").port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let answered = Arc::new(AtomicUsize::new(0));
        let handler: Arc<Handler> = Arc::new(handler);
        {
            let (requests, stop, answered) = (requests.clone(), stop.clone(), answered.clone());
            std::thread::spawn(move || {
                for conn in listener.incoming() {
                    if stop.load(Ordering::SeqCst) {
                        break;
                    }
                    let Ok(conn) = conn else { continue };
                    let (requests, handler, answered) =
                        (requests.clone(), handler.clone(), answered.clone());
                    std::thread::spawn(move || {
                        if serve(conn, &requests, handler.as_ref()) {
                            answered.fetch_add(1, Ordering::SeqCst);
                        }
                    });
                }
            });
        }
        Stub {
            url: format!("http://127.0.0.1:{port}/v1"),
            requests,
            answered,
            stop,
            port,
        }
    }

    pub fn requests(&self) -> Vec<StubRequest> {
        self.requests.lock().unwrap().clone()
    }

    /// How many replies the stub has written (a `Hangup` writes none).
    pub fn answered(&self) -> usize {
        self.answered.load(Ordering::SeqCst)
    }
}

impl Drop for Stub {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

/// A chat completion body with `content`.
pub fn chat_body(content: &str) -> Value {
    json!({
        "id": "stub", "object": "chat.completion", "model": "stub",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}
    })
}

/// Answers one connection; whether a reply was written.
fn serve(conn: TcpStream, requests: &Mutex<Vec<StubRequest>>, handler: &Handler) -> bool {
    let mut reader = BufReader::new(conn.try_clone().expect("clone stream"));
    let mut line = String::new();
    if reader.read_line(&mut line).unwrap_or(0) == 0 {
        return false;
    }
    let path = line.split_whitespace().nth(1).unwrap_or("").to_string();
    let mut headers = Vec::new();
    let mut len = 0usize;
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).unwrap_or(0) == 0 || h.trim().is_empty() {
            break;
        }
        if let Some((k, v)) = h.trim_end().split_once(':') {
            if k.eq_ignore_ascii_case("content-length") {
                len = v.trim().parse().unwrap_or(0);
            }
            headers.push((k.trim().to_string(), v.trim().to_string()));
        }
    }
    let mut body = vec![0; len];
    let _ = reader.read_exact(&mut body);
    let req = StubRequest {
        path,
        headers,
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
    };
    requests.lock().unwrap().push(req.clone());
    let mut reply = handler(&req);
    let mut conn = conn;
    loop {
        match reply {
            StubReply::Slow(d, next) => {
                std::thread::sleep(d);
                reply = *next;
            }
            StubReply::Hangup => return false,
            StubReply::Chat(text) => {
                reply = StubReply::Raw(200, chat_body(&text));
            }
            StubReply::Raw(status, v) => {
                let body = v.to_string();
                let _ = write!(
                    conn,
                    "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                return true;
            }
        }
    }
}
