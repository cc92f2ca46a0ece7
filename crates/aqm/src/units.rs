//! Quantities written ns-3/tc style: `10Mbps`, `1.5MBps`, `5ms`, `60s`, `1500B`, `64KiB`,
//! `3750pps`. The one parser of the project: the scenario schema, the CLI and the Python API
//! all call it.
//!
//! Every function returns the SI base unit as `f64`: seconds, bits per second, bytes, packets
//! per second. A bare number is the base unit. Prefixes are decimal (`k` = 1000) except the
//! binary `Ki`/`Mi`/`Gi` of sizes. The case of `b`/`B` is significant and nothing else is:
//! `Mbps`, `mbps`, `Mbit` and `Mb/s` are megabits per second (ns-3's `DataRate` reading);
//! `MBps` and `MB/s` are megabytes per second; `10MBPS` is an error, not a guess.
//!
//! ```
//! use aqm::units::{parse, Kind};
//! assert_eq!(parse(Kind::Rate, "10Mbps").unwrap(), 10e6);
//! assert_eq!(parse(Kind::Rate, "1MBps").unwrap(), 8e6);
//! assert_eq!(parse(Kind::Time, "5ms").unwrap(), 0.005);
//! assert_eq!(parse(Kind::Size, "1.5kB").unwrap(), 1500.0);
//! assert!(parse(Kind::Rate, "10MBPS").is_err());
//! ```

use core::fmt;

/// What a quantity measures, and so which units it takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Seconds: `s`, `sec`, `ms`, `us`, `µs`, `ns`, `min`, `h`.
    Time,
    /// Bits per second: `bps`, `kbps`, `Mbps`, `Gbps`, `Tbps`, `bit`, `kbit`, `Mbit`, `Gbit`,
    /// `b/s`, `kb/s`, `Mb/s`, `Gb/s`; bytes per second: `Bps`, `kBps`, `MBps`, `GBps`, `B/s`,
    /// `kB/s`, `MB/s`, `GB/s`.
    Rate,
    /// Bytes: `B`, `byte`, `bytes`, `kB`, `MB`, `GB`, `KiB`, `MiB`, `GiB`.
    Size,
    /// Packets per second: `pps`, `pkt/s`, `pkts/s`, `packets/s`.
    PacketRate,
}

impl Kind {
    /// The name used in messages (`rate`, `time`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Kind::Time => "time",
            Kind::Rate => "rate",
            Kind::Size => "size",
            Kind::PacketRate => "packet rate",
        }
    }

    /// An example with a unit, for messages (`10Mbps`).
    pub fn example(self, value: &str) -> String {
        let unit = match self {
            Kind::Time => "ms",
            Kind::Rate => "Mbps",
            Kind::Size => "B",
            Kind::PacketRate => "pps",
        };
        format!("{value}{unit}")
    }
}

/// A quantity that could not be parsed; `Display` gives the reason without the key
/// (callers prefix `key = value: `).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UnitError {
    /// Not of the form number + unit.
    Syntax,
    /// The unit is not one of this kind's.
    UnknownUnit {
        /// The unit as written.
        unit: String,
        /// What was being parsed.
        kind: Kind,
    },
    /// The number overflows to infinity or is NaN.
    NotFinite {
        /// What was being parsed.
        kind: Kind,
    },
    /// A bare number where the caller requires a unit (the command line).
    MissingUnit {
        /// What was being parsed.
        kind: Kind,
        /// The number as written.
        number: String,
    },
}

impl fmt::Display for UnitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UnitError::Syntax => write!(f, "not a number with a unit"),
            UnitError::UnknownUnit { unit, kind } => {
                write!(
                    f,
                    "unknown {} unit '{unit}' ({})",
                    kind.name(),
                    units_help(*kind)
                )
            }
            UnitError::NotFinite { kind } => write!(f, "not a finite {}", kind.name()),
            UnitError::MissingUnit { kind, number } => {
                write!(f, "give a unit, e.g. {}", kind.example(number))
            }
        }
    }
}

impl std::error::Error for UnitError {}

fn units_help(kind: Kind) -> &'static str {
    match kind {
        Kind::Time => "use s, ms, us, ns, min or h",
        Kind::Rate => "use bps, kbps, Mbps, Gbps for bits/s or Bps, kBps, MBps for bytes/s",
        Kind::Size => "use B, kB, MB, GB, KiB, MiB or GiB",
        Kind::PacketRate => "use pps",
    }
}

/// Multiplier of a decimal prefix letter (case-insensitive), `None` for no prefix.
fn si_prefix(c: char) -> Option<f64> {
    match c.to_ascii_lowercase() {
        'k' => Some(1e3),
        'm' => Some(1e6),
        'g' => Some(1e9),
        't' => Some(1e12),
        _ => None,
    }
}

/// Splits `unit` into a decimal prefix multiplier and the rest.
fn split_prefix(unit: &str) -> (f64, &str) {
    let mut chars = unit.chars();
    match chars.next().and_then(si_prefix) {
        Some(m) if unit.len() > 1 => (m, chars.as_str()),
        _ => (1.0, unit),
    }
}

fn rate_unit(unit: &str) -> Option<f64> {
    if unit.is_empty() {
        return Some(1.0);
    }
    let (mult, base) = split_prefix(unit);
    let bits = match base {
        "bps" | "b/s" | "bit" | "bits" | "bit/s" | "bits/s" => 1.0,
        "Bps" | "B/s" | "byte/s" | "bytes/s" => 8.0,
        _ => {
            // the whole unit without a prefix (`bps`, `Bps`) was handled above; `mbps` etc.
            // reach here only with a prefix letter that is not one
            return None;
        }
    };
    Some(mult * bits)
}

