//! Queue-discipline trees: [`QdiscConfig`] (what to run) and [`Qdisc`] (the running state),
//! both generated from one registry (`qdisc_registry!` in this file).
//!
//! A qdisc owns packets. The leaf is [`crate::QueueDisc`] (FIFO + hard limit + one
//! [`crate::AqmConfig`] algorithm), the fast path; every other qdisc lives in its own file
//! with its configuration, its running state and two trait impls: [`QdiscSpec`] (the
//! configuration's parameters: descriptions, paths, checks) and [`QdiscOps`] (the running
//! qdisc: enqueue, dequeue, timers, counters, classes, flows, parameters). A scheduler
//! ([`crate::drr`], [`crate::wfq`]) holds classes, each a child `QueueDisc` ([`crate::classes`]:
//! the class model both share); a hashed flow-queueing qdisc ([`crate::fq_codel`] and its
//! family, sharing [`crate::flowq`]) holds one flow queue per hash bucket, with flat
//! parameters like an AQM's and no classes; [`crate::sqm`] and [`crate::dualpi2`] have flat
//! parameters and two fixed classes.
//!
//! Adding a qdisc is its file (with `pub mod` in `lib.rs`) and one line in the registry:
//! `"name" => Variant(module::State, module::Config);` in the group of its kind (`classes`,
//! `hashed` or `other`). The registry generates the [`QdiscConfig`] and [`Qdisc`] enums, their
//! serde form (tagged by `"type"` = the name), every `match` over the variants, and the name
//! lists [`SCHEDULERS`], [`CLASS_BASED`] and [`HASHED`]; a compile-time check holds the name
//! to [`QdiscSpec::NAME`]. Dispatch is static on the per-packet path: `Qdisc` is an enum and
//! every call is one `match` (the FIFO arm first, the code that ran before schedulers existed)
//! calling the variant's [`QdiscOps`] method; no `dyn`, no allocation.
//!
//! A scheduler's enqueue may drop a packet other than the arriving one (a *victim*: the head
//! of the fattest class when the shared buffer is full); victims go to the `on_drop` callback
//! of [`Qdisc::enqueue`], like dequeue-side drops. Counter invariant of every qdisc, leaf or
//! tree (`stats()` of a scheduler is the sum over its classes):
//!
//! `received = dropped_enqueue + dropped_victim + dropped_dequeue + dequeued + len_pkts`.
//!
//! Parameter paths: a single AQM keeps plain names (`target`); in a tree a path follows the
//! config's structure with classes addressed by name: `classes.NAME.weight`,
//! `classes.NAME.aqm.PARAM`; a hashed qdisc takes plain names (`target`, `flows`). Serde
//! form: a leaf is the AQM's tagged object (`{"type": "codel", ...}`, unchanged); a scheduler
//! is tagged by its own name
//! (`{"type": "drr", "classes": [{"name": "a", "weight": 1, "aqm": {"type": "codel"}}]}`,
//! `{"type": "fq_codel", "flows": 1024, "target": 5000000}`).

mod config;
mod dispatch;
pub mod ops;

pub use ops::{FlowCount, QdiscOps, QdiscSpec};

