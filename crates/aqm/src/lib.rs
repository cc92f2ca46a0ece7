//! AQM algorithms.
