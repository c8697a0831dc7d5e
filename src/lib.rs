//! streameval's native core: the contingency table's state and per-element work in Rust.
//!
//! [`core`] is pure Rust (tested by `cargo test`); `py` binds it to Python with PyO3 (built by
//! maturin with the `python` feature) as `streameval._native.Table`.

pub mod core;
pub mod terms;
pub mod values;

#[cfg(feature = "python")]
mod py;
