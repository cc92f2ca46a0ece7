//! Discrete-event packet simulator.
