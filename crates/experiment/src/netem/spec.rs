//! The netem option string, parsed as tc parses it (iproute2 `tc/q_netem.c`,
//! `man tc-netem`), into the values the kernel would receive.
//!
//! Grammar (one or more options, any order):
//!
//! ```text
//! limit PACKETS
//! delay TIME [JITTER [CORRELATION]]          (alias: latency)
//! distribution {uniform|normal|pareto|paretonormal}
//! loss [random] PERCENT [CORRELATION]         (alias: drop)
//! loss state p13 [p31 [p32 [p23 [p14]]]]
//! loss gemodel p [r [1-h [1-k]]]
//! ecn
//! duplicate PERCENT [CORRELATION]
//! reorder PERCENT [CORRELATION]  [gap DISTANCE]
//! corrupt PERCENT [CORRELATION]
//! slot MIN_DELAY [MAX_DELAY] [packets N] [bytes N]
//! slot distribution {uniform|normal|pareto|paretonormal} DELAY JITTER [packets N] [bytes N]
//! inorder                                     (aqmlab: jitter never reorders)
//! ```
//!
//! As tc: an optional argument is taken when the next word starts with a digit; a time is a
//! number with `s`, `sec`, `secs`, `ms`, `msec`, `msecs`, `us`, `usec`, `usecs` (a bare number
//! is microseconds), plus `ns`, `nsec`, `nsecs`; a percentage is a number with or without `%`
//! (`1` and `1%` are both 1 %), in [0, 100]; the defaults of the optional loss parameters are
//! tc's. Keywords are written in full (tc also takes prefixes). `rate` is refused: the link's
//! own rate serialises packets.

use super::dist::Dist;
use super::loss::LossModel;

/// A parsed netem configuration (times in ns, probabilities on the u32 scale).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NetemSpec {
    /// The option string as written.
    pub text: String,
    /// `limit`: packets the stage holds (default 1000, as tc); more are dropped.
    pub limit: u32,
    /// `delay`: mean added delay, ns.
    pub latency: i64,
    /// Jitter, ns (at most `i32::MAX`, the kernel's range).
    pub jitter: i32,
    /// Delay correlation.
    pub delay_corr: u32,
    /// The delay distribution table (`None`: uniform).
    pub dist: Option<Dist>,
    /// The loss model.
    pub loss: LossModel,
    /// `ecn`: a lost ECN-capable packet is CE-marked instead.
    pub ecn: bool,
    /// `duplicate` probability and correlation.
    pub duplicate: u32,
    /// Duplicate correlation.
    pub dup_corr: u32,
    /// `reorder` probability and correlation.
    pub reorder: u32,
    /// Reorder correlation.
    pub reorder_corr: u32,
    /// `gap` (1 when `reorder` is given without it, as tc).
    pub gap: u32,
    /// `corrupt` probability and correlation.
    pub corrupt: u32,
    /// Corrupt correlation.
    pub corrupt_corr: u32,
    /// `slot`.
    pub slot: Option<Slot>,
    /// `inorder` (aqmlab): a packet never leaves before one that entered earlier.
    pub in_order: bool,
}

/// `slot`: packets leave in bursts at slot starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slot {
    /// Uniform slot spacing: min and max, ns.
    pub min_delay: i64,
    /// Max spacing, ns (= min when not given).
    pub max_delay: i64,
    /// `slot distribution NAME DELAY JITTER`: the spacing from a table instead.
    pub dist: Option<(Option<Dist>, i64, i32)>,
    /// Packets per slot (`i32::MAX`: no limit, the kernel's value for 0).
    pub max_packets: i32,
    /// Bytes per slot (`i32::MAX`: no limit).
    pub max_bytes: i32,
}

/// tc's `set_percent`: `rint(p x UINT32_MAX)`.
pub fn percent_to_u32(p: f64) -> u32 {
    (p * u32::MAX as f64).round_ties_even() as u32
}

/// A probability on the u32 scale as a fraction.
pub fn u32_to_fraction(p: u32) -> f64 {
    p as f64 / u32::MAX as f64
}

