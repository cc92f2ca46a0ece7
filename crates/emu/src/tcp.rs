//! The TCP header of a real packet as CAKE's ACK filter reads it (Linux `net/sched/sch_cake.c`:
//! `cake_get_tcphdr`, `cake_get_tcpopt`, `cake_tcph_get_tstamp`, `cake_tcph_may_drop`, and the
//! payload and 5-tuple tests of `cake_ack_filter`), parsed into [`aqm::TcpAck`].
//!
//! The IP layer is IPv4 (the emulator's), IPv6 and 6in4 (IPv6 in IPv4, protocol 41) as Linux
//! reads them; with IPv6 only a TCP header right after the fixed header counts (Linux: no
//! extension headers). A segment without the ACK flag, or with SYN, is not an ACK the filter
//! starts from; every other TCP segment is one, pure or not:
//!
//! * `pure` (Linux `cake_tcph_may_drop` and the payload test): among the flags only ACK (ECE
//!   and CWR aside; the three reserved bits, URG, PSH, RST, SYN and FIN clear), no payload,
//!   and options that are only NOP, EOL, MD5, SACK (a length of 2 + 8k) and timestamps (a
//!   length of 10); an option Linux does not know makes it not pure;
//! * `ack_seq`, the ECE and CWR flags;
//! * the SACK blocks of the first SACK option (`cake_get_tcpopt`: up to four, `(len - 2) / 8`);
//! * the timestamps of the first timestamps option of length 10 (`cake_tcph_get_tstamp`);
//! * `conn`, the connection: a hash of the IP version, both addresses and both ports (Linux
//!   compares those fields one by one; two connections whose 64-bit keys collide would be
//!   compared with each other).
//!
//! Linux walks a segment's options once in `cake_tcph_may_drop` and keeps checking each
//! timestamps option against the new ACK's; [`aqm::cake::ack_filter::may_drop`] checks the
//! first, which is the only one a sender writes.

use aqm::TcpAck;

const TCPOPT_EOL: u8 = 0;
const TCPOPT_NOP: u8 = 1;
const TCPOPT_SACK: u8 = 5;
const TCPOPT_TIMESTAMP: u8 = 8;
const TCPOPT_MD5SIG: u8 = 19;
const TCPOLEN_TIMESTAMP: usize = 10;
const PROTO_IPV6_IN_IPV4: u8 = 41;
const IPV6_HEADER: usize = 40;

/// TCP flag bits of byte 13 of the header (and the reserved/NS bits of byte 12's low nibble).
const SYN: u8 = 0x02;
const ACK: u8 = 0x10;
const ECE: u8 = 0x40;
const CWR: u8 = 0x80;

/// Where the TCP header starts in `pkt` and how many bytes of IP payload follow the IP
/// header(s) (Linux's `seglen`), with the connection key; `None` if `pkt` is not TCP.
fn locate(pkt: &[u8]) -> Option<(usize, usize, u64)> {
    let mix = |h: u64, x: u64| experiment::rng::splitmix64(h ^ x);
    let v6 = |pkt: &[u8], off: usize| -> Option<(usize, usize, u64)> {
        let h = pkt.get(off..off + IPV6_HEADER)?;
        if h[0] >> 4 != 6 || h[6] != crate::ipv4::PROTO_TCP {
            return None;
        }
        let plen = u16::from_be_bytes([h[4], h[5]]) as usize;
        let mut k = 6u64;
        for w in h[8..40].chunks(8) {
            k = mix(k, u64::from_be_bytes(w.try_into().unwrap()));
        }
        Some((off + IPV6_HEADER, plen, k))
    };
    match pkt.first()? >> 4 {
        4 => {
            let ihl = crate::ipv4::header_len(pkt)?;
            let proto = pkt[9];
            if proto == PROTO_IPV6_IN_IPV4 {
                return v6(pkt, ihl);
            }
            if proto != crate::ipv4::PROTO_TCP {
                return None;
            }
            let total = u16::from_be_bytes([pkt[2], pkt[3]]) as usize;
            let addrs = u64::from_be_bytes(pkt[12..20].try_into().unwrap());
            Some((ihl, total.checked_sub(ihl)?, mix(4, addrs)))
        }
        6 => v6(pkt, 0),
        _ => None,
    }
}

/// The option bytes of the TCP header at `tcp` and the header's length (`doff x 4`);
/// `None` for a header shorter than 20 bytes or cut short.
fn header(pkt: &[u8], tcp: usize) -> Option<(&[u8], usize)> {
    let base = pkt.get(tcp..tcp + 20)?;
    let doff = (base[12] >> 4) as usize * 4;
    if doff < 20 {
        return None;
    }
    let h = pkt.get(tcp..tcp + doff)?;
    Some((&h[20..], doff))
}

