//! Packet captures (`[pcap]`, see [`crate::pcap`]): opening the file, the hosts' tap,
//! writing full batches, closing.

use std::path::Path;

use super::Simulation;
use crate::packet::{Packet, F_ACK};
use crate::pcap::{Capture, FlowWire, PcapTap};
use crate::traffic::Endpoint;

impl Simulation {
    /// Opens the capture of the links named by `SimConfig::pcap` at `path` (created or
    /// replaced): one interface per direction of each link (`NAME:fwd`, and `NAME:rev` for
    /// its reverse twin, the link between the same nodes the other way, if there is one),
    /// plus `senders` and `receivers` with `[pcap] hosts`. From now on their packets are
    /// recorded; drive the run with [`Simulation::run_until_traced`] (which writes every
    /// full batch) and close it with [`Simulation::finish_pcap`]. Errors: the scenario has
    /// no `[pcap]`, a capture is already open, or the file cannot be created.
    pub fn start_pcap(&mut self, path: &Path) -> std::io::Result<()> {
        let Some(cfg) = self.cfg.pcap.clone() else {
            return Err(std::io::Error::other("the scenario has no [pcap] section"));
        };
        if self.capture.is_some() || !self.pcap_links.is_empty() {
            return Err(std::io::Error::other("a capture was already started"));
        }
        let mut cap = Capture::create(path, cfg.ethernet)?;
        for (name, core) in &cfg.links {
            let Ok(fwd) = self.link_id(core) else {
                continue; // the schema only lets known links through
            };
            let (a, b) = (self.links[fwd as usize].from, self.links[fwd as usize].to);
            let rev = self
                .links
                .iter()
                .position(|l| l.from == b && l.to == a)
                .map(|i| i as u32);
            for (l, dir) in std::iter::once((fwd, "fwd")).chain(rev.map(|r| (r, "rev"))) {
                if self.links[l as usize].pcap().is_some() {
                    continue;
                }
                let iface = cap.add_interface(&format!("{name}:{dir}"))?;
                self.links[l as usize].set_pcap(Some(Box::new(PcapTap::new(iface, cfg.batch))));
                self.pcap_links.push(l);
            }
        }
        if cfg.hosts {
            let s = cap.add_interface("senders")?;
            let r = cap.add_interface("receivers")?;
            self.host_ifaces = [s, r];
            self.host_tap = Some(Box::new(PcapTap::new(s, cfg.batch)));
        }
        self.capture = Some(Box::new(cap));
        Ok(())
    }

    /// True while a capture is open.
    pub fn capturing(&self) -> bool {
        self.capture.is_some()
    }

    /// Records packets at a host: emitted (`consumed` false) or consumed at their
    /// destination. A data packet is the sender's when emitted, the receiver's when
    /// consumed; an ACK the other way round.
    #[cold]
    #[inline(never)]
    pub(super) fn tap_hosts(&mut self, pkts: &[Packet], consumed: bool) {
        let now = self.now;
        let [s, r] = self.host_ifaces;
        if let Some(t) = self.host_tap.as_deref_mut() {
            for p in pkts {
                let iface = if p.has(F_ACK) == consumed { s } else { r };
                t.push_on(now, iface, p);
            }
        }
    }

    /// True if some capture tap holds a full batch.
    #[inline]
    pub(super) fn pcap_full(&self) -> bool {
        self.host_tap.as_deref().is_some_and(PcapTap::is_full)
            || self
                .pcap_links
                .iter()
                .any(|&l| self.links[l as usize].pcap().is_some_and(PcapTap::is_full))
    }

    /// Writes every record the taps hold, in time order.
    pub fn flush_pcap(&mut self) {
        let Some(cap) = self.capture.as_deref_mut() else {
            return;
        };
        for &l in &self.pcap_links {
            if let Some(t) = self.links[l as usize].pcap_mut() {
                cap.collect(t);
            }
        }
        if let Some(t) = self.host_tap.as_deref_mut() {
            cap.collect(t);
        }
        let (flows, pool, groups) = (&self.flows, &self.pool, &self.groups);
        cap.write(|id| {
            let slot = if id < pool.n_static {
                Some(id as usize)
            } else {
                pool.slot_of(id)
            };
            let Some(s) = slot else {
                // a short flow that finished: its record and its group's parameters
                let r = pool.record(id).expect("a flow the run created");
                let super::GroupRt::Short(g) = &groups[r.group as usize] else {
                    unreachable!("a short flow's group")
                };
                let p = g.params;
                return FlowWire::new(id, r.src, r.dst, p.mss, Some(r.size), Some(&p));
            };
            let f = &flows[s];
            let tcp = match &f.ep {
                Endpoint::Tcp { snd, .. } => Some(*snd.params()),
                Endpoint::Udp(_) => None,
            };
            FlowWire::new(id, f.src, f.dst, f.mss, f.size, tcp.as_ref())
        });
    }

    /// Writes what remains and closes the capture file; returns the packets written. The
    /// taps stay (recording into memory) until the simulation is dropped, so call it at the
    /// end of the run. `Ok(0)` if no capture was open.
    pub fn finish_pcap(&mut self) -> std::io::Result<u64> {
        self.flush_pcap();
        for &l in &self.pcap_links {
            self.links[l as usize].set_pcap(None);
        }
        self.host_tap = None;
        match self.capture.take() {
            Some(c) => c.finish(),
            None => Ok(0),
        }
    }

    /// Per capture tap: its interface id and capacity in records (a test of bounded memory).
    pub fn pcap_taps(&self) -> Vec<(u32, usize)> {
        self.pcap_links
            .iter()
            .filter_map(|&l| self.links[l as usize].pcap())
            .chain(self.host_tap.as_deref())
            .map(|t| (t.iface, t.capacity()))
            .collect()
    }
}
