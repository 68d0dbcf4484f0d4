// SPDX-License-Identifier: GPL-2.0-or-later

//! Fast-registration memory regions (`struct ib_mr` of type
//! `IB_MR_TYPE_MEM_REG`) and the page chunks they register.

use super::dma::{DmaAddr, DmaDirection};
use super::device::DeviceRef;
use super::pd::Pd;
use crate::rb::ffi;
use core::ptr::NonNull;
use core::sync::atomic::{AtomicU32, Ordering};
use kernel::alloc::{flags::GFP_KERNEL, KVec};
use kernel::error::from_err_ptr;
use kernel::new_spinlock;
use kernel::prelude::*;
use kernel::sync::{Arc, SpinLock};

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
/// `Drop`; `rkey` mirrors `mr->rkey`, which changes only under `lock`.
pub struct Mr {
    mr: NonNull<ffi::ib_mr>,
    rkey: AtomicU32,
    lock: Pin<KBox<SpinLock<()>>>,
    _pd: Arc<Pd>,
}

// SAFETY: the MR's mutable state (mapping, key) changes only under `lock`;
// the verbs using it are thread safe.
unsafe impl Send for Mr {}
// SAFETY: as above.
unsafe impl Sync for Mr {}

impl Mr {
    /// An MR on `pd` that maps up to `max_pages` pages.
    pub fn new(pd: &Arc<Pd>, max_pages: u32) -> Result<Self> {
        // SAFETY: `pd` is a live PD (we keep a reference to it).
        let mr = from_err_ptr(unsafe {
            ffi::ib_alloc_mr(pd.as_raw(), ffi::ib_mr_type_IB_MR_TYPE_MEM_REG, max_pages)
        })?;
        let mr = NonNull::new(mr).ok_or(ENOMEM)?;
        // SAFETY: `mr` is live.
        let rkey = unsafe { (*mr.as_ptr()).rkey };
        let lock = KBox::pin_init(new_spinlock!((), "rb_mr"), GFP_KERNEL).inspect_err(|_| {
            // SAFETY: `mr` is ours and unused.
            unsafe { ffi::ib_dereg_mr(mr.as_ptr()) };
        })?;
        // INVARIANT: a fresh MR on `pd`, whose key we mirror.
        Ok(Self { mr, rkey: AtomicU32::new(rkey), lock, _pd: pd.clone() })
    }

    pub(crate) fn as_raw(&self) -> *mut ffi::ib_mr {
        self.mr.as_ptr()
    }

    /// The current remote key.
    pub fn rkey(&self) -> u32 {
        self.rkey.load(Ordering::Acquire)
    }

    /// The current local key (equal to the rkey for fast-reg MRs).
    pub fn lkey(&self) -> u32 {
        let _g = self.lock.lock();
        // SAFETY: `mr` is live; its key changes only under `lock`, held.
        unsafe { (*self.as_raw()).lkey }
    }

    /// Maps the first `nents` DMA entries of `sg` into the MR, in pages of
    /// `page_size`, and returns how many entries were mapped. The mapping
    /// takes effect with the next REG_MR work request.
    pub fn map_sg(&self, sg: &impl DmaMappedSg, nents: u32, page_size: u32) -> Result<u32> {
        if nents > sg.dma_nents() {
            return Err(EINVAL);
        }
        let _g = self.lock.lock();
        // SAFETY: `mr` is live; `sg` has `nents` mapped entries valid during
        // the call (trait contract); the MR's state changes under `lock`.
        let n = unsafe {
            ffi::ib_map_mr_sg(self.as_raw(), sg.sgl(), nents as i32, core::ptr::null_mut(), page_size)
        };
        if n < 0 {
            return Err(Error::from_errno(n));
        }
        Ok(n as u32)
    }

    /// Bus address and length the MR maps now (`iova`, `length`).
    pub fn mapping(&self) -> (u64, u64) {
        let _g = self.lock.lock();
        // SAFETY: `mr` is live; the fields change only under `lock`, held.
        unsafe { ((*self.as_raw()).iova, (*self.as_raw()).length) }
    }

