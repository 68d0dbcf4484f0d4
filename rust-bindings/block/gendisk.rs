// SPDX-License-Identifier: GPL-2.0-or-later

//! A blk-mq disk (`struct gendisk`) on a [`TagSet`]: queue limits, name,
//! capacity, read-only, queue stop/start, and its device kobject for the
//! driver's sysfs files; plus the block major (`register_blkdev`).

use crate::mq::{Operations, OperationsVTable, TagSet};
use core::fmt;
use core::ptr::NonNull;
use kernel::error::from_err_ptr;
use kernel::prelude::*;
use kernel::str::CStr;
use kernel::sync::Arc;
use rb::ffi;
use rb::sysfs::AsKobject;

/// Queue limits of a disk (the fields of `struct queue_limits` RNBD sets).
#[derive(Clone, Copy, Debug, Default)]
pub struct Limits {
    /// Logical block size in bytes.
    pub logical_block_size: u32,
    /// Physical block size in bytes.
    pub physical_block_size: u32,
    /// Optimal I/O size in bytes.
    pub io_opt: u32,
    /// Largest request in sectors.
    pub max_hw_sectors: u32,
    /// Most segments per request.
    pub max_segments: u16,
    /// Largest discard in sectors (0: no discard).
    pub max_hw_discard_sectors: u32,
    /// Discard granularity in bytes.
    pub discard_granularity: u32,
    /// Discard alignment in bytes.
    pub discard_alignment: u32,
    /// Largest secure erase in sectors.
    pub max_secure_erase_sectors: u32,
    /// Largest WRITE ZEROES in sectors.
    pub max_write_zeroes_sectors: u32,
    /// A segment may not cross this boundary mask (e.g. `SZ_4K - 1`).
    pub virt_boundary_mask: u64,
    /// `BLK_FEAT_WRITE_CACHE`.
    pub write_cache: bool,
    /// `BLK_FEAT_FUA`.
    pub fua: bool,
}

impl Limits {
    fn to_c(self) -> ffi::queue_limits {
        // SAFETY: all-zero `queue_limits` means "defaults" to the block layer.
        let mut l: ffi::queue_limits = unsafe { core::mem::zeroed() };
        l.logical_block_size = self.logical_block_size;
        l.physical_block_size = self.physical_block_size;
        l.io_opt = self.io_opt;
        l.max_hw_sectors = self.max_hw_sectors;
        l.max_segments = self.max_segments;
        l.max_hw_discard_sectors = self.max_hw_discard_sectors;
        l.discard_granularity = self.discard_granularity;
        l.discard_alignment = self.discard_alignment;
        l.max_secure_erase_sectors = self.max_secure_erase_sectors;
        l.max_write_zeroes_sectors = self.max_write_zeroes_sectors;
        l.virt_boundary_mask = self.virt_boundary_mask as _;
        if self.write_cache {
            l.features |= 1 << 0; // BLK_FEAT_WRITE_CACHE
            if self.fua {
                l.features |= 1 << 1; // BLK_FEAT_FUA
            }
        }
        l
    }
}

/// A registered block major (`register_blkdev`), unregistered in `Drop`.
pub struct Major {
    major: u32,
    name: &'static CStr,
}

impl Major {
    /// Registers a dynamic major called `name`.
    pub fn register(name: &'static CStr) -> Result<Self> {
        // SAFETY: `name` is a static NUL-terminated string.
        let ret = unsafe { ffi::register_blkdev(0, name.as_char_ptr()) };
        if ret <= 0 {
            return Err(if ret < 0 {
                Error::from_errno(ret)
            } else {
                EBUSY
            });
        }
        Ok(Self {
            major: ret as u32,
            name,
        })
    }

    /// The major number.
    pub fn number(&self) -> u32 {
        self.major
    }
}

impl Drop for Major {
    fn drop(&mut self) {
        // SAFETY: registered in `register` with the same name.
        unsafe { ffi::unregister_blkdev(self.major, self.name.as_char_ptr()) };
    }
}

