// SPDX-License-Identifier: GPL-2.0-or-later

//! DMA mappings: buffers of kernel memory for work requests (RTRS' IUs),
//! and scatterlists lent by their owner for one IO.

use super::device::{Device, DeviceRef};
use super::mr::DmaMappedSg;
use core::ptr::NonNull;
use kernel::alloc::{flags::GFP_KERNEL, KVec};
use kernel::prelude::*;
use rb::ffi;

/// Direction of a DMA mapping.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DmaDirection {
    /// The device reads (`DMA_TO_DEVICE`).
    ToDevice,
    /// The device writes (`DMA_FROM_DEVICE`).
    FromDevice,
    /// Both (`DMA_BIDIRECTIONAL`).
    Bidirectional,
}

impl DmaDirection {
    pub(crate) fn raw(self) -> ffi::dma_data_direction {
        match self {
            Self::ToDevice => ffi::dma_data_direction_DMA_TO_DEVICE,
            Self::FromDevice => ffi::dma_data_direction_DMA_FROM_DEVICE,
            Self::Bidirectional => ffi::dma_data_direction_DMA_BIDIRECTIONAL,
        }
    }
}

/// A bus address the device can reach, produced only by a DMA mapping of
/// this module, so safe code cannot make one up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DmaAddr(u64);

impl DmaAddr {
    /// The address as the device sees it.
    pub fn get(self) -> u64 {
        self.0
    }

    /// The address `off` bytes further.
    pub(crate) fn offset(self, off: usize) -> Self {
        Self(self.0.wrapping_add(off as u64))
    }

    pub(crate) fn from_mapping(addr: u64) -> Self {
        Self(addr)
    }
}

/// A buffer of kernel memory mapped for DMA on one device, unmapped and freed
/// in `Drop`.
///
/// The CPU reads and writes it only by copying ([`DmaBuf::read`],
/// [`DmaBuf::write`]) through raw pointers, never through references, since
/// the device may access it at the same time (as with `memcpy` in C). Writes
/// need `&mut self`, so CPU writers never race each other; a buffer written on
/// a hot path sits behind the lock of whoever owns it (an IU, a request).
///
/// # Invariants
///
/// `ptr`/`len`/`cap` are the raw parts of a `KVec<u8>` of `len` initialised
/// bytes, owned by this object and only accessed through raw pointers; `dma`
/// is their mapping on `dev` in direction `dir`, valid until `Drop`.
pub struct DmaBuf {
    ptr: *mut u8,
    len: usize,
    cap: usize,
    dma: u64,
    dir: DmaDirection,
    dev: DeviceRef,
}

// SAFETY: the buffer is owned and only accessed through `&self` methods that
// copy via raw pointers; the mapping may be used and released on any thread.
unsafe impl Send for DmaBuf {}
// SAFETY: as above.
unsafe impl Sync for DmaBuf {}