/// `a == b` in a constant (the registry's compile-time name check).
const fn same_name(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// The registry: every qdisc besides the FIFO leaf, one line each, `"name" =>
/// Variant(module::State, module::Config);`, grouped by kind. Generates the name lists, the
/// [`QdiscConfig`] enum with its serde form and name/value interface (`config.rs`) and the
/// [`Qdisc`] enum with its dispatch (`dispatch.rs`).
macro_rules! qdisc_registry {
    (
        classes { $( $cn:literal => $cv:ident($cm:ident :: $cs:ident, $ctm:ident :: $ct:ident); )* }
        hashed { $( $hn:literal => $hv:ident($hm:ident :: $hs:ident, $htm:ident :: $ht:ident); )* }
        other { $( $on:literal => $ov:ident($om:ident :: $os:ident, $otm:ident :: $ot:ident); )* }
    ) => {
        /// Names of the schedulers (besides every AQM name, which runs as a single FIFO): the
        /// class-based ones ([`CLASS_BASED`]), the hashed flow-queueing qdiscs ([`HASHED`])
        /// and the others (DualPI2: two fixed classes `l` and `c` chosen by the ECN
        /// codepoint, flat parameters).
        pub const SCHEDULERS: &[&str] = &[$($cn,)* $($hn,)* $($on,)*];

        /// The class-based schedulers: a class list ([`crate::ClassList`]) in their config.
        pub const CLASS_BASED: &[&str] = &[$($cn),*];

        /// The hashed flow-queueing qdiscs: flat parameter lists (like an AQM's), no classes.
        pub const HASHED: &[&str] = &[$($hn),*];

        $(
            const _: () = assert!(
                same_name($cn, <crate::$cm::$cs<()> as QdiscSpec>::NAME),
                concat!("registry name ", $cn, " is not its QdiscSpec::NAME")
            );
        )*
        $(
            const _: () = assert!(
                same_name($hn, <crate::$hm::$hs<()> as QdiscSpec>::NAME),
                concat!("registry name ", $hn, " is not its QdiscSpec::NAME")
            );
        )*
        $(
            const _: () = assert!(
                same_name($on, <crate::$om::$os<()> as QdiscSpec>::NAME),
                concat!("registry name ", $on, " is not its QdiscSpec::NAME")
            );
        )*

        config::qdisc_configs! {
            all {
                $( $cn => $cv($cm::$cs, $ctm::$ct); )*
                $( $hn => $hv($hm::$hs, $htm::$ht); )*
                $( $on => $ov($om::$os, $otm::$ot); )*
            }
            classes { $( $cv ),* }
            hashed { $( $hv ),* }
        }

        dispatch::qdisc_states! {
            $( $cv($cm::$cs); )* $( $hv($hm::$hs); )* $( $ov($om::$os); )*
        }
    };
}

qdisc_registry! {
    classes {
        "drr" => Drr(drr::Drr, drr::DrrConfig);
        "wfq" => Wfq(wfq::Wfq, wfq::WfqConfig);
    }
    hashed {
        "fq_codel" => FqCodel(fq_codel::FqCodel, fq_codel::FqCodelConfig);
        "fq_pie" => FqPie(fq_pie::FqPie, fq_pie::FqPieConfig);
        "fq_cobalt" => FqCobalt(fq_cobalt::FqCobalt, fq_cobalt::FqCobaltConfig);
        "sfq" => Sfq(sfq::Sfq, sfq::SfqConfig);
        "sfq_codel" => SfqCodel(sfq_codel::SfqCodel, sfq_codel::SfqCodelConfig);
        "sqm" => Sqm(sqm::Sqm, sqm::SqmConfig);
        "cake" => Cake(cake::Cake, cake::CakeConfig);
    }
    other {
        "dualpi2" => DualPi2(dualpi2::DualPi2, dualpi2::DualPi2Config);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classes::ClassList;
    use crate::testutil::{no_drop, TestPacket};
    use crate::time::{BitsPerSec, Instant};
    use crate::{LinkInfo, QueueLimit};

    /// Schedulers are boxed in [`Qdisc`], so a queue costs what a FIFO with its AQM does
    /// (every access link of a dumbbell holds one).
    #[test]
    fn qdisc_is_no_larger_than_a_fifo() {
        use std::mem::size_of;
        assert!(
            size_of::<Qdisc<TestPacket>>() <= size_of::<crate::QueueDisc<TestPacket>>() + 8,
            "{} vs {}",
            size_of::<Qdisc<TestPacket>>(),
            size_of::<crate::QueueDisc<TestPacket>>()
        );
    }

    /// Every registered qdisc: its name gives its default config, its serde tag and the name
    /// its running state reports; the kind lists agree with the config's accessors; packets
    /// go through it with the counters balanced.
    #[test]
    fn registry_is_consistent() {
        // The registry's order: the class-based ones, the hashed ones, the others; no name
        // twice and none an AQM's.
        assert_eq!(SCHEDULERS[..CLASS_BASED.len()], *CLASS_BASED);
        assert_eq!(SCHEDULERS[CLASS_BASED.len()..][..HASHED.len()], *HASHED);
        for (i, name) in SCHEDULERS.iter().enumerate() {
            assert!(!SCHEDULERS[..i].contains(name), "{name} twice");
            assert!(
                crate::AqmConfig::default_for(name).is_err(),
                "{name} is an AQM"
            );
        }
        let link = LinkInfo::new(BitsPerSec::from_mbps(10));
        for &name in SCHEDULERS {
            let cfg = QdiscConfig::default_for(name).unwrap();
            assert_eq!(cfg.name(), name);
            assert_eq!(
                QdiscConfig::default_for(&name.to_ascii_uppercase()).unwrap(),
                cfg
            );
            assert!(QdiscConfig::names().contains(&name));
            assert!(cfg.as_aqm().is_none());
            assert_eq!(cfg.is_hashed(), HASHED.contains(&name), "{name}");
            assert_eq!(
                cfg.class_list().is_some(),
                CLASS_BASED.contains(&name),
                "{name}"
            );
            let with = QdiscConfig::with_classes(name, ClassList::default());
            assert_eq!(with.is_some(), CLASS_BASED.contains(&name), "{name}");
            assert_eq!(cfg.param_info(), QdiscConfig::describe(name).unwrap());
            cfg.validate().unwrap();
            assert_eq!(QdiscConfig::from_raw(name, &[], true).unwrap(), cfg);

            let json = serde_json::to_value(&cfg).unwrap();
            assert_eq!(json["type"], name);
            assert_eq!(serde_json::from_value::<QdiscConfig>(json).unwrap(), cfg);
            if !CLASS_BASED.contains(&name) {
                // Flat parameters take their defaults.
                let tag = format!(r#"{{"type": "{name}"}}"#);
                assert_eq!(serde_json::from_str::<QdiscConfig>(&tag).unwrap(), cfg);
            }

            let mut q = Qdisc::<TestPacket>::new(&cfg, QueueLimit::Packets(100), link, 1).unwrap();
            assert_eq!(q.aqm_name(), name);
            assert_eq!(q.config(), cfg);
            assert_eq!(q.limit(), QueueLimit::Packets(100));
            assert_eq!(q.pool_slots().is_some(), HASHED.contains(&name), "{name}");
            assert_eq!(
                q.flow_count(Instant::ZERO).is_some(),
                HASHED.contains(&name)
            );
            for i in 0..4 {
                let p = TestPacket::new(i, 1000).flow(i % 2);
                q.enqueue(Instant(i * 1000), p, &mut no_drop());
            }
            assert_eq!(q.len_pkts(), 4, "{name}");
            assert_eq!(q.len_bytes(), 4000, "{name}");
            assert_eq!(q.active_flows().is_some(), HASHED.contains(&name), "{name}");
            let mut got = 0;
            while q.dequeue(Instant(10_000), &mut no_drop()).is_some() {
                got += 1;
            }
            let s = q.stats();
            assert_eq!((got, s.received, s.dequeued), (4, 4, 4), "{name}");
            assert!(q.is_empty());
            assert_eq!(q.num_classes() > 0, q.class_name(0).is_some(), "{name}");
        }
        // An AQM runs as a FIFO and keeps its own serde form.
        let fifo = QdiscConfig::default_for("codel").unwrap();
        assert!(fifo.as_aqm().is_some() && !fifo.is_hashed() && fifo.class_list().is_none());
        assert_eq!(
            serde_json::to_value(&fifo).unwrap(),
            serde_json::to_value(fifo.as_aqm().unwrap()).unwrap()
        );
        let e = QdiscConfig::default_for("nope").unwrap_err().to_string();
        assert!(e.contains(&SCHEDULERS.join(", ")), "{e}");
    }
}
