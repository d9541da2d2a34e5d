//! Times the write path of a large space whose graph is saved: open the store, write one
//! vector (which loads the saved graph so the write lands in it), search for it, close
//! (which saves the graph), then open again and search (which loads the saved graph).
//! Changes the data directory (adds one vector to SPACE, unit id `graph-write-probe`):
//! `cargo run --release -p cairn-store --example graph_write -- DATA_DIR SPACE`.
use cairn_core::{SpaceId, VectorIndex};
use cairn_store::EmbeddedStore;
use std::path::Path;
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let (Some(dir), Some(space)) = (args.get(1), args.get(2)) else {
        return Err("usage: graph_write DATA_DIR SPACE".into());
    };
    let dir = Path::new(dir);
    // The model the directory's vectors were made with: another would discard them.
    let model: String = rusqlite::Connection::open(dir.join("records.sqlite3"))?.query_row(
        "SELECT value FROM meta WHERE key='vector_model'",
        [],
        |r| r.get(0),
    )?;
    let space = SpaceId::new(space)?;
    let mut probe = vec![0.0f32; 384];
    probe[5] = 1.0;
    let t = Instant::now();
    let store = EmbeddedStore::open(dir, &model)?;
    let open = t.elapsed().as_secs_f64();
    let t = Instant::now();
    store
        .vectors
        .upsert(&space, &[("graph-write-probe".into(), probe.clone())], 0)?;
    let write = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let hit = store.vectors.search(&space, &probe, 1)?;
    let search = t.elapsed().as_secs_f64();
    let events = store.vectors.graph_events();
    let t = Instant::now();
    drop(store);
    let close = t.elapsed().as_secs_f64();
    println!(
        "open {open:.2} s, first write {write:.2} s, search {search:.4} s ({hit:?}), {events:?}, close {close:.2} s"
    );
    let t = Instant::now();
    let store = EmbeddedStore::open(dir, &model)?;
    let hit = store.vectors.search(&space, &probe, 1)?;
    println!(
        "reopen and first search {:.2} s ({hit:?}), {:?}",
        t.elapsed().as_secs_f64(),
        store.vectors.graph_events()
    );
    Ok(())
}
