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
//! Locking: a path's `conns` > its `inner` > a connection's INFO buffers,
//! a request slot's `st` and `iu`; a path's `conns` > `Core::paths_up`
//! (held while the user hears of link events) > `Core::limits`. Each
//! struct's `# Locking` says what its locks guard, and
//! `Documentation/design/locking.md` puts the orders together. The IO path
//! takes the request slot's locks and its MR's: it picks a path and a
//! connection under RCU (`Core::paths`, `Path::cons`) and reads atomics.

#[allow(unsafe_code)]
pub(crate) mod abi;
pub(crate) mod chunks;
pub(crate) mod conn;
pub(crate) mod fence;
pub(crate) mod params;
pub(crate) mod path;
pub(crate) mod req;
pub(crate) mod sess;
pub(crate) mod sysfs;
pub(crate) mod trace;