/// Seconds per unit; a negative entry `-d` means "divide by `d`", which keeps `5ms` exactly
/// the `f64` nearest to 0.005.
fn time_unit(unit: &str) -> Option<f64> {
    Some(match unit.to_ascii_lowercase().as_str() {
        "" | "s" | "sec" | "secs" | "second" | "seconds" => 1.0,
        "ms" => -1e3,
        "us" | "µs" => -1e6,
        "ns" => -1e9,
        "min" => 60.0,
        "h" => 3600.0,
        _ => return None,
    })
}

fn size_unit(unit: &str) -> Option<f64> {
    Some(match unit {
        "" | "B" | "byte" | "bytes" => 1.0,
        "kB" | "KB" => 1e3,
        "MB" => 1e6,
        "GB" => 1e9,
        "KiB" | "kiB" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        _ => return None,
    })
}

fn packet_rate_unit(unit: &str) -> Option<f64> {
    let (mult, base) = split_prefix(unit);
    let ok = matches!(
        base.to_ascii_lowercase().as_str(),
        "pps" | "pkt/s" | "pkts/s" | "packets/s"
    );
    if unit.is_empty() {
        Some(1.0)
    } else if ok {
        Some(mult)
    } else {
        None
    }
}

/// Splits `text` into its number and unit parts (the unit may be empty).
fn split(text: &str) -> Result<(&str, &str), UnitError> {
    let t = text.trim();
    let end = t
        .char_indices()
        .find(|&(i, c)| {
            !(c.is_ascii_digit()
                || c == '.'
                || ((c == '+' || c == '-')
                    && (i == 0 || matches!(t.as_bytes()[i - 1], b'e' | b'E')))
                || ((c == 'e' || c == 'E')
                    && i > 0
                    && t[i + 1..]
                        .starts_with(|d: char| d.is_ascii_digit() || d == '+' || d == '-')))
        })
        .map_or(t.len(), |(i, _)| i);
    let (num, unit) = t.split_at(end);
    if num.is_empty() || !num.bytes().any(|b| b.is_ascii_digit()) {
        return Err(UnitError::Syntax);
    }
    Ok((num, unit.trim()))
}

/// Parses `text` as a quantity of `kind`; a bare number is the base unit.
pub fn parse(kind: Kind, text: &str) -> Result<f64, UnitError> {
    let (num, unit) = split(text)?;
    let value: f64 = num.parse().map_err(|_| UnitError::Syntax)?;
    let mult = match kind {
        Kind::Time => time_unit(unit),
        Kind::Rate => rate_unit(unit),
        Kind::Size => size_unit(unit),
        Kind::PacketRate => packet_rate_unit(unit),
    }
    .ok_or_else(|| UnitError::UnknownUnit {
        unit: unit.to_string(),
        kind,
    })?;
    let v = if mult < 0.0 {
        value / -mult
    } else {
        value * mult
    };
    if !v.is_finite() {
        return Err(UnitError::NotFinite { kind });
    }
    Ok(v)
}

/// Like [`parse`], but a bare number is an error (the command line's rule: `--rate 10` is
/// ambiguous, `--rate 10Mbps` is not).
pub fn parse_with_unit(kind: Kind, text: &str) -> Result<f64, UnitError> {
    let (num, unit) = split(text)?;
    if unit.is_empty() {
        return Err(UnitError::MissingUnit {
            kind,
            number: num.to_string(),
        });
    }
    parse(kind, text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_bits_and_bytes() {
        for (t, v) in [
            ("10Mbps", 10e6),
            ("10mbps", 10e6),
            ("10Mbit", 10e6),
            ("10Mb/s", 10e6),
            ("1Gbps", 1e9),
            ("500kbps", 500e3),
            ("500Kbps", 500e3),
            ("1MBps", 8e6),
            ("1MB/s", 8e6),
            ("2Bps", 16.0),
            ("64000", 64000.0),
            ("1e3bps", 1000.0),
        ] {
            assert_eq!(parse(Kind::Rate, t).unwrap(), v, "{t}");
        }
        for t in [
            "10MBPS",
            "10Mbpz",
            "10 furlongs",
            "Mbps",
            "",
            "1.2.3Mbps",
            "10Mbytes",
        ] {
            assert!(parse(Kind::Rate, t).is_err(), "{t}");
        }
        assert_eq!(
            parse(Kind::Rate, "1e400bps"),
            Err(UnitError::NotFinite { kind: Kind::Rate })
        );
    }

    #[test]
    fn times_sizes_packet_rates() {
        assert_eq!(parse(Kind::Time, "5ms").unwrap(), 0.005);
        assert_eq!(parse(Kind::Time, "100us").unwrap(), 100e-6);
        assert_eq!(parse(Kind::Time, "-5ms").unwrap(), -0.005);
        assert_eq!(parse(Kind::Time, "2min").unwrap(), 120.0);
        assert_eq!(parse(Kind::Time, "0.25").unwrap(), 0.25);
        assert_eq!(parse(Kind::Size, "64KiB").unwrap(), 65536.0);
        assert_eq!(parse(Kind::Size, "1500B").unwrap(), 1500.0);
        assert!(parse(Kind::Size, "1500b").is_err(), "bits are not a size");
        assert_eq!(parse(Kind::PacketRate, "3750pps").unwrap(), 3750.0);
        assert_eq!(parse(Kind::PacketRate, "3.75kpps").unwrap(), 3750.0);
        assert!(parse(Kind::Time, "5 parsecs").is_err());
    }

    #[test]
    fn command_line_requires_units() {
        let e = parse_with_unit(Kind::Rate, "10").unwrap_err();
        assert_eq!(e.to_string(), "give a unit, e.g. 10Mbps");
        assert_eq!(parse_with_unit(Kind::Time, "100ms").unwrap(), 0.1);
    }
}
