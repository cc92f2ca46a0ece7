//! Ping probes (latency under load, as Flent's `ping`): a UDP source sends one small probe
//! every interval; the destination echoes it at once (the echo crosses the reverse path's
//! queues); the source records each probe's round-trip time.
//!
//! The log is sized when the prober starts (one entry per probe it can send before it stops
//! or the run ends), so recording a probe never allocates.

use crate::engine::Ns;

/// No echo (yet) for this probe.
pub const NO_ECHO: Ns = Ns::MAX;

/// Send time and round-trip time of every probe of one prober, by probe number.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PingLog {
    /// Send time of probe `i`, ns.
    pub sent: Vec<Ns>,
    /// Round-trip time of probe `i`, ns ([`NO_ECHO`] if its echo has not arrived).
    pub rtt: Vec<Ns>,
}

impl PingLog {
    /// Reserves room for `probes` probes (done once, when the prober starts).
    pub fn reserve(&mut self, probes: usize) {
        self.sent.reserve_exact(probes);
        self.rtt.reserve_exact(probes);
    }

    /// Probe `seq` leaves at `now`.
    #[inline]
    pub fn sent(&mut self, seq: u32, now: Ns) {
        debug_assert_eq!(seq as usize, self.sent.len());
        self.sent.push(now);
        self.rtt.push(NO_ECHO);
    }

    /// The echo of probe `seq` arrives after `rtt` (a duplicate echo keeps the first).
    #[inline]
    pub fn echoed(&mut self, seq: u32, rtt: Ns) {
        if let Some(r) = self.rtt.get_mut(seq as usize) {
            if *r == NO_ECHO {
                *r = rtt;
            }
        }
    }
}

/// The most probes a prober starting at `start` sends up to `end` (its stop or the end of
/// the run, both inclusive) at one per `interval`: `floor((end - start) / interval) + 1`.
pub fn probes_between(start: Ns, end: Ns, interval: Ns) -> usize {
    if end < start {
        return 0;
    }
    ((end - start) / interval.max(1)) as usize + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_records_first_echo_and_counts_probes() {
        let mut l = PingLog::default();
        l.reserve(3);
        l.sent(0, 10);
        l.sent(1, 20);
        l.echoed(1, 7);
        l.echoed(1, 9); // duplicate
        l.echoed(5, 1); // never sent: ignored
        assert_eq!(l.rtt, vec![NO_ECHO, 7]);
        assert_eq!(l.sent, vec![10, 20]);
        // 0..=1000 at 200: probes at 0, 200, 400, 600, 800, 1000
        assert_eq!(probes_between(0, 1000, 200), 6);
        assert_eq!(probes_between(0, 999, 200), 5);
        assert_eq!(probes_between(5, 5, 200), 1);
        assert_eq!(probes_between(6, 5, 200), 0);
    }
}