/// Where a disk goes: its name and device numbers, its size.
pub struct DiskParams<'a> {
    /// `disk_name`, e.g. `rnbd0` (at most 31 bytes).
    pub name: fmt::Arguments<'a>,
    /// The block major.
    pub major: u32,
    /// The first minor.
    pub first_minor: u32,
    /// Minors (partitions + 1).
    pub minors: u32,
    /// Capacity in 512-byte sectors.
    pub capacity: u64,
    /// Read-only.
    pub read_only: bool,
}

/// What an added disk keeps until it is freed (`free_disk`), which may be
/// after `del_gendisk` if it is still open: the queue data its callbacks
/// get and the tag set its queue uses.
pub(crate) struct DiskCtx<T: Operations> {
    pub(crate) _qd: Arc<T::QueueData>,
    pub(crate) _set: Arc<TagSet<T>>,
}

/// A disk added to the system (`blk_mq_alloc_disk` + `add_disk`);
/// `del_gendisk` and `put_disk` in `Drop`.
///
/// # Invariants
///
/// `disk` is an added gendisk whose `private_data` is a leaked
/// `KBox<DiskCtx<T>>` (freed by `free_disk`) and whose `queuedata` is the
/// `T::QueueData` in it.
pub struct GenDisk<T: Operations> {
    disk: NonNull<ffi::gendisk>,
    qd: *const T::QueueData,
    _p: core::marker::PhantomData<T>,
}

// SAFETY: the gendisk API is thread safe; `QueueData` is `Send + Sync`.
unsafe impl<T: Operations> Send for GenDisk<T> {}
// SAFETY: as above.
unsafe impl<T: Operations> Sync for GenDisk<T> {}

/// Writes a `disk_name`.
struct NameBuf<'a>(&'a mut [kernel::ffi::c_char], usize);

impl fmt::Write for NameBuf<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        for &b in s.as_bytes() {
            if self.1 + 1 >= self.0.len() {
                return Err(fmt::Error);
            }
            self.0[self.1] = b as _;
            self.1 += 1;
        }
        Ok(())
    }
}

impl<T: Operations> GenDisk<T> {
    /// Allocates a disk on `set` with `limits`, carrying `qd`, and adds it.
    pub fn new(
        set: Arc<TagSet<T>>,
        limits: &Limits,
        qd: Arc<T::QueueData>,
        p: DiskParams<'_>,
    ) -> Result<Self> {
        let mut lim = limits.to_c();
        let inner = set.raw();
        let qd_ptr: *const T::QueueData = &*qd;
        let ctx = KBox::into_raw(KBox::new(DiskCtx { _qd: qd, _set: set }, GFP_KERNEL)?);
        // SAFETY: the tag set is allocated (we hold it); `lim` is read
        // during the call only.
        let disk = from_err_ptr(unsafe {
            ffi::blk_mq_alloc_disk(&raw mut (*inner).set, &mut lim, qd_ptr.cast_mut().cast())
        });
        let disk = match disk {
            Ok(d) => d,
            Err(e) => {
                // SAFETY: from `KBox::into_raw` above, not shared.
                drop(unsafe { KBox::from_raw(ctx) });
                return Err(e);
            }
        };
        // SAFETY: `disk` is a fresh, not yet added gendisk we own; `fops`
        // is static.
        let ret = unsafe {
            let d = &mut *disk;
            let mut name = NameBuf(&mut d.disk_name, 0);
            let named = fmt::write(&mut name, p.name).is_ok();
            d.major = p.major as _;
            d.first_minor = p.first_minor as _;
            d.minors = p.minors as _;
            d.fops = OperationsVTable::<T>::block_ops();
            d.private_data = ctx.cast();
            ffi::set_capacity(disk, p.capacity);
            if p.read_only {
                ffi::set_disk_ro(disk, true);
            }
            if named {
                ffi::device_add_disk(core::ptr::null_mut(), disk, core::ptr::null_mut())
            } else {
                -(ffi::EINVAL as i32)
            }
        };
        if ret != 0 {
            // SAFETY: not added; `put_disk` frees it and its queue (without
            // `free_disk`), after which nothing uses `ctx`.
            unsafe {
                ffi::put_disk(disk);
                drop(KBox::from_raw(ctx));
            }
            return Err(Error::from_errno(ret));
        }
        // INVARIANT: added above.
        Ok(Self {
            // SAFETY: `from_err_ptr` returned a valid pointer.
            disk: unsafe { NonNull::new_unchecked(disk) },
            qd: qd_ptr,
            _p: core::marker::PhantomData,
        })
    }

