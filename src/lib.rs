//! streameval's native core: the contingency table's state and per-element work in Rust.
//!
//! [`core`] is pure Rust (tested by `cargo test`); `py` binds it to Python with PyO3 (built by
//! maturin with the `python` feature) as `streameval._native.Table`.

pub mod block_sums;
pub mod lines;
pub mod core;
pub mod summaries;
pub mod terms;
pub mod values;

#[cfg(feature = "python")]
mod py;
#[cfg(feature = "python")]
mod summaries_py;

#[cfg(all(feature = "python", target_os = "linux"))]
mod alloc;
#[cfg(all(feature = "python", target_os = "linux"))]
#[global_allocator]
static GLOBAL: alloc::HugePages = alloc::HugePages;
