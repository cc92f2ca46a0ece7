//! The names of the topology's nodes (hosts and routers, e.g. `"S0"`, `"R1"`) and links
//! (e.g. `"S0->R1"`), each kind in one table: the names' bytes one after another in one
//! string, and where each ends.
//!
//! A node has no state of its own beyond its name (forwarding is a lookup in
//! [`crate::routing::Routes`] and every egress queue belongs to a [`crate::link::Link`]), and a
//! large dumbbell has hundreds of thousands of generated names of 2-12 bytes. As a `String`
//! or `Box<str>` each, every name took an allocator block of 32 bytes plus its 16- or 24-byte
//! handle; here it takes its bytes and a 4-byte end.

use std::fmt::{self, Write};

/// Names by id (the order they were pushed in), in one string.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Names {
    text: String,
    /// `ends[i]`: where name `i` ends in `text` (it starts where name `i - 1` ends).
    ends: Vec<u32>,
}

impl Names {
    /// Appends `name`; returns its id.
    pub fn push(&mut self, name: &str) -> u32 {
        self.push_fmt(format_args!("{name}"))
    }

    /// Appends the name `args` formats (written in place, no intermediate string); returns
    /// its id.
    pub fn push_fmt(&mut self, args: fmt::Arguments<'_>) -> u32 {
        self.text
            .write_fmt(args)
            .expect("formatting into a String does not fail");
        let end = u32::try_from(self.text.len()).expect("names take less than 4 GiB");
        self.ends.push(end);
        (self.ends.len() - 1) as u32
    }

    /// Removes the name pushed last (a name refused after it was written).
    pub fn pop(&mut self) {
        self.ends.pop();
        let end = self.ends.last().copied().unwrap_or(0);
        self.text.truncate(end as usize);
    }

    /// The name of `id`. Panics if there is none.
    pub fn get(&self, id: u32) -> &str {
        let i = id as usize;
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        &self.text[start..self.ends[i] as usize]
    }

    /// The number of names.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// True if there are none.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The names in id order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &str> + '_ {
        (0..self.ends.len() as u32).map(|i| self.get(i))
    }

    /// Returns the room that growing by doubling left unused.
    pub fn shrink_to_fit(&mut self) {
        self.text.shrink_to_fit();
        self.ends.shrink_to_fit();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_by_id_in_push_order() {
        let mut n = Names::default();
        assert!(n.is_empty());
        assert_eq!(n.push("S0"), 0);
        assert_eq!(n.push(""), 1);
        assert_eq!(n.push_fmt(format_args!("{}->{}", "S0", "R1")), 2);
        assert_eq!(n.len(), 3);
        assert_eq!((n.get(0), n.get(1), n.get(2)), ("S0", "", "S0->R1"));
        assert_eq!(n.iter().collect::<Vec<_>>(), ["S0", "", "S0->R1"]);
        n.pop();
        assert_eq!(n.iter().collect::<Vec<_>>(), ["S0", ""]);
        assert_eq!(n.push("R1->S0"), 2);
        assert_eq!(n.get(2), "R1->S0");
        n.pop();
        n.pop();
        n.pop();
        assert!(n.is_empty());
        assert_eq!(n.push("D7"), 0);
        assert_eq!(n.get(0), "D7");
    }
}
