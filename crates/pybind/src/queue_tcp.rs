//! The TCP header fields a `Queue.enqueue` caller may give a packet (`tcp_flags`, `ack_seq`,
//! `sack`, `ts`, `payload`), checked and turned into the [`aqm::TcpAck`] CAKE's ACK filter
//! reads (`crates/aqm/src/cake/ack_filter.rs`).

use aqm::TcpAck;
use pyo3::prelude::*;
use pyo3::types::PyAny;

use crate::{argument_error, whole};

/// The flag letters of `tcp_flags`, with their bits in TCP's flag byte (RFC 9293 §3.1;
/// ECE and CWR RFC 3168 §6.1).
const FLAGS: [(char, u8); 8] = [
    ('F', 0x01),
    ('S', 0x02),
    ('R', 0x04),
    ('P', 0x08),
    ('A', 0x10),
    ('U', 0x20),
    ('E', 0x40),
    ('C', 0x80),
];
const ACK: u8 = 0x10;
const SYN: u8 = 0x02;
const ECE_CWR: u8 = 0xc0;

/// `tcp_flags`: letters of `FSRPAUEC` (any order and case) or the flag byte (0..255).
fn flags_of(v: &Bound<'_, PyAny>) -> PyResult<u8> {
    if let Ok(s) = v.extract::<String>() {
        let mut f = 0u8;
        for c in s.trim().chars() {
            let Some(&(_, bit)) = FLAGS.iter().find(|(l, _)| *l == c.to_ascii_uppercase()) else {
                return Err(argument_error(
                    "tcp_flags",
                    v.repr()?,
                    "must be letters of FSRPAUEC (FIN SYN RST PSH ACK URG ECE CWR) or 0..255",
                ));
            };
            f |= bit;
        }
        return Ok(f);
    }
    Ok(whole("tcp_flags", v, 0, 255)? as u8)
}

/// A 32-bit sequence number named `key`.
fn seq(key: &str, v: &Bound<'_, PyAny>) -> PyResult<u32> {
    Ok(whole(key, v, 0, u32::MAX as u64)? as u32)
}

/// A pair of sequence numbers, or an error naming `key`.
fn pair(key: &str, v: &Bound<'_, PyAny>, what: &str) -> PyResult<(u32, u32)> {
    let items: Vec<Bound<'_, PyAny>> = match v.try_iter() {
        Ok(it) if v.extract::<String>().is_err() => it.collect::<PyResult<_>>()?,
        _ => return Err(argument_error(key, v.repr()?, what)),
    };
    if items.len() != 2 {
        return Err(argument_error(key, v.repr()?, what));
    }
    Ok((seq(key, &items[0])?, seq(key, &items[1])?))
}

/// The ACK-filter view of an offered packet (`conn` its `flow`), `None` if it carries no TCP
/// header (`tcp_flags` not given) or is not an ACK the filter starts from (no ACK flag, or
/// SYN). `ack_seq`, `sack`, `ts` and `payload` need `tcp_flags`.
pub(crate) fn tcp_of(
    flow: u64,
    tcp_flags: Option<&Bound<'_, PyAny>>,
    ack_seq: Option<&Bound<'_, PyAny>>,
    sack: Option<&Bound<'_, PyAny>>,
    ts: Option<&Bound<'_, PyAny>>,
    payload: Option<&Bound<'_, PyAny>>,
) -> PyResult<Option<TcpAck>> {
    let Some(fv) = tcp_flags else {
        for (k, v) in [
            ("ack_seq", ack_seq),
            ("sack", sack),
            ("ts", ts),
            ("payload", payload),
        ] {
            if let Some(v) = v {
                return Err(argument_error(
                    k,
                    v.repr()?,
                    "a TCP header field needs tcp_flags",
                ));
            }
        }
        return Ok(None);
    };
    let flags = flags_of(fv)?;
    let ack_seq = ack_seq.map_or(Ok(0), |v| seq("ack_seq", v))?;
    let payload = payload.map_or(Ok(0), |v| whole("payload", v, 0, 65535))?;
    let ts = ts
        .map(|v| pair("ts", v, "must be a pair (TSval, TSecr) of 32-bit numbers"))
        .transpose()?;
    let mut a = TcpAck {
        conn: flow,
        pure: flags & !ECE_CWR == ACK && payload == 0,
        ece_cwr: (flags >> 6) & 1 | ((flags >> 7) << 1),
        ack_seq,
        ts,
        ..Default::default()
    };
    if let Some(v) = sack {
        let why = "must be a list of at most 4 (start, end) pairs of 32-bit numbers";
        let blocks: Vec<Bound<'_, PyAny>> = match v.try_iter() {
            Ok(it) if v.extract::<String>().is_err() => it.collect::<PyResult<_>>()?,
            _ => return Err(argument_error("sack", v.repr()?, why)),
        };
        if blocks.len() > 4 {
            return Err(argument_error("sack", v.repr()?, why));
        }
        for b in &blocks {
            a.sack[a.n_sack as usize] = pair("sack", b, why)?;
            a.n_sack += 1;
        }
    }
    Ok((flags & (ACK | SYN) == ACK).then_some(a))
}
