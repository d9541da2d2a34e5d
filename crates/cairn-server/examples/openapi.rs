//! Prints the OpenAPI document the server serves, generated from its wire types:
//! `cargo run --release -p cairn-server --example openapi > crates/cairn-server/openapi.json`
//! (`tests/http.rs` fails when the checked-in file differs).
use std::io::Write;

fn main() -> std::io::Result<()> {
    std::io::stdout().write_all(cairn_server::openapi_text().as_bytes())
}
