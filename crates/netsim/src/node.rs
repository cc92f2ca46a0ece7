//! Nodes: hosts and routers. A node has no state of its own beyond its name;
//! forwarding is a lookup in [`crate::routing::Routes`] and every egress
//! queue belongs to a [`crate::link::Link`].

/// A node of the topology.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    /// Unique name (e.g. `"S0"`, `"R1"`).
    pub name: String,
}
