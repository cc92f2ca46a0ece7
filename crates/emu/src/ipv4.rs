//! IPv4 header access: the fields a queue discipline needs (length, ECN codepoint, the 5-tuple
//! for flow hashing) and writing Congestion Experienced into a real header.
//!
//! CE marking rewrites the ECN bits of the TOS byte and updates the header checksum
//! incrementally (RFC 1624, eqn. 3: `HC' = ~(~HC + ~m + m')` in one's-complement arithmetic),
//! so a marked packet is valid on the wire; the tests check it against a checksum recomputed
//! from scratch ([`header_checksum`]). Anything that is not a well-formed IPv4 header is
//! treated as Not-ECT with flow hash 0 and forwarded unchanged.

use aqm::Ecn;

/// Smallest IPv4 header, bytes (IHL = 5).
pub const MIN_HEADER: usize = 20;
/// IP protocol number of TCP.
pub const PROTO_TCP: u8 = 6;
/// IP protocol number of UDP.
pub const PROTO_UDP: u8 = 17;

/// Header length in bytes if `pkt` starts with a well-formed IPv4 header, else `None`.
#[inline]
pub fn header_len(pkt: &[u8]) -> Option<usize> {
    if pkt.len() < MIN_HEADER || pkt[0] >> 4 != 4 {
        return None;
    }
    let ihl = ((pkt[0] & 0x0f) as usize) * 4;
    (ihl >= MIN_HEADER && pkt.len() >= ihl).then_some(ihl)
}

/// The ECN codepoint (RFC 3168 §5: the two low bits of the TOS byte); Not-ECT for non-IPv4.
#[inline]
pub fn ecn(pkt: &[u8]) -> Ecn {
    if header_len(pkt).is_none() {
        return Ecn::NotEct;
    }
    match pkt[1] & 0b11 {
        0b00 => Ecn::NotEct,
        0b01 => Ecn::Ect1,
        0b10 => Ecn::Ect0,
        _ => Ecn::Ce,
    }
}

/// The DSCP: the six high bits of the TOS byte (RFC 2474 §3); 0 for non-IPv4.
pub fn dscp(pkt: &[u8]) -> u8 {
    if header_len(pkt).is_none() {
        return 0;
    }
    pkt[1] >> 2
}

/// Destination address (`None` for non-IPv4).
#[inline]
pub fn dst(pkt: &[u8]) -> Option<[u8; 4]> {
    header_len(pkt).map(|_| [pkt[16], pkt[17], pkt[18], pkt[19]])
}

/// Source address (`None` for non-IPv4).
#[inline]
pub fn src(pkt: &[u8]) -> Option<[u8; 4]> {
    header_len(pkt).map(|_| [pkt[12], pkt[13], pkt[14], pkt[15]])
}

/// A hash of the 5-tuple (addresses, protocol, and the ports of TCP/UDP in a first fragment),
/// the flow identity of hashed qdiscs (FQ-CoDel's buckets, SFQ, SQM); 0 for non-IPv4.
/// Both directions of a connection hash differently (as Linux's flow dissector does).
pub fn flow_hash(pkt: &[u8]) -> u64 {
    let Some(ihl) = header_len(pkt) else {
        return 0;
    };
    let proto = pkt[9];
    let frag_offset = u16::from_be_bytes([pkt[6], pkt[7]]) & 0x1fff;
    let ports =
        if (proto == PROTO_TCP || proto == PROTO_UDP) && frag_offset == 0 && pkt.len() >= ihl + 4 {
            u32::from_be_bytes([pkt[ihl], pkt[ihl + 1], pkt[ihl + 2], pkt[ihl + 3]])
        } else {
            0
        };
    let a = u32::from_be_bytes([pkt[12], pkt[13], pkt[14], pkt[15]]) as u64;
    let b = u32::from_be_bytes([pkt[16], pkt[17], pkt[18], pkt[19]]) as u64;
    let h = experiment::rng::splitmix64((a << 32) | b);
    experiment::rng::splitmix64(h ^ ((proto as u64) << 32 | ports as u64))
}

/// Sets CE in an ECN-capable IPv4 header and updates its checksum incrementally (RFC 1624).
/// Returns false (and changes nothing) for non-IPv4 or Not-ECT packets (RFC 3168 §5: a
/// Not-ECT packet must not be marked) and for packets already CE.
pub fn set_ce(pkt: &mut [u8]) -> bool {
    if header_len(pkt).is_none() {
        return false;
    }
    let tos = pkt[1];
    if tos & 0b11 == 0b00 || tos & 0b11 == 0b11 {
        return false;
    }
    set_tos(pkt, tos | 0b11);
    true
}

/// Rewrites the DSCP of an IPv4 packet (the ECN bits kept), the header checksum updated
/// incrementally; false (nothing written) for non-IPv4.
pub fn set_dscp(pkt: &mut [u8], dscp: u8) -> bool {
    if header_len(pkt).is_none() {
        return false;
    }
    set_tos(pkt, (dscp << 2) | (pkt[1] & 0b11));
    true
}

/// Writes TOS byte `tos` of a checked IPv4 header and updates its checksum.
fn set_tos(pkt: &mut [u8], tos: u8) {
    let old = u16::from_be_bytes([pkt[0], pkt[1]]);
    let new = u16::from_be_bytes([pkt[0], tos]);
    let hc = u16::from_be_bytes([pkt[10], pkt[11]]);
    // RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m'), sums in one's complement.
    let mut sum = (!hc) as u32 + (!old) as u32 + new as u32;
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    let hc2 = !(sum as u16);
    pkt[1] = tos;
    pkt[10..12].copy_from_slice(&hc2.to_be_bytes());
}

