//! The spaces of a bad-input run: the one its corpus is sent to, and a bystander that
//! no request to the first may touch.
pub const SPACE: &str = "bad";
pub(super) const OTHER: &str = "bystander";