/// Walks TCP options like Linux's parsers (`cake_get_tcpopt`): `(kind, body)` per option
/// until EOL or a malformed length.
fn options(mut opts: &[u8]) -> impl Iterator<Item = (u8, &[u8])> {
    std::iter::from_fn(move || loop {
        let (&kind, rest) = opts.split_first()?;
        if kind == TCPOPT_EOL {
            return None;
        }
        if kind == TCPOPT_NOP {
            opts = rest;
            continue;
        }
        let &len = rest.first()?;
        let len = len as usize;
        if len < 2 || len > opts.len() {
            return None;
        }
        let body = &opts[2..len];
        opts = &opts[len..];
        return Some((kind, body));
    })
}

/// The ACK-filter view of `pkt` (module docs): `None` unless it is a TCP segment with ACK and
/// without SYN.
pub fn tcp_ack(pkt: &[u8]) -> Option<TcpAck> {
    let (tcp, seglen, addr_key) = locate(pkt)?;
    let (opts, doff) = header(pkt, tcp)?;
    let h = &pkt[tcp..];
    let flags = h[13];
    if flags & (ACK | SYN) != ACK {
        return None;
    }
    let ports = u32::from_be_bytes([h[0], h[1], h[2], h[3]]) as u64;
    let mut a = TcpAck {
        conn: experiment::rng::splitmix64(addr_key ^ ports),
        // Linux: (flag word & 0x0F3F0000) == ACK: reserved bits (byte 12's low nibble) and
        // URG/PSH/RST/SYN/FIN clear
        pure: h[12] & 0x0f == 0 && flags & !(ECE | CWR) == ACK && seglen == doff,
        ece_cwr: (flags & ECE != 0) as u8 | (((flags & CWR != 0) as u8) << 1),
        ack_seq: u32::from_be_bytes([h[8], h[9], h[10], h[11]]),
        ..Default::default()
    };
    let (mut have_sack, mut have_ts) = (false, false);
    for (kind, body) in options(opts) {
        match kind {
            TCPOPT_MD5SIG => {}
            TCPOPT_SACK => {
                if (body.len() + 2) % 8 != 2 {
                    a.pure = false;
                }
                if !have_sack {
                    have_sack = true;
                    for b in body.chunks_exact(8).take(4) {
                        a.sack[a.n_sack as usize] = (
                            u32::from_be_bytes([b[0], b[1], b[2], b[3]]),
                            u32::from_be_bytes([b[4], b[5], b[6], b[7]]),
                        );
                        a.n_sack += 1;
                    }
                }
            }
            TCPOPT_TIMESTAMP => {
                if body.len() + 2 != TCPOLEN_TIMESTAMP {
                    a.pure = false;
                } else if !have_ts {
                    have_ts = true;
                    a.ts = Some((
                        u32::from_be_bytes([body[0], body[1], body[2], body[3]]),
                        u32::from_be_bytes([body[4], body[5], body[6], body[7]]),
                    ));
                }
            }
            _ => a.pure = false,
        }
    }
    Some(a)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An IPv4 TCP segment from 10.0.0.1:40000 to 10.0.1.1:5201 with `flags`, ACK number
    /// `ack`, the option bytes `opts` (a multiple of 4) and `payload` bytes of data.
    fn v4(flags: u8, ack: u32, opts: &[u8], payload: usize) -> Vec<u8> {
        assert_eq!(opts.len() % 4, 0);
        let doff = 20 + opts.len();
        let total = 20 + doff + payload;
        let mut p = vec![0u8; total];
        p[0] = 0x45;
        p[2..4].copy_from_slice(&(total as u16).to_be_bytes());
        p[8] = 64;
        p[9] = 6;
        p[12..16].copy_from_slice(&[10, 0, 0, 1]);
        p[16..20].copy_from_slice(&[10, 0, 1, 1]);
        let t = &mut p[20..];
        t[0..2].copy_from_slice(&40000u16.to_be_bytes());
        t[2..4].copy_from_slice(&5201u16.to_be_bytes());
        t[8..12].copy_from_slice(&ack.to_be_bytes());
        t[12] = ((doff / 4) as u8) << 4;
        t[13] = flags;
        t[20..20 + opts.len()].copy_from_slice(opts);
        p
    }

    fn ts(val: u32, ecr: u32) -> Vec<u8> {
        let mut o = vec![TCPOPT_NOP, TCPOPT_NOP, TCPOPT_TIMESTAMP, 10];
        o.extend(val.to_be_bytes());
        o.extend(ecr.to_be_bytes());
        o
    }

    fn sack(blocks: &[(u32, u32)]) -> Vec<u8> {
        let mut o = vec![
            TCPOPT_NOP,
            TCPOPT_NOP,
            TCPOPT_SACK,
            (2 + 8 * blocks.len()) as u8,
        ];
        for (s, e) in blocks {
            o.extend(s.to_be_bytes());
            o.extend(e.to_be_bytes());
        }
        o
    }

    /// A Linux pure ACK (timestamps, one SACK block) reads as the filter needs it: ACK
    /// number, timestamps, the block, pure; the same connection's packets share a key and the
    /// other direction's differs.
    #[test]
    fn pure_ack_with_timestamps_and_sack() {
        let mut o = ts(1000, 2000);
        o.extend(sack(&[(5000, 6448)]));
        let p = v4(ACK, 3552, &o, 0);
        let a = tcp_ack(&p).unwrap();
        assert!(a.pure);
        assert_eq!(a.ack_seq, 3552);
        assert_eq!(a.ts, Some((1000, 2000)));
        assert_eq!((a.n_sack, a.sack[0]), (1, (5000, 6448)));
        assert_eq!(a.ece_cwr, 0);
        assert_eq!(tcp_ack(&v4(ACK, 1, &[], 0)).unwrap().conn, a.conn);
        let mut rev = p.clone();
        rev[12..20].copy_from_slice(&[10, 0, 1, 1, 10, 0, 0, 1]);
        assert_ne!(tcp_ack(&rev).unwrap().conn, a.conn);
        let mut port = p.clone();
        port[21] ^= 1;
        assert_ne!(tcp_ack(&port).unwrap().conn, a.conn);
    }

    /// Linux's purity rules: data, PSH, FIN, a reserved bit, a window-scale option, a
    /// timestamps option of the wrong length or a SACK option of a bad length make the ACK not
    /// pure; ECE/CWR and MD5 do not; SYN-ACK and a segment without ACK are not ACKs at all.
    #[test]
    fn purity_by_linux_rules() {
        let pure = |p: &[u8]| tcp_ack(p).map(|a| a.pure);
        assert_eq!(pure(&v4(ACK, 1, &[], 0)), Some(true));
        assert_eq!(pure(&v4(ACK, 1, &[], 100)), Some(false));
        assert_eq!(pure(&v4(ACK | 0x08, 1, &[], 0)), Some(false)); // PSH
        assert_eq!(pure(&v4(ACK | 0x01, 1, &[], 0)), Some(false)); // FIN
        let mut r = v4(ACK, 1, &[], 0);
        r[32] |= 0x01; // NS / reserved
        assert_eq!(pure(&r), Some(false));
        assert_eq!(pure(&v4(ACK, 1, &[1, 3, 3, 7], 0)), Some(false)); // window scale
        assert_eq!(pure(&v4(ACK, 1, &[8, 6, 0, 0, 0, 0, 1, 1], 0)), Some(false));
        assert_eq!(pure(&v4(ACK, 1, &[1, 1, 5, 6, 0, 0, 0, 0], 0)), Some(false));
        let md5 = [&[19u8, 18][..], &[0; 16], &[1, 1]].concat();
        assert_eq!(pure(&v4(ACK, 1, &md5, 0)), Some(true));
        let e = tcp_ack(&v4(ACK | ECE | CWR, 1, &[], 0)).unwrap();
        assert!(e.pure);
        assert_eq!(e.ece_cwr, 3);
        assert_eq!(pure(&v4(ACK | SYN, 1, &[], 0)), None);
        assert_eq!(pure(&v4(0x08, 1, &[], 0)), None);
        // four SACK blocks, all read
        let s = sack(&[(10, 20), (30, 40), (50, 60), (70, 80)]);
        let a = tcp_ack(&v4(ACK, 5, &s, 0)).unwrap();
        assert_eq!(a.n_sack, 4);
        assert_eq!(a.sack[3], (70, 80));
    }

    /// IPv6 and 6in4: the TCP header after the fixed 40-byte header (and after the IPv4
    /// header for 6in4) is found; payload length from the IPv6 header; UDP and cut-short
    /// packets are not TCP.
    #[test]
    fn ipv6_and_6in4() {
        let seg = {
            let p = v4(ACK, 77, &ts(5, 6), 0);
            p[20..].to_vec()
        };
        let mut v6 = vec![0u8; 40];
        v6[0] = 0x60;
        v6[4..6].copy_from_slice(&(seg.len() as u16).to_be_bytes());
        v6[6] = 6;
        v6[8] = 0x20;
        v6[24] = 0x20;
        v6[39] = 1;
        v6.extend(&seg);
        let a = tcp_ack(&v6).unwrap();
        assert!(a.pure);
        assert_eq!((a.ack_seq, a.ts), (77, Some((5, 6))));
        let mut tun = v4(0, 0, &[], 0)[..20].to_vec();
        tun[9] = PROTO_IPV6_IN_IPV4;
        let total = (20 + v6.len()) as u16;
        tun[2..4].copy_from_slice(&total.to_be_bytes());
        tun.extend(&v6);
        let b = tcp_ack(&tun).unwrap();
        assert_eq!((b.ack_seq, b.conn), (77, a.conn));
        let mut udp = v4(ACK, 1, &[], 0);
        udp[9] = 17;
        assert_eq!(tcp_ack(&udp), None);
        assert_eq!(tcp_ack(&v4(ACK, 1, &[], 0)[..30]), None);
    }
}
