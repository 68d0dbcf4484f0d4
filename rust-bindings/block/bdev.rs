// SPDX-License-Identifier: GPL-2.0-or-later

//! An open block device, as the RNBD server exports it: opened by path
//! (`bdev_file_open_by_path`), its limits for the `OPEN_RSP` message, its
//! name (`%pg`) and the sysfs kobject of its disk (for the `block_dev` link).

use core::ptr::NonNull;
use kernel::error::from_err_ptr;
use kernel::prelude::*;
use kernel::str::CStr;
use kernel::types::Opaque;
use rb::ffi;
use rb::sysfs::AsKobject;

/// `BLK_OPEN_READ` (a macro with a cast, which bindgen does not bind).
const BLK_OPEN_READ: ffi::blk_mode_t = 1 << 0;
/// `BLK_OPEN_WRITE`.
const BLK_OPEN_WRITE: ffi::blk_mode_t = 1 << 1;

/// A block device opened as a file (`bdev_file_open_by_path`), closed
/// (`fput`) in `Drop`.
///
/// # Invariants
///
/// `file` is a block device file returned by a successful
/// `bdev_file_open_by_path`; this value owns that reference.
pub struct BdevFile {
    file: NonNull<ffi::file>,
}

// SAFETY: a file reference may be used and dropped from any thread; `fput`
// is safe in any context (from interrupts it defers the release to a work
// item).
unsafe impl Send for BdevFile {}
// SAFETY: `&BdevFile` only reads the device's limits, which C allows
// concurrently.
unsafe impl Sync for BdevFile {}

impl BdevFile {
    /// Opens the block device at `path` for reading, and for writing too if
    /// `write`, without a holder (not exclusive), as the C RNBD server does.
    /// The errno of the open on failure (`ENOENT`, `ENOTBLK`, `EACCES`, ...).
    pub fn open_by_path(path: &CStr, write: bool) -> Result<Self> {
        let mode = BLK_OPEN_READ | if write { BLK_OPEN_WRITE } else { 0 };
        // SAFETY: `path` is a NUL-terminated string valid for the call; a
        // NULL holder and holder ops ask for a shared open.
        let file = from_err_ptr(unsafe {
            ffi::bdev_file_open_by_path(
                path.as_char_ptr(),
                mode,
                core::ptr::null_mut(),
                core::ptr::null(),
            )
        })?;
        // INVARIANT: a successful open returns a valid file; we own it.
        Ok(Self {
            file: NonNull::new(file).ok_or(EINVAL)?,
        })
    }

    /// The block device.
    pub fn bdev(&self) -> &Bdev {
        // SAFETY: the file is valid (type invariant) and a block device
        // file, so `file_bdev` returns its block device, which lives at
        // least as long as the open file.
        unsafe { Bdev::from_raw(ffi::file_bdev(self.file.as_ptr())) }
    }
}

impl Drop for BdevFile {
    fn drop(&mut self) {
        // SAFETY: the reference this value owns (type invariant).
        unsafe { ffi::fput(self.file.as_ptr()) };
    }
}

/// A block device (`struct block_device`), borrowed from an open
/// [`BdevFile`].
#[repr(transparent)]
pub struct Bdev(Opaque<ffi::block_device>);

impl Bdev {
    /// # Safety
    ///
    /// `p` points to a block device that stays valid and open for `'a`.
    unsafe fn from_raw<'a>(p: *mut ffi::block_device) -> &'a Self {
        // SAFETY: `Bdev` is a transparent wrapper; validity is the caller's.
        unsafe { &*p.cast::<Self>() }
    }

    /// The C pointer.
    pub(crate) fn as_ptr(&self) -> *mut ffi::block_device {
        self.0.get()
    }

    /// Capacity in 512-byte sectors.
    pub fn nr_sectors(&self) -> u64 {
        // SAFETY: an open block device (type's borrow).
        unsafe { ffi::bdev_nr_sectors(self.as_ptr()) }
    }

    /// Logical block size in bytes.
    pub fn logical_block_size(&self) -> u32 {
        // SAFETY: as above.
        unsafe { ffi::bdev_logical_block_size(self.as_ptr()) }
    }

