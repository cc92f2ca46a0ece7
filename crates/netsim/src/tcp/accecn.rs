//! Accurate ECN feedback (AccECN; draft-ietf-tcpm-accurate-ecn, published as RFC 9768):
//! the receiver's counters and their encoding on ACKs, and the sender's decoding of the CE
//! count, with Linux's safety rules (`__tcp_accecn_process` in `net/ipv4/tcp_input.c` of
//! the AccECN patch set).
//!
//! * **Receiver** (§3.2.1, §3.2.2): counts CE-marked packets, `r.cep`, initialized to 5
//!   (so that a zeroed field is not mistaken for a valid count), and the payload bytes of
//!   packets received ECT(0), CE and ECT(1), `r.e0b`, `r.ceb`, `r.e1b` (initialized 1, 0, 1,
//!   §3.2.3). Every ACK carries the **ACE** field, `r.cep mod 8` (the AE, CWR and ECE bits of
//!   the TCP header; here bits [`ACE_SHIFT`].. of [`Packet::flags`]) and, when the ACK has
//!   room (no SACK blocks: the option shares the TCP option space, §3.2.3.3), the
//!   **AccECN option** with the three byte counters mod 2^24 (EE0B, ECEB, EE1B).
//!   ACKs: besides the usual rules, an immediate ACK when a CE packet arrives after a
//!   non-CE one (change-triggered, §3.2.2.5.1) and once [`ACE_ACK_DELTA`] CE packets are
//!   unacknowledged (increment-triggered, so that the 3-bit field cannot wrap between
//!   ACKs).
//! * **Sender** (§3.2.2.4, Appendix A.1, A.2): the CE packet count delta of an ACK is
//!   `d = (ACE − s.cep) mod 8`; when the ACK newly acknowledges at least 8 segments
//!   (`delivered`) the field may have wrapped, and Linux takes the *safe* delta, the largest
//!   count `≤ delivered` congruent to `d` mod 8 (`delivered − ((delivered − d) mod 8)`),
//!   unless the option's CE byte delta `d.ceb` settles it: `d.ceb = 0` → `d`;
//!   `d.ceb > d·mss` → safe; `d.ceb < safe·mss/2` (`TCP_ACCECN_SAFETY_SHIFT` = 1) → `d`.
//!   The option's byte deltas are the minimum differences mod 2^24 (Appendix A.1). An ACK
//!   that acknowledges nothing new is ignored (Linux: no `FLAG_FORWARD_PROGRESS`, a
//!   possibly reordered ACK).
//!
//! Not modelled: the handshake (negotiation is a per-flow-group setting, both ends agree
//! by construction, `accecn` in the scenario), the ACE field's handshake encodings and the
//! AccECN option's second form (AccECN1, other field order), mangling and failure
//! detection by middleboxes, `ECT(1)`/`ECT(0)` byte feedback use by the congestion control
//! (counted, exposed, not used), and Linux's later estimate from `d.ceb·delivered/bytes`.
//!
//! Simulator shortcut: the option is carried in the ACK's SACK area when the ACK has no
//! SACK blocks (flag [`F_ACCECN_OPT`]), together with a 24-bit **receiver hold time** (µs
//! the echoed segment waited for a delayed ACK). Linux's sender measures the RTT of the
//! newest acknowledged segment from its own transmit timestamps (`ca_rtt_us`), which has no
//! delayed-ACK wait; aqmlab's sender keeps no per-segment send times, so the receiver's
//! hold time lets it compute that wait-free sample (`rtt − hold`) for Prague's classic-ECN
//! detection ([`crate::tcp::cc::classic_ecn`]). The packet stays 48 bytes.

use crate::packet::{Packet, F_CE, F_ECT, F_ECT1};

