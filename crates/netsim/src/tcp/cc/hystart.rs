//! HyStart (hybrid slow start) as Linux's CUBIC runs it (`net/ipv4/tcp_cubic.c`,
//! `hystart_update`, `bictcp_acked`, `bictcp_hystart_reset`, module defaults
//! `hystart_detect = HYSTART_ACK_TRAIN | HYSTART_DELAY`, `hystart_low_window = 16`,
//! `hystart_ack_delta_us = 2000`): slow start ends (`ssthresh = cwnd`) when, in a round of
//! slow start at a window of at least 16 segments,
//!
//! * **ACK train**: ACKs keep arriving at most 2 ms apart for longer than half of
//!   `delay_min + ack_delay` since the round began (the train has spanned the path's
//!   minimum RTT, so the pipe is full); or
//! * **delay increase**: the smallest of the round's RTT samples, once 8 have been taken
//!   (`HYSTART_MIN_SAMPLES`), exceeds `delay_min + clamp(delay_min / 8, 4 ms, 16 ms)`
//!   (`HYSTART_DELAY_THRESH`).
//!
//! A round starts when the cumulative ACK passes `end_seq`, the highest segment sent when
//! the previous round began. Times are kept in microseconds as in Linux, so the integer
//! arithmetic is the kernel's. RTT samples within a second of the start of a congestion-
//! avoidance epoch are discarded, and a timeout resets the state (Linux `bictcp_state` on
//! `TCP_CA_Loss`); HyStart runs again only in the slow start after a timeout.

use crate::engine::Ns;

/// `hystart_low_window`: HyStart acts only from this window on (segments).
pub const LOW_WINDOW: f64 = 16.0;
/// `hystart_ack_delta_us`: the most two ACKs of a train may be apart (us).
pub const ACK_DELTA_US: u32 = 2000;
/// `HYSTART_MIN_SAMPLES`: RTT samples per round before the delay test applies.
pub const MIN_SAMPLES: u8 = 8;
/// `HYSTART_DELAY_MIN`, the lower clamp of the delay threshold (us).
pub const DELAY_MIN_US: u32 = 4000;
/// `HYSTART_DELAY_MAX`, the upper clamp of the delay threshold (us).
pub const DELAY_MAX_US: u32 = 16000;
/// `hystart_ack_delay()`: `min(1 ms, 4 * sk_gso_max_size / sk_pacing_rate)`, which is 1 ms
/// at the rates simulated here (64 KB GSO, a pacing rate below 262 MB/s) (us).
pub const ACK_DELAY_US: u32 = 1000;

/// The HyStart state of one CUBIC sender (24 bytes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Hystart {
    /// Start of the current round (us).
    round_start: u32,
    /// Time of the last ACK of the current train (us).
    last_ack: u32,
    /// The round ends when the cumulative ACK passes this segment.
    end_seq: u32,
    /// Smallest RTT sample of the current round (us; `u32::MAX` before one).
    curr_rtt: u32,
    /// Smallest RTT sample since the last reset (us; 0 before one).
    pub delay_min: u32,
    /// RTT samples taken in the current round (up to [`MIN_SAMPLES`]).
    sample_cnt: u8,
    /// Slow-start exit found (HyStart is done until the next reset).
    pub found: bool,
    /// HyStart is on (the `hystart` key; off: plain slow start).
    pub enabled: bool,
    /// A round has been started (Linux starts one at connection set-up).
    started: bool,
}

/// Which test ended slow start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// The ACK-train test.
    AckTrain,
    /// The delay-increase test.
    Delay,
}

#[inline]
fn us(t: Ns) -> u32 {
    (t / 1000) as u32
}

impl Hystart {
    /// HyStart on or off.
    pub fn new(enabled: bool) -> Self {
        Hystart {
            enabled,
            curr_rtt: u32::MAX,
            ..Hystart::default()
        }
    }

    /// `bictcp_hystart_reset`: a new round from `now`, ending at `snd_max`.
    fn new_round(&mut self, now: Ns, snd_max: u32) {
        self.round_start = us(now);
        self.last_ack = us(now);
        self.end_seq = snd_max;
        self.curr_rtt = u32::MAX;
        self.sample_cnt = 0;
        self.started = true;
    }

    /// A timeout (`bictcp_reset` + `bictcp_hystart_reset` on `TCP_CA_Loss`): forget
    /// `delay_min` and `found`; the next ACK starts a round.
    pub fn reset(&mut self) {
        *self = Hystart::new(self.enabled);
    }