impl DmaBuf {
    /// Allocates `len` zeroed bytes and maps them on `dev`.
    pub fn new(dev: &Device, len: usize, dir: DmaDirection) -> Result<Self> {
        if len == 0 || len > u32::MAX as usize {
            return Err(EINVAL);
        }
        let dev = dev.get().ok_or(ENODEV)?;
        let (ptr, len, cap) = KVec::from_elem(0u8, len, GFP_KERNEL)?.into_raw_parts();
        // SAFETY: `ptr` is `len` bytes of kernel memory that lives until the
        // mapping is undone in `Drop`; the device is registered (we hold it).
        let dma = unsafe { ffi::ib_dma_map_single(dev.as_raw(), ptr.cast(), len, dir.raw()) };
        // SAFETY: `dma` was just returned by a mapping call on this device.
        if unsafe { ffi::ib_dma_mapping_error(dev.as_raw(), dma) } != 0 {
            // SAFETY: the raw parts of the vector made above, unused since.
            drop(unsafe { KVec::from_raw_parts(ptr, len, cap) });
            return Err(ENOMEM);
        }
        // INVARIANT: we own the vector's parts and `dma` maps all of them.
        Ok(Self {
            ptr,
            len,
            cap,
            dma,
            dir,
            dev,
        })
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Always false: a buffer has at least one byte.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bus address of byte `off`.
    pub fn dma_addr(&self, off: usize) -> Result<DmaAddr> {
        if off > self.len() {
            return Err(EINVAL);
        }
        Ok(DmaAddr(self.dma).offset(off))
    }

    fn check(&self, off: usize, len: usize) -> Result {
        match off.checked_add(len) {
            Some(end) if end <= self.len() => Ok(()),
            _ => Err(EINVAL),
        }
    }

    /// Copies `dst.len()` bytes at `off` out of the buffer, after making the
    /// device's writes visible to the CPU.
    pub fn read(&self, off: usize, dst: &mut [u8]) -> Result {
        self.check(off, dst.len())?;
        self.sync_for_cpu(off, dst.len())?;
        // SAFETY: `off + dst.len()` is within the buffer (checked above), the
        // buffer is alive, and `dst` does not overlap it. No reference to the
        // buffer is created, so a concurrent device write is not UB here.
        unsafe { core::ptr::copy_nonoverlapping(self.ptr.add(off), dst.as_mut_ptr(), dst.len()) };
        Ok(())
    }

    /// Copies `src` into the buffer at `off`, then hands the bytes to the
    /// device.
    pub fn write(&mut self, off: usize, src: &[u8]) -> Result {
        self.check(off, src.len())?;
        // SAFETY: in bounds (checked), no overlap; `&mut self` excludes other
        // CPU accesses, and the buffer is only accessed through raw pointers.
        unsafe { core::ptr::copy_nonoverlapping(src.as_ptr(), self.ptr.add(off), src.len()) };
        self.sync_for_device(off, src.len())
    }

    /// Lets `f` fill `[off, off + len)` in place, then hands the bytes to
    /// the device. The owner must know the device does not use the range
    /// meanwhile (an IU not posted); `&mut self` excludes CPU races.
    pub fn fill<R>(
        &mut self,
        off: usize,
        len: usize,
        f: impl FnOnce(&mut [u8]) -> Result<R>,
    ) -> Result<R> {
        self.check(off, len)?;
        // SAFETY: in bounds (checked); `&mut self` gives exclusive CPU
        // access to the buffer for the lifetime of the slice, and the
        // caller's protocol keeps the device off this range.
        let buf = unsafe { core::slice::from_raw_parts_mut(self.ptr.add(off), len) };
        let r = f(buf)?;
        self.sync_for_device(off, len)?;
        Ok(r)
    }

    /// Makes the device's writes to `[off, off + len)` visible to the CPU.
    pub fn sync_for_cpu(&self, off: usize, len: usize) -> Result {
        self.check(off, len)?;
        // SAFETY: the range is inside the live mapping (type invariant).
        unsafe {
            ffi::ib_dma_sync_single_for_cpu(
                self.dev.as_raw(),
                self.dma + off as u64,
                len,
                self.dir.raw(),
            )
        };
        Ok(())
    }

    /// Makes the CPU's writes to `[off, off + len)` visible to the device.
    pub fn sync_for_device(&self, off: usize, len: usize) -> Result {
        self.check(off, len)?;
        // SAFETY: as above.
        unsafe {
            ffi::ib_dma_sync_single_for_device(
                self.dev.as_raw(),
                self.dma + off as u64,
                len,
                self.dir.raw(),
            )
        };
        Ok(())
    }
}

impl Drop for DmaBuf {
    fn drop(&mut self) {
        // SAFETY: the mapping is live and undone only here (type invariant);
        // work requests that pointed at it are complete, since their owner
        // (which owns this buffer) outlives its QP's drain.
        unsafe { ffi::ib_dma_unmap_single(self.dev.as_raw(), self.dma, self.len, self.dir.raw()) };
        // SAFETY: the raw parts of our vector (type invariant); nothing uses
        // them any more.
        drop(unsafe { KVec::from_raw_parts(self.ptr, self.len, self.cap) });
    }
}

/// A scatterlist its owner lent for an IO: a C caller's (RTRS' user hands
/// one to `rtrs_clt_request`), valid until the IO is handed back to it.
///
/// # Invariants
///
/// `sgl` has `cnt` entries that stay valid, and are not mapped or changed
/// by their owner, until this value and every [`MappedSg`] made from it are
/// dropped.
pub struct BorrowedSg {
    sgl: NonNull<ffi::scatterlist>,
    cnt: u32,
}

// SAFETY: the entries describe memory that may be mapped and used from any
// context; the owner does not touch them while lent (invariant).
unsafe impl Send for BorrowedSg {}

impl BorrowedSg {
    /// The `cnt` entries at `sgl`.
    ///
    /// # Safety
    ///
    /// `sgl` has `cnt` valid entries that stay valid, and are left alone by
    /// their owner, until the value and its mappings are dropped.
    pub unsafe fn from_raw(sgl: NonNull<ffi::scatterlist>, cnt: u32) -> Self {
        // INVARIANT: the caller's promise.
        Self { sgl, cnt }
    }

    /// Number of entries.
    pub fn count(&self) -> u32 {
        self.cnt
    }

    /// Maps the entries for DMA on `dev` (`ib_dma_map_sg`).
    pub fn map(&self, dev: &Device, dir: DmaDirection) -> Result<MappedSg> {
        let dev = dev.get().ok_or(ENODEV)?;
        // SAFETY: `sgl` has `cnt` valid entries (type invariant).
        let n = unsafe {
            ffi::ib_dma_map_sg(dev.as_raw(), self.sgl.as_ptr(), self.cnt as i32, dir.raw())
        };
        if n <= 0 {
            return Err(EINVAL);
        }
        // INVARIANT: a live mapping of the borrowed entries.
        Ok(MappedSg {
            sgl: self.sgl,
            cnt: self.cnt,
            nents: n as u32,
            dir,
            dev,
        })
    }
}

/// A [`BorrowedSg`] mapped for DMA; unmapped in `Drop`.
///
/// # Invariants
///
/// The `cnt` entries at `sgl` are mapped on `dev` in `dir`, `nents` of them
/// as DMA entries, and stay valid until after `Drop` (the [`BorrowedSg`]'s
/// invariant).
pub struct MappedSg {
    sgl: NonNull<ffi::scatterlist>,
    cnt: u32,
    nents: u32,
    dir: DmaDirection,
    dev: DeviceRef,
}

// SAFETY: see `BorrowedSg`.
unsafe impl Send for MappedSg {}
// SAFETY: shared access only reads the mapping.
unsafe impl Sync for MappedSg {}

// SAFETY: `nents` mapped entries at `sgl` for as long as `self` lives.
unsafe impl DmaMappedSg for MappedSg {
    fn sgl(&self) -> *mut ffi::scatterlist {
        self.sgl.as_ptr()
    }

    fn dma_nents(&self) -> u32 {
        self.nents
    }
}

impl Drop for MappedSg {
    fn drop(&mut self) {
        // SAFETY: mapped with `cnt` entries on `dev` (invariant).
        unsafe {
            ffi::ib_dma_unmap_sg(
                self.dev.as_raw(),
                self.sgl.as_ptr(),
                self.cnt as i32,
                self.dir.raw(),
            )
        };
    }
}
