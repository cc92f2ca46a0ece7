//! The event loop and what each event does: transmissions, arrivals, deliveries to the
//! endpoints, timers, flow starts and short-flow arrivals, the end of the warm-up.

use aqm::Instant;

use super::{GroupRt, LinkSnap, Simulation};
use crate::engine::{secs_to_ns, Due, Event, Ns};
use crate::packet::{Packet, F_ACK, F_UDP};
use crate::routing::NO_ROUTE;
use crate::traffic::{Endpoint, Flow, FlowKind};
use crate::udp::UDP_HEADER_BYTES;
use experiment::monitor::{class_base, FlowHistogram};

impl Simulation {
    /// Processes every event up to and including time `t`; afterwards
    /// `now() == max(now, t)`. Once the run has reached its configured end, the event
    /// queue gives back its storage beyond what is still pending
    /// ([`crate::engine::EventQueue::shrink_storage`]), before the results are built: a
    /// million flows build them with about 0.2 GB less held.
    pub fn run_until(&mut self, t: Instant) {
        let limit = t.0;
        while let Some((time, due)) = self.ev.pop_until(limit) {
            self.now = time;
            self.events += 1;
            self.handle(due);
        }
        self.now = self.now.max(limit);
        if self.now >= self.end().0 {
            self.ev.shrink_storage();
        }
    }

    /// The configured end of the run (the duration), as an instant.
    pub fn end(&self) -> Instant {
        Instant(secs_to_ns(self.cfg.duration))
    }

    /// Runs to the configured duration.
    pub fn run(&mut self) {
        self.run_until(self.end());
    }

    #[inline(always)]
    pub(super) fn handle(&mut self, due: Due) {
        match due {
            Due::Event(ev) => self.handle_event(ev),
            Due::Arrival {
                link,
                to,
                pkt,
                more,
            } => {
                if self.lookahead {
                    self.prefetch_ahead();
                }
                self.deliver(to, pkt);
                for _ in 0..more {
                    let p = self.ev.pipe_take(link);
                    self.deliver(to, p);
                }
            }
        }
    }

    #[inline]
    pub(super) fn handle_event(&mut self, ev: Event) {
        let now = self.now;
        match ev {
            Event::TxDone(l) => {
                self.links[l as usize].tx_done(now, l, &mut self.ev);
                self.arm_aqm(l, now);
            }
            Event::AqmTimer(l) => {
                let link = &mut self.links[l as usize];
                if link.aqm_timer_at == now {
                    link.aqm_timer_at = crate::link::NO_AQM_TIMER;
                }
                link.aqm_timer(now);
                self.arm_aqm(l, now + 1);
            }
            Event::Rto(f) => {
                let Some(s) = self.slot_of(f) else {
                    return; // a finished short flow's timer (its deadline was cleared)
                };
                let mut out = std::mem::take(&mut self.out_buf);
                let flow = &mut self.flows[s];
                if let Endpoint::Tcp { snd, .. } = &mut flow.ep {
                    if snd.rto_event == Some(now) {
                        snd.rto_event = None;
                    }
                    if matches!(snd.rto_deadline, Some(d) if d <= now) {
                        snd.on_rto(now, &mut out);
                    }
                }
                let src = flow.src;
                self.after_timer(s, f, src, out);
            }
            Event::DelAck(f) => {
                let Some(s) = self.slot_of(f) else {
                    return;
                };
                let mut out = std::mem::take(&mut self.out_buf);
                let flow = &mut self.flows[s];
                if let Endpoint::Tcp { rcv, .. } = &mut flow.ep {
                    if rcv.delack_event == Some(now) {
                        rcv.delack_event = None;
                    }
                    if matches!(rcv.delack_deadline, Some(d) if d <= now) {
                        rcv.on_delack(&mut out);
                    }
                }
                let dst = flow.dst;
                self.after_timer(s, f, dst, out);
            }
            Event::Pace(f) => {
                let Some(s) = self.slot_of(f) else {
                    return;
                };
                let mut out = std::mem::take(&mut self.out_buf);
                let flow = &mut self.flows[s];
                if let Endpoint::Tcp { snd, .. } = &mut flow.ep {
                    if snd.pace.fire(now) {
                        snd.send_allowed(now, &mut out);
                    }
                }
                let src = flow.src;
                self.after_timer(s, f, src, out);
            }
            Event::FlowStart(f) => self.start_flow(f as usize),
            Event::FlowStop(f) => {
                let flow = &mut self.flows[f as usize];
                // The goodput window ends here: what is delivered later
                // (data already in flight) is not counted.
                flow.stop_snap = Some(Box::new(flow.snapshot()));
                match &mut flow.ep {
                    Endpoint::Tcp { snd, .. } => snd.stop(),
                    Endpoint::Udp(u) => u.stopped = true,
                }
            }
            Event::UdpSend(f) => {
                let flow = &mut self.flows[f as usize];
                if let Endpoint::Udp(u) = &mut flow.ep {
                    let (p, next) = u.on_send(now, f);
                    if let Some(t) = next {
                        self.ev.schedule(t, Event::UdpSend(f));
                    }
                    if let Some(mut p) = p {
                        if let Some(log) = flow.ping.as_deref_mut() {
                            log.sent(p.seq, now);
                        }
                        let src = flow.src;
                        self.sent += 1;
                        if self.classed {
                            self.stamp_classes(std::slice::from_mut(&mut p));
                        }
                        if self.host_tap.is_some() {
                            self.tap_hosts(std::slice::from_ref(&p), false);
                        }
                        self.forward(src, p);
                    }
                }
            }
            Event::ShortArrival(g) => self.short_arrival(g),
            Event::Sample => {
                self.sample();
                self.ev.schedule(now + self.sample_interval, Event::Sample);
            }
            Event::CwndSample => {
                self.cwnd_sample();
                self.ev
                    .schedule(now + self.cwnd_interval, Event::CwndSample);
            }
            Event::Warmup => self.end_warmup(),
            Event::Netem(l) => self.links[l as usize].netem_wake(now, l, &mut self.ev),
        }
    }

