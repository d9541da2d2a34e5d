//! Connections: how long a client may take, how many may be open, and how long a
//! shutdown waits. A client that opens a connection and sends nothing, half a request
//! head, or a body a byte at a time holds a socket (and a file descriptor) for as long
//! as the server lets it; these bounds make that short, so slow or idle clients cannot
//! starve the others or stall a shutdown.
//!
//! The accept loop drives hyper's HTTP/1 connection builder itself (axum's `serve` sets
//! no timeouts): a request head must arrive within `header_timeout` of the moment the
//! server starts waiting for it (the connection opening, or the previous response), so
//! the same bound closes idle keep-alive connections; a body must arrive within
//! `body_timeout` of the handler starting to read it (`wire::read_body`).
use crate::ServerError;
use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::{watch, Semaphore};
use tokio::task::JoinSet;

/// Bounds on connections and on how long clients may take.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// Time a client has to send a request head, from the connection opening or the
    /// previous response: also how long an idle keep-alive connection stays open.
    pub header_timeout: Duration,
    /// Time a client has to send a whole request body once its handler reads it.
    pub body_timeout: Duration,
    /// Connections served at once; more wait in the listen backlog until one closes.
    pub max_connections: usize,
    /// After a shutdown signal: time in-flight requests get to finish before the
    /// remaining connections are dropped.
    pub shutdown_timeout: Duration,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        Self {
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(30),
            max_connections: default_max_connections(),
            shutdown_timeout: Duration::from_secs(30),
        }
    }
}

/// 1024, or half the process's file-descriptor limit when that is lower: the stores
/// need descriptors too, and running out of them fails every request, health included.
pub fn default_max_connections() -> usize {
    const MOST: usize = 1024;
    #[cfg(unix)]
    {
        let mut lim = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit writes one rlimit into the struct it is given.
        if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } == 0 {
            let half = usize::try_from(lim.rlim_cur / 2).unwrap_or(MOST);
            return half.clamp(16, MOST);
        }
    }
    MOST
}

/// Serves `app` on `listener` until `shutdown` resolves, then lets in-flight requests
/// finish for up to `limits.shutdown_timeout` and drops what remains.
pub(crate) async fn serve(
    listener: TcpListener,
    app: Router,
    limits: ConnectionLimits,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), ServerError> {
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout)
        .keep_alive(true);
    let slots = std::sync::Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let (closing, closed) = watch::channel(false);
    let mut connections = JoinSet::new();
    tokio::pin!(shutdown);
    loop {
        while connections.try_join_next().is_some() {}
        let slot = tokio::select! {
            s = slots.clone().acquire_owned() => s.map_err(|e| ServerError::Config(e.to_string()))?,
            () = &mut shutdown => break,
        };
        let stream = tokio::select! {
            r = listener.accept() => match r {
                Ok((stream, _)) => stream,
                Err(e) => {
                    // Out of descriptors (or another transient error): wait, do not spin.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let service = TowerToHyperService::new(app.clone());
        let conn = http.serve_connection(TokioIo::new(stream), service);
        let mut closed = closed.clone();
        connections.spawn(async move {
            let _slot = slot;
            tokio::pin!(conn);
            tokio::select! {
                r = conn.as_mut() => log_end(r),
                _ = closed.changed() => {
                    // Finish the request in flight (if any), then close.
                    conn.as_mut().graceful_shutdown();
                    log_end(conn.await);
                }
            }
        });
    }
    drop(listener);
    let _ = closing.send(true);
    let drained = tokio::time::timeout(limits.shutdown_timeout, async {
        while connections.join_next().await.is_some() {}
    })
    .await;
    if drained.is_err() {
        tracing::warn!(
            open = connections.len(),
            "shutdown deadline passed; dropping the remaining connections"
        );
        connections.abort_all();
    }
    Ok(())
}

fn log_end(r: Result<(), hyper::Error>) {
    if let Err(e) = r {
        tracing::debug!(error = %e, "connection ended");
    }
}
