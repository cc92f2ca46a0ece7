//! CAKE's Diffserv tins (Linux `net/sched/sch_cake.c`): which tin a DSCP goes to, each tin's
//! bandwidth threshold and DRR quantum, and the rate-derived COBALT parameters.
//!
//! The tables are Linux's `besteffort`, `diffserv3`, `diffserv4`, `diffserv8` and `precedence`
//! arrays (indexed by DSCP); the thresholds and quanta are those of `cake_config_besteffort`,
//! `cake_config_diffserv3`/`4`/`8` and `cake_config_precedence`; [`TinRate::new`] is
//! `cake_set_rate`. Rates are in bytes per second, as Linux keeps them (`tc`'s `bandwidth`
//! divided by 8); times in nanoseconds.

/// The tin modes, by `tc`'s names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TinMode {
    /// One tin.
    BestEffort,
    /// Bulk (CS1), Best Effort, Voice (`cake_config_diffserv3`); Linux's default.
    #[default]
    Diffserv3,
    /// Bulk, Best Effort, Video, Voice (`cake_config_diffserv4`).
    Diffserv4,
    /// Eight tins (`cake_config_diffserv8`).
    Diffserv8,
    /// The IP precedence (the DSCP's top three bits), eight tins (`cake_config_precedence`).
    Precedence,
}

/// Linux's `diffserv3` table: DSCP -> tin (0 Best Effort, 1 Bulk, 2 Voice).
const DIFFSERV3: [u8; 64] = [
    0, 1, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 2, 0, 2, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0,
];

/// Linux's `diffserv4` table: DSCP -> tin (0 Best Effort, 1 Bulk, 2 Video, 3 Voice).
const DIFFSERV4: [u8; 64] = [
    0, 1, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 2, 0, 2, 0, 2, 0, 2, 0, 2, 0, 2, 0, 2, 0,
    3, 0, 2, 0, 2, 0, 2, 0, 3, 0, 0, 0, 3, 0, 3, 0, 3, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0,
];

/// Linux's `diffserv8` table: DSCP -> tin.
const DIFFSERV8: [u8; 64] = [
    2, 0, 1, 2, 4, 2, 2, 2, 1, 2, 1, 2, 1, 2, 1, 2, 5, 2, 4, 2, 4, 2, 4, 2, 3, 2, 3, 2, 3, 2, 3, 2,
    6, 2, 3, 2, 3, 2, 3, 2, 6, 2, 2, 2, 6, 2, 6, 2, 7, 2, 2, 2, 2, 2, 2, 2, 7, 2, 2, 2, 2, 2, 2, 2,
];

impl TinMode {
    /// Every mode with its `tc` name.
    pub const ALL: [(TinMode, &'static str); 5] = [
        (TinMode::BestEffort, "besteffort"),
        (TinMode::Diffserv3, "diffserv3"),
        (TinMode::Diffserv4, "diffserv4"),
        (TinMode::Diffserv8, "diffserv8"),
        (TinMode::Precedence, "precedence"),
    ];

    /// The mode named `s` (`tc`'s names), or `None`.
    pub fn from_name(s: &str) -> Option<TinMode> {
        Self::ALL.iter().find(|(_, n)| *n == s).map(|&(m, _)| m)
    }

    /// Number of tins (`q->tin_cnt`).
    pub fn tins(self) -> usize {
        match self {
            TinMode::BestEffort => 1,
            TinMode::Diffserv3 => 3,
            TinMode::Diffserv4 => 4,
            TinMode::Diffserv8 | TinMode::Precedence => 8,
        }
    }

    /// The tin of codepoint `dscp` (`q->tin_index[dscp]`; the low six bits are used).
    pub fn tin_of(self, dscp: u8) -> usize {
        let d = (dscp & 0x3f) as usize;
        (match self {
            TinMode::BestEffort => 0,
            TinMode::Diffserv3 => DIFFSERV3[d],
            TinMode::Diffserv4 => DIFFSERV4[d],
            TinMode::Diffserv8 => DIFFSERV8[d],
            TinMode::Precedence => (d >> 3) as u8,
        }) as usize
    }

    /// Each tin's bandwidth threshold (bytes/s, 0 = unlimited when `rate` is 0) and DRR quantum
    /// (`tin_quantum`), in tin order, for a shaper rate of `rate` bytes/s (`cake_config_*`).
    pub fn thresholds(self, rate: u64) -> Vec<(u64, u16)> {
        match self {
            TinMode::BestEffort => vec![(rate, 65535)],
            TinMode::Diffserv3 => {
                vec![(rate, 1024), (rate >> 4, 1024 >> 4), (rate >> 2, 1024 >> 2)]
            }
            TinMode::Diffserv4 => vec![
                (rate, 1024),
                (rate >> 4, 1024 >> 4),
                (rate >> 1, 1024 >> 1),
                (rate >> 2, 1024 >> 2),
            ],
            TinMode::Diffserv8 | TinMode::Precedence => {
                // cake_config_diffserv8 / cake_config_precedence: each tin 7/8 of the one
                // before, rate and quantum, rounded down
                let (mut r, mut q) = (rate, 256u32);
                let mut out = Vec::with_capacity(8);
                for _ in 0..8 {
                    out.push((r, q.max(1) as u16));
                    r = (r * 7) >> 3;
                    q = (q * 7) >> 3;
                }
                out
            }
        }
    }
}

/// The rate-derived parameters of one tin (`cake_set_rate`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TinRate {
    /// Threshold, bytes/s (0: unlimited).
    pub rate_bps: u64,
    /// Nanoseconds per byte, scaled by `2^rate_shft` (0: unlimited).
    pub rate_ns: u64,
    /// The scale of `rate_ns`.
    pub rate_shft: u32,
    /// Per-flow DRR quantum, bytes: `rate >> 12` within [300, 1514] (1514 unlimited).
    pub flow_quantum: u16,
    /// COBALT target, ns: at least 1.5 MTU serialisation times.
    pub target: u64,
    /// COBALT interval, ns.
    pub interval: u64,
    /// Serialisation time of an MTU, ns.
    pub mtu_time: u64,
}