    /// `bictcp_acked` for an ACK at `now` that acknowledged new data, with cumulative ACK
    /// `ack`, `snd_max`, this ACK's RTT sample `rtt`, the window `cwnd` and threshold
    /// `ssthresh`, and whether a congestion-avoidance epoch began less than a second ago
    /// (`fresh_epoch`). Returns the test that fired, if slow start is to end now
    /// (`ssthresh = cwnd`).
    #[allow(clippy::too_many_arguments)]
    pub fn on_ack(
        &mut self,
        now: Ns,
        ack: u32,
        snd_max: u32,
        rtt: Option<Ns>,
        cwnd: f64,
        ssthresh: f64,
        fresh_epoch: bool,
    ) -> Option<Exit> {
        let rtt = rtt?;
        if !self.enabled || fresh_epoch {
            return None;
        }
        let delay = us(rtt).max(1);
        if self.delay_min == 0 || self.delay_min > delay {
            self.delay_min = delay;
        }
        if self.found || cwnd >= ssthresh || cwnd < LOW_WINDOW {
            return None;
        }
        // `hystart_update`.
        if !self.started || ack > self.end_seq {
            self.new_round(now, snd_max);
        }
        let now = us(now);
        let mut exit = None;
        if now.wrapping_sub(self.last_ack) as i32 <= ACK_DELTA_US as i32 {
            self.last_ack = now;
            // No pacing (`SK_PACING_NONE`): half the threshold.
            let threshold = (self.delay_min + ACK_DELAY_US) >> 1;
            if now.wrapping_sub(self.round_start) as i32 > threshold as i32 {
                exit = Some(Exit::AckTrain);
            }
        }
        self.curr_rtt = self.curr_rtt.min(delay);
        if self.sample_cnt < MIN_SAMPLES {
            self.sample_cnt += 1;
        } else if exit.is_none()
            && self.curr_rtt
                > self.delay_min + (self.delay_min >> 3).clamp(DELAY_MIN_US, DELAY_MAX_US)
        {
            exit = Some(Exit::Delay);
        }
        self.found = exit.is_some();
        exit
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Ns = 1_000_000;

    /// `tcp_cubic.c` walked by hand, delay test: `delay_min` 40 ms (threshold 40 + clamp(5,
    /// 4, 16) = 45 ms). Round 1 (ACKs of segments sent before it, 10 ms apart so no train):
    /// samples of 41 ms never exceed 45 ms. Round 2: 8 samples of 47 ms, no exit (the 8
    /// are needed first); the 9th (47 ms) exits with `Delay`. Below the low window nothing
    /// happens, and after `found` nothing more.
    #[test]
    fn delay_exit() {
        let mut h = Hystart::new(true);
        let mut t = 0;
        let ack = |h: &mut Hystart, t: Ns, a: u32, smax: u32, rtt: Ns, cwnd: f64| {
            h.on_ack(t, a, smax, Some(rtt), cwnd, f64::INFINITY, false)
        };
        // delay_min from a sample at a small window.
        assert_eq!(ack(&mut h, t, 1, 10, 40 * MS, 10.0), None);
        assert_eq!(h.delay_min, 40_000);
        for a in 2..=20 {
            t += 10 * MS;
            assert_eq!(ack(&mut h, t, a, 40, 41 * MS, 20.0), None);
        }
        // Round 2 starts at the ACK of 41 (> end_seq 40 set at the ACK of 2... then 40).
        let mut got = Vec::new();
        for a in 41..=50 {
            t += 10 * MS;
            got.push(ack(&mut h, t, a, 80, 47 * MS, 40.0));
        }
        assert_eq!(got[..8], [None; 8]);
        assert_eq!(got[8], Some(Exit::Delay));
        assert!(h.found);
        t += 10 * MS;
        assert_eq!(ack(&mut h, t, 60, 90, 90 * MS, 40.0), None);
        h.reset();
        assert!(!h.found && h.delay_min == 0);
    }

    /// ACK train: `delay_min` 20 ms, threshold (20 + 1) / 2 = 10.5 ms. A round of ACKs 1 ms
    /// apart: the ACK 11 ms after the round began (> 10.5 ms) exits with `AckTrain`; a
    /// round of ACKs 3 ms apart (> 2 ms, not a train) never does.
    #[test]
    fn ack_train_exit() {
        let mut h = Hystart::new(true);
        assert_eq!(
            h.on_ack(0, 1, 16, Some(20 * MS), 16.0, f64::INFINITY, false),
            None
        );
        let mut exit_at = None;
        for i in 1..=20u32 {
            let r = h.on_ack(
                i as Ns * MS,
                1 + i,
                16,
                Some(20 * MS),
                16.0,
                f64::INFINITY,
                false,
            );
            if r.is_some() {
                exit_at = Some((i, r));
                break;
            }
        }
        assert_eq!(exit_at, Some((11, Some(Exit::AckTrain))));
        let mut h = Hystart::new(true);
        for i in 0..=20u32 {
            let r = h.on_ack(
                3 * i as Ns * MS,
                1 + i,
                64,
                Some(20 * MS),
                16.0,
                f64::INFINITY,
                false,
            );
            assert_eq!(r, None);
        }
        // Off, congestion avoidance, and fresh epochs: nothing.
        let mut off = Hystart::new(false);
        assert_eq!(off.on_ack(0, 1, 2, Some(MS), 20.0, 1e9, false), None);
        assert_eq!(off.delay_min, 0);
        let mut h = Hystart::new(true);
        assert_eq!(h.on_ack(0, 1, 2, Some(MS), 20.0, 10.0, false), None);
        assert_eq!(h.on_ack(0, 1, 2, Some(MS / 2), 20.0, 1e9, true), None);
        assert_eq!(h.delay_min, 1000);
    }
}
