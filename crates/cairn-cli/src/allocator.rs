//! The process's memory allocator: mimalloc, keeping freed memory for a while.

// candle allocates and frees multi-megabyte tensors for every layer of every batch;
// glibc's allocator hands each back to the kernel, so embedding spent a third of its
// time in page faults. mimalloc keeps them.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// mimalloc's `mi_option_purge_delay`: its place in the option enum of the mimalloc v3
/// sources libmimalloc-sys builds, which names no constant for it (checked by
/// `the_option_set_is_the_purge_delay`).
const PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// How long freed memory stays with the process before it goes back to the kernel.
/// mimalloc's own default is 1 s; then a request that drops and rebuilds a large space's
/// derived state (its fact index: hundreds of MB at 64,000 facts) a second or more after
/// the last one gets all of it back as fresh pages, zeroed by the kernel one fault at a
/// time: 17,000 faults and about a fifth of the request's CPU at 32,000 speakers, and a
/// share that grew with the space (docs/reliability.md, issue 38). Ten seconds is
/// jemalloc's default decay. `MIMALLOC_PURGE_DELAY` in the environment still decides.
const PURGE_DELAY_MS: std::ffi::c_long = 10_000;

/// Sets [`PURGE_DELAY_MS`] unless the environment set the delay. Call it first in `main`:
/// mimalloc's option setters are not thread safe.
pub fn keep_freed_memory() {
    // SAFETY: no other thread runs yet; the option exists in this mimalloc (see the test).
    unsafe { libmimalloc_sys::mi_option_set_default(PURGE_DELAY, PURGE_DELAY_MS) }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Only the purge delay defaults to 1,000 among mimalloc v3's options, so reading
    /// 1,000 at [`PURGE_DELAY`] before it is set says the constant names that option.
    #[test]
    fn the_option_set_is_the_purge_delay() {
        if std::env::var_os("MIMALLOC_PURGE_DELAY").is_some() {
            return;
        }
        // SAFETY: reads and writes one option; mimalloc is initialized by now.
        let (before, after) = unsafe {
            let before = libmimalloc_sys::mi_option_get(PURGE_DELAY);
            keep_freed_memory();
            (before, libmimalloc_sys::mi_option_get(PURGE_DELAY))
        };
        assert_eq!(
            before, 1_000,
            "option {PURGE_DELAY} is not mimalloc's purge delay"
        );
        assert_eq!(after, PURGE_DELAY_MS);
    }
}