impl TinRate {
    /// `cake_set_rate(b, rate, mtu, target_ns, rtt_est_ns)`: `rate` in bytes/s, `mtu` in bytes
    /// (Linux passes `psched_mtu`, the device MTU plus the link header: 1514 on Ethernet).
    pub fn new(rate: u64, mtu: u32, target_ns: u64, rtt_est_ns: u64) -> TinRate {
        const MIN_RATE: u64 = 64;
        let mut flow_quantum = 1514u16;
        let (mut rate_ns, mut rate_shft) = (0u64, 0u32);
        if rate > 0 {
            flow_quantum = (rate >> 12).clamp(300, 1514) as u16;
            rate_shft = 34;
            rate_ns = ((1_000_000_000u128 << rate_shft) / rate.max(MIN_RATE) as u128) as u64;
            while rate_ns >> 34 != 0 {
                rate_ns >>= 1;
                rate_shft -= 1;
            }
        }
        let byte_target_ns = (mtu as u64 * rate_ns) >> rate_shft;
        let target = (byte_target_ns * 3 / 2).max(target_ns);
        let interval = (rtt_est_ns + target - target_ns).max(target * 2);
        TinRate {
            rate_bps: rate,
            rate_ns,
            rate_shft,
            flow_quantum,
            target,
            interval,
            mtu_time: byte_target_ns,
        }
    }

