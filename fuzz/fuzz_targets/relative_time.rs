#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    (cairn_reliability::fuzz::target("relative_time").expect("target").run)(data);
});
