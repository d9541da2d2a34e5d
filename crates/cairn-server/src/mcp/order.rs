//! One connection, one order. The MCP library handles each request of a connection in a
//! task of its own, so a client that pipelines `remember` then `recall` on stdio could get
//! the recall answered first, without what it had just written (issue 53). [`InOrder`]
//! wraps a connection's transport and hands each request, as it is read, a [`Turn`] (in
//! the request's extensions, which the library moves into the handler's context); a tool
//! call waits for its turn, so the requests of one connection take effect in the order
//! they were sent. A turn is over when the handler drops it, answered or cancelled alike,
//! so a cancelled request never holds the connection up.
use rmcp::model::{GetExtensions, JsonRpcMessage};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::RoleServer;
use std::collections::BTreeSet;
use std::future::Future;
use std::sync::{Arc, Mutex};
use tokio::sync::watch;

/// A transport whose requests take turns in the order they were read.
pub(crate) struct InOrder<T> {
    inner: T,
    issued: u64,
    finished: Arc<Finished>,
}

impl<T> InOrder<T> {
    pub(crate) fn new(inner: T) -> Self {
        let (first_open, _) = watch::channel(0);
        Self {
            inner,
            issued: 0,
            finished: Arc::new(Finished {
                done: Mutex::new((0, BTreeSet::new())),
                first_open,
            }),
        }
    }
}

/// Which turns are over: every turn before the first still open, and those after it that
/// ended out of order (a cancelled one, or one that never waits, such as `ping`).
struct Finished {
    done: Mutex<(u64, BTreeSet<u64>)>,
    first_open: watch::Sender<u64>,
}

impl Finished {
    fn finish(&self, n: u64) {
        // A poisoned lock only means a panic elsewhere while it was held; the set is
        // still whole (each update is one insert or remove).
        let mut g = self.done.lock().unwrap_or_else(|p| p.into_inner());
        let (first, later) = &mut *g;
        later.insert(n);
        while later.remove(first) {
            *first += 1;
        }
        self.first_open.send_replace(*first);
    }
}

/// A request's place in its connection's order (see the module docs).
#[derive(Clone)]
pub(crate) struct Turn(Arc<Ticket>);

struct Ticket {
    n: u64,
    finished: Arc<Finished>,
}

impl Drop for Ticket {
    fn drop(&mut self) {
        self.finished.finish(self.n);
    }
}

impl Turn {
    /// Waits until every request read before this one is over.
    pub(crate) async fn wait(&self) {
        let mut first_open = self.0.finished.first_open.subscribe();
        // The sender lives as long as this turn's ticket, so the wait cannot fail.
        let _ = first_open.wait_for(|&first| first >= self.0.n).await;
    }
}

impl<T: Transport<RoleServer>> Transport<RoleServer> for InOrder<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        let mut m = self.inner.receive().await?;
        if let JsonRpcMessage::Request(r) = &mut m {
            let turn = Turn(Arc::new(Ticket {
                n: self.issued,
                finished: self.finished.clone(),
            }));
            self.issued += 1;
            r.request.extensions_mut().insert(turn);
        }
        Some(m)
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::task::{Context, Poll, Waker};

    fn turns(n: u64) -> Vec<Turn> {
        let order = InOrder::new(());
        (0..n)
            .map(|i| {
                Turn(Arc::new(Ticket {
                    n: i,
                    finished: order.finished.clone(),
                }))
            })
            .collect()
    }

    /// Whether `t`'s turn has come now (one poll, no waiting).
    fn has_come(t: &Turn) -> bool {
        let wait = std::pin::pin!(t.wait());
        wait.poll(&mut Context::from_waker(Waker::noop())) == Poll::Ready(())
    }

    #[test]
    fn a_turn_comes_once_every_earlier_one_ended_whatever_order_they_end_in() {
        let mut t = turns(3);
        let third = t.pop().unwrap();
        let second = t.pop().unwrap();
        let first = t.pop().unwrap();
        assert!(has_come(&first));
        assert!(!has_come(&second) && !has_come(&third));
        // The second ends first (a cancelled request): the third still waits for the first.
        drop(second);
        assert!(!has_come(&third), "the third ran before the first ended");
        drop(first);
        assert!(has_come(&third));
    }
}
