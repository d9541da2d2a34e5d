//! Synthetic writes with a unique nonce word each, so every acknowledged write can be
//! read back and recalled by a query only it answers.
use crate::fuzz::Rng;
use cairn_load::corpus::PLACES as CITIES;
use chrono::{Duration as Days, TimeZone, Utc};
use serde_json::{json, Value};

const THINGS: &[&str] = &[
    "bicycle",
    "guitar",
    "camera",
    "laptop",
    "kayak",
    "telescope",
    "tent",
    "drone",
];

/// A pronounceable nonce made of letters only (survives tokenizing and stemming alike in
/// documents and queries), e.g. `zobakilu`.
pub fn nonce(rng: &mut Rng) -> String {
    const C: &[u8] = b"bdfgklmnprstvz";
    const V: &[u8] = b"aeiou";
    let mut s = String::from("z");
    for _ in 0..4 {
        s.push(C[rng.below(C.len())] as char);
        s.push(V[rng.below(V.len())] as char);
    }
    s
}

/// A session of two exchanges about parcel `nonce`; the texts it holds.
pub fn session(id: &str, nonce: &str, rng: &mut Rng) -> (Value, Vec<String>) {
    let city = CITIES[rng.below(CITIES.len())];
    let thing = THINGS[rng.below(THINGS.len())];
    let n = rng.range(100, 999);
    let texts = vec![
        format!("Parcel {nonce} with my {thing} was shipped to {city} on pier {n}."),
        format!("Noted: parcel {nonce} (the {thing}) went to {city}, pier {n}."),
        format!(
            "Also, the {thing} in parcel {nonce} is insured for {} dollars.",
            n * 3
        ),
        "Insurance noted.".to_string(),
    ];
    let day = Utc
        .with_ymd_and_hms(2024, 1, 1, 9, 0, 0)
        .single()
        .expect("date")
        + Days::days(rng.below(360) as i64);
    let v = json!({
        "id": id,
        "date": day.format("%Y-%m-%d %H:%M").to_string(),
        "metadata": {"driver": "reliability"},
        "messages": [
            {"role": "user", "text": texts[0]},
            {"role": "assistant", "text": texts[1]},
            {"role": "user", "text": texts[2]},
            {"role": "assistant", "text": texts[3]},
        ]
    });
    (v, texts)
}

/// A group message about `nonce`, sent at minute `minute` after 2024-01-01; returns the
/// message and the session (`<group>/<day>`) it lands in.
pub fn group_message(
    group: &str,
    id: &str,
    nonce: &str,
    minute: i64,
    rng: &mut Rng,
) -> (Value, String) {
    let t = Utc
        .with_ymd_and_hms(2024, 1, 1, 0, 0, 0)
        .single()
        .expect("date")
        + Days::minutes(minute);
    let city = CITIES[rng.below(CITIES.len())];
    let text = format!("Team update: crate {nonce} leaves for {city} tomorrow.");
    let speaker = ["Maya", "Tom", "Priya"][rng.below(3)];
    let v = json!({
        "id": id, "speaker": speaker, "group": group,
        "time": t.to_rfc3339(), "text": text,
    });
    (v, format!("{group}/{}", t.format("%Y-%m-%d")))
}