    /// Serialisation time of `len` (adjusted) bytes at this rate, ns:
    /// `(len * rate_ns) >> rate_shft` as `cake_advance_shaper` charges it.
    #[inline]
    pub fn duration(&self, len: u32) -> u64 {
        (len as u64 * self.rate_ns) >> self.rate_shft
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tables against the tin assignments Linux's comments list: diffserv3 Voice = TOS4
    /// (4), VA (44), EF (46), CS6, CS7, Bulk = CS1 (and LE, 1); diffserv4 Video = AF2x-AF4x,
    /// CS2, CS3 as in `cake_config_diffserv4`'s comment; diffserv8 as its table has them.
    #[test]
    fn tables_by_linux_comments() {
        use crate::dscp::parse;
        let d = |s: &str| parse(s).unwrap();
        let m3 = TinMode::Diffserv3;
        for n in ["EF", "VA", "CS6", "CS7"] {
            assert_eq!(m3.tin_of(d(n)), 2, "{n}");
        }
        assert_eq!(m3.tin_of(4), 2, "TOS4");
        assert_eq!((m3.tin_of(d("CS1")), m3.tin_of(d("LE"))), (1, 1));
        for n in ["BE", "AF11", "AF41", "CS5", "CS4"] {
            assert_eq!(m3.tin_of(d(n)), 0, "{n}");
        }
        let m4 = TinMode::Diffserv4;
        for n in ["EF", "VA", "CS5", "CS4", "CS6", "CS7"] {
            assert_eq!(m4.tin_of(d(n)), 3, "{n}");
        }
        for n in ["AF41", "AF33", "CS3", "AF21", "CS2"] {
            assert_eq!(m4.tin_of(d(n)), 2, "{n}");
        }
        assert_eq!(m4.tin_of(d("CS1")), 1);
        for n in ["BE", "AF11", "AF13"] {
            assert_eq!(m4.tin_of(d(n)), 0, "{n}");
        }
        let m8 = TinMode::Diffserv8;
        // The table, not the comment above cake_config_diffserv8, is what runs: LE alone in
        // tin 0, CS1 with AF1x and TOS2 in tin 1.
        assert_eq!(m8.tin_of(d("LE")), 0, "Background");
        assert_eq!(m8.tin_of(d("CS1")), 1);
        assert_eq!(m8.tin_of(d("BE")), 2, "Bog Standard");
        assert_eq!(m8.tin_of(d("AF11")), 1, "High Throughput");
        assert_eq!(m8.tin_of(d("AF41")), 3, "Video");
        assert_eq!(m8.tin_of(d("AF21")), 4, "Low Latency Transactions");
        assert_eq!(m8.tin_of(d("CS2")), 5, "Interactive Shell");
        assert_eq!(m8.tin_of(d("EF")), 6, "Minimum Latency");
        assert_eq!(m8.tin_of(d("CS6")), 7, "Network Control");
        assert_eq!(TinMode::Precedence.tin_of(d("EF")), 5);
        assert_eq!(TinMode::BestEffort.tin_of(d("EF")), 0);
        assert!(TinMode::ALL
            .iter()
            .all(|&(m, _)| (0..64).all(|x| m.tin_of(x) < m.tins())));
    }

    /// Thresholds by hand at 100 Mbit/s (12 500 000 B/s). diffserv3: R, R/16, R/4 with quanta
    /// 1024, 64, 256; diffserv4: R, R/16, R/2, R/4 with 1024, 64, 512, 256; diffserv8: each 7/8
    /// of the previous rounded down: 12 500 000, 10 937 500, 9 570 312 (9 570 312.5),
    /// 8 374 023 (8 374 023.0), ...; quanta 256, 224, 196, 171, 149, 130, 113, 98.
    #[test]
    fn thresholds_by_hand() {
        let r = 12_500_000;
        assert_eq!(
            TinMode::Diffserv3.thresholds(r),
            vec![(12_500_000, 1024), (781_250, 64), (3_125_000, 256)]
        );
        assert_eq!(
            TinMode::Diffserv4.thresholds(r),
            vec![
                (12_500_000, 1024),
                (781_250, 64),
                (6_250_000, 512),
                (3_125_000, 256)
            ]
        );
        let t8 = TinMode::Diffserv8.thresholds(r);
        let q: Vec<u16> = t8.iter().map(|x| x.1).collect();
        assert_eq!(q, [256, 224, 196, 171, 149, 130, 113, 98]);
        assert_eq!(t8[0].0, 12_500_000);
        assert_eq!(t8[1].0, 10_937_500);
        assert_eq!(t8[2].0, 9_570_312);
        // 9 570 312 * 7 = 66 992 184; / 8 = 8 374 023
        assert_eq!(t8[3].0, 8_374_023);
        assert_eq!(TinMode::Precedence.thresholds(r), t8);
        assert_eq!(TinMode::BestEffort.thresholds(r), vec![(r, 65535)]);
    }

    /// `cake_set_rate` by hand. 20 Mbit/s = 2 500 000 B/s: 1e9 * 2^34 / 2.5e6 = 400 * 2^34,
    /// shifted down 9 times to 400 * 2^25 (shift 25); an MTU of 1514 takes 1514 * 400 =
    /// 605 600 ns, 1.5 of it is under 5 ms, so target 5 ms and interval 100 ms stay.
    /// 1 Mbit/s = 125 000 B/s: 8000 * 2^34 -> 8000 * 2^21 (shift 21); MTU time 12 112 000 ns,
    /// target 18 168 000 ns, interval 100 ms + 18.168 ms - 5 ms = 113 168 000 ns.
    #[test]
    fn set_rate_by_hand() {
        let t = TinRate::new(2_500_000, 1514, 5_000_000, 100_000_000);
        assert_eq!((t.rate_ns, t.rate_shft), (400 << 25, 25));
        assert_eq!(t.mtu_time, 605_600);
        assert_eq!((t.target, t.interval), (5_000_000, 100_000_000));
        assert_eq!(t.flow_quantum, 610); // 2 500 000 >> 12
        let t = TinRate::new(125_000, 1514, 5_000_000, 100_000_000);
        assert_eq!((t.rate_ns, t.rate_shft), (8000 << 21, 21));
        assert_eq!(t.mtu_time, 12_112_000);
        assert_eq!((t.target, t.interval), (18_168_000, 113_168_000));
        assert_eq!(t.flow_quantum, 300);
        let u = TinRate::new(0, 1514, 5_000_000, 100_000_000);
        assert_eq!((u.rate_ns, u.flow_quantum, u.duration(1500)), (0, 1514, 0));
        assert_eq!(
            TinRate::new(1_000_000_000, 1514, 5_000_000, 100_000_000).flow_quantum,
            1514
        );
    }
}