struct Words<'a> {
    w: Vec<&'a str>,
    i: usize,
}

impl<'a> Words<'a> {
    fn next(&mut self) -> Option<&'a str> {
        let s = self.w.get(self.i).copied();
        self.i += 1;
        s
    }
    fn peek(&self) -> Option<&'a str> {
        self.w.get(self.i).copied()
    }
    /// tc's `NEXT_IS_NUMBER()`: the next word starts with a digit.
    fn next_is_number(&self) -> bool {
        self.peek()
            .is_some_and(|s| s.as_bytes()[0].is_ascii_digit())
    }
    fn arg(&mut self, what: &str) -> Result<&'a str, String> {
        self.next()
            .ok_or_else(|| format!("{what}: a value is missing at the end"))
    }
}

/// iproute2's `parse_percent`: a number divided by 100, with an optional `%`, in [0, 1].
fn percent(word: &str, what: &str) -> Result<u32, String> {
    let num = word.strip_suffix('%').unwrap_or(word);
    let v: f64 = num
        .parse()
        .ok()
        .filter(|v: &f64| v.is_finite())
        .ok_or_else(|| format!("{what}: {word:?} is not a percentage (e.g. 1% or 0.5%)"))?;
    if !(0.0..=100.0).contains(&v) {
        return Err(format!("{what}: {word:?} must be in [0%, 100%]"));
    }
    Ok(percent_to_u32(v / 100.0))
}

/// tc's `get_time`: a time in ns (bare number: microseconds).
fn time(word: &str, what: &str) -> Result<i64, String> {
    let split = word
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-' || c == '+' || c == 'e'))
        .unwrap_or(word.len());
    let (num, unit) = word.split_at(split);
    let bad = || format!("{what}: {word:?} is not a time (e.g. 10ms, 500us, 1s)");
    let v: f64 = num.parse().map_err(|_| bad())?;
    let scale = match unit.to_ascii_lowercase().as_str() {
        "s" | "sec" | "secs" => 1e9,
        "ms" | "msec" | "msecs" => 1e6,
        "" | "us" | "usec" | "usecs" => 1e3,
        "ns" | "nsec" | "nsecs" => 1.0,
        _ => return Err(bad()),
    };
    let ns = v * scale;
    if !ns.is_finite() || !(0.0..=3600e9).contains(&ns) {
        return Err(format!("{what}: {word:?} must be in [0, 3600s]"));
    }
    Ok(ns.round() as i64)
}

fn jitter(word: &str, what: &str) -> Result<i32, String> {
    let j = time(word, what)?;
    i32::try_from(j).map_err(|_| format!("{what}: {word:?} exceeds netem's largest jitter, 2.147s"))
}

fn dist(word: &str, what: &str) -> Result<Option<Dist>, String> {
    Ok(match word {
        "uniform" => None,
        "normal" => Some(Dist::Normal),
        "pareto" => Some(Dist::Pareto),
        "paretonormal" => Some(Dist::ParetoNormal),
        _ => {
            return Err(format!(
                "{what}: {word:?} is not a distribution (uniform, normal, pareto, paretonormal)"
            ))
        }
    })
}

fn count(word: &str, what: &str) -> Result<i32, String> {
    word.parse::<u32>()
        .ok()
        .and_then(|v| i32::try_from(v).ok())
        .ok_or_else(|| format!("{what}: {word:?} is not a whole number"))
}

