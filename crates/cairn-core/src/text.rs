//! Text helpers the crates share.

/// The longest prefix of `text` of at most `max` bytes that ends on a character boundary.
pub fn prefix(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prefix_ends_on_a_character_boundary() {
        assert_eq!(prefix("short", 10), "short");
        assert_eq!(prefix("abcdef", 3), "abc");
        // "é" is two bytes: a cut inside it stops before it.
        assert_eq!(prefix("aé", 2), "a");
        assert_eq!(prefix("aé", 3), "aé");
        assert_eq!(prefix("é", 0), "");
    }
}
