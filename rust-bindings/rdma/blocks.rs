// SPDX-License-Identifier: GPL-2.0-or-later

//! Page blocks: physically contiguous blocks of pages, each one allocation
//! of an order (an RTRS server's chunks, which it lends its clients, one
//! per outstanding IO). [`PageBlocks`] owns the pages; a [`BlocksMap`] maps
//! a range of them for DMA on one device, in a scatterlist an MR can
//! register.

use super::device::DeviceRef;
use super::dma::{DmaAddr, DmaDirection};
use super::mr::DmaMappedSg;
use super::pd::Pd;
use core::ptr::NonNull;
use kernel::alloc::{flags::GFP_KERNEL, KBox, KVec};
use kernel::prelude::*;
use kernel::sync::Arc;
use rb::ffi;

/// `nr` blocks of `2^order` pages each.
///
/// # Invariants
///
/// `pages` holds `nr` live allocations of order `order`, lowmem (so they
/// have a kernel address), freed only in `Drop`. Their memory is only
/// accessed through raw pointers: the device and the block layer may use it
/// at any time.
pub struct PageBlocks {
    pages: KVec<NonNull<ffi::page>>,
    order: u32,
}

// SAFETY: the pages are owned; CPU access is by raw copies only, writes need
// `&mut self` or go through a handle whose user owns the block (see `Chunk`).
unsafe impl Send for PageBlocks {}
// SAFETY: as above.
unsafe impl Sync for PageBlocks {}

impl PageBlocks {
    /// Allocates `nr` blocks of `block_size` bytes, a power of two of at
    /// least a page. The memory is not zeroed.
    pub fn new(nr: u32, block_size: usize) -> Result<Self> {
        if nr == 0 || !block_size.is_power_of_two() || block_size < kernel::page::PAGE_SIZE {
            return Err(EINVAL);
        }
        let order = (block_size / kernel::page::PAGE_SIZE).trailing_zeros();
        let mut this = Self {
            pages: KVec::with_capacity(nr as usize, GFP_KERNEL)?,
            order,
        };
        for _ in 0..nr {
            // SAFETY: a plain page allocation.
            let p = unsafe { ffi::alloc_pages(kernel::bindings::GFP_KERNEL, order) };
            let p = NonNull::new(p).ok_or(ENOMEM)?;
            if let Err(e) = this.pages.push(p, GFP_KERNEL) {
                // SAFETY: just allocated with this order, not stored.
                unsafe { ffi::__free_pages(p.as_ptr(), order) };
                return Err(e.into());
            }
        }
        // INVARIANT: `nr` blocks of order `order` (`Drop` frees what was
        // allocated if this failed half way).
        Ok(this)
    }

    /// Number of blocks.
    pub fn len(&self) -> usize {
        self.pages.len()
    }

    /// Always false.
    pub fn is_empty(&self) -> bool {
        self.pages.is_empty()
    }

    /// Size of one block in bytes.
    pub fn block_size(&self) -> usize {
        kernel::page::PAGE_SIZE << self.order
    }

    fn ptr(&self, idx: usize, off: usize, len: usize) -> Result<*mut u8> {
        let p = self.pages.get(idx).ok_or(EINVAL)?;
        match off.checked_add(len) {
            Some(end) if end <= self.block_size() => {}
            _ => return Err(EINVAL),
        }
        // SAFETY: a live lowmem page block; `off + len` within it.
        Ok(unsafe { ffi::page_address(p.as_ptr()).cast::<u8>().add(off) })
    }

    /// The kernel address of block `idx`, for C code that takes the memory
    /// as a pointer (RTRS' `rdma_ev` hands its user a chunk so).
    pub fn block_ptr(&self, idx: usize) -> Result<*mut u8> {
        self.ptr(idx, 0, 0)
    }

    /// Copies bytes of block `idx` at `off` into `dst`.
    pub fn read(&self, idx: usize, off: usize, dst: &mut [u8]) -> Result {
        let src = self.ptr(idx, off, dst.len())?;
        // SAFETY: in bounds (checked), no overlap, no reference to block
        // memory is created (the device may write it concurrently).
        unsafe { core::ptr::copy_nonoverlapping(src, dst.as_mut_ptr(), dst.len()) };
        Ok(())
    }

    /// Copies `src` into block `idx` at `off`.
    pub fn write(&mut self, idx: usize, off: usize, src: &[u8]) -> Result {
        let dst = self.ptr(idx, off, src.len())?;
        // SAFETY: in bounds, no overlap; `&mut self` excludes CPU races.
        unsafe { core::ptr::copy_nonoverlapping(src.as_ptr(), dst, src.len()) };
        Ok(())
    }
}

impl Drop for PageBlocks {
    fn drop(&mut self) {
        for p in self.pages.iter() {
            // SAFETY: allocated with this order and freed only here; every
            // mapping of them holds an `Arc<PageBlocks>` and is gone.
            unsafe { ffi::__free_pages(p.as_ptr(), self.order) };
        }
    }
}

/// Blocks `first..first + count` of a [`PageBlocks`], one scatterlist entry
/// each, mapped for DMA on a PD's device (`DMA_BIDIRECTIONAL`).
///
/// # Invariants
///
/// `sgt` has `count` entries over the blocks, of which `nents` are mapped on
/// `dev`; unmapped and freed only in `Drop`; `pages` keeps the blocks.
pub struct BlocksMap {
    sgt: KBox<ffi::sg_table>,
    count: u32,
    nents: u32,
    first: u32,
    /// Bus address of each block (`count` of them).
    addrs: KVec<u64>,
    pages: Arc<PageBlocks>,
    dev: DeviceRef,
}