    /// Moves the key's low byte to the next value (`ib_inc_rkey`), as done
    /// before each re-registration so stale remote accesses fail.
    pub fn inc_key(&self) -> u32 {
        let _g = self.lock.lock();
        // SAFETY: `mr` is live; the key changes only under `lock`, held.
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

impl Drop for Mr {
    fn drop(&mut self) {
        // SAFETY: live and deregistered only here (type invariant). The owner
        // of the MR outlives the drain of any QP that used it.
        unsafe { ffi::ib_dereg_mr(self.as_raw()) };
    }
}

/// `nr` physically contiguous chunks of `2^order` pages each, in one
/// scatterlist mapped for DMA on a device: what an RTRS server registers for
/// its clients to write into and read from.
///
/// # Invariants
///
/// `pages` holds `nr` allocations of order `order`, `sgt` a table of `nr`
/// entries, one per chunk, of which `nents` are DMA-mapped on `dev`; all of
/// it is released only in `Drop`. Chunk memory is only accessed through raw
/// pointers.
pub struct Chunks {
    pages: KVec<NonNull<ffi::page>>,
    order: u32,
    sgt: KBox<ffi::sg_table>,
    nents: u32,
    dir: DmaDirection,
    dev: DeviceRef,
}

// SAFETY: chunk memory is only read/written by raw copies, writes need
// `&mut self`; the table and mapping may be used from any thread.
unsafe impl Send for Chunks {}
// SAFETY: shared access only reads.
unsafe impl Sync for Chunks {}

impl Chunks {
    /// Allocates `nr` zeroed chunks of `chunk_size` bytes (a power of two of
    /// at least a page) and maps them for DMA on `pd`'s device.
    pub fn new(pd: &Pd, nr: u32, chunk_size: usize, dir: DmaDirection) -> Result<Self> {
        if nr == 0 || !chunk_size.is_power_of_two() || chunk_size < kernel::page::PAGE_SIZE {
            return Err(EINVAL);
        }
        let order = (chunk_size / kernel::page::PAGE_SIZE).trailing_zeros();
        let dev = pd.device().get().ok_or(ENODEV)?;
        let mut pages = KVec::with_capacity(nr as usize, GFP_KERNEL)?;
        // SAFETY: all-zero is a valid empty `sg_table`.
        let mut sgt: KBox<ffi::sg_table> = KBox::new(unsafe { core::mem::zeroed() }, GFP_KERNEL)?;
        let this_pages_free = |pages: &mut KVec<NonNull<ffi::page>>| {
            for p in pages.iter() {
                // SAFETY: allocated below with this order and not freed yet.
                unsafe { ffi::__free_pages(p.as_ptr(), order) };
            }
        };
        for _ in 0..nr {
            // SAFETY: plain page allocation.
            let p = unsafe { ffi::alloc_pages(kernel::bindings::GFP_KERNEL | kernel::bindings::__GFP_ZERO, order) };
            match NonNull::new(p) {
                Some(p) => {
                    if pages.push(p, GFP_KERNEL).is_err() {
                        // SAFETY: just allocated, not stored.
                        unsafe { ffi::__free_pages(p.as_ptr(), order) };
                        this_pages_free(&mut pages);
                        return Err(ENOMEM);
                    }
                }
                None => {
                    this_pages_free(&mut pages);
                    return Err(ENOMEM);
                }
            }
        }
        // SAFETY: `sgt` is a zeroed table we own.
        let ret = unsafe { ffi::sg_alloc_table(&mut *sgt, nr, kernel::bindings::GFP_KERNEL) };
        if ret != 0 {
            this_pages_free(&mut pages);
            return Err(Error::from_errno(ret));
        }
        let mut sg = sgt.sgl;
        for p in pages.iter() {
            // SAFETY: `sg` walks the `nr` entries of the table just allocated
            // (one per page block), `p` is a live block of `chunk_size` bytes.
            unsafe {
                ffi::sg_set_page(sg, p.as_ptr(), chunk_size as u32, 0);
                sg = ffi::sg_next(sg);
            }
        }
        // SAFETY: the table's entries describe live pages; the device is held.
        let mapped = unsafe { ffi::ib_dma_map_sg(dev.as_raw(), sgt.sgl, nr as i32, dir.raw()) };
        if mapped <= 0 {
            // SAFETY: the table is ours and unmapped.
            unsafe { ffi::sg_free_table(&mut *sgt) };
            this_pages_free(&mut pages);
            return Err(ENOMEM);
        }
        // INVARIANT: `nr` chunks of order `order`, a table over them, mapped.
        Ok(Self { pages, order, sgt, nents: mapped as u32, dir, dev })
    }

    /// Number of chunks.
    pub fn len(&self) -> usize {
        self.pages.len()
    }

    /// Always false.
    pub fn is_empty(&self) -> bool {
        self.pages.is_empty()
    }

    /// Size of one chunk in bytes.
    pub fn chunk_size(&self) -> usize {
        kernel::page::PAGE_SIZE << self.order
    }

    fn chunk_ptr(&self, idx: usize, off: usize, len: usize) -> Result<*mut u8> {
        let p = self.pages.get(idx).ok_or(EINVAL)?;
        match off.checked_add(len) {
            Some(end) if end <= self.chunk_size() => {}
            _ => return Err(EINVAL),
        }
        // SAFETY: `p` is a live lowmem page block (kernel allocations of
        // GFP_KERNEL are in the direct map), `off + len` within it.
        Ok(unsafe { ffi::page_address(p.as_ptr()).cast::<u8>().add(off) })
    }

    /// Copies bytes of chunk `idx` at `off` into `dst`.
    pub fn read(&self, idx: usize, off: usize, dst: &mut [u8]) -> Result {
        let src = self.chunk_ptr(idx, off, dst.len())?;
        // SAFETY: in bounds (checked), no overlap, no reference to chunk
        // memory is created (the device may write it concurrently).
        unsafe { core::ptr::copy_nonoverlapping(src, dst.as_mut_ptr(), dst.len()) };
        Ok(())
    }

    /// Copies `src` into chunk `idx` at `off`.
    pub fn write(&mut self, idx: usize, off: usize, src: &[u8]) -> Result {
        let dst = self.chunk_ptr(idx, off, src.len())?;
        // SAFETY: in bounds, no overlap; `&mut self` excludes CPU races.
        unsafe { core::ptr::copy_nonoverlapping(src.as_ptr(), dst, src.len()) };
        Ok(())
    }

    /// Bus address of DMA entry `idx` (a chunk, unless the IOMMU merged
    /// entries) and its length.
    pub fn dma_entry(&self, idx: u32) -> Result<(DmaAddr, u32)> {
        if idx >= self.nents {
            return Err(EINVAL);
        }
        let mut sg = self.sgt.sgl;
        for _ in 0..idx {
            // SAFETY: `idx < nents <= nr` entries exist in the table.
            sg = unsafe { ffi::sg_next(sg) };
        }
        // SAFETY: `sg` is a mapped entry of our table.
        let (addr, len) = unsafe { (ffi::sg_dma_address(sg), ffi::sg_dma_len(sg)) };
        Ok((DmaAddr::from_mapping(addr), len))
    }
}

// SAFETY: `sgt.sgl` has `nents` mapped entries for as long as `self` lives.
unsafe impl DmaMappedSg for Chunks {
    fn sgl(&self) -> *mut ffi::scatterlist {
        self.sgt.sgl
    }

    fn dma_nents(&self) -> u32 {
        self.nents
    }
}

impl Drop for Chunks {
    fn drop(&mut self) {
        // SAFETY: the table is mapped with `pages.len()` entries on `dev`
        // (type invariant); MRs mapping it are gone (their owner outlives
        // them); then the table and the pages are ours to free.
        unsafe {
            ffi::ib_dma_unmap_sg(self.dev.as_raw(), self.sgt.sgl, self.pages.len() as i32, self.dir.raw());
            ffi::sg_free_table(&mut *self.sgt);
            for p in self.pages.iter() {
                ffi::__free_pages(p.as_ptr(), self.order);
            }
        }
    }
}
