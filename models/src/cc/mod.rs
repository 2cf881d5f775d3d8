//! Congestion control algorithms, one per file.
pub mod dcqcn;
