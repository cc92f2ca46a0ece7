//! CAKE's ACK filter (Linux `cake_ack_filter`, `cake_tcph_may_drop`,
//! `cake_tcph_sack_compare`): when a TCP ACK joins a flow queue, an older pure ACK of the same
//! connection in that queue that the new one makes redundant is dropped.
//!
//! The new packet (the queue's tail) must carry the ACK flag without SYN. Each earlier packet
//! of the same connection, head first, is *eligible* if it is a pure ACK (Linux's header
//! check), its timestamps are not newer than the new ACK's, its cumulative ACK is not beyond
//! the new one's, and the new ACK covers at least its SACK information (it SACKs more, or the
//! same with a higher cumulative ACK; a D-SACK is never covered). A change of the ECE/CWR flags
//! between eligible ACKs forgets the earlier one. The first eligible ACK is dropped once a
//! second is found (`ack-filter`); `ack-filter-aggressive` also drops a single eligible ACK
//! when it is just before the new one and their ECE/CWR flags agree.

use crate::packet::TcpAck;

/// `after(a, b)`: `a` is later than `b` modulo 2^32.
#[inline]
fn after(a: u32, b: u32) -> bool {
    (b.wrapping_sub(a) as i32) < 0
}

/// `before(a, b)`.
#[inline]
fn before(a: u32, b: u32) -> bool {
    after(b, a)
}

/// Linux `cake_tcph_may_drop`: a pure ACK whose timestamps are not newer than `ts_new`'s
/// (a missing option counts as 0 in the new ACK, as Linux reads it).
pub fn may_drop(a: &TcpAck, ts_new: (u32, u32)) -> bool {
    if !a.pure {
        return false;
    }
    match a.ts {
        Some((val, ecr)) => !(after(val, ts_new.0) || after(ecr, ts_new.1)),
        None => true,
    }
}

/// Linux `cake_tcph_sack_compare(a, b)`: -1 if `a` SACKs something `b` does not (or has a
/// D-SACK), 1 if `b` SACKs strictly more, 0 if equal.
pub fn sack_compare(a: &TcpAck, b: &TcpAck) -> i32 {
    let (na, nb) = (a.n_sack as usize, b.n_sack as usize);
    if na > 0 && nb == 0 {
        return -1;
    } else if nb > 0 && na == 0 {
        return 1;
    } else if na == 0 && nb == 0 {
        return 0;
    }
    let (mut bytes_a, mut bytes_b) = (0u32, 0u32);
    let mut first = true;
    for &(start_a, end_a) in &a.sack[..na] {
        // D-SACK: always considered greater, to prevent dropping
        if before(start_a, a.ack_seq) {
            return -1;
        }
        bytes_a = bytes_a.wrapping_add(end_a.wrapping_sub(start_a));
        let mut found = false;
        for &(start_b, end_b) in &b.sack[..nb] {
            if first {
                bytes_b = bytes_b.wrapping_add(end_b.wrapping_sub(start_b));
            }
            if !after(start_b, start_a) && !before(end_b, end_a) {
                found = true;
                if !first {
                    break;
                }
            }
        }
        if !found {
            return -1;
        }
        first = false;
    }
    if bytes_b > bytes_a {
        1
    } else {
        0
    }
}

