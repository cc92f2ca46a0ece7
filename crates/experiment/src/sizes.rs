//! Flow-size distributions given as CDF points (`size_cdf` of a `tcp_short` group): the
//! published data-centre workloads shipped with aqmlab (`websearch`, `datamining`; the files
//! in `crates/experiment/data/` name their sources) or a user's file in the same format.
//!
//! Format: one point per line, `SIZE_BYTES CDF` (whitespace or a comma between), sizes
//! non-decreasing, probabilities non-decreasing from 0 (or more) to exactly 1; `#` starts a
//! comment. A size is drawn by inverting the CDF with linear interpolation between points (as
//! the HPCC and pFabric traffic generators do); below the first point's probability the first
//! size is drawn.

/// A flow-size distribution.
#[derive(Clone, Debug, PartialEq)]
pub struct SizeCdf {
    /// Its name (`websearch`, `datamining` or the file's path as given).
    pub name: String,
    /// `(size in bytes, cumulative probability)`, both non-decreasing, the last at 1.
    points: Vec<(f64, f64)>,
}

/// The shipped distributions, by name.
pub const BUILTIN: &[(&str, &str)] = &[
    ("websearch", include_str!("../data/websearch.cdf")),
    ("datamining", include_str!("../data/datamining.cdf")),
];

impl SizeCdf {
    /// A shipped distribution (`websearch`, `datamining`) or the file at `name`.
    pub fn load(name: &str) -> Result<SizeCdf, String> {
        if let Some((_, text)) = BUILTIN.iter().find(|(n, _)| *n == name) {
            return SizeCdf::parse(name, text);
        }
        let text = std::fs::read_to_string(name).map_err(|e| format!("cannot read: {e}"))?;
        SizeCdf::parse(name, &text)
    }

    /// Parses the text of a CDF file (see the module doc).
    pub fn parse(name: &str, text: &str) -> Result<SizeCdf, String> {
        let mut points: Vec<(f64, f64)> = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let bad = |why: &str| format!("line {}: {why}", i + 1);
            let f: Vec<&str> = line
                .split(|c: char| c == ',' || c.is_whitespace())
                .filter(|s| !s.is_empty())
                .collect();
            if f.len() != 2 {
                return Err(bad("expected two numbers, SIZE_BYTES CDF"));
            }
            let num = |s: &str| s.parse::<f64>().ok().filter(|x| x.is_finite());
            let (Some(s), Some(p)) = (num(f[0]), num(f[1])) else {
                return Err(bad("not a number"));
            };
            if s < 0.0 || !(0.0..=1.0).contains(&p) {
                return Err(bad("size must be >= 0 and the CDF in [0, 1]"));
            }
            if let Some(&(s0, p0)) = points.last() {
                if s < s0 || p < p0 {
                    return Err(bad("sizes and probabilities must not decrease"));
                }
            }
            points.push((s, p));
        }
        match points.last() {
            None => Err("no points".into()),
            Some(&(_, p)) if p != 1.0 => Err(format!("the last point's CDF is {p}, not 1")),
            Some(&(s, _)) if s < 1.0 => Err("the largest size is below 1 byte".into()),
            _ => Ok(SizeCdf {
                name: name.to_string(),
                points,
            }),
        }
    }

    /// The size at cumulative probability `u` in [0, 1), whole bytes, at least 1.
    pub fn quantile(&self, u: f64) -> u64 {
        let pts = &self.points;
        let i = pts.partition_point(|&(_, p)| p <= u);
        let x = if i == 0 {
            pts[0].0
        } else if i >= pts.len() {
            pts[pts.len() - 1].0
        } else {
            let ((s0, p0), (s1, p1)) = (pts[i - 1], pts[i]);
            s0 + (s1 - s0) * (u - p0) / (p1 - p0)
        };
        (x.round() as u64).max(1)
    }

    /// The mean size, bytes (of the piecewise-linear distribution: each segment's probability
    /// times its midpoint, plus the first point's mass at its size).
    pub fn mean(&self) -> f64 {
        let pts = &self.points;
        let mut m = pts[0].0.max(1.0) * pts[0].1;
        for w in pts.windows(2) {
            m += (w[1].1 - w[0].1) * (w[0].0 + w[1].0) / 2.0;
        }
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The web search mean: the segments' midpoints weighted by their probabilities, by hand
    /// (sum of 0.15 x 5e3, 0.05 x 15e3, 0.1 x 25e3, 0.1 x 40e3, 0.13 x 65e3, 0.07 x 140e3,
    /// 0.1 x 600e3, 0.1 x 1.5e6, 0.1 x 3.5e6, 0.07 x 7.5e6 and 0.03 x 20e6) is 1 711 250
    /// bytes. A million draws have that mean within 2 % (the draws' standard deviation is
    /// about 3.9 MB: 2 % is 5 standard errors).
    #[test]
    fn websearch_mean_and_sampling() {
        let c = SizeCdf::load("websearch").unwrap();
        assert!((c.mean() - 1_711_250.0).abs() < 1.0, "{}", c.mean());
        let mut rng = crate::rng::Rng::derive(1, crate::rng::Stream::Group, 0);
        let n = 1_000_000;
        let sum: f64 = (0..n).map(|_| c.quantile(rng.uniform()) as f64).sum();
        let mean = sum / n as f64;
        assert!((mean / c.mean() - 1.0).abs() < 0.02, "{mean}");
        // the median is between the 0.53 and 0.60 points: 80 kB + 120 kB x 0.03/0.07
        assert_eq!(
            c.quantile(0.5),
            50_000 + (30_000.0 * 0.1 / 0.13_f64).round() as u64
        );
        assert_eq!(c.quantile(0.999_999), 29_999_333);
    }

    #[test]
    fn datamining_loads_and_bad_files_are_refused() {
        let c = SizeCdf::load("datamining").unwrap();
        assert_eq!(c.quantile(0.0), 100);
        // 5.04 MB: most flows are tiny, most bytes are in the few flows above 10 MB
        assert!(c.mean() > 5.0e6 && c.mean() < 5.1e6, "{}", c.mean());
        for (text, want) in [
            ("", "no points"),
            (
                "1 0.5\n2 0.4\n",
                "line 2: sizes and probabilities must not decrease",
            ),
            ("1 0.5\n", "the last point's CDF is 0.5, not 1"),
            ("1 x\n", "line 1: not a number"),
            ("1 2 3\n", "line 1: expected two numbers"),
            ("10 1.5\n", "line 1: size must be >= 0"),
        ] {
            let got = SizeCdf::parse("f", text).unwrap_err();
            assert!(got.starts_with(want), "{got}");
        }
        assert!(SizeCdf::load("no/such/file.cdf")
            .unwrap_err()
            .starts_with("cannot read"));
    }
}