    /// Sends packets created by an endpoint at `node`.
    #[inline]
    pub(super) fn emit(&mut self, node: u32, out: &mut Vec<Packet>) {
        self.sent += out.len() as u64;
        if self.classed {
            self.stamp_classes(out);
        }
        if self.host_tap.is_some() {
            self.tap_hosts(out, false);
        }
        for p in out.drain(..) {
            self.forward(node, p);
        }
    }

    /// Sets the class index and the DSCP of packets leaving an endpoint, data and ACKs alike,
    /// and the sending node of data packets (only when some group has a class or a DSCP or
    /// some link runs `cake`; out of line so that `emit` stays as small
    /// as without them).
    #[inline(never)]
    pub(super) fn stamp_classes(&self, out: &mut [Packet]) {
        for p in out.iter_mut() {
            let Some(s) = self.slot_of(p.flow) else {
                continue;
            };
            let fl = &self.flows[s];
            let g = fl.group as usize;
            p.set_class(self.group_class[g]);
            p.set_dscp(self.group_dscp[g]);
            p.set_src_node(fl.src);
        }
    }

    /// An ACK forwarded onto link `l`: if `l` runs `cake`, it carries the node that sent it,
    /// its flow's receiver, as a real ACK carries its source address (only when some link
    /// runs `cake`, see [`Simulation::stamp_classes`]).
    #[inline(never)]
    fn stamp_ack_src(&self, l: u32, pkt: &mut Packet) {
        if self.links[l as usize].queue.as_cake().is_some() {
            if let Some(s) = self.slot_of(pkt.flow) {
                pkt.set_ack_src_node(self.flows[s].dst);
            }
        }
    }

    /// Forwards `pkt` from `node` onto the next-hop link.
    #[inline]
    pub(super) fn forward(&mut self, node: u32, mut pkt: Packet) {
        let l = self.routes.next_hop_pkt(node, &pkt);
        debug_assert_ne!(l, NO_ROUTE, "routability is checked at build time");
        if self.classed && pkt.has(F_ACK) {
            self.stamp_ack_src(l, &mut pkt);
        }
        self.links[l as usize].arrive(self.now, pkt, l, &mut self.ev);
        self.arm_aqm(l, self.now);
    }

