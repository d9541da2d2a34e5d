#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    (cairn_reliability::fuzz::target("session_json").expect("target").run)(data);
});