// SAFETY: the table and mapping may be used from any thread; nothing is
// mutated after construction.
unsafe impl Send for BlocksMap {}
// SAFETY: as above.
unsafe impl Sync for BlocksMap {}

impl BlocksMap {
    /// Maps blocks `first..first + count` of `pages` on `pd`'s device.
    pub fn new(pd: &Pd, pages: &Arc<PageBlocks>, first: u32, count: u32) -> Result<Self> {
        let end = first.checked_add(count).ok_or(EINVAL)?;
        if count == 0 || end as usize > pages.len() {
            return Err(EINVAL);
        }
        let dev = pd.device().get().ok_or(ENODEV)?;
        // SAFETY: all-zero is a valid empty `sg_table`.
        let mut sgt: KBox<ffi::sg_table> = KBox::new(unsafe { core::mem::zeroed() }, GFP_KERNEL)?;
        // SAFETY: `sgt` is a zeroed table we own.
        kernel::error::to_result(unsafe {
            ffi::sg_alloc_table(&mut *sgt, count, kernel::bindings::GFP_KERNEL)
        })?;
        let size = pages.block_size() as u32;
        let mut sg = sgt.sgl;
        for p in &pages.pages[first as usize..end as usize] {
            // SAFETY: `sg` walks the `count` entries of the table just
            // allocated; `p` is a live block of `size` bytes.
            unsafe {
                ffi::sg_set_page(sg, p.as_ptr(), size, 0);
                sg = ffi::sg_next(sg);
            }
        }
        let dir = DmaDirection::Bidirectional.raw();
        // SAFETY: the entries describe live pages; the device is held.
        let nents = unsafe { ffi::ib_dma_map_sg(dev.as_raw(), sgt.sgl, count as i32, dir) };
        if nents <= 0 {
            // SAFETY: our table, not mapped.
            unsafe { ffi::sg_free_table(&mut *sgt) };
            return Err(ENOMEM);
        }
        // INVARIANT: a table over the blocks, `nents` entries mapped.
        let mut this = Self {
            sgt,
            count,
            nents: nents as u32,
            first,
            addrs: KVec::with_capacity(count as usize, GFP_KERNEL)?,
            pages: pages.clone(),
            dev,
        };
        this.find_addrs()?;
        Ok(this)
    }

    /// Records the bus address of each block, walking the mapped entries:
    /// the IOMMU may have merged neighbours into one (as the C server does).
    fn find_addrs(&mut self) -> Result {
        let size = self.pages.block_size() as u64;
        let mut sg = self.sgt.sgl;
        for _ in 0..self.nents {
            // SAFETY: `sg` is one of the `nents` mapped entries.
            let (mut addr, len) =
                unsafe { (ffi::sg_dma_address(sg), u64::from(ffi::sg_dma_len(sg))) };
            let end = addr + len;
            while addr < end && self.addrs.len() < self.count as usize {
                self.addrs.push(addr, GFP_KERNEL)?;
                addr += size;
            }
            // SAFETY: advancing within the table (at most `nents` steps).
            sg = unsafe { ffi::sg_next(sg) };
        }
        if self.addrs.len() != self.count as usize {
            return Err(EINVAL);
        }
        Ok(())
    }

    /// The bus address of block `block` (an index into the `PageBlocks`).
    pub fn block_addr(&self, block: u32) -> Result<DmaAddr> {
        let i = block.checked_sub(self.first).ok_or(EINVAL)?;
        self.addrs
            .get(i as usize)
            .map(|a| DmaAddr::from_mapping(*a))
            .ok_or(EINVAL)
    }

    /// Makes the device's writes to the first `len` bytes of block `block`
    /// visible to the CPU.
    pub fn sync_for_cpu(&self, block: u32, len: usize) -> Result {
        let addr = self.block_addr(block)?;
        if len > self.pages.block_size() {
            return Err(EINVAL);
        }
        // SAFETY: a mapped block of at least `len` bytes on `dev`.
        unsafe {
            ffi::ib_dma_sync_single_for_cpu(
                self.dev.as_raw(),
                addr.get(),
                len,
                DmaDirection::Bidirectional.raw(),
            )
        };
        Ok(())
    }

    /// Makes the CPU's writes to the first `len` bytes of block `block`
    /// visible to the device.
    pub fn sync_for_device(&self, block: u32, len: usize) -> Result {
        let addr = self.block_addr(block)?;
        if len > self.pages.block_size() {
            return Err(EINVAL);
        }
        // SAFETY: as above.
        unsafe {
            ffi::ib_dma_sync_single_for_device(
                self.dev.as_raw(),
                addr.get(),
                len,
                DmaDirection::Bidirectional.raw(),
            )
        };
        Ok(())
    }

    /// The blocks this maps: `first..first + count`.
    pub fn range(&self) -> core::ops::Range<u32> {
        self.first..self.first + self.count
    }
}

// SAFETY: `sgt.sgl` has `nents` mapped entries for as long as `self` lives.
unsafe impl DmaMappedSg for BlocksMap {
    fn sgl(&self) -> *mut ffi::scatterlist {
        self.sgt.sgl
    }

    fn dma_nents(&self) -> u32 {
        self.nents
    }
}

impl Drop for BlocksMap {
    fn drop(&mut self) {
        // SAFETY: mapped with `count` entries on `dev` (type invariant); the
        // MRs over it belong to the same owner and are gone before it.
        unsafe {
            ffi::ib_dma_unmap_sg(
                self.dev.as_raw(),
                self.sgt.sgl,
                self.count as i32,
                DmaDirection::Bidirectional.raw(),
            );
            ffi::sg_free_table(&mut *self.sgt);
        }
    }
}