    fn raw(&self) -> *mut ffi::gendisk {
        self.disk.as_ptr()
    }

    /// The queue data.
    pub fn queue_data(&self) -> &T::QueueData {
        // SAFETY: kept alive by the invariant.
        unsafe { &*self.qd }
    }

    /// Capacity in sectors.
    pub fn capacity(&self) -> u64 {
        // SAFETY: the disk is live.
        unsafe { ffi::get_capacity(self.raw()) }
    }

    /// Sets the capacity and sends a change uevent
    /// (`set_capacity_and_notify`).
    pub fn set_capacity_and_notify(&self, sectors: u64) -> bool {
        // SAFETY: the disk is live.
        unsafe { ffi::set_capacity_and_notify(self.raw(), sectors) }
    }

    /// Whether the disk is read-only.
    pub fn read_only(&self) -> bool {
        // SAFETY: the disk is live.
        unsafe { ffi::get_disk_ro(self.raw()) }
    }

    /// The logical block size of the queue.
    pub fn logical_block_size(&self) -> u32 {
        // SAFETY: the disk and its queue are live.
        unsafe { (*(*self.raw()).queue).limits.logical_block_size }
    }

    /// Stops all hardware queues (`blk_mq_stop_hw_queues`).
    pub fn stop_queues(&self) {
        // SAFETY: the disk and its queue are live.
        unsafe { ffi::blk_mq_stop_hw_queues((*self.raw()).queue) };
    }

    /// Restarts stopped hardware queues (`blk_mq_start_stopped_hw_queues`).
    pub fn start_queues(&self) {
        // SAFETY: the disk and its queue are live.
        unsafe { ffi::blk_mq_start_stopped_hw_queues((*self.raw()).queue, true) };
    }

    /// Runs all hardware queues after `msecs`.
    pub fn delay_run_queues(&self, msecs: u32) {
        // SAFETY: the disk and its queue are live.
        unsafe { ffi::blk_mq_delay_run_hw_queues((*self.raw()).queue, msecs as _) };
    }

    /// How many times the whole-disk block device is open.
    pub fn openers(&self) -> u32 {
        // SAFETY: the disk is live; `bd_openers` is an atomic_t.
        unsafe {
            let part0 = (*self.raw()).part0;
            core::ptr::read_volatile(&raw const (*part0).bd_openers.counter) as u32
        }
    }
}

// SAFETY: the disk's device is in sysfs from `add_disk` to `del_gendisk`,
// i.e. while a `GenDisk` exists.
unsafe impl<T: Operations> AsKobject for GenDisk<T> {
    fn as_kobject(&self) -> *mut ffi::kobject {
        // SAFETY: the disk is live.
        unsafe { ffi::disk_kobj(self.raw()) }
    }
}

impl<T: Operations> Drop for GenDisk<T> {
    fn drop(&mut self) {
        // SAFETY: added (invariant); `put_disk` drops our reference, the
        // last one unless the disk is still open; `free_disk` frees the
        // context when the disk goes.
        unsafe {
            ffi::del_gendisk(self.raw());
            ffi::put_disk(self.raw());
        }
    }
}
