//! Makes PyO3's configuration cfgs (`Py_LIMITED_API`, `Py_3_12`, ...) visible to this crate.
//! Only the opt-in `abi3-py311` / `abi3-py312` features set `Py_LIMITED_API`, which swaps the
//! two CPython-specific fast paths (the `am_send` slot in `emit.rs`, raw vectorcall before
//! 3.12 in `walk.rs`) for limited-API ones; without them the crate compiles as it always did.

fn main() {
    pyo3_build_config::use_pyo3_cfgs();
}
