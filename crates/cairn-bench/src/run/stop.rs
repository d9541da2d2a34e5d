//! Ctrl-C: stop after the question in progress, write what was done, and say how to
//! resume; a second Ctrl-C quits at once.
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

static STOP: AtomicBool = AtomicBool::new(false);
static HANDLER: OnceLock<bool> = OnceLock::new();

/// Asks a running benchmark to stop after the question in progress (what Ctrl-C does).
/// For callers that install their own Ctrl-C handler: the harness's own handler cannot be
/// installed next to it, so call this from yours.
pub fn request_stop() {
    STOP.store(true, Ordering::SeqCst);
}

fn install_ctrlc() {
    let ok = HANDLER.get_or_init(|| {
        ctrlc::set_handler(|| {
            if STOP.swap(true, Ordering::SeqCst) {
                eprintln!("\ninterrupted again: exiting now");
                std::process::exit(130);
            }
            eprintln!(
                "\ninterrupt: stopping after the current question (Ctrl-C again to quit at once)"
            );
        })
        .is_ok()
    });
    if !ok {
        tracing::debug!(
            "a Ctrl-C handler is already installed; it should call cairn_bench::request_stop"
        );
    }
}

/// Clears an earlier stop request and installs the Ctrl-C handler (once per process).
pub fn arm_stop() {
    STOP.store(false, Ordering::SeqCst);
    install_ctrlc();
}

/// Whether a stop was asked for (Ctrl-C or [`request_stop`]).
pub fn stopped() -> bool {
    STOP.load(Ordering::SeqCst)
}
