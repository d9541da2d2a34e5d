//! Export and import of a space (JSONL: session records, then trajectory records).
use super::handler::{ApiResult, S};
use super::idempotency::{ingested, write_options};
use crate::auth::{Need, Principal};
use crate::error::ApiError;
use crate::ops::blocking;
use crate::wire::doc::*;
use crate::wire::{read_body, require_media_type};
use axum::body::{Body, Bytes, HttpBody};
use axum::extract::{Path, Request, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Extension;
use hyper::body::Frame;
use serde_json::Value;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

#[utoipa::path(
    get,
    path = "/v1/spaces/{space}/export",
    operation_id = "export",
    tag = "sessions",
    summary = "Export a space",
    description = "JSONL, one SessionRecord per line, exactly as stored.",
    params(SpacePath),
    responses(
        (status = 200, description = "OK", body = String, content_type = "application/x-ndjson"),
        (status = 401, response = Unauthorized),
        (status = 403, response = Forbidden),
        (status = 404, response = NotFound),
        (status = 422, response = Invalid),
        (status = 500, response = Internal),
    ),
)]
pub(super) async fn export(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path(space): Path<String>,
) -> ApiResult<Response> {
    let pin = who.require_in(&space, Need::Read)?;
    // The export runs on the blocking pool and hands its lines over in chunks through a
    // small channel as the client reads them, so an export holds a few chunks and one
    // record, not the whole space (issue 54, finding 8: eight concurrent exports held
    // 680 MiB more and stalled a recall in another space).
    let (tx, mut rx) = tokio::sync::mpsc::channel::<Piece>(CHUNKS_IN_FLIGHT);
    let memory = st.memory.clone();
    tokio::task::spawn_blocking(move || {
        let mut w = Chunks {
            tx: tx.clone(),
            buf: Vec::with_capacity(CHUNK_BYTES),
        };
        let end = match memory
            .export_within(&space, pin.partition(), &mut w)
            .and_then(|_| w.send())
        {
            Ok(()) => Piece::Done,
            Err(e) => Piece::Failed(e),
        };
        // The client may be gone: then nobody needs the end.
        let _ = tx.blocking_send(end);
    });
    // What comes before the first line decides the status: a space that does not
    // exist, or any error before a line was written, is answered as such.
    let (first, ended) = match rx.recv().await {
        Some(Piece::Bytes(b)) => (Some(b), false),
        Some(Piece::Done) => (None, true),
        Some(Piece::Failed(e)) => return Err(ApiError::from(e)),
        None => {
            return Err(ApiError::internal(
                "the export stopped before its first line",
            ))
        }
    };
    let body = Body::new(Streamed { first, rx, ended });
    Ok(([(header::CONTENT_TYPE, "application/x-ndjson")], body).into_response())
}

/// The types an import body may declare: an export is JSON lines (one JSON value is one
/// line too).
const NDJSON: &[&str] = &[
    "application/x-ndjson",
    "application/ndjson",
    "application/jsonl",
    "application/x-jsonlines",
    "application/jsonlines",
    "application/json",
];

/// Restores an export (of this space or any other) into this space: every record is
/// written here whatever space its line names, so a key can neither write another space
/// through an import file nor have to rewrite an export to restore it elsewhere.
#[utoipa::path(
    post,
    path = "/v1/spaces/{space}/import",
    operation_id = "import",
    tag = "sessions",
    summary = "Import an export",
    description = "Restores an export (JSONL: session records, then trajectory records, as `export` writes them) into this space: every record is written here whatever space its line names, so an export of one space restores as another. Every line is read and checked before anything is written; errors name the line as `lines[i]`. Bounded like any write (at most `max_batch_sessions` records and `max_request_messages` messages and states); split a larger file by lines.",
    params(SpacePath, IdempotencyHeader),
    request_body(content = String, content_type = "application/x-ndjson"),
    responses(
        (status = 200, description = "OK", body = crate::wire::out::Ingested, headers(("Idempotency-Replayed" = String, description = "`true` when this is the stored answer to an earlier request with the same `Idempotency-Key`: nothing was written now."))),
        (status = 400, response = BadRequest),
        (status = 401, response = Unauthorized),
        (status = 403, response = Forbidden),
        (status = 409, response = Conflict),
        (status = 413, response = TooLarge),
        (status = 422, response = Invalid),
        (status = 500, response = Internal),
    ),
)]
pub(super) async fn import(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path(space): Path<String>,
    req: Request,
) -> ApiResult<Response> {
    let pin = who.require_in(&space, Need::Write)?;
    require_media_type(req.headers(), NDJSON, "application/x-ndjson")?;
    let opts = write_options(req.headers())?;
    let bytes = read_body(req, &st.config).await?;
    check_import(&st, &bytes)?;
    let report = blocking(&st, move |m| {
        m.import_within(
            std::io::Cursor::new(bytes),
            Some(&space),
            pin.partition(),
            &opts,
        )
    })
    .await?;
    Ok(ingested(report))
}

