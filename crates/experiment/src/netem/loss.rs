//! netem's loss generators (Linux `net/sched/sch_netem.c`: `loss_event`, `loss_4state`,
//! `loss_gilb_ell`), probabilities scaled to u32 as tc sends them (`rint(p x (2^32 - 1))`).
//! The 4-state and Gilbert-Elliott models are those of Salsano, Ludovici and Ordine,
//! "Definition of a general and intuitive loss model for packet networks and its
//! implementation in the Netem module in the Linux kernel" (NetemCLG, 2010).

use super::dist::Crandom;
use crate::rng::Rng;

/// A loss model as configured (`loss random|state|gemodel ...`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum LossModel {
    /// No loss.
    #[default]
    None,
    /// `loss random P [CORR]`: each packet lost with probability `p` (correlated draws).
    Random {
        /// Loss probability (u32 scale).
        p: u32,
        /// Correlation (u32 scale).
        corr: u32,
    },
    /// `loss state p13 [p31 [p32 [p23 [p14]]]]`: the 4-state Markov model.
    State {
        /// Gap (1) to burst loss (3).
        p13: u32,
        /// Burst loss (3) to gap (1).
        p31: u32,
        /// Burst loss (3) to burst reception (2).
        p32: u32,
        /// Burst reception (2) to burst loss (3).
        p23: u32,
        /// Gap (1) to isolated loss (4).
        p14: u32,
    },
    /// `loss gemodel p [r [1-h [1-k]]]`: Gilbert-Elliott.
    Gemodel {
        /// Good to bad.
        p: u32,
        /// Bad to good.
        r: u32,
        /// `h` as the kernel holds it: 1 - the loss probability in the bad state.
        h: u32,
        /// `1 - k`: the loss probability in the good state.
        k1: u32,
    },
}

/// The loss generator's state: the model, the Markov state (1-4 for `state`, 1 good / 2 bad
/// for `gemodel`, as the kernel numbers them) and the random model's correlated stream.
#[derive(Clone, Copy, Debug)]
pub struct Loss {
    model: LossModel,
    state: u8,
    cor: Crandom,
}

impl Loss {
    /// The generator in its initial state (1, as the kernel's `get_loss_clg`).
    pub fn new(model: LossModel, rng: &mut Rng) -> Loss {
        let corr = match model {
            LossModel::Random { corr, .. } => corr,
            _ => 0,
        };
        Loss {
            model,
            state: 1,
            cor: Crandom::new(corr, rng),
        }
    }

    /// The Markov state (1-4; 1 or 2 for Gilbert-Elliott).
    pub fn state(&self) -> u8 {
        self.state
    }

    /// `loss_event`: true if this packet is lost.
    #[inline]
    pub fn event(&mut self, rng: &mut Rng) -> bool {
        match self.model {
            LossModel::None => false,
            LossModel::Random { p, .. } => p != 0 && p >= self.cor.next(rng),
            LossModel::State {
                p13,
                p31,
                p32,
                p23,
                p14,
            } => self.four_state(rng.next_u32(), p13, p31, p32, p23, p14),
            LossModel::Gemodel { p, r, h, k1 } => {
                // loss_gilb_ell: the transition, then the loss by the state before it
                match self.state {
                    1 => {
                        if rng.next_u32() < p {
                            self.state = 2;
                        }
                        rng.next_u32() < k1
                    }
                    _ => {
                        if rng.next_u32() < r {
                            self.state = 1;
                        }
                        rng.next_u32() > h
                    }
                }
            }
        }
    }

    /// `loss_4state` (the kernel's comparisons, strict as written there; sums in u64).
    fn four_state(&mut self, rnd: u32, p13: u32, p31: u32, p32: u32, p23: u32, p14: u32) -> bool {
        let (rnd, a1, a2, a3, a4, a5) = (
            rnd as u64, p13 as u64, p31 as u64, p32 as u64, p14 as u64, p23 as u64,
        );
        match self.state {
            1 => {
                if rnd < a4 {
                    self.state = 4;
                    return true;
                } else if a4 < rnd && rnd < a1 + a4 {
                    self.state = 3;
                    return true;
                } else if a1 + a4 < rnd {
                    self.state = 1;
                }
            }
            2 => {
                if rnd < a5 {
                    self.state = 3;
                    return true;
                }
                self.state = 2;
            }
            3 => {
                if rnd < a3 {
                    self.state = 2;
                } else if a3 < rnd && rnd < a2 + a3 {
                    self.state = 1;
                } else if a2 + a3 < rnd {
                    self.state = 3;
                    return true;
                }
            }
            _ => self.state = 1,
        }
        false
    }
}