    /// A packet reaches `node`: consume it at its destination or forward.
    #[inline]
    pub(super) fn deliver(&mut self, node: u32, pkt: Packet) {
        if pkt.dst != node {
            self.forward(node, pkt);
            return;
        }
        self.delivered += 1;
        if self.host_tap.is_some() {
            self.tap_hosts(std::slice::from_ref(&pkt), true);
        }
        let now = self.now;
        let f = pkt.flow;
        let Some(s) = self.slot_of(f) else {
            return; // (a finished short flow has no packet left in the network)
        };
        let mut out = std::mem::take(&mut self.out_buf);
        let flow = &mut self.flows[s];
        flow.in_net = flow.in_net.wrapping_sub(1);
        let measure = self.warm && flow.measuring();
        let at = match &mut flow.ep {
            Endpoint::Tcp { snd, rcv } => {
                if pkt.has(F_ACK) {
                    if measure {
                        flow.delays.rtt.record(now.saturating_sub(pkt.ts));
                    }
                    snd.on_ack(now, &pkt, &mut out);
                    flow.src
                } else {
                    if measure {
                        flow.delays.owd.record(now.saturating_sub(pkt.ts));
                    }
                    flow.rcv_high = flow.rcv_high.max(pkt.seq + 1);
                    rcv.on_data(now, &pkt, &mut out);
                    flow.dst
                }
            }
            Endpoint::Udp(_) if pkt.has(F_ACK) => {
                // a ping's echo back at the prober: the probe's round trip
                let rtt = now.saturating_sub(pkt.ts);
                if measure {
                    flow.delays.rtt.record(rtt);
                }
                if let Some(log) = flow.ping.as_deref_mut() {
                    log.echoed(pkt.seq, rtt);
                }
                flow.src
            }
            Endpoint::Udp(_) => {
                if measure {
                    flow.delays.owd.record(now.saturating_sub(pkt.ts));
                }
                flow.udp_bytes += (pkt.size - UDP_HEADER_BYTES) as u64;
                if flow.ping.is_some() {
                    // the destination echoes a probe at once: same size, number and send
                    // time, Not-ECT as a fresh reply (`emit` files it under the group's class)
                    out.push(Packet {
                        dst: flow.src,
                        enq: 0,
                        flags: F_UDP | F_ACK,
                        ..pkt
                    });
                }
                flow.dst
            }
        };
        let tcp = matches!(flow.ep, Endpoint::Tcp { .. });
        flow.in_net = flow.in_net.wrapping_add(out.len() as u32);
        self.emit(at, &mut out);
        self.out_buf = out;
        if tcp {
            self.arm_tcp(s);
            if f >= self.pool.n_static {
                self.retire_if_done(s);
            }
        }
    }

    /// Keeps one pending `AqmTimer` event at the AQM's `poll_at` (not
    /// earlier than `earliest`). Only links whose AQM polls have work here: the test is
    /// inlined into every arrival and departure, the rest is out of line.
    #[inline(always)]
    pub(super) fn arm_aqm(&mut self, l: u32, earliest: Ns) {
        if self.links[l as usize].periodic {
            self.arm_aqm_polled(l, earliest);
        }
    }

    #[inline(never)]
    pub(super) fn arm_aqm_polled(&mut self, l: u32, earliest: Ns) {
        let link = &mut self.links[l as usize];
        if let Some(t) = link.queue.poll_at() {
            let t = t.0.max(earliest);
            if t < link.aqm_timer_at {
                link.aqm_timer_at = t;
                self.ev.schedule(t, Event::AqmTimer(l));
            }
        }
    }

    /// What every TCP timer of the flow in slot `s` (id `f`) ends with: the packets it put
    /// together at node `at` are counted in the flow's packets in the network and sent, the
    /// buffer goes back, the flow's timers are re-armed, and a completed short flow gives its
    /// slot back if nothing of it is left.
    #[inline(always)]
    fn after_timer(&mut self, s: usize, f: u32, at: u32, mut out: Vec<Packet>) {
        let flow = &mut self.flows[s];
        flow.in_net = flow.in_net.wrapping_add(out.len() as u32);
        self.emit(at, &mut out);
        self.out_buf = out;
        self.arm_tcp(s);
        if f >= self.pool.n_static {
            self.retire_if_done(s);
        }
    }