/// An import is bounded like any write: its messages and states count together.
fn check_import(st: &S, bytes: &[u8]) -> ApiResult<()> {
    let text = std::str::from_utf8(bytes).map_err(|_| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            "malformed_json",
            "body is not UTF-8",
        )
    })?;
    let limits = &st.config.limits;
    let (mut sessions, mut items) = (0usize, 0usize);
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let v: Value = serde_json::from_str(line).map_err(|e| {
            ApiError::new(
                StatusCode::BAD_REQUEST,
                "malformed_json",
                format!("line {}: malformed JSON: {e}", i + 1),
            )
            .with_field(format!("lines[{i}]"))
        })?;
        let count = |path: &[&str]| {
            path.iter()
                .try_fold(&v, |v, k| v.get(k))
                .and_then(Value::as_array)
                .map_or(0, Vec::len)
        };
        sessions += 1;
        items += count(&["session", "messages"]) + count(&["trajectory", "states"]);
    }
    if sessions > limits.max_batch_sessions || items > limits.max_request_messages {
        return Err(ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "too_much_work",
            format!(
                "{sessions} records with {items} messages and states in one import (at most {} records, {} messages and states); split the file by lines into several imports, or restore it locally with `cairn import`",
                limits.max_batch_sessions, limits.max_request_messages
            ),
        ));
    }
    Ok(())
}

/// Bytes of export lines gathered before they are handed to the client.
const CHUNK_BYTES: usize = 64 << 10;
/// Chunks an export may have written ahead of the client: with [`CHUNK_BYTES`], what an
/// export holds beyond the record it is writing.
const CHUNKS_IN_FLIGHT: usize = 4;

/// What the export's blocking task hands the answer.
enum Piece {
    Bytes(Bytes),
    /// Every line was written.
    Done,
    /// The export failed; before the first line this is the answer's status, after it
    /// the answer is cut off (a client never mistakes a partial export for a whole one).
    Failed(cairn::Error),
}

/// A writer that sends what is written in chunks of [`CHUNK_BYTES`], waiting while the
/// channel is full (the client reads slower than the export reads the store).
struct Chunks {
    tx: tokio::sync::mpsc::Sender<Piece>,
    buf: Vec<u8>,
}

impl Chunks {
    /// Sends what is gathered; fails once the answer is dropped (the client went away),
    /// which stops the export.
    fn send(&mut self) -> Result<(), cairn::Error> {
        std::io::Write::flush(self).map_err(|source| cairn::Error::Io {
            context: "export".into(),
            source,
        })
    }
}

impl std::io::Write for Chunks {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.buf.extend_from_slice(buf);
        if self.buf.len() >= CHUNK_BYTES {
            self.flush()?;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let chunk = Bytes::from(std::mem::replace(
            &mut self.buf,
            Vec::with_capacity(CHUNK_BYTES),
        ));
        self.tx.blocking_send(Piece::Bytes(chunk)).map_err(|_| {
            std::io::Error::new(std::io::ErrorKind::BrokenPipe, "the client went away")
        })
    }
}

/// The answer's body: the first chunk (already received to choose the status), then the
/// rest as the export sends it.
struct Streamed {
    first: Option<Bytes>,
    rx: tokio::sync::mpsc::Receiver<Piece>,
    ended: bool,
}

impl HttpBody for Streamed {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, std::io::Error>>> {
        if let Some(b) = self.first.take() {
            return Poll::Ready(Some(Ok(Frame::data(b))));
        }
        if self.ended {
            return Poll::Ready(None);
        }
        let piece = ready!(self.rx.poll_recv(cx));
        let cut = |why: String| {
            tracing::error!(error = %why, "export cut off");
            Some(Err(std::io::Error::other(why)))
        };
        Poll::Ready(match piece {
            Some(Piece::Bytes(b)) => Some(Ok(Frame::data(b))),
            Some(Piece::Done) => {
                self.ended = true;
                None
            }
            Some(Piece::Failed(e)) => {
                self.ended = true;
                cut(e.to_string())
            }
            None => {
                self.ended = true;
                cut("the export stopped".into())
            }
        })
    }

    fn is_end_stream(&self) -> bool {
        self.ended && self.first.is_none()
    }
}
