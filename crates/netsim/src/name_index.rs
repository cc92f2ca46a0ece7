//! Names to ids without a copy of the names: the topology builder's index of its nodes and
//! links, which the builders fill with hundreds of thousands of generated names on a large
//! dumbbell (a `HashMap<String, u32>` cloned every name: 32 bytes per name, freed after the
//! build but not returned to the system).
//!
//! The map holds a 64-bit hash of each name and the id; the names stay where they are (the
//! caller's table, read through `name_of`). Two names with one hash (which 64 bits make all
//! but impossible) are not confused: an insertion probes the next hash values until a free
//! one, and a lookup compares the names along the same probe sequence until a free value.
//! Nothing is ever removed, so a probe sequence never has a gap.

use std::collections::hash_map::{DefaultHasher, Entry};
use std::collections::HashMap;
use std::hash::{Hash, Hasher};

/// Ids by name, the names read through the caller's table.
#[derive(Debug, Default)]
pub(crate) struct NameIndex {
    ids: HashMap<u64, u32>,
}

/// The hash of `name` (SipHash with fixed keys: the same in every run).
fn hash(name: &str) -> u64 {
    let mut h = DefaultHasher::new();
    name.hash(&mut h);
    h.finish()
}

impl NameIndex {
    /// The id of `name`, given the name of every id recorded (`name_of`).
    pub(crate) fn get<'a>(&self, name: &str, name_of: impl Fn(u32) -> &'a str) -> Option<u32> {
        let mut h = hash(name);
        loop {
            let id = *self.ids.get(&h)?;
            if name_of(id) == name {
                return Some(id);
            }
            h = h.wrapping_add(1);
        }
    }

    /// Records `id` for `name`, or returns `Err` with the id recorded for it already.
    pub(crate) fn insert<'a>(
        &mut self,
        name: &str,
        id: u32,
        name_of: impl Fn(u32) -> &'a str,
    ) -> Result<(), u32> {
        let mut h = hash(name);
        loop {
            match self.ids.entry(h) {
                Entry::Vacant(e) => {
                    e.insert(id);
                    return Ok(());
                }
                Entry::Occupied(e) if name_of(*e.get()) == name => return Err(*e.get()),
                Entry::Occupied(_) => h = h.wrapping_add(1),
            }
        }
    }

    /// Records `id` under the hash value `h` (tests: two names with one hash).
    #[cfg(test)]
    fn insert_at(&mut self, h: u64, id: u32) {
        self.ids.insert(h, id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_what_it_recorded_and_refuses_duplicates() {
        let names = ["S0", "D0", "S0->R1", "R1->S0"];
        let mut ix = NameIndex::default();
        for (i, n) in names.iter().enumerate() {
            assert_eq!(ix.insert(n, i as u32, |j| names[j as usize]), Ok(()));
        }
        for (i, n) in names.iter().enumerate() {
            assert_eq!(ix.get(n, |j| names[j as usize]), Some(i as u32));
        }
        assert_eq!(ix.get("S1", |j| names[j as usize]), None);
        assert_eq!(ix.insert("S0->R1", 9, |j| names[j as usize]), Err(2));
    }

    /// A name whose hash value is taken by another name goes to the next free value, and is
    /// found there; a missing name with that hash is not confused with either.
    #[test]
    fn names_with_one_hash_stay_apart() {
        let names = ["a", "b", "c"];
        let mut ix = NameIndex::default();
        // "a" really at hash("b") and hash("b") + 1: "b" must probe past it
        ix.insert_at(hash("b"), 0);
        ix.insert_at(hash("b").wrapping_add(1), 2);
        assert_eq!(ix.insert("b", 1, |j| names[j as usize]), Ok(()));
        assert_eq!(ix.get("b", |j| names[j as usize]), Some(1));
        assert_eq!(ix.insert("b", 7, |j| names[j as usize]), Err(1));
        assert_eq!(ix.get("d", |j| names[j as usize]), None);
    }
}