impl NetemSpec {
    /// Parses a netem option string; the error names the offending word.
    pub fn parse(text: &str) -> Result<NetemSpec, String> {
        let mut w = Words {
            w: text.split_whitespace().collect(),
            i: 0,
        };
        if w.w.is_empty() {
            return Err("empty: give at least one netem option (e.g. \"delay 10ms\")".into());
        }
        let mut s = NetemSpec {
            text: text.to_string(),
            limit: 1000,
            latency: 0,
            jitter: 0,
            delay_corr: 0,
            dist: None,
            loss: LossModel::None,
            ecn: false,
            duplicate: 0,
            dup_corr: 0,
            reorder: 0,
            reorder_corr: 0,
            gap: 0,
            corrupt: 0,
            corrupt_corr: 0,
            slot: None,
            in_order: false,
        };
        let mut dist_given = false;
        while let Some(kw) = w.next() {
            match kw {
                "limit" => {
                    let v = w.arg("limit")?;
                    s.limit =
                        v.parse::<u32>().ok().filter(|&n| n > 0).ok_or_else(|| {
                            format!("limit: {v:?} is not a number of packets > 0")
                        })?;
                }
                "delay" | "latency" => {
                    s.latency = time(w.arg(kw)?, kw)?;
                    if w.next_is_number() {
                        s.jitter = jitter(w.arg(kw)?, "jitter")?;
                        if w.next_is_number() {
                            s.delay_corr = percent(w.arg(kw)?, "delay correlation")?;
                        }
                    }
                }
                "distribution" => {
                    s.dist = dist(w.arg(kw)?, kw)?;
                    dist_given = true;
                }
                "loss" | "drop" => {
                    if s.loss != LossModel::None {
                        return Err(format!("{kw}: given twice"));
                    }
                    s.loss = loss(&mut w, kw)?;
                }
                "ecn" => s.ecn = true,
                "duplicate" => {
                    s.duplicate = percent(w.arg(kw)?, kw)?;
                    if w.next_is_number() {
                        s.dup_corr = percent(w.arg(kw)?, "duplicate correlation")?;
                    }
                }
                "reorder" => {
                    s.reorder = percent(w.arg(kw)?, kw)?;
                    if w.next_is_number() {
                        s.reorder_corr = percent(w.arg(kw)?, "reorder correlation")?;
                    }
                }
                "gap" => {
                    let v = w.arg(kw)?;
                    s.gap = v
                        .parse()
                        .map_err(|_| format!("gap: {v:?} is not a whole number"))?;
                }
                "corrupt" => {
                    s.corrupt = percent(w.arg(kw)?, kw)?;
                    if w.next_is_number() {
                        s.corrupt_corr = percent(w.arg(kw)?, "corrupt correlation")?;
                    }
                }
                "slot" => s.slot = Some(slot(&mut w)?),
                "inorder" => s.in_order = true,
                "rate" => {
                    return Err(
                        "rate: not a netem option here: the link's own rate serialises \
                                packets (set the link's rate, or rate_trace)"
                            .into(),
                    )
                }
                other => {
                    return Err(format!(
                        "{other:?} is not a netem option (limit, delay, distribution, loss, ecn, \
                         duplicate, reorder, gap, corrupt, slot, inorder)"
                    ))
                }
            }
        }
        // tc's checks after the loop
        if s.reorder != 0 {
            if s.latency == 0 {
                return Err(
                    "reorder: reordering needs some delay (netem sends the other \
                            packets `delay` later)"
                        .into(),
                );
            }
            if s.gap == 0 {
                s.gap = 1;
            }
        } else if s.gap > 0 {
            return Err("gap: given without a reorder probability".into());
        }
        if s.ecn && s.loss == LossModel::None {
            return Err("ecn: needs a loss model (ecn marks instead of dropping)".into());
        }
        if dist_given && s.dist.is_some() && (s.latency == 0 || s.jitter == 0) {
            return Err("distribution: needs a delay and a jitter (delay TIME JITTER)".into());
        }
        Ok(s)
    }

    /// True if the stage can hold packets back (a delay, a jitter or slots): then it runs
    /// timers; otherwise every packet leaves as it enters (or is dropped).
    pub fn delays(&self) -> bool {
        self.latency != 0 || self.jitter != 0 || self.slot.is_some()
    }
}

