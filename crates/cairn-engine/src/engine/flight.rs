//! Single flight: when several requests need the same derived value that no cache holds
//! yet (a space's entity graph, its facts, its profile contributions: each a read of the
//! whole space), one builds it while the others wait and then find it cached, instead of
//! each building a copy (three listings after a write used to build three graphs).
use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Arc, Mutex};

pub(super) struct Flights<K>(Mutex<HashMap<K, Arc<Mutex<()>>>>);

impl<K> Default for Flights<K> {
    fn default() -> Self {
        Self(Mutex::new(HashMap::new()))
    }
}

impl<K: Hash + Eq + Clone> Flights<K> {
    /// Runs `build` with `key`'s flight held: callers for one key run one at a time, so
    /// a caller that waited finds what the one before it cached (`build` looks first).
    pub(super) fn one_at_a_time<T>(&self, key: &K, build: impl FnOnce() -> T) -> T {
        let flight = self
            .0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(key.clone())
            .or_default()
            .clone();
        let out = {
            let _held = flight.lock().unwrap_or_else(|p| p.into_inner());
            build()
        };
        let mut flights = self.0.lock().unwrap_or_else(|p| p.into_inner());
        // Nobody else holds or waits for it (the map's reference and this one): gone.
        if Arc::strong_count(&flight) == 2 {
            flights.remove(key);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn concurrent_callers_build_once_and_leave_nothing_behind() {
        let flights: Flights<&str> = Flights::default();
        let cached: Mutex<Option<usize>> = Mutex::new(None);
        let builds = AtomicUsize::new(0);
        std::thread::scope(|s| {
            for _ in 0..8 {
                s.spawn(|| {
                    flights.one_at_a_time(&"space", || {
                        if let Some(v) = *cached.lock().unwrap() {
                            return v;
                        }
                        builds.fetch_add(1, Ordering::SeqCst);
                        std::thread::sleep(std::time::Duration::from_millis(20));
                        *cached.lock().unwrap() = Some(7);
                        7
                    })
                });
            }
        });
        assert_eq!(builds.load(Ordering::SeqCst), 1);
        assert!(flights.0.lock().unwrap().is_empty());
    }
}
