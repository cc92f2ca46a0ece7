//! The registry of congestion controllers: one line per algorithm, read by the scenario parser
//! (the names `cc` takes and which need ECN), the engine (`netsim::tcp::cc` implements each in
//! its own file and builds its dispatch from this list), the command line and the emulator's
//! map to kernel modules (served to Python by `aqmlab._core.congestion_controllers()`).
//!
//! Adding a controller: its file `netsim/src/tcp/cc/MODULE.rs` (a type implementing
//! `netsim::tcp::cc::Controller` with `with_window(cwnd, ssthresh)`) and one line below.

use serde::{Deserialize, Serialize};

/// The list, for macros that generate code from it: `Variant(module::Type) = "name", ecn:
/// needs ECN, ect1: data carries ECT(1), recovery: non-SACK loss recovery (`Reno` or
/// `NewReno`), kernel: the Linux module of the same algorithm (or `None`), "help"`. The
/// macro `$then` receives the lines.
#[macro_export]
macro_rules! with_congestion_controllers {
    ($then:ident) => {
        $then! {
            Newreno(newreno::NewReno) = "newreno", ecn: false, ect1: false, recovery: NewReno,
                kernel: Some("reno"), "NewReno (RFC 5681 window law, RFC 6582 recovery; Linux's reno)";
            Reno(reno::Reno) = "reno", ecn: false, ect1: false, recovery: Reno,
                kernel: Some("reno"), "Reno (RFC 5681)";
            Cubic(cubic::Cubic) = "cubic", ecn: false, ect1: false, recovery: NewReno,
                kernel: Some("cubic"), "CUBIC (RFC 9438)";
            Dctcp(dctcp::Dctcp) = "dctcp", ecn: true, ect1: false, recovery: NewReno,
                kernel: Some("dctcp"), "DCTCP (RFC 8257; needs ECN)";
            Prague(prague::Prague) = "prague", ecn: true, ect1: true, recovery: NewReno,
                kernel: Some("prague"), "TCP Prague (L4S, ECT(1); needs ECN)";
            Ledbat(ledbat::Ledbat) = "ledbat", ecn: false, ect1: false, recovery: NewReno,
                kernel: None, "LEDBAT (RFC 6817, less than best effort)";
            Bbr(bbr::Bbr) = "bbr", ecn: false, ect1: false, recovery: NewReno,
                kernel: Some("bbr"), "BBR v1 (Linux tcp_bbr.c: rate-based, paced)";
            Bbr3(bbr3::Bbr3) = "bbr3", ecn: false, ect1: false, recovery: NewReno,
                kernel: Some("bbr3"), "BBR v3 (draft-ietf-ccwg-bbr: loss/ECN bounds, paced)";
        }
    };
}

/// How a controller recovers from loss without SACK.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recovery {
    /// Reno's fast recovery (RFC 5681 §3.2).
    Reno,
    /// NewReno's (RFC 6582).
    NewReno,
}

/// What the registry says of one controller.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CcInfo {
    /// The name `cc` takes in scenarios and results.
    pub name: &'static str,
    /// It needs ECN (Linux `TCP_CONG_NEEDS_ECN`): its receiver echoes CE per segment.
    pub needs_ecn: bool,
    /// Its data segments carry ECT(1), the L4S identifier (RFC 9331), instead of ECT(0).
    pub ect1: bool,
    /// Its loss recovery without SACK.
    pub recovery: Recovery,
    /// The Linux module of the same algorithm, if the kernel has one (the emulator's map).
    pub kernel: Option<&'static str>,
    /// One line for help texts.
    pub help: &'static str,
}

macro_rules! define_cc_kind {
    ($($variant:ident($module:ident::$ty:ident) = $name:literal, ecn: $ecn:literal,
       ect1: $ect1:literal, recovery: $rec:ident, kernel: $kernel:expr, $help:literal;)*) => {
        /// A congestion-control algorithm (the registry's `Variant`s).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
        pub enum CcKind {
            $(
                #[doc = $help]
                #[serde(rename = $name)]
                $variant,
            )*
        }

        /// Every controller of the registry, in its order.
        pub const CONGESTION_CONTROLLERS: &[CcInfo] = &[
            $(CcInfo {
                name: $name,
                needs_ecn: $ecn,
                ect1: $ect1,
                recovery: Recovery::$rec,
                kernel: $kernel,
                help: $help,
            },)*
        ];

        impl CcKind {
            /// Every kind, in the registry's order.
            pub const ALL: &'static [CcKind] = &[$(CcKind::$variant,)*];

            /// What the registry says of this kind.
            #[inline]
            pub fn info(self) -> &'static CcInfo {
                &CONGESTION_CONTROLLERS[self as usize]
            }

            /// The algorithm needs ECN (DCTCP, Prague: Linux `TCP_CONG_NEEDS_ECN`); its
            /// receiver echoes CE per segment (RFC 8257 §3.2) instead of RFC 3168's latched
            /// ECE. (A `match`, not a table read: senders ask per packet.)
            #[inline]
            pub const fn needs_ecn(self) -> bool {
                match self {
                    $(CcKind::$variant => $ecn,)*
                }
            }

            /// Data segments carry ECT(1), the L4S identifier (RFC 9331), instead of ECT(0).
            #[inline]
            pub const fn sends_ect1(self) -> bool {
                match self {
                    $(CcKind::$variant => $ect1,)*
                }
            }

            /// Loss recovery without SACK.
            #[inline]
            pub const fn recovery(self) -> Recovery {
                match self {
                    $(CcKind::$variant => Recovery::$rec,)*
                }
            }

            /// Lower-case name as used in configs and results.
            #[inline]
            pub const fn name(self) -> &'static str {
                match self {
                    $(CcKind::$variant => $name,)*
                }
            }
        }
    };
}

with_congestion_controllers!(define_cc_kind);

#[allow(clippy::derivable_impls)] // the enum is generated from the registry
impl Default for CcKind {
    /// NewReno, the scenario default.
    fn default() -> Self {
        CcKind::Newreno
    }
}

impl CcKind {
    /// The kind named `name` (as scenarios write it), if any.
    pub fn from_name(name: &str) -> Option<CcKind> {
        CcKind::ALL.iter().copied().find(|k| k.name() == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_serde_uses_them() {
        for &k in CcKind::ALL {
            assert_eq!(CcKind::from_name(k.name()), Some(k));
            let json = serde_json::to_string(&k).unwrap();
            assert_eq!(json, format!("\"{}\"", k.name()));
            assert_eq!(serde_json::from_str::<CcKind>(&json).unwrap(), k);
        }
        assert_eq!(CcKind::from_name("vegas"), None);
        assert!(CcKind::Prague.needs_ecn() && CcKind::Prague.sends_ect1());
        assert!(CcKind::Dctcp.needs_ecn() && !CcKind::Dctcp.sends_ect1());
        assert_eq!(CcKind::Reno.recovery(), Recovery::Reno);
        assert_eq!(CcKind::default(), CcKind::Newreno);
    }
}
