//! What a test does when something it needs is not on this machine: by default it says
//! `SKIPPED: ...` on stderr and passes, so `cargo test` works on a bare checkout; in CI
//! (`.ci/run`) the switches make the same absence a failure, so a broken setup cannot
//! pass as a green run.
//!
//! - `CAIRN_REQUIRE_MODEL`: a missing embedding model fails the test.
//! - `CAIRN_REQUIRE_POSTGRES`: a missing `CAIRN_TEST_DATABASE_URL` fails the test.
//! - `CAIRN_REQUIRE_DATA`: a missing benchmark data file fails the test
//!   ([`crate::fixtures::data_file`]).
//! - `CAIRN_REQUIRE_MOUNT`: a test that mounts a small file system (a full disk) and
//!   cannot (not root) fails ([`mount_missing`]).
//!
//! A switch is on when its variable is set to anything but the empty string or `0`.
use std::collections::HashSet;
use std::fmt::Display;
use std::sync::Mutex;

pub const REQUIRE_MODEL: &str = "CAIRN_REQUIRE_MODEL";
pub const REQUIRE_POSTGRES: &str = "CAIRN_REQUIRE_POSTGRES";
pub const REQUIRE_DATA: &str = "CAIRN_REQUIRE_DATA";
pub const REQUIRE_MOUNT: &str = "CAIRN_REQUIRE_MOUNT";
/// The PostgreSQL database (with pgvector) the backend tests use.
pub const DATABASE_URL: &str = "CAIRN_TEST_DATABASE_URL";

/// Whether the switch `name` is on.
pub fn switch_on(name: &str) -> bool {
    std::env::var(name).is_ok_and(|v| !v.is_empty() && v != "0")
}

/// Whether a missing embedding model fails tests ([`REQUIRE_MODEL`]).
pub fn model_required() -> bool {
    switch_on(REQUIRE_MODEL)
}

/// Call where a test finds the embedding model missing (`why`: the error that said so),
/// then return from the test: it prints `SKIPPED`, or panics under
/// `CAIRN_REQUIRE_MODEL`.
#[track_caller]
pub fn model_missing(why: impl Display) {
    assert!(
        !model_required(),
        "{REQUIRE_MODEL} is set but the embedding model is missing: {why}"
    );
    eprintln!(
        "SKIPPED: embedding model not installed ({why}); run ./scripts/setup.sh \
         ({REQUIRE_MODEL}=1 makes this a failure)"
    );
}

/// Call where a test could not mount the file system it needs (`why`: the error that
/// said so), then return from the test: it prints `SKIPPED`, or panics under
/// `CAIRN_REQUIRE_MOUNT`.
#[track_caller]
pub fn mount_missing(why: impl Display) {
    assert!(
        !switch_on(REQUIRE_MOUNT),
        "{REQUIRE_MOUNT} is set but the test could not mount its file system: {why}"
    );
    eprintln!("SKIPPED: needs root to mount tmpfs ({why}); {REQUIRE_MOUNT}=1 makes this a failure");
}

/// `CAIRN_TEST_DATABASE_URL`, or `None` after saying `SKIPPED: <what>` (once per `what`
/// and process); under `CAIRN_REQUIRE_POSTGRES` a missing URL panics instead.
#[track_caller]
pub fn database_url(what: &str) -> Option<String> {
    static SAID: Mutex<Option<HashSet<String>>> = Mutex::new(None);
    match std::env::var(DATABASE_URL) {
        Ok(u) if !u.is_empty() => Some(u),
        _ => {
            assert!(
                !switch_on(REQUIRE_POSTGRES),
                "{REQUIRE_POSTGRES} is set but {DATABASE_URL} is not"
            );
            let mut said = SAID.lock().unwrap_or_else(|p| p.into_inner());
            if said
                .get_or_insert_with(HashSet::new)
                .insert(what.to_string())
            {
                eprintln!(
                    "SKIPPED: {what} (set {DATABASE_URL}, e.g. eval \"$(./scripts/postgres.sh)\")"
                );
            }
            None
        }
    }
}