    /// Keeps one pending event per TCP timer of the flow in slot `s` at its earliest deadline.
    #[inline(always)]
    pub(super) fn arm_tcp(&mut self, s: usize) {
        let flow = &mut self.flows[s];
        let f = flow.id;
        if let Endpoint::Tcp { snd, rcv } = &mut flow.ep {
            if let Some(d) = snd.rto_deadline {
                if snd.rto_event.is_none_or(|e| d < e) {
                    snd.rto_event = Some(d);
                    self.ev.schedule(d, Event::Rto(f));
                }
            }
            if let Some(d) = snd.pace.arm() {
                self.ev.schedule(d, Event::Pace(f));
            }
            if let Some(d) = rcv.delack_deadline {
                if rcv.delack_event.is_none_or(|e| d < e) {
                    rcv.delack_event = Some(d);
                    self.ev.schedule(d, Event::DelAck(f));
                }
            }
        }
    }

    /// Starts the flow in slot `s`.
    pub(super) fn start_flow(&mut self, s: usize) {
        let now = self.now;
        let flow = &mut self.flows[s];
        let f = flow.id;
        if flow.started {
            return;
        }
        flow.started = true;
        match &mut flow.ep {
            Endpoint::Tcp { snd, .. } => {
                let mut out = std::mem::take(&mut self.out_buf);
                snd.send_allowed(now, &mut out);
                flow.in_net = flow.in_net.wrapping_add(out.len() as u32);
                let src = flow.src;
                self.emit(src, &mut out);
                self.out_buf = out;
                self.arm_tcp(s);
            }
            Endpoint::Udp(u) => {
                if let Some(log) = flow.ping.as_deref_mut() {
                    let end = flow
                        .stop
                        .unwrap_or(Ns::MAX)
                        .min(secs_to_ns(self.cfg.duration));
                    log.reserve(crate::ping::probes_between(now, end, u.interval));
                }
                u.start(now);
                self.ev.schedule(now, Event::UdpSend(f));
            }
        }
    }

    pub(super) fn short_arrival(&mut self, g: u32) {
        let now = self.now;
        let GroupRt::Short(gen) = &mut self.groups[g as usize] else {
            return;
        };
        if gen.stop.is_some_and(|s| now >= s) {
            return;
        }
        let size = gen.next_size();
        let next = now + secs_to_ns(gen.next_gap());
        let (src, dst) = gen.next_pair();
        let p = gen.params;
        let Some(id) = self.pool.next_id() else {
            return; // 2^32 - 1 flows: no more arrivals
        };
        self.ev.schedule(next, Event::ShortArrival(g));
        let flow = Flow::tcp(
            id,
            g,
            FlowKind::ShortTcp,
            src,
            dst,
            now,
            None,
            Some(size),
            p,
        );
        // A flow created after warm-up keeps its all-zero warm-up snapshot.
        let s = self.pool_slot(flow, size);
        self.start_flow(s);
    }

    #[cold]
    #[inline(never)]
    pub(super) fn end_warmup(&mut self) {
        let now = self.now;
        self.warm = true;
        self.link_snap = self
            .monitored
            .iter()
            .map(|&i| {
                let l = &self.links[i as usize];
                let base = self.replaced.get(&i).copied().unwrap_or_default();
                LinkSnap {
                    ctr: self.link_counters(i),
                    activations: l.queue_stats().activations,
                    area: l.area_at(now),
                    flow_area: base.flow_area
                        + l.queue.flow_count(Instant(now)).map_or(0, |f| f.area),
                    work: l.tx_work_at(now),
                    cap: l.capacity_at(now),
                    netem: l.netem_counters().unwrap_or_default(),
                }
            })
            .collect();
        self.class_snap = self
            .monitored
            .iter()
            .map(|&i| class_base(&self.links[i as usize].queue))
            .collect();
        self.cake_snap = self
            .monitored
            .iter()
            .map(|&i| experiment::monitor::cake_tin_base(&self.links[i as usize].queue))
            .collect();
        for b in self.replaced.values_mut() {
            b.flow_peak = 0;
        }
        for l in &mut self.links {
            l.queue.reset_flow_peak();
            l.warm = true;
            if let Some(m) = l.mon_mut() {
                m.delay.clear();
                m.classes.iter_mut().for_each(|h| h.clear());
                m.flows.iter_mut().for_each(FlowHistogram::clear);
                m.pooled.values_mut().for_each(FlowHistogram::clear);
            }
        }
        for f in &mut self.flows {
            f.warm = f.snapshot();
            f.delays = Default::default();
        }
    }
}
