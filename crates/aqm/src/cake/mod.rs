//! CAKE (Common Applications Kept Enhanced, Linux `net/sched/sch_cake.c`): the pieces built so
//! far, each following the Linux function named in its doc.
//!
//! * [`tins`]: the Diffserv tin modes (`besteffort`, `diffserv3`, `diffserv4`, `diffserv8`,
//!   `precedence`): the DSCP-to-tin tables, each tin's bandwidth threshold and DRR quantum
//!   (`cake_config_*`), and the per-tin rate and COBALT parameters (`cake_set_rate`).
//! * [`shaper`]: the overhead compensation (`overhead`, `mpu`, `atm`, `ptm`;
//!   `cake_calc_overhead`) and the deficit-mode shaper's time accounting
//!   (`cake_advance_shaper`).
//!
//! The qdisc itself (the set-associative flow hash and host isolation, DRR++ over sparse and
//! bulk flows, COBALT per flow, the ACK filter, statistics) is not built yet: `cake` is not in
//! the qdisc registry.

pub mod shaper;
pub mod tins;
