// SPDX-License-Identifier: GPL-2.0-or-later

//! The RTRS client: a session (`sess`) of paths (`path`), each with its
//! connections (`conn`) and, while connected, a set of request slots
//! (`req`), one per server chunk.
//!
//! Ownership: the session owns its paths; a path owns its connection slots
//! and its current request set; a connection (the `CmId` handler) holds its
//! path and, once connected, the request set its work requests point at,
//! so that set lives until every QP that used it is drained. The cycles
//! (path -> connection -> path) are broken when a path stops its
//! connections.
//!
//! Locking: `Core::paths` and the per-path state lock are taken from any
//! context (irq-safe); a connection slot lock is held while posting on it;
//! a request's state lock covers its bookkeeping. Order: `Core::paths` >
//! connection slot > request state.

#[allow(unsafe_code)]
pub(crate) mod abi;
pub(crate) mod conn;
pub(crate) mod path;
pub(crate) mod req;
pub(crate) mod sess;
pub(crate) mod sysfs;
