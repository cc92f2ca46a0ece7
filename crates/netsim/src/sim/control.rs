//! Control between steps: changing an AQM's parameters, the AQM itself, a link's loss.

use aqm::{Instant, QdiscConfig};

use super::inspect::SimError;
use super::Simulation;
use experiment::rng::{derive_seed, Rng, Stream};

impl Simulation {
    /// Changes one AQM parameter of link `name` (boundary units: seconds,
    /// 0/1, ...) by path: a plain name for a single AQM (`target`), a path
    /// into a scheduler (`classes.b.weight`, `classes.a.aqm.target`). The
    /// AQM keeps its dynamic state.
    pub fn set_aqm_param(&mut self, name: &str, key: &str, value: f64) -> Result<(), SimError> {
        let l = self.link_id(name)?;
        self.links[l as usize]
            .queue
            .set_param(key, value)
            .map_err(|error| SimError::Aqm {
                link: name.to_string(),
                error,
            })?;
        self.arm_aqm(l, self.now);
        Ok(())
    }

    /// Replaces the queue discipline of link `name`; queued packets are
    /// moved to the new one in order. Counters of the link carry on.
    pub fn set_aqm(&mut self, name: &str, cfg: impl Into<QdiscConfig>) -> Result<(), SimError> {
        let cfg: QdiscConfig = cfg.into();
        let l = self.link_id(name)?;
        let link = &self.links[l as usize];
        if link.queue.num_classes() > 0 || !cfg.class_names().is_empty() {
            // Packets carry class indices resolved against the class list at build time.
            let old = link.queue.config();
            if old.class_names() != cfg.class_names() {
                return Err(SimError::Aqm {
                    link: name.to_string(),
                    error: aqm::ConfigError::InvalidText {
                        key: "classes".into(),
                        text: cfg.class_names().join(", "),
                        reason: format!(
                            "set_aqm keeps a link's class list (now: [{}])",
                            old.class_names().join(", ")
                        ),
                    },
                });
            }
        }
        let q = aqm::Qdisc::new(
            &cfg,
            link.queue.limit(),
            link.queue.link(),
            derive_seed(
                self.cfg.seed ^ self.now.rotate_left(17),
                Stream::Queue,
                l as u64,
            ),
        )
        .map_err(|error| SimError::Aqm {
            link: name.to_string(),
            error,
        })?;
        let now = self.now;
        let b = self.replaced.entry(l).or_default();
        if let Some(f) = link.queue.flow_count(Instant(now)) {
            b.flow_area += f.area;
            if self.warm {
                b.flow_peak = b.flow_peak.max(f.peak);
            }
        }
        self.links[l as usize].replace_queue(now, q, l, &mut self.ev);
        // the new qdisc's CAKE counters start at zero, inside the statistics window
        if let Some(k) = self.monitored.iter().position(|&m| m == l) {
            if let Some(snap) = self.cake_snap.get_mut(k) {
                snap.clear();
            }
        }
        self.arm_aqm(l, now);
        Ok(())
    }

    /// Sets the Bernoulli loss probability of link `name` (in [0, 1]; 1 is a
    /// blackout). Takes effect for packets finishing transmission from now.
    pub fn set_link_loss(&mut self, name: &str, p: f64) -> Result<(), SimError> {
        let l = self.link_id(name)?;
        if !(0.0..=1.0).contains(&p) {
            return Err(SimError::Invalid {
                key: format!("{name}.loss"),
                value: p,
                reason: "must be in [0, 1]",
            });
        }
        let seed = self.cfg.seed;
        self.links[l as usize].set_loss(p, || Rng::derive(seed, Stream::LinkLoss, l as u64));
        Ok(())
    }
}