/// Linux `cake_ack_filter` over a flow queue given head to tail as `(key, ack)` pairs (the
/// last is the new packet): the key of the ACK to drop, if any.
pub fn find<K: Copy>(
    queue: impl Iterator<Item = (K, Option<TcpAck>)>,
    tail: &TcpAck,
    aggressive: bool,
) -> Option<K> {
    let ts_new = tail.ts.unwrap_or((0, 0));
    let mut elig: Option<K> = None;
    let mut elig_flags = 0u8;
    let mut elig_next_is_tail = false;
    let mut num_found = 0i32;
    let mut prev_elig = false;
    for (k, a) in queue {
        if prev_elig {
            // the eligible ACK's successor is this packet (the tail when the walk ends here)
            elig_next_is_tail = false;
            prev_elig = false;
        }
        let Some(a) = a else { continue };
        if a.conn != tail.conn {
            continue;
        }
        if elig.is_some() && a.ece_cwr != elig_flags {
            elig = None;
            num_found -= 1;
        }
        if !may_drop(&a, ts_new) || after(a.ack_seq, tail.ack_seq) {
            continue;
        }
        let c = sack_compare(&a, tail);
        if c < 0 || (a.ack_seq == tail.ack_seq && c == 0) {
            continue;
        }
        if elig.is_none() {
            elig = Some(k);
            elig_flags = a.ece_cwr;
            elig_next_is_tail = true;
            prev_elig = true;
        }
        num_found += 1;
        if num_found > 1 {
            return elig;
        }
    }
    if aggressive && elig_next_is_tail && elig_flags == tail.ece_cwr {
        return elig;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(seq: u32, ts: u32) -> TcpAck {
        TcpAck {
            conn: 1,
            pure: true,
            ack_seq: seq,
            ts: Some((ts, ts)),
            ..Default::default()
        }
    }

    /// Linux's rules by hand: of ACKs 10, 11, 12 queued before 13, the filter drops 10 (the
    /// first eligible, once a second is found); a single older ACK is dropped only in
    /// aggressive mode and only next to the new one; a newer timestamp, another connection,
    /// a higher cumulative ACK, a non-pure packet or changed ECE/CWR flags protect an ACK.
    #[test]
    fn linux_rules_by_hand() {
        let q = |v: &[TcpAck]| {
            v.iter()
                .enumerate()
                .map(|(i, a)| (i, Some(*a)))
                .collect::<Vec<_>>()
        };
        let t = ack(13, 13);
        assert_eq!(
            find(
                q(&[ack(10, 10), ack(11, 11), ack(12, 12)]).into_iter(),
                &t,
                false
            ),
            Some(0)
        );
        assert_eq!(find(q(&[ack(12, 12)]).into_iter(), &t, false), None);
        assert_eq!(find(q(&[ack(12, 12)]).into_iter(), &t, true), Some(0));
        // not consecutive with the new ACK: a data packet between
        let mut v: Vec<(usize, Option<TcpAck>)> = q(&[ack(12, 12)]);
        v.push((1, None));
        assert_eq!(find(v.into_iter(), &t, true), None);
        // newer timestamp (TSecr 14 > 13) protects it
        assert_eq!(
            find(q(&[ack(10, 14), ack(11, 11)]).into_iter(), &t, false),
            None
        );
        // another connection, a higher ack, a non-pure packet
        let mut other = ack(10, 10);
        other.conn = 2;
        assert_eq!(find(q(&[other, ack(11, 11)]).into_iter(), &t, false), None);
        assert_eq!(
            find(q(&[ack(14, 10), ack(11, 11)]).into_iter(), &t, false),
            None
        );
        let mut data = ack(10, 10);
        data.pure = false;
        assert_eq!(find(q(&[data, ack(11, 11)]).into_iter(), &t, false), None);
        // ECE flips between the two eligible ACKs: the first is forgotten
        let mut ece = ack(11, 11);
        ece.ece_cwr = 1;
        assert_eq!(
            find(q(&[ack(10, 10), ece, ack(12, 12)]).into_iter(), &t, false),
            None
        );
        // the same cumulative ACK and the same SACK as the new one is not redundant
        assert_eq!(
            find(q(&[ack(13, 10), ack(13, 11)]).into_iter(), &t, false),
            None
        );
    }

    /// `cake_tcph_sack_compare` by hand: a SACK of [20, 30) is covered by [20, 40) (1) and
    /// by itself (0), not by [25, 40) (-1); a D-SACK below the cumulative ACK is -1; an ACK
    /// with SACK against one without is -1.
    #[test]
    fn sack_compare_by_hand() {
        let s = |blocks: &[(u32, u32)]| {
            let mut a = ack(10, 1);
            for (i, b) in blocks.iter().enumerate() {
                a.sack[i] = *b;
            }
            a.n_sack = blocks.len() as u8;
            a
        };
        assert_eq!(sack_compare(&s(&[(20, 30)]), &s(&[(20, 40)])), 1);
        assert_eq!(sack_compare(&s(&[(20, 30)]), &s(&[(20, 30)])), 0);
        assert_eq!(sack_compare(&s(&[(20, 30)]), &s(&[(25, 40)])), -1);
        assert_eq!(sack_compare(&s(&[(5, 8)]), &s(&[(5, 8), (20, 30)])), -1);
        assert_eq!(sack_compare(&s(&[(20, 30)]), &s(&[])), -1);
        assert_eq!(sack_compare(&s(&[]), &s(&[(20, 30)])), 1);
        assert_eq!(
            sack_compare(&s(&[(20, 30), (40, 50)]), &s(&[(20, 30), (40, 60)])),
            1
        );
    }
}