/// ACE field position in [`Packet::flags`] (3 bits).
pub const ACE_SHIFT: u32 = 9;
/// ACE mask (mod 8).
pub const ACE_MASK: u32 = 7;
/// The ACK carries the AccECN option and the hold time in its SACK area.
pub const F_ACCECN_OPT: u32 = 1 << 12;
/// Initial `r.cep` (§3.2.2.1, Linux `TCP_ACCECN_CEP_INIT_OFFSET`).
pub const CEP_INIT: u32 = 5;
/// Byte counter field modulus, 2^24 (§3.2.3, Appendix A.1 `DIVOPT`).
pub const DIVOPT: u32 = 1 << 24;
/// Unacknowledged CE packets that trigger an immediate ACK (§3.2.2.5.1).
pub const ACE_ACK_DELTA: u32 = 3;

/// The receiver's AccECN counters (16 bytes per flow).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AccEcnReceiver {
    /// `r.cep`.
    pub cep: u32,
    /// `r.e0b`, `r.ceb`, `r.e1b` (payload bytes, wrapping).
    pub e0b: u32,
    /// CE bytes.
    pub ceb: u32,
    /// ECT(1) bytes.
    pub e1b: u32,
}

impl Default for AccEcnReceiver {
    fn default() -> Self {
        AccEcnReceiver {
            cep: CEP_INIT,
            e0b: 1,
            ceb: 0,
            e1b: 1,
        }
    }
}

impl AccEcnReceiver {
    /// Counts a data packet of `payload` bytes by its ECN codepoint.
    #[inline]
    pub fn on_data(&mut self, pkt: &Packet, payload: u32) {
        if pkt.has(F_CE) {
            self.cep = self.cep.wrapping_add(1);
            self.ceb = self.ceb.wrapping_add(payload);
        } else if pkt.has(F_ECT) {
            if pkt.has(F_ECT1) {
                self.e1b = self.e1b.wrapping_add(payload);
            } else {
                self.e0b = self.e0b.wrapping_add(payload);
            }
        }
    }

    /// Writes the ACE field on `ack` and, if its SACK area is free, the option and the
    /// hold time (µs, saturating at 2^24 − 1).
    #[inline]
    pub fn write(&self, ack: &mut Packet, hold_us: u64) {
        ack.flags = (ack.flags & !(ACE_MASK << ACE_SHIFT)) | ((self.cep & ACE_MASK) << ACE_SHIFT);
        if ack.sack == [0; 6] {
            ack.flags |= F_ACCECN_OPT;
            ack.sack = pack([
                self.e0b % DIVOPT,
                self.ceb % DIVOPT,
                self.e1b % DIVOPT,
                hold_us.min(DIVOPT as u64 - 1) as u32,
            ]);
        }
    }
}

/// Four 24-bit fields in the 12 bytes of the SACK area.
#[inline]
pub fn pack(f: [u32; 4]) -> [u16; 6] {
    let mut b = [0u8; 12];
    for (i, v) in f.iter().enumerate() {
        b[3 * i..3 * i + 3].copy_from_slice(&v.to_le_bytes()[..3]);
    }
    let mut out = [0u16; 6];
    for (i, o) in out.iter_mut().enumerate() {
        *o = u16::from_le_bytes([b[2 * i], b[2 * i + 1]]);
    }
    out
}

/// Inverse of [`pack`].
#[inline]
pub fn unpack(s: &[u16; 6]) -> [u32; 4] {
    let mut b = [0u8; 12];
    for (i, v) in s.iter().enumerate() {
        b[2 * i..2 * i + 2].copy_from_slice(&v.to_le_bytes());
    }
    let mut f = [0u32; 4];
    for (i, v) in f.iter_mut().enumerate() {
        *v = u32::from_le_bytes([b[3 * i], b[3 * i + 1], b[3 * i + 2], 0]);
    }
    f
}

/// The ACE field of an ACK.
#[inline]
pub fn ace(ack: &Packet) -> u32 {
    (ack.flags >> ACE_SHIFT) & ACE_MASK
}

/// The option fields (EE0B, ECEB, EE1B) and the hold time (µs) of an ACK, if present.
#[inline]
pub fn option(ack: &Packet) -> Option<[u32; 4]> {
    ack.has(F_ACCECN_OPT).then(|| unpack(&ack.sack))
}

