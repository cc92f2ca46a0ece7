//! The emulated bottleneck's netem stage: `experiment::netem::Netem` over real IP packets,
//! the code the simulator runs (`emu::link::Bottleneck` offers it each packet that leaves the
//! transmitter and puts what it releases into the propagation delay).

use aqm::Packet as _;
use experiment::netem::NetemPacket;

use crate::packet::IpPacket;

impl NetemPacket for IpPacket {
    fn netem_len(&self) -> u32 {
        self.data.len() as u32
    }

    fn netem_set_ce(&mut self) -> bool {
        if self.ecn.is_capable() {
            self.set_ce();
            true
        } else {
            false
        }
    }
}
