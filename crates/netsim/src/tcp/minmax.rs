//! Kathleen Nichols' windowed min/max filter, as Linux's lib/win_minmax.c implements it: the
//! best, second-best and third-best samples of a window, each from a later sub-window, so the
//! running max (or min) over the last `win` time units costs three samples of memory. BBR's
//! bandwidth filter runs it over packet-timed rounds (`minmax_running_max`).

/// One sample: its time (any monotone unit, here rounds) and value.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sample {
    /// Time of the sample.
    pub t: u32,
    /// Value of the sample.
    pub v: u32,
}

/// The filter (Linux `struct minmax`): `s[0]` is the best sample of the window.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MinMax {
    /// Best, second and third best.
    pub s: [Sample; 3],
}

impl MinMax {
    /// The windowed best value (`minmax_get`).
    #[inline]
    pub fn get(&self) -> u32 {
        self.s[0].v
    }

    /// Forgets everything: `meas` at `t` is best, second and third (`minmax_reset`).
    #[inline]
    pub fn reset(&mut self, t: u32, meas: u32) -> u32 {
        let val = Sample { t, v: meas };
        self.s = [val; 3];
        meas
    }

    /// `minmax_subwin_update`: as time passes, the second and third best move up.
    #[inline]
    fn subwin_update(&mut self, win: u32, val: Sample) -> u32 {
        let dt = val.t.wrapping_sub(self.s[0].t);
        if dt > win {
            // Passed the entire window without a new best: the second becomes the best, the
            // third the second, the new sample the third; perhaps twice.
            self.s[0] = self.s[1];
            self.s[1] = self.s[2];
            self.s[2] = val;
            if val.t.wrapping_sub(self.s[0].t) > win {
                self.s[0] = self.s[1];
                self.s[1] = self.s[2];
                self.s[2] = val;
            }
        } else if self.s[1].t == self.s[0].t && dt > win / 4 {
            // A quarter of the window without a new value: a second choice from the second
            // quarter.
            self.s[1] = val;
            self.s[2] = val;
        } else if self.s[2].t == self.s[1].t && dt > win / 2 {
            // Half the window: a third choice from the last half.
            self.s[2] = val;
        }
        self.s[0].v
    }

    /// `minmax_running_max`: adds `meas` at time `t` to a max filter over `win`.
    #[inline]
    pub fn running_max(&mut self, win: u32, t: u32, meas: u32) -> u32 {
        let val = Sample { t, v: meas };
        if val.v >= self.s[0].v || val.t.wrapping_sub(self.s[2].t) > win {
            return self.reset(t, meas);
        }
        if val.v >= self.s[1].v {
            self.s[1] = val;
            self.s[2] = val;
        } else if val.v >= self.s[2].v {
            self.s[2] = val;
        }
        self.subwin_update(win, val)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A max filter over 10 rounds, by hand: a peak of 100 at round 0 holds for 10 rounds
    /// (while lower samples arrive) and expires after round 10, leaving the best later sample.
    #[test]
    fn running_max_over_ten_rounds() {
        let mut m = MinMax::default();
        m.reset(0, 0);
        assert_eq!(m.running_max(10, 0, 100), 100);
        for r in 1..=10 {
            assert_eq!(m.running_max(10, r, 50 + r), 100, "round {r}");
        }
        // Round 11: the peak is 11 rounds old; the second choice (from the second quarter,
        // taken when the quarter passed, value 53 at round 3) or later ones take over.
        let v = m.running_max(10, 11, 40);
        assert!((53..100).contains(&v), "{v}");
        // Brute force over a random-ish sequence: the filter's value is always one of the
        // window's samples and at least the newest one.
        let mut m = MinMax::default();
        let mut seq = Vec::new();
        let mut x: u32 = 7;
        for t in 0..500u32 {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            let v = (x >> 16) % 1000;
            seq.push(v);
            let got = m.running_max(10, t, v);
            let lo = t.saturating_sub(10) as usize;
            let window = &seq[lo..=t as usize];
            assert!(window.contains(&got) && got >= v, "t {t}");
            assert!(got <= *window.iter().max().unwrap());
        }
    }
}
