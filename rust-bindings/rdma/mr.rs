// SPDX-License-Identifier: GPL-2.0-or-later

//! Fast-registration memory regions (`struct ib_mr` of type
//! `IB_MR_TYPE_MEM_REG`).

use super::pd::Pd;
use core::ptr::NonNull;
use core::sync::atomic::{AtomicU32, Ordering};
use kernel::alloc::flags::GFP_KERNEL;
use kernel::error::from_err_ptr;
use kernel::prelude::*;
use kernel::sync::Arc;
use rb::ffi;
use rb::sync::{new_spinlock_irq, SpinLockIrq};

/// A scatterlist mapped for DMA on some device.
///
/// # Safety
///
/// `sgl` points to a scatterlist whose first `dma_nents` entries are mapped
/// for DMA, valid for as long as `self` is borrowed.
pub unsafe trait DmaMappedSg {
    /// The first entry.
    fn sgl(&self) -> *mut ffi::scatterlist;
    /// Number of mapped entries.
    fn dma_nents(&self) -> u32;
}

/// A fast-registration MR: maps a DMA-mapped scatterlist and is registered
/// (and invalidated) with work requests, under a key that changes each time.
///
/// # Invariants
///
/// `mr` was returned by `ib_alloc_mr` on `pd` and is deregistered only in
/// `Drop`; its mapping and key change only under `mapped`, which holds
/// what it maps since; `rkey` mirrors `mr->rkey`.
pub struct Mr {
    mr: NonNull<ffi::ib_mr>,
    rkey: AtomicU32,
    /// What the MR maps, and the right to change the C MR's mapping and
    /// key. Taken with interrupts off: a server re-keys an MR as it answers
    /// an IO, from the block driver's completion (softirq, or hard IRQ),
    /// and also from process context (at connect).
    mapped: Pin<KBox<SpinLockIrq<Mapped>>>,
    _pd: Arc<Pd>,
}

/// The range an MR maps (its `iova` and `length`).
#[derive(Clone, Copy, Default)]
struct Mapped {
    iova: u64,
    length: u64,
}

// SAFETY: the MR's mutable state (mapping, key) changes only under
// `mapped`; the verbs using it are thread safe.
unsafe impl Send for Mr {}
// SAFETY: as above.
unsafe impl Sync for Mr {}

impl Mr {
    /// An MR on `pd` that maps up to `max_pages` pages
    /// (`IB_MR_TYPE_MEM_REG`).
    pub fn new(pd: &Arc<Pd>, max_pages: u32) -> Result<Self> {
        Self::alloc(pd, max_pages, ffi::ib_mr_type_IB_MR_TYPE_MEM_REG)
    }

    /// [`Mr::new`], but of type `IB_MR_TYPE_SG_GAPS` where the device
    /// registers scatterlists with gaps ([`DeviceAttrs::sg_gaps_reg`]):
    /// it then maps entries that do not end and start on page bounds.
    ///
    /// [`DeviceAttrs::sg_gaps_reg`]: super::device::DeviceAttrs::sg_gaps_reg
    pub fn new_sg_gaps(pd: &Arc<Pd>, max_pages: u32) -> Result<Self> {
        let t = if pd.device().attrs().sg_gaps_reg() {
            ffi::ib_mr_type_IB_MR_TYPE_SG_GAPS
        } else {
            ffi::ib_mr_type_IB_MR_TYPE_MEM_REG
        };
        Self::alloc(pd, max_pages, t)
    }

    fn alloc(pd: &Arc<Pd>, max_pages: u32, t: ffi::ib_mr_type) -> Result<Self> {
        // SAFETY: `pd` is a live PD (we keep a reference to it).
        let mr = from_err_ptr(unsafe { ffi::ib_alloc_mr(pd.as_raw(), t, max_pages) })?;
        let mr = NonNull::new(mr).ok_or(ENOMEM)?;
        // SAFETY: `mr` is live.
        let rkey = unsafe { (*mr.as_ptr()).rkey };
        let mapped = KBox::pin_init(new_spinlock_irq!(Mapped::default(), "rb_mr"), GFP_KERNEL)
            .inspect_err(|_| {
                // SAFETY: `mr` is ours and unused.
                unsafe { ffi::ib_dereg_mr(mr.as_ptr()) };
            })?;
        // INVARIANT: a fresh MR on `pd`, mapping nothing, whose key we
        // mirror.
        Ok(Self {
            mr,
            rkey: AtomicU32::new(rkey),
            mapped,
            _pd: pd.clone(),
        })
    }

    pub(crate) fn as_raw(&self) -> *mut ffi::ib_mr {
        self.mr.as_ptr()
    }

    /// The current remote key.
    pub fn rkey(&self) -> u32 {
        self.rkey.load(Ordering::Acquire)
    }