/// The IPv4 header checksum computed from scratch (RFC 791: one's complement of the one's
/// complement sum of the header's 16-bit words, the checksum field taken as 0); `None` for
/// non-IPv4.
pub fn header_checksum(pkt: &[u8]) -> Option<u16> {
    let ihl = header_len(pkt)?;
    let mut sum: u32 = 0;
    for i in (0..ihl).step_by(2) {
        if i == 10 {
            continue;
        }
        sum += u16::from_be_bytes([pkt[i], pkt[i + 1]]) as u32;
    }
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    Some(!(sum as u16))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A TCP/IPv4 header with the given TOS byte and a correct checksum.
    fn packet(tos: u8, id: u16, ttl: u8, sport: u16) -> Vec<u8> {
        let mut p = vec![0u8; 60];
        p[0] = 0x45;
        p[1] = tos;
        p[2..4].copy_from_slice(&60u16.to_be_bytes());
        p[4..6].copy_from_slice(&id.to_be_bytes());
        p[6] = 0x40; // DF
        p[8] = ttl;
        p[9] = PROTO_TCP;
        p[12..16].copy_from_slice(&[10, 200, 0, 1]);
        p[16..20].copy_from_slice(&[10, 200, 1, 1]);
        p[20..22].copy_from_slice(&sport.to_be_bytes());
        p[22..24].copy_from_slice(&5201u16.to_be_bytes());
        let c = header_checksum(&p).unwrap();
        p[10..12].copy_from_slice(&c.to_be_bytes());
        p
    }

    /// The incremental update must equal a checksum recomputed from scratch, for every
    /// ECT codepoint, DSCP value and many header contents (ids, TTLs: many carry patterns).
    #[test]
    fn ce_checksum_matches_recomputed() {
        let mut n = 0;
        for dscp in 0..64u8 {
            for ect in [0b01u8, 0b10] {
                for (id, ttl) in [(0u16, 64u8), (0xffff, 255), (0x1234, 1), (0xfffe, 63)] {
                    let mut p = packet(dscp << 2 | ect, id, ttl, 40000 + id % 7);
                    assert!(set_ce(&mut p));
                    assert_eq!(p[1], dscp << 2 | 0b11);
                    let stored = u16::from_be_bytes([p[10], p[11]]);
                    assert_eq!(Some(stored), header_checksum(&p), "tos {:#x} id {id}", p[1]);
                    assert_eq!(ecn(&p), Ecn::Ce);
                    n += 1;
                }
            }
        }
        assert_eq!(n, 64 * 2 * 4);
    }

    /// Rewriting the DSCP keeps the ECN bits and leaves a checksum equal to one recomputed
    /// from scratch (RFC 1624's update).
    #[test]
    fn dscp_rewrite_checksum_matches_recomputed() {
        for from in [0u8, 46, 63, 8] {
            for to in 0..64u8 {
                for ecnb in 0..4u8 {
                    let mut p = packet(from << 2 | ecnb, 0xfffe, 63, 40001);
                    assert_eq!(dscp(&p), from);
                    assert!(set_dscp(&mut p, to));
                    assert_eq!(p[1], to << 2 | ecnb);
                    assert_eq!(dscp(&p), to);
                    let stored = u16::from_be_bytes([p[10], p[11]]);
                    assert_eq!(Some(stored), header_checksum(&p));
                }
            }
        }
        let mut v6 = vec![0x60u8; 40];
        assert!(!set_dscp(&mut v6, 46));
        assert_eq!(dscp(&v6), 0);
    }

    #[test]
    fn not_ect_and_ce_are_left_alone() {
        for tos in [0x00u8, 0xb8, 0x03, 0xbb] {
            let mut p = packet(tos, 7, 64, 1);
            let before = p.clone();
            assert!(!set_ce(&mut p));
            assert_eq!(p, before);
        }
        let mut v6 = vec![0x60u8; 40];
        assert!(!set_ce(&mut v6));
        assert_eq!(ecn(&v6), Ecn::NotEct);
        assert_eq!(flow_hash(&v6), 0);
    }

    #[test]
    fn codepoints_and_addresses() {
        assert_eq!(ecn(&packet(0b10, 1, 64, 1)), Ecn::Ect0);
        assert_eq!(ecn(&packet(0b01, 1, 64, 1)), Ecn::Ect1);
        assert_eq!(ecn(&packet(0b00, 1, 64, 1)), Ecn::NotEct);
        let p = packet(0, 1, 64, 1);
        assert_eq!(src(&p), Some([10, 200, 0, 1]));
        assert_eq!(dst(&p), Some([10, 200, 1, 1]));
        assert_eq!(header_len(&p), Some(20));
        assert_eq!(header_len(&p[..19]), None);
    }

    /// Packets of one connection share a hash whatever else changes; another source port
    /// gives another hash.
    #[test]
    fn flow_hash_is_the_five_tuple() {
        let a = flow_hash(&packet(0, 1, 64, 40000));
        assert_eq!(a, flow_hash(&packet(0b10, 999, 12, 40000)));
        assert_ne!(a, flow_hash(&packet(0, 1, 64, 40001)));
    }
}