/// The sender's AccECN state (16 bytes per flow).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AccEcnSender {
    /// `s.cep`: CE packets the sender has accounted for (starts at [`CEP_INIT`]).
    pub cep: u32,
    /// `s.e0b`, `s.ceb`, `s.e1b`, as last decoded (full width).
    pub e0b: u32,
    /// CE bytes.
    pub ceb: u32,
    /// ECT(1) bytes.
    pub e1b: u32,
}

impl Default for AccEcnSender {
    fn default() -> Self {
        AccEcnSender {
            cep: CEP_INIT,
            e0b: 1,
            ceb: 0,
            e1b: 1,
        }
    }
}

/// The minimum difference `field − local` mod 2^24 (Appendix A.1).
#[inline]
pub fn byte_delta(field: u32, local: u32) -> u32 {
    field.wrapping_sub(local) % DIVOPT
}

impl AccEcnSender {
    /// One ACK that newly acknowledges `delivered` segments (0: ignored, as a possibly
    /// reordered ACK), with `mss` payload bytes per segment: returns the CE-marked segments
    /// it reports (`__tcp_accecn_process`) and updates the counters.
    #[inline]
    pub fn on_ack(&mut self, ack: &Packet, delivered: u32, mss: u32) -> u32 {
        if delivered == 0 {
            return 0;
        }
        let d_ceb = option(ack).map(|[e0b, ceb, e1b, _]| {
            let d = byte_delta(ceb, self.ceb);
            self.e0b = self.e0b.wrapping_add(byte_delta(e0b, self.e0b));
            self.ceb = self.ceb.wrapping_add(d);
            self.e1b = self.e1b.wrapping_add(byte_delta(e1b, self.e1b));
            d
        });
        let delta = ace(ack).wrapping_sub(self.cep) & ACE_MASK;
        let n = if delivered <= ACE_MASK {
            delta
        } else {
            let safe = delivered - ((delivered - delta) & ACE_MASK);
            match d_ceb {
                Some(0) => delta,
                Some(b) if b as u64 > delta as u64 * mss as u64 => safe,
                Some(b) if (b as u64) < (safe as u64 * mss as u64) >> 1 => delta,
                _ => safe,
            }
        };
        self.cep = self.cep.wrapping_add(n);
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::F_ACK;

    fn ack_pkt() -> Packet {
        Packet {
            flags: F_ACK,
            ..Packet::default()
        }
    }

    fn data(flags: u32) -> Packet {
        Packet {
            flags,
            ..Packet::default()
        }
    }

    /// The AccECN fields fit in the 48-byte packet (flag bits and the SACK area).
    #[test]
    fn packet_stays_small() {
        assert_eq!(std::mem::size_of::<Packet>(), 48);
        eprintln!(
            "sizes: sender {} receiver {} controller {} prague {} accecn snd {} rcv {}",
            std::mem::size_of::<crate::tcp::TcpSender>(),
            std::mem::size_of::<crate::tcp::TcpReceiver>(),
            std::mem::size_of::<crate::tcp::cc::AnyController>(),
            std::mem::size_of::<crate::tcp::cc::Prague>(),
            std::mem::size_of::<Option<AccEcnSender>>(),
            std::mem::size_of::<Option<AccEcnReceiver>>(),
        );
    }

    #[test]
    fn pack_roundtrip() {
        let f = [0xab_cdef, 0, 0xff_ffff, 12_345];
        assert_eq!(unpack(&pack(f)), f);
        assert_eq!(pack([0; 4]), [0; 6]);
    }

    /// §3.2.2.1/§3.2.3 by hand: r.cep starts at 5, so ACE = 5 before any CE; 4 CE packets
    /// of 1000 bytes wrap it to 9 mod 8 = 1; ECT(0)/ECT(1) bytes add to e0b/e1b (from 1).
    /// The option is written only when the SACK area is free.
    #[test]
    fn receiver_counters_and_encoding() {
        let mut r = AccEcnReceiver::default();
        let mut a = ack_pkt();
        r.write(&mut a, 0);
        assert_eq!(ace(&a), 5);
        assert_eq!(option(&a), Some([1, 0, 1, 0]));
        for _ in 0..4 {
            r.on_data(&data(F_ECT | F_ECT1 | F_CE), 1000);
        }
        r.on_data(&data(F_ECT), 500);
        r.on_data(&data(F_ECT | F_ECT1), 700);
        r.on_data(&data(0), 900);
        let mut a = ack_pkt();
        r.write(&mut a, 250);
        assert_eq!(ace(&a), 1);
        assert_eq!(option(&a), Some([501, 4000, 701, 250]));
        let mut s = ack_pkt();
        s.sack = [1, 2, 0, 0, 0, 0];
        r.write(&mut s, 0);
        assert_eq!(ace(&s), 1);
        assert_eq!(option(&s), None);
        assert_eq!(s.sack, [1, 2, 0, 0, 0, 0]);
        // 24-bit fields wrap (Appendix A.1: ECEB = r.ceb mod 2^24).
        let mut w = AccEcnReceiver {
            ceb: DIVOPT - 100,
            ..Default::default()
        };
        w.on_data(&data(F_CE), 1000);
        let mut a = ack_pkt();
        w.write(&mut a, 0);
        assert_eq!(option(&a).unwrap()[1], 900);
    }

    /// Appendix A.1's example: s.ceb = 33 554 433 (2^25 + 1), ECEB = 1461: the minimum
    /// difference mod 2^24 is 1460.
    #[test]
    fn byte_delta_appendix_example() {
        assert_eq!(byte_delta(1461, 33_554_433), 1460);
        assert_eq!(byte_delta(5, DIVOPT - 5), 10);
    }

    /// The sender's delta by hand (`__tcp_accecn_process`): s.cep 5; ACE 0 on an ACK of 2
    /// segments: (0 − 5) mod 8 = 3. An ACE wrap with 10 segments acknowledged and no
    /// option: d = 2, safe = 10 − ((10 − 2) mod 8) = 10. With the option: d.ceb 0 → 2;
    /// d.ceb of 5 segments (> 2·mss) → 10; d.ceb of 2 segments (< 10·mss/2) → 2.
    #[test]
    fn sender_delta_and_safety() {
        let mut s = AccEcnSender::default();
        let mut a = ack_pkt();
        a.flags |= 0 << ACE_SHIFT;
        assert_eq!(s.on_ack(&a, 2, 1000), 3);
        assert_eq!(s.cep, 8);
        // Nothing new acknowledged: ignored.
        let mut b = ack_pkt();
        b.flags |= 2 << ACE_SHIFT;
        assert_eq!(s.on_ack(&b, 0, 1000), 0);
        assert_eq!(s.cep, 8);
        // ACK thinning: 10 segments at once, ACE 2 (d = 2), no option: safe delta 10.
        let mut t = s;
        assert_eq!(t.on_ack(&b, 10, 1000), 10);
        assert_eq!(t.cep, 18);
        // 13 segments, d = 2: safe = 13 − (11 mod 8) = 10.
        let mut t = s;
        assert_eq!(t.on_ack(&b, 13, 1000), 10);
        let with_opt = |ceb: u32| {
            let mut p = b;
            p.flags |= F_ACCECN_OPT;
            p.sack = pack([1, ceb, 1, 0]);
            p
        };
        let mut t = s;
        assert_eq!(t.on_ack(&with_opt(0), 10, 1000), 2);
        let mut t = s;
        assert_eq!(t.on_ack(&with_opt(5000), 10, 1000), 10);
        assert_eq!(t.ceb, 5000);
        let mut t = s;
        assert_eq!(t.on_ack(&with_opt(2000), 10, 1000), 2);
        // 16 segments of 500 bytes, d = 2, safe = 16 − (14 mod 8) = 10: d.ceb 2000 > d·mss
        // = 1000 → safe. (With full segments the two tests leave no gap: safe ≥ d + 8 makes
        // safe·mss/2 > d·mss.)
        let mut t = s;
        assert_eq!(t.on_ack(&with_opt(2000), 16, 500), 10, "{t:?}");
    }

    /// End to end, with lost ACKs: the receiver sees 20 CE packets among 30; the sender
    /// gets only every fifth ACK (ACK thinning / loss). Without the option the safety rule
    /// counts the whole ACKed run as CE when it may have wrapped (never fewer than the
    /// truth); with the option the exact 20 is recovered.
    #[test]
    fn inference_with_lost_acks() {
        for with_option in [false, true] {
            let mut r = AccEcnReceiver::default();
            let mut s = AccEcnSender::default();
            let mut total = 0;
            for i in 0..30u32 {
                let ce = i % 3 != 0;
                r.on_data(&data(if ce { F_ECT | F_CE } else { F_ECT }), 1000);
                if i % 5 == 4 {
                    let mut a = ack_pkt();
                    if !with_option {
                        a.sack = [1, 1, 0, 0, 0, 0]; // no room: SACK blocks
                    }
                    r.write(&mut a, 0);
                    total += s.on_ack(&a, 5, 1000);
                }
            }
            // 5 segments per ACK < 8: the ACE delta is exact either way.
            assert_eq!(total, 20, "option {with_option}");
        }
        // Thinned to one ACK per 10 segments of which 7 are CE: ACE delta 7; without the
        // option, safe = 10 − (3 mod 8) = 7 as well; one ACK per 10 with 2 CE: d = 2,
        // safe = 10 (over-estimate, the safe side) and the option corrects it to 2.
        let mut r = AccEcnReceiver::default();
        let mut s = AccEcnSender::default();
        for i in 0..10 {
            r.on_data(&data(if i < 2 { F_CE } else { F_ECT }), 1000);
        }
        let mut a = ack_pkt();
        a.sack = [1, 1, 0, 0, 0, 0];
        r.write(&mut a, 0);
        let mut s2 = s;
        assert_eq!(s.on_ack(&a, 10, 1000), 10);
        let mut o = ack_pkt();
        r.write(&mut o, 0);
        assert_eq!(s2.on_ack(&o, 10, 1000), 2);
    }

    /// End to end through the sender and receiver (Prague, AccECN, no delayed ACKs): 10
    /// segments, 3 of them CE. The ACKs carry ACE and the option, never ECE; the sender
    /// counts exactly 3 CE segments (`s.cep` 5 -> 8), reduces once (once per window) and
    /// does not take the option for SACK blocks.
    #[test]
    fn sender_and_receiver_end_to_end() {
        use crate::packet::F_ECE;
        use crate::tcp::{CcKind, TcpParams, TcpReceiver, TcpSender, DEFAULT_MIN_RTO};
        let p = TcpParams {
            cc: CcKind::Prague,
            ecn: true,
            delayed_ack: false,
            mss: 1000,
            init_cwnd: 10,
            min_rto: DEFAULT_MIN_RTO,
            rwnd: None,
            sack: true,
            prr: false,
            accecn: true,
            rtt_scaling: false,
            pacing: false,
            extras: Default::default(),
        };
        let mut snd = TcpSender::new(0, 1, p, None);
        let mut rcv = TcpReceiver::new(0, 0, false, true)
            .with_per_segment_ce(true)
            .with_accecn(true);
        let mut segs = Vec::new();
        snd.send_allowed(0, &mut segs);
        assert_eq!(segs.len(), 10);
        let mut acks = Vec::new();
        for (i, seg) in segs.iter_mut().enumerate() {
            if [2, 3, 7].contains(&i) {
                seg.flags |= F_CE;
            }
            rcv.on_data(1_000_000, seg, &mut acks);
        }
        assert_eq!(acks.len(), 10);
        assert!(acks.iter().all(|a| !a.has(F_ECE) && option(a).is_some()));
        assert_eq!(ace(&acks[9]), (5 + 3) & 7);
        let mut out = Vec::new();
        for a in &acks {
            snd.on_ack(20_000_000, a, &mut out);
        }
        assert_eq!(snd.accecn().map(|a| a.cep), Some(8));
        assert_eq!(snd.stats.ecn_reductions, 1);
        assert_eq!(snd.snd_una, 10);
    }
}