    /// Maps all DMA entries of `sg` into the MR, in pages of `page_size`,
    /// then moves the key on as [`Mr::inc_key`] does, in one hold of the
    /// lock: how a client registers a request's pages (`ib_map_mr_sg()`,
    /// then `ib_update_fast_reg_key()`). Returns what the MR then
    /// registers, which takes effect with the next REG_MR work request;
    /// `EINVAL` if the driver mapped fewer entries.
    ///
    /// Does not sleep, so it may run in the IO path (as C RTRS's client
    /// maps every request); for that, `page_size` is at most `PAGE_SIZE`
    /// (else `EINVAL`): with larger pages a driver may allocate (rxe grows
    /// its page list), which is what [`Mr::map_sg_owned`] is for.
    pub fn map_sg_next_key(&self, sg: &impl DmaMappedSg, page_size: u32) -> Result<MrMapping> {
        if page_size as usize > kernel::page::PAGE_SIZE {
            return Err(EINVAL);
        }
        let nents = sg.dma_nents();
        let mut mapped = self.mapped.lock();
        // SAFETY: the MR's state changes under `mapped`, held.
        let n = unsafe { self.map_sg_raw(sg, nents, page_size) };
        // SAFETY: `mapped` is held.
        let rkey = matches!(n, Ok(n) if n == nents).then(|| unsafe { self.inc_key_locked() });
        // SAFETY: `mr` is live; its fields change only under `mapped`,
        // held. Read after the key moved on, which changes `lkey` too.
        let (iova, length, lkey) = unsafe {
            let mr = &*self.as_raw();
            (mr.iova, mr.length, mr.lkey)
        };
        *mapped = Mapped { iova, length };
        let rkey = rkey.ok_or(n.err().unwrap_or(EINVAL))?;
        Ok(MrMapping {
            iova,
            length,
            rkey,
            lkey,
        })
    }

    /// Maps the first `nents` DMA entries of `sg` as
    /// [`Mr::map_sg_next_key`] does, with pages of any size and no new key,
    /// for an MR nobody else uses yet (a chunk MR set up with its session):
    /// `&mut self` excludes every other user, so no lock is held and the
    /// driver may sleep. May sleep.
    pub fn map_sg_owned(
        &mut self,
        sg: &impl DmaMappedSg,
        nents: u32,
        page_size: u32,
    ) -> Result<u32> {
        // SAFETY: `&mut self`: no other user of the MR's state.
        let n = unsafe { self.map_sg_raw(sg, nents, page_size) };
        // SAFETY: `mr` is live, and ours alone (`&mut self`).
        let (iova, length) = unsafe { ((*self.as_raw()).iova, (*self.as_raw()).length) };
        *self.mapped.lock() = Mapped { iova, length };
        n
    }

    /// `ib_map_mr_sg` of the first `nents` entries of `sg`.
    ///
    /// # Safety
    ///
    /// Nothing else reads or changes the MR's state (its keys, iova,
    /// length, page list) during the call.
    unsafe fn map_sg_raw(&self, sg: &impl DmaMappedSg, nents: u32, page_size: u32) -> Result<u32> {
        if nents > sg.dma_nents() {
            return Err(EINVAL);
        }
        // SAFETY: `mr` is live; `sg` has `nents` mapped entries valid during
        // the call (trait contract); nobody else touches the MR meanwhile
        // (function contract).
        let n = unsafe {
            ffi::ib_map_mr_sg(
                self.as_raw(),
                sg.sgl(),
                nents as i32,
                core::ptr::null_mut(),
                page_size,
            )
        };
        if n < 0 {
            return Err(Error::from_errno(n));
        }
        Ok(n as u32)
    }

    /// Bus address and length the MR maps now (`iova`, `length`).
    pub fn mapping(&self) -> (u64, u64) {
        let m = *self.mapped.lock();
        (m.iova, m.length)
    }

    /// Moves the key's low byte to the next value (`ib_inc_rkey`), as done
    /// before each re-registration so stale remote accesses fail.
    pub fn inc_key(&self) -> u32 {
        let _mapped = self.mapped.lock();
        // SAFETY: `mapped` is held.
        unsafe { self.inc_key_locked() }
    }

    /// [`Mr::inc_key`] with `mapped` held.
    ///
    /// # Safety
    ///
    /// The caller holds `mapped`.
    unsafe fn inc_key_locked(&self) -> u32 {
        // SAFETY: `mr` is live; the key changes only under `mapped`, which
        // the caller holds.
        let rkey = unsafe { (*self.as_raw()).rkey };
        let next = ((rkey & 0xff) as u8).wrapping_add(1);
        // SAFETY: as above.
        unsafe { ffi::ib_update_fast_reg_key(self.as_raw(), next) };
        // SAFETY: as above.
        let new = unsafe { (*self.as_raw()).rkey };
        self.rkey.store(new, Ordering::Release);
        new
    }
}

/// What an MR registers after [`Mr::map_sg_next_key`]: the values a
/// request's descriptor and SGE carry.
#[derive(Clone, Copy)]
pub struct MrMapping {
    /// Start of the registration in the MR's address space.
    pub iova: u64,
    /// Its length in bytes.
    pub length: u64,
    /// The new remote key.
    pub rkey: u32,
    lkey: u32,
}

impl MrMapping {
    /// An SGE over the whole registration, for a work request that sends
    /// from it.
    pub fn sge(&self) -> super::wr::Sge {
        super::wr::Sge::from_mr(self.iova, self.length as u32, self.lkey)
    }
}

impl Drop for Mr {
    fn drop(&mut self) {
        // SAFETY: live and deregistered only here (type invariant). The owner
        // of the MR outlives the drain of any QP that used it.
        unsafe { ffi::ib_dereg_mr(self.as_raw()) };
    }
}
