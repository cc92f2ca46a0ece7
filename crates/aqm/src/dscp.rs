//! Differentiated Services codepoints (RFC 2474 §3: the six high bits of the IPv4 TOS /
//! IPv6 traffic-class byte) by their registered names.
//!
//! Names: `CS0`..`CS7` (RFC 2474 §4.2.2, class selectors `8 x n`), `AF11`..`AF43` (RFC 2597
//! §6, `8 x class + 2 x drop precedence`), `EF` (RFC 3246, 46), `VA` (RFC 5865, 44), `LE`
//! (RFC 8622, 1) and `BE` (= `CS0`, 0). Case is ignored.

/// The highest codepoint (six bits).
pub const MAX: u8 = 63;

/// The named codepoints, in the order [`name`] prefers for a value (`BE` before `CS0`).
const NAMES: &[(&str, u8)] = &[
    ("BE", 0),
    ("CS0", 0),
    ("LE", 1),
    ("CS1", 8),
    ("AF11", 10),
    ("AF12", 12),
    ("AF13", 14),
    ("CS2", 16),
    ("AF21", 18),
    ("AF22", 20),
    ("AF23", 22),
    ("CS3", 24),
    ("AF31", 26),
    ("AF32", 28),
    ("AF33", 30),
    ("CS4", 32),
    ("AF41", 34),
    ("AF42", 36),
    ("AF43", 38),
    ("CS5", 40),
    ("VA", 44),
    ("EF", 46),
    ("CS6", 48),
    ("CS7", 56),
];

/// The codepoint named `s` (case ignored), or `None`.
pub fn parse(s: &str) -> Option<u8> {
    let s = s.trim();
    NAMES
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(s))
        .map(|&(_, v)| v)
}

/// The registered name of codepoint `v` (`BE` for 0), or `None` for an unnamed value.
pub fn name(v: u8) -> Option<&'static str> {
    NAMES.iter().find(|&&(_, x)| x == v).map(|&(n, _)| n)
}

/// Every accepted name, for error messages and docs.
pub fn names() -> impl Iterator<Item = &'static str> {
    NAMES.iter().map(|&(n, _)| n)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The values by their RFCs' formulas: CSn = 8n (RFC 2474 §4.2.2.1), AFxy = 8x + 2y
    /// (RFC 2597 §6), EF = 46 (RFC 3246 §2.1 / RFC 5865 §1 for VA = 44), LE = 1 (RFC 8622 §4).
    #[test]
    fn values_by_formula() {
        for n in 0..8u8 {
            assert_eq!(parse(&format!("cs{n}")), Some(8 * n));
        }
        for x in 1..5u8 {
            for y in 1..4u8 {
                assert_eq!(parse(&format!("AF{x}{y}")), Some(8 * x + 2 * y));
            }
        }
        assert_eq!(parse("EF"), Some(46));
        assert_eq!(parse(" va "), Some(44));
        assert_eq!(parse("le"), Some(1));
        assert_eq!(parse("be"), Some(0));
        assert_eq!(parse("AF44"), None);
        assert_eq!(parse("CS8"), None);
        assert_eq!(name(0), Some("BE"));
        assert_eq!(name(46), Some("EF"));
        assert_eq!(name(7), None);
        assert!(NAMES.iter().all(|&(_, v)| v <= MAX));
    }
}