fn loss(w: &mut Words<'_>, kw: &str) -> Result<LossModel, String> {
    let first = w.arg(kw)?;
    let random = |w: &mut Words<'_>, word: &str| -> Result<LossModel, String> {
        let p = percent(word, "loss")?;
        let corr = if w.next_is_number() {
            percent(w.arg(kw)?, "loss correlation")?
        } else {
            0
        };
        Ok(LossModel::Random { p, corr })
    };
    if first.as_bytes()[0].is_ascii_digit() {
        return random(w, first);
    }
    match first {
        "random" => {
            let p = w.arg("loss random")?;
            random(w, p)
        }
        "state" => {
            let p13w = w.arg("loss state")?;
            let p13 = percent(p13w, "loss state p13")?;
            // tc's defaults: p31 = 1 - p13 (Bernoulli), p32 = 0, p23 = 1, p14 = 0
            let frac = u32_to_fraction(p13);
            let mut m = [p13, percent_to_u32(1.0 - frac), 0, u32::MAX, 0];
            for (i, name) in ["p31", "p32", "p23", "p14"].iter().enumerate() {
                if !w.next_is_number() {
                    break;
                }
                m[i + 1] = percent(w.arg(name)?, &format!("loss state {name}"))?;
            }
            Ok(LossModel::State {
                p13: m[0],
                p31: m[1],
                p32: m[2],
                p23: m[3],
                p14: m[4],
            })
        }
        "gemodel" => {
            let p = percent(w.arg("loss gemodel")?, "loss gemodel p")?;
            // tc's defaults: r = 1 - p, 1-h = 100 % (h = 0), 1-k = 0
            let mut r = percent_to_u32(1.0 - u32_to_fraction(p));
            let mut h = 0u32;
            let mut k1 = 0u32;
            if w.next_is_number() {
                r = percent(w.arg("r")?, "loss gemodel r")?;
                if w.next_is_number() {
                    // tc: "netem option is 1-h but kernel expects h"
                    h = u32::MAX - percent(w.arg("1-h")?, "loss gemodel 1-h")?;
                    if w.next_is_number() {
                        k1 = percent(w.arg("1-k")?, "loss gemodel 1-k")?;
                    }
                }
            }
            Ok(LossModel::Gemodel { p, r, h, k1 })
        }
        other => Err(format!(
            "loss: {other:?} is not a loss model (a percentage, random, state, gemodel)"
        )),
    }
}

fn slot(w: &mut Words<'_>) -> Result<Slot, String> {
    let mut s = Slot {
        min_delay: 0,
        max_delay: 0,
        dist: None,
        max_packets: i32::MAX,
        max_bytes: i32::MAX,
    };
    if w.next_is_number() {
        s.min_delay = time(w.arg("slot")?, "slot min_delay")?;
        s.max_delay = s.min_delay;
        if w.next_is_number() {
            let word = w.arg("slot")?;
            s.max_delay = time(word, "slot max_delay")?;
            if s.max_delay < s.min_delay {
                return Err(format!("slot max_delay: {word:?} is below the min_delay"));
            }
        }
    } else {
        match w.arg("slot")? {
            "distribution" => {
                let d = dist(w.arg("slot distribution")?, "slot distribution")?;
                let delay = time(w.arg("slot distribution")?, "slot delay")?;
                let jw = w.arg("slot distribution")?;
                let j = jitter(jw, "slot jitter")?;
                if j <= 0 {
                    return Err(format!("slot jitter: {jw:?} must be > 0"));
                }
                s.dist = Some((d, delay, j));
            }
            other => {
                return Err(format!(
                    "slot: {other:?} is not a slot parameter (MIN_DELAY or distribution)"
                ))
            }
        }
    }
    if w.peek() == Some("packets") {
        w.next();
        let v = w.arg("slot packets")?;
        s.max_packets = count(v, "slot packets")?;
    }
    if w.peek() == Some("bytes") {
        w.next();
        let v = w.arg("slot bytes")?;
        s.max_bytes = count(v, "slot bytes")?;
    }
    // the kernel's get_slot: 0 means no limit
    if s.max_packets == 0 {
        s.max_packets = i32::MAX;
    }
    if s.max_bytes == 0 {
        s.max_bytes = i32::MAX;
    }
    if s.min_delay == 0 && s.max_delay == 0 && s.dist.is_none() {
        return Err("slot: the slot spacing must be > 0".into());
    }
    Ok(s)
}
