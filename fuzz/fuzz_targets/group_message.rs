#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    (cairn_reliability::fuzz::target("group_message").expect("target").run)(data);
});
