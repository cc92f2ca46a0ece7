//! CAKE's overhead compensation and deficit-mode shaper accounting (Linux
//! `net/sched/sch_cake.c`: `cake_calc_overhead`, `cake_advance_shaper`).
//!
//! A packet is charged at its *adjusted* length: its network-layer length (`overhead` given:
//! Linux subtracts the link header it sees; the simulator's sizes are IP lengths already), plus
//! `overhead`, at least `mpu`, then framed: ATM carries 48 payload bytes in each 53-byte cell
//! (the length rounded up to whole cells), PTM (VDSL2's 64/65 encoding) adds one byte per 64
//! or part thereof. The shaper then advances its next-send time by the adjusted length's
//! serialisation time at the shaped rate ([`super::tins::TinRate::duration`]).

/// Link-layer framing (`atm`, `ptm`, `noatm`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Framing {
    /// No cell framing (`noatm`, the default).
    #[default]
    None,
    /// ATM cells: 53 bytes on the wire per 48 of payload (`atm`).
    Atm,
    /// PTM 64/65 encoding: one byte per 64 or part thereof (`ptm`).
    Ptm,
}

/// The overhead compensation of a CAKE shaper.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Overhead {
    /// Bytes added per packet (`overhead`, may be negative).
    pub overhead: i32,
    /// Minimum adjusted length before framing (`mpu`).
    pub mpu: u32,
    /// Cell framing.
    pub framing: Framing,
}

impl Overhead {
    /// The adjusted length of a packet of `len` network-layer bytes (`cake_calc_overhead`).
    #[inline]
    pub fn adjusted_len(&self, len: u32) -> u32 {
        let mut len = (len as i64 + self.overhead as i64).max(0) as u32;
        if len < self.mpu {
            len = self.mpu;
        }
        match self.framing {
            Framing::None => len,
            Framing::Atm => len.div_ceil(48) * 53,
            Framing::Ptm => len + len.div_ceil(64),
        }
    }
}

/// The time accounting of a deficit-mode shaper (`cake_advance_shaper`'s global part): the
/// next time a packet may be sent, advanced by each sent packet's serialisation time. No burst
/// parameter: a packet is released once `now >= next`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Shaper {
    /// Earliest time of the next transmission, ns.
    pub next: u64,
}

impl Shaper {
    /// Charges a packet that takes `dur` ns at the shaped rate (Linux: `q->time_next_packet +=
    /// global_dur`). An idle shaper (`next` in the past) restarts at `now`, so no credit
    /// builds up while idle; Linux's own bound on idle credit in `cake_dequeue` is not
    /// reproduced by this piece.
    #[inline]
    pub fn charge(&mut self, now: u64, dur: u64) {
        if self.next < now {
            self.next = now;
        }
        self.next += dur;
    }

    /// True if a packet may be sent at `now`.
    #[inline]
    pub fn may_send(&self, now: u64) -> bool {
        now >= self.next
    }
}

#[cfg(test)]
mod tests {
    use super::super::tins::TinRate;
    use super::*;

    /// ATM by hand: 1500 + 18 = 1518 bytes need ceil(1518 / 48) = 32 cells = 1696 bytes;
    /// 40 + 18 = 58 -> 2 cells = 106. PTM: 1518 + ceil(1518 / 64) = 1518 + 24 = 1542; 64 + 0
    /// -> 65, 65 -> 67. mpu 64 lifts a 40-byte ACK with no overhead to 64 before framing.
    #[test]
    fn atm_and_ptm_framing_by_hand() {
        let atm = Overhead {
            overhead: 18,
            mpu: 0,
            framing: Framing::Atm,
        };
        assert_eq!(atm.adjusted_len(1500), 1696);
        assert_eq!(atm.adjusted_len(40), 106);
        assert_eq!(atm.adjusted_len(30), 53, "48 bytes fit one cell");
        let ptm = Overhead {
            framing: Framing::Ptm,
            ..atm
        };
        assert_eq!(ptm.adjusted_len(1500), 1542);
        let ptm0 = Overhead { overhead: 0, ..ptm };
        assert_eq!((ptm0.adjusted_len(64), ptm0.adjusted_len(65)), (65, 67));
        let mpu = Overhead {
            overhead: 0,
            mpu: 64,
            framing: Framing::None,
        };
        assert_eq!((mpu.adjusted_len(40), mpu.adjusted_len(1500)), (64, 1500));
        let neg = Overhead {
            overhead: -20,
            ..mpu
        };
        assert_eq!(neg.adjusted_len(1500), 1480);
    }

    /// The shaper's closed form: `bandwidth 20Mbit overhead 18 atm`, back-to-back 1500-byte
    /// packets (1460 bytes of TCP payload). Each is charged 1696 bytes at 2 500 000 B/s:
    /// 1696 * 400 * 2^25 >> 25 = 678 400 ns, so goodput is 1460 * 8 / 678.4 us =
    /// 20e6 * 1460 / 1696 = 17 216 981 bit/s (rounded down), exactly, over 1000 packets.
    #[test]
    fn shaped_goodput_with_atm_is_the_closed_form() {
        let rate = TinRate::new(2_500_000, 1514, 5_000_000, 100_000_000);
        let oh = Overhead {
            overhead: 18,
            mpu: 0,
            framing: Framing::Atm,
        };
        let dur = rate.duration(oh.adjusted_len(1500));
        assert_eq!(dur, 678_400);
        let mut s = Shaper::default();
        let mut now = 0;
        let mut sent = 0u64;
        for _ in 0..1000 {
            if !s.may_send(now) {
                now = s.next;
            }
            s.charge(now, dur);
            sent += 1;
        }
        // 1000 packets end at 1000 * 678 400 ns
        assert_eq!(s.next, 678_400_000);
        let goodput = sent * 1460 * 8 * 1_000_000_000 / s.next;
        assert_eq!(goodput, 20_000_000 * 1460 / 1696);
        assert_eq!(goodput, 17_216_981);
    }
}