    /// Physical block size in bytes.
    pub fn physical_block_size(&self) -> u32 {
        // SAFETY: as above.
        unsafe { ffi::bdev_physical_block_size(self.as_ptr()) }
    }

    /// Most segments in one request.
    pub fn max_segments(&self) -> u32 {
        // SAFETY: as above.
        unsafe { ffi::bdev_max_segments(self.as_ptr()) }
    }

    /// Largest request in sectors (`queue_max_hw_sectors`).
    pub fn max_hw_sectors(&self) -> u32 {
        // SAFETY: as above.
        unsafe { ffi::bdev_max_hw_sectors(self.as_ptr()) }
    }

    /// Largest WRITE ZEROES in sectors (0: unsupported).
    pub fn write_zeroes_sectors(&self) -> u32 {
        // SAFETY: as above.
        unsafe { ffi::bdev_write_zeroes_sectors(self.as_ptr()) }
    }

    /// Largest discard in sectors (0: unsupported).
    pub fn max_discard_sectors(&self) -> u32 {
        // SAFETY: as above.
        unsafe { ffi::bdev_max_discard_sectors(self.as_ptr()) }
    }

    /// Discard granularity in bytes.
    pub fn discard_granularity(&self) -> u32 {
        // SAFETY: as above.
        unsafe { ffi::bdev_discard_granularity(self.as_ptr()) }
    }

    /// Discard alignment in bytes.
    pub fn discard_alignment(&self) -> u32 {
        // SAFETY: as above.
        unsafe { ffi::bdev_discard_alignment(self.as_ptr()) }
    }

    /// Largest secure erase in sectors (0: unsupported).
    pub fn max_secure_erase_sectors(&self) -> u32 {
        // SAFETY: as above.
        unsafe { ffi::bdev_max_secure_erase_sectors(self.as_ptr()) }
    }

    /// Whether the device has a volatile write cache.
    pub fn write_cache(&self) -> bool {
        // SAFETY: as above.
        unsafe { ffi::bdev_write_cache(self.as_ptr()) }
    }

    /// Whether the device supports FUA writes.
    pub fn fua(&self) -> bool {
        // SAFETY: as above.
        unsafe { ffi::bdev_fua(self.as_ptr()) }
    }

    /// Whether the device is not rotational.
    pub fn nonrot(&self) -> bool {
        // SAFETY: as above.
        unsafe { ffi::bdev_nonrot(self.as_ptr()) }
    }

    /// Writes the device's name as C's `%pg` prints it (`nullb0`, `sda1`)
    /// into `buf`, NUL-terminated, and returns the name (cut to fit).
    pub fn name<'b>(&self, buf: &'b mut [u8]) -> &'b [u8] {
        if buf.is_empty() {
            return buf;
        }
        // SAFETY: an open block device; `buf` has `buf.len()` writable
        // bytes, which `snprintf` respects, NUL included.
        unsafe { ffi::bdev_name(self.as_ptr(), buf.as_mut_ptr().cast(), buf.len()) };
        let n = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
        &buf[..n]
    }

    /// The sysfs object of the device's disk (`disk_to_dev(bd_disk)`), the
    /// target of the RNBD server's `block_dev` link.
    pub fn disk_kobject(&self) -> DiskKobject<'_> {
        DiskKobject(self)
    }
}

/// The kobject of the disk of an open block device.
pub struct DiskKobject<'a>(&'a Bdev);

// SAFETY: the block device is open for the borrow, which holds a reference
// on its disk, so the disk's device (and its kobject) stays allocated. It is
// in sysfs from `add_disk` until `del_gendisk`, which may run while the
// device is open; then its directory is gone (`sd` is NULL) and
// `sysfs_create_link` fails with ENOENT, and a uevent on it is dropped.
unsafe impl AsKobject for DiskKobject<'_> {
    fn as_kobject(&self) -> *mut ffi::kobject {
        // SAFETY: an open block device has a disk.
        unsafe { ffi::bdev_disk_kobj(self.0.as_ptr()) }
    }
}
