// SPDX-License-Identifier: GPL-2.0-or-later

//! The RTRS server: context and listeners (`ctx`), client sessions
//! (`sess`), their paths (`path`) and connections (`conn`), and the C API
//! glue (`Api`).
//!
//! Ownership: the context owns its sessions, a session its paths, a path its
//! connections (each a `CmId<Con>`), MRs and IO slots. References back up
//! (connection to path, path to session, session to context) are `Arc`s;
//! the cycles they form are broken when a path closes (it takes its
//! connections out) and when a session loses its last path.
//!
//! Locking: `Ctx::sessions` > `Session::paths` > `Session::files` >
//! `Path::files`; `Session::paths_up` alone; a path's `inner` and a
//! connection's wait list are irq-safe leaves (the upper layer answers IO
//! from any context). Each struct's `# Locking` says what its locks guard.
//! The IO path takes none of them but a connection's wait list when its
//! send queue is full: it reaches connections under RCU and reads atomics.

#[allow(unsafe_code)]
pub(crate) mod abi;
pub(crate) mod conn;
pub(crate) mod ctx;
pub(crate) mod fence;
pub(crate) mod params;
pub(crate) mod path;
pub(crate) mod sess;
pub(crate) mod sysfs;
pub(crate) mod trace;
