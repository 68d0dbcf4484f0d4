// SPDX-License-Identifier: GPL-2.0-or-later

//! The connections of a path, by connection id (C's `con` array of `struct
//! rtrs_path`): the IO path reaches them under RCU, as C's does, without a
//! lock and with interrupts on while it posts; a connection is torn down
//! only a grace period after it was taken out.

use crate::con::{Con, Side};
use kernel::prelude::*;
use rb::rcu::{self, RcuBox};
use rb_rdma::{CmId, CmIdRef};

/// The connection slots of a path; a slot is empty before its connection
/// is made and after it is taken out.
pub struct ConSlots<S: Side> {
    slots: KVec<RcuBox<CmId<Con<S>>>>,
}

impl<S: Side> ConSlots<S> {
    /// `n` empty slots.
    pub fn new(n: u32) -> Result<Self> {
        let mut slots = KVec::with_capacity(n as usize, GFP_KERNEL)?;
        for _ in 0..n {
            slots.push(RcuBox::empty(), GFP_KERNEL)?;
        }
        Ok(Self { slots })
    }

    /// How many slots there are.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Runs `f` on connection `cid` if it is there (`ENOTCONN` if not), in
    /// an RCU read-side section: `f` must not sleep.
    pub fn with<R>(&self, cid: u16, f: impl FnOnce(&CmIdRef<Con<S>>) -> Result<R>) -> Result<R> {
        let slot = self.slots.get(usize::from(cid)).ok_or(EINVAL)?;
        let g = rcu::read_lock();
        match slot.get(&g) {
            Some(id) => f(id),
            None => Err(rb::errno::ENOTCONN()),
        }
    }

    /// Whether connection `cid` is there.
    pub fn has(&self, cid: u16) -> bool {
        self.with(cid, |_| Ok(())).is_ok()
    }

    /// Puts connection `cid` in its slot; gives it back if the slot is taken
    /// or out of range.
    pub fn set(&self, cid: u16, id: KBox<CmId<Con<S>>>) -> Result<(), KBox<CmId<Con<S>>>> {
        match self.slots.get(usize::from(cid)) {
            Some(slot) => slot.try_set(id),
            None => Err(id),
        }
    }

    /// Replaces connection `cid` with `id`; the slot was empty (a new
    /// connection set after [`ConSlots::take_all`]), so nothing waits.
    pub fn replace(&self, cid: u16, id: KBox<CmId<Con<S>>>) -> Result {
        let slot = self.slots.get(usize::from(cid)).ok_or(EINVAL)?;
        drop(slot.replace(Some(id)));
        Ok(())
    }

    /// Takes every connection out once no IO can be posting on it any more
    /// (`synchronize_rcu()`: one grace period for them all).
    pub fn take_all(&self) -> KVec<KBox<CmId<Con<S>>>> {
        rcu::take_all(&self.slots)
    }
}
