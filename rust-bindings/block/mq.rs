// SPDX-License-Identifier: GPL-2.0-or-later

//! blk-mq: a tag set (which the disks of a driver may share), with
//! `nr_hw_queues` hardware queues mapped as DEFAULT/READ (one per online
//! CPU) and POLL (`nr_poll_queues`), a typed per-request PDU followed by a
//! scatterlist table with `inline_sg` entries in the PDU (chained to pooled
//! ones for larger requests: `sg_alloc_table_chained()`), and the blk-mq and
//! block device callbacks forwarded to an [`Operations`] implementation
//! through `const` operation tables.

use crate::gendisk::DiskCtx;
use crate::request::Request;
use core::marker::PhantomData;
use core::ptr::NonNull;
use kernel::error::to_result;
use kernel::prelude::*;
use kernel::types::Opaque;
use rb::ffi;

/// A blk-mq completion status (`blk_status_t`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Status(ffi::blk_status_t);

impl Status {
    /// `BLK_STS_OK`.
    pub const OK: Self = Self(0);
    /// `BLK_STS_RESOURCE`: out of resources, blk-mq retries later.
    pub const RESOURCE: Self = Self(9);
    /// `BLK_STS_IOERR`.
    pub const IOERR: Self = Self(10);

    /// The status of a (negative or zero) errno, as `errno_to_blk_status`.
    pub fn from_errno(errno: i32) -> Self {
        // SAFETY: a pure table lookup.
        Self(unsafe { ffi::errno_to_blk_status(errno) })
    }

    pub(crate) fn raw(self) -> ffi::blk_status_t {
        self.0
    }
}

/// What a timed out request gets (`enum blk_eh_timer_return`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeoutAction {
    /// `BLK_EH_DONE`: the driver completed (or will complete) the request.
    Done,
    /// `BLK_EH_RESET_TIMER`: wait for it again.
    ResetTimer,
}

/// A hardware queue, borrowed in a callback.
#[repr(transparent)]
pub struct HwCtx(Opaque<ffi::blk_mq_hw_ctx>);

impl HwCtx {
    /// # Safety
    ///
    /// `p` is a hardware queue of a live request queue for `'a`.
    pub(crate) unsafe fn from_raw<'a>(p: *mut ffi::blk_mq_hw_ctx) -> &'a Self {
        // SAFETY: `HwCtx` is a transparent wrapper; validity per contract.
        unsafe { &*p.cast::<Self>() }
    }

    fn raw(&self) -> *mut ffi::blk_mq_hw_ctx {
        self.0.get()
    }

    /// The index of this queue in its tag set (`queue_num`): what
    /// `rtrs_clt_rdma_cq_direct` takes for a poll queue.
    pub fn queue_num(&self) -> u32 {
        // SAFETY: valid by the type's construction; `queue_num` is set once
        // at allocation.
        unsafe { (*self.raw()).queue_num }
    }

    /// Runs the queue again after `msecs` (`blk_mq_delay_run_hw_queue`).
    pub fn delay_run(&self, msecs: u32) {
        // SAFETY: the queue is live while borrowed.
        unsafe { ffi::blk_mq_delay_run_hw_queue(self.raw(), msecs as _) };
    }
}

/// The returned request and its status when `queue_rq` does not take it.
pub struct Busy<T: Operations> {
    /// The request, back to blk-mq.
    pub rq: Request<T>,
    /// Why: [`Status::RESOURCE`] to retry, an error to fail it.
    pub status: Status,
}

/// A blk-mq driver: the callbacks of its `blk_mq_ops` and
/// `block_device_operations`.
#[vtable]
pub trait Operations: Sized + 'static {
    /// What every disk of the driver carries (`queuedata`, `private_data`).
    type QueueData: Send + Sync;
    /// The private data of each request, created for each tag at tag set
    /// allocation.
    type Pdu: Send;

    /// A fresh PDU (`init_request`; may not fail).
    fn new_pdu() -> Self::Pdu;

    /// Starts `rq`. `Ok` means the driver took it and will end it (now or
    /// after [`Request::complete`]); `Err` gives it back with a status.
    fn queue_rq(
        q: &Self::QueueData,
        hctx: &HwCtx,
        rq: Request<Self>,
        last: bool,
    ) -> core::result::Result<(), Busy<Self>>;

    /// Finishes a request [`Request::complete`] was called on; must end it.
    fn complete(q: &Self::QueueData, rq: Request<Self>);

    /// Polls a POLL queue; returns the completions found.
    fn poll(_q: &Self::QueueData, _hctx: &HwCtx) -> i32 {
        kernel::build_error!(kernel::error::VTABLE_DEFAULT_ERROR)
    }

    /// A request timed out.
    fn timeout(_q: &Self::QueueData) -> TimeoutAction {
        kernel::build_error!(kernel::error::VTABLE_DEFAULT_ERROR)
    }

    /// The block device is opened; `write` for `BLK_OPEN_WRITE`.
    fn open(_q: &Self::QueueData, _write: bool) -> Result {
        kernel::build_error!(kernel::error::VTABLE_DEFAULT_ERROR)
    }

    /// A successful open is undone.
    fn release(_q: &Self::QueueData) {
        kernel::build_error!(kernel::error::VTABLE_DEFAULT_ERROR)
    }

    /// The disk's geometry for `HDIO_GETGEO`, given its capacity in
    /// 512-byte sectors.
    fn getgeo(_q: &Self::QueueData, _capacity: u64) -> Geometry {
        kernel::build_error!(kernel::error::VTABLE_DEFAULT_ERROR)
    }
}

/// A disk's geometry (`struct hd_geometry`), for `HDIO_GETGEO`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Geometry {
    /// Heads.
    pub heads: u8,
    /// Sectors per track.
    pub sectors: u8,
    /// Cylinders.
    pub cylinders: u16,
    /// The first sector.
    pub start: u64,
}

/// The `const` operation tables of an [`Operations`] implementation: one
/// `blk_mq_ops` and one `block_device_operations` per driver, in read-only
/// memory, as C drivers declare theirs.
pub(crate) struct OperationsVTable<T: Operations>(PhantomData<T>);

impl<T: Operations> OperationsVTable<T> {
    const MQ_OPS: ffi::blk_mq_ops = ffi::blk_mq_ops {
        queue_rq: Some(queue_rq::<T>),
        complete: Some(complete::<T>),
        map_queues: Some(map_queues),
        init_request: Some(init_request::<T>),
        exit_request: Some(exit_request::<T>),
        poll: if T::HAS_POLL { Some(poll::<T>) } else { None },
        timeout: if T::HAS_TIMEOUT {
            Some(timeout::<T>)
        } else {
            None
        },
        // SAFETY: all-zero is a valid `blk_mq_ops`: every other callback
        // absent.
        ..unsafe { core::mem::zeroed() }
    };

    const BLOCK_OPS: ffi::block_device_operations = ffi::block_device_operations {
        owner: &raw mut ffi::__this_module,
        open: Some(open::<T>),
        release: Some(release::<T>),
        getgeo: if T::HAS_GETGEO {
            Some(getgeo::<T>)
        } else {
            None
        },
        free_disk: Some(free_disk::<T>),
        // SAFETY: all-zero is a valid `block_device_operations`: every
        // other callback absent.
        ..unsafe { core::mem::zeroed() }
    };

    /// The blk-mq operations, for the tag set.
    fn mq_ops() -> &'static ffi::blk_mq_ops {
        &Self::MQ_OPS
    }

    /// The block device operations, for each disk.
    pub(crate) fn block_ops() -> &'static ffi::block_device_operations {
        &Self::BLOCK_OPS
    }
}

/// The tag set and what its callbacks need of it, at an address that
/// never moves.
#[repr(C)]
pub(crate) struct TagSetInner {
    pub(crate) set: ffi::blk_mq_tag_set,
    nr_poll_queues: u32,
    inline_sg: u32,
}

/// The scatterlist part of a request's PDU: the table, followed by its
/// `inline` first entries.
#[repr(C)]
pub(crate) struct SgArea {
    pub(crate) sgt: ffi::sg_table,
    pub(crate) inline: u32,
}

// The inline entries follow the area without padding.
const _: () =
    assert!(core::mem::size_of::<SgArea>() % core::mem::align_of::<ffi::scatterlist>() == 0);

impl SgArea {
    /// The inline entries of the area at `area`.
    ///
    /// # Safety
    ///
    /// `area` is the [`SgArea`] of a request PDU sized by [`TagSet::new`].
    pub(crate) unsafe fn first(area: *mut SgArea) -> *mut ffi::scatterlist {
        // SAFETY: the entries follow the area in the PDU (function
        // contract), aligned (checked above).
        unsafe { area.add(1).cast() }
    }
}

/// Where the [`SgArea`] starts in the request PDU of `T`.
pub(crate) const fn sg_offset<T: Operations>() -> usize {
    let a = core::mem::align_of::<SgArea>();
    core::mem::size_of::<T::Pdu>().div_ceil(a) * a
}

/// `BLK_MQ_F_*` flags of a tag set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TagSetFlags(u32);

impl TagSetFlags {
    /// No flags.
    pub const NONE: Self = Self(0);
    /// `BLK_MQ_F_SHOULD_MERGE`: blk-mq merges adjacent bios.
    pub const SHOULD_MERGE: Self = Self(ffi::BLK_MQ_F_SHOULD_MERGE);
    /// `BLK_MQ_F_TAG_QUEUE_SHARED`: the tags are shared by several queues
    /// (the disks of one tag set), and blk-mq shares them fairly.
    pub const TAG_QUEUE_SHARED: Self = Self(ffi::BLK_MQ_F_TAG_QUEUE_SHARED);

    /// Both sets of flags.
    pub const fn union(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }
}

/// Parameters of a [`TagSet`].
#[derive(Clone, Copy, Debug)]
pub struct TagSetParams {
    /// Tags per hardware queue.
    pub queue_depth: u32,
    /// Poll queues besides the DEFAULT/READ ones.
    pub nr_poll_queues: u32,
    /// Scatterlist entries kept in each request's PDU: a request with more
    /// segments chains entries from the kernel's SG pool for as long as it
    /// is mapped (`sg_alloc_table_chained()`), so the tag set need not hold
    /// `max_segments` entries for each of its tags. At least 1.
    pub inline_sg: u32,
    /// `BLK_MQ_F_*`.
    pub flags: TagSetFlags,
}

/// A blk-mq tag set (`blk_mq_alloc_tag_set`), freed in `Drop`.
///
/// # Invariants
///
/// `inner` was allocated as a `KBox` and its set allocated with
/// `blk_mq_alloc_tag_set`; both are freed only in `Drop`. Disks hold an
/// `Arc` of their tag set, so it outlives them.
pub struct TagSet<T: Operations> {
    inner: NonNull<TagSetInner>,
    _p: PhantomData<T>,
}

// SAFETY: blk-mq serialises its use of the tag set; we only read it.
unsafe impl<T: Operations> Send for TagSet<T> {}
// SAFETY: as above.
unsafe impl<T: Operations> Sync for TagSet<T> {}

/// The number of online CPUs.
pub fn num_online_cpus() -> u32 {
    // SAFETY: a read of the online mask's weight.
    unsafe { ffi::num_online_cpus() }
}

impl<T: Operations> TagSet<T> {
    /// Allocates a tag set with one DEFAULT/READ queue per online CPU and
    /// `nr_poll_queues` POLL queues.
    pub fn new(p: TagSetParams) -> Result<Self> {
        if p.queue_depth == 0 || p.inline_sg == 0 {
            return Err(EINVAL);
        }
        // SAFETY: all-zero is a valid value of these C structs (no
        // references; NULL function pointers are "absent").
        let zeroed: TagSetInner = unsafe { core::mem::zeroed() };
        let mut b = KBox::new(zeroed, GFP_KERNEL)?;
        b.nr_poll_queues = p.nr_poll_queues;
        b.inline_sg = p.inline_sg;
        let sg_size = (p.inline_sg as usize)
            .checked_mul(core::mem::size_of::<ffi::scatterlist>())
            .ok_or(EINVAL)?;
        let cmd_size = sg_offset::<T>() + core::mem::size_of::<SgArea>() + sg_size;
        b.set.ops = OperationsVTable::<T>::mq_ops();
        b.set.queue_depth = p.queue_depth;
        b.set.numa_node = -1;
        b.set.flags = p.flags.0;
        b.set.cmd_size = u32::try_from(cmd_size).map_err(|_| EINVAL)?;
        b.set.nr_maps = if p.nr_poll_queues != 0 {
            ffi::hctx_type_HCTX_MAX_TYPES
        } else {
            2
        };
        b.set.nr_hw_queues = num_online_cpus()
            .checked_add(p.nr_poll_queues)
            .ok_or(EINVAL)?;
        let inner = KBox::into_raw(b);
        // SAFETY: `inner` is valid and stays at this address until after
        // `blk_mq_free_tag_set`; `ops` is static.
        let ret = unsafe { ffi::blk_mq_alloc_tag_set(&raw mut (*inner).set) };
        if let Err(e) = to_result(ret) {
            // SAFETY: `inner` came from `KBox::into_raw` and C keeps no
            // pointer to it after a failed allocation.
            drop(unsafe { KBox::from_raw(inner) });
            return Err(e);
        }
        // INVARIANT: allocated above.
        Ok(Self {
            // SAFETY: `KBox::into_raw` never returns NULL.
            inner: unsafe { NonNull::new_unchecked(inner) },
            _p: PhantomData,
        })
    }

    pub(crate) fn raw(&self) -> *mut TagSetInner {
        self.inner.as_ptr()
    }
}

impl<T: Operations> Drop for TagSet<T> {
    fn drop(&mut self) {
        // SAFETY: by the invariants the set is allocated, and no disk uses
        // it any more (each held an `Arc` of `self`); then the box is ours.
        unsafe {
            ffi::blk_mq_free_tag_set(&raw mut (*self.raw()).set);
            drop(KBox::from_raw(self.raw()));
        }
    }
}

/// The `queuedata` of a request's queue.
///
/// # Safety
///
/// `rq` is a live request of a disk made by `GenDisk<T>`.
unsafe fn rq_queuedata<'a, T: Operations>(rq: *mut ffi::request) -> &'a T::QueueData {
    // SAFETY: `GenDisk<T>` set `queuedata` to a `T::QueueData` it keeps
    // alive until the queue is gone.
    unsafe { &*(*(*rq).q).queuedata.cast::<T::QueueData>() }
}

/// `blk_mq_ops.queue_rq`.
///
/// # Safety
///
/// Called by blk-mq with a live hardware queue and queue data whose request
/// belongs to a disk made by `GenDisk<T>`; the request is handed to the
/// driver, owned until it is ended or returned.
unsafe extern "C" fn queue_rq<T: Operations>(
    hctx: *mut ffi::blk_mq_hw_ctx,
    bd: *const ffi::blk_mq_queue_data,
) -> ffi::blk_status_t {
    // SAFETY: blk-mq passes a live hctx and queue data whose request it
    // hands to the driver now, owned until ended or returned.
    unsafe {
        let rq = (*bd).rq;
        let q = rq_queuedata::<T>(rq);
        match T::queue_rq(q, HwCtx::from_raw(hctx), Request::from_raw(rq), (*bd).last) {
            Ok(()) => Status::OK.raw(),
            Err(mut b) => {
                // blk-mq queues the request again (or ends it): a pooled
                // scatterlist goes back now, `map_sg` takes one again.
                b.rq.unmap_sg();
                let _ = b.rq.into_raw();
                b.status.raw()
            }
        }
    }
}

/// `blk_mq_ops.complete`.
///
/// # Safety
///
/// Called by blk-mq for a request of a `GenDisk<T>` that the driver gave up
/// with `blk_mq_complete_request`.
unsafe extern "C" fn complete<T: Operations>(rq: *mut ffi::request) {
    // SAFETY: `blk_mq_complete_request` was called on `rq` by the driver,
    // which gave up its `Request` for it; the queue is live.
    unsafe { T::complete(rq_queuedata::<T>(rq), Request::from_raw(rq)) }
}

/// `blk_mq_ops.poll`.
///
/// # Safety
///
/// Called by blk-mq with a live POLL hardware queue of a `GenDisk<T>`.
unsafe extern "C" fn poll<T: Operations>(
    hctx: *mut ffi::blk_mq_hw_ctx,
    _iob: *mut ffi::io_comp_batch,
) -> kernel::ffi::c_int {
    // SAFETY: a live hctx of a live queue.
    unsafe {
        let q = &*(*(*hctx).queue).queuedata.cast::<T::QueueData>();
        T::poll(q, HwCtx::from_raw(hctx))
    }
}

/// `blk_mq_ops.timeout`.
///
/// # Safety
///
/// Called by blk-mq with a live request of a `GenDisk<T>`.
unsafe extern "C" fn timeout<T: Operations>(rq: *mut ffi::request) -> ffi::blk_eh_timer_return {
    // SAFETY: a live request of a live queue.
    match T::timeout(unsafe { rq_queuedata::<T>(rq) }) {
        TimeoutAction::Done => ffi::blk_eh_timer_return_BLK_EH_DONE,
        TimeoutAction::ResetTimer => ffi::blk_eh_timer_return_BLK_EH_RESET_TIMER,
    }
}

/// `blk_mq_ops.map_queues`.
///
/// # Safety
///
/// Called by blk-mq with a tag set that `TagSet::new` allocated, the first
/// field of a `TagSetInner`.
unsafe extern "C" fn map_queues(set: *mut ffi::blk_mq_tag_set) {
    // SAFETY: `set` is the first field of a `TagSetInner` (repr(C)).
    unsafe {
        let nr_poll = (*set.cast::<TagSetInner>()).nr_poll_queues;
        let cpus = num_online_cpus();
        let maps = &raw mut (*set).map;
        let def = &raw mut (*maps)[ffi::hctx_type_HCTX_TYPE_DEFAULT as usize];
        let read = &raw mut (*maps)[ffi::hctx_type_HCTX_TYPE_READ as usize];
        (*def).nr_queues = cpus;
        (*def).queue_offset = 0;
        (*read).nr_queues = cpus;
        (*read).queue_offset = 0;
        ffi::blk_mq_map_queues(def);
        ffi::blk_mq_map_queues(read);
        if nr_poll != 0 {
            let pollm = &raw mut (*maps)[ffi::hctx_type_HCTX_TYPE_POLL as usize];
            (*pollm).nr_queues = nr_poll;
            (*pollm).queue_offset = cpus;
            ffi::blk_mq_map_queues(pollm);
        }
    }
}

/// `blk_mq_ops.init_request`.
///
/// # Safety
///
/// Called by blk-mq with a tag set of `TagSet::<T>::new` and one of its
/// requests, whose PDU is `cmd_size` bytes, not yet initialised.
unsafe extern "C" fn init_request<T: Operations>(
    set: *mut ffi::blk_mq_tag_set,
    rq: *mut ffi::request,
    _hctx_idx: kernel::ffi::c_uint,
    _numa: kernel::ffi::c_uint,
) -> kernel::ffi::c_int {
    // SAFETY: `set` is the first field of a `TagSetInner` (repr(C)). The
    // PDU of `rq` is `cmd_size` bytes, room for the `T::Pdu`, an `SgArea`
    // and its inline entries (see `TagSet::new`), aligned for all. An
    // `SgArea` with a zeroed table is empty (`orig_nents` 0, nothing to
    // free).
    unsafe {
        let inline = (*set.cast::<TagSetInner>()).inline_sg;
        let pdu = rq.add(1).cast::<u8>();
        pdu.cast::<T::Pdu>().write(T::new_pdu());
        pdu.add(sg_offset::<T>()).cast::<SgArea>().write(SgArea {
            sgt: core::mem::zeroed(),
            inline,
        });
    }
    0
}

/// `blk_mq_ops.exit_request`.
///
/// # Safety
///
/// Called by blk-mq, once, for a request `init_request` initialised and
/// that nothing uses any more.
unsafe extern "C" fn exit_request<T: Operations>(
    _set: *mut ffi::blk_mq_tag_set,
    rq: *mut ffi::request,
    _hctx_idx: kernel::ffi::c_uint,
) {
    // SAFETY: `init_request` wrote the PDU; nothing uses it any more.
    unsafe { core::ptr::drop_in_place(rq.add(1).cast::<T::Pdu>()) };
}

/// `block_device_operations.open`.
///
/// # Safety
///
/// Called by the block layer with a live disk made by `GenDisk<T>`.
unsafe extern "C" fn open<T: Operations>(
    disk: *mut ffi::gendisk,
    mode: ffi::blk_mode_t,
) -> kernel::ffi::c_int {
    // SAFETY: `queuedata` is the `T::QueueData` of the disk, kept until
    // `free_disk`.
    let q = unsafe { &*(*(*disk).queue).queuedata.cast::<T::QueueData>() };
    let write = mode & BLK_OPEN_WRITE != 0;
    if !T::HAS_OPEN {
        return 0;
    }
    match T::open(q, write) {
        Ok(()) => 0,
        Err(e) => e.to_errno(),
    }
}

/// `block_device_operations.release`.
///
/// # Safety
///
/// As for [`open`].
unsafe extern "C" fn release<T: Operations>(disk: *mut ffi::gendisk) {
    if T::HAS_RELEASE {
        // SAFETY: as in `open`.
        T::release(unsafe { &*(*(*disk).queue).queuedata.cast::<T::QueueData>() });
    }
}

/// `block_device_operations.free_disk`.
///
/// # Safety
///
/// Called by the block layer, once, for a disk made by `GenDisk<T>` that
/// is going.
unsafe extern "C" fn free_disk<T: Operations>(disk: *mut ffi::gendisk) {
    // This may drop the last reference of the tag set: `disk_release` uses
    // it no more.
    // SAFETY: `GenDisk::new` set `private_data` to a leaked
    // `KBox<DiskCtx<T>>` before adding the disk; the disk is going, nothing
    // else uses it.
    drop(unsafe { KBox::from_raw((*disk).private_data.cast::<DiskCtx<T>>()) });
}

/// `BLK_OPEN_WRITE`.
const BLK_OPEN_WRITE: ffi::blk_mode_t = 1 << 1;

/// `block_device_operations.getgeo`.
///
/// # Safety
///
/// Called by the block layer with a live block device of a disk made by
/// `GenDisk<T>` and a geometry to fill.
unsafe extern "C" fn getgeo<T: Operations>(
    bdev: *mut ffi::block_device,
    geo: *mut ffi::hd_geometry,
) -> kernel::ffi::c_int {
    // SAFETY: the block layer passes a live bdev of our disk and a geometry
    // to fill; `queuedata` is as in `open`.
    unsafe {
        let disk = (*bdev).bd_disk;
        let q = &*(*(*disk).queue).queuedata.cast::<T::QueueData>();
        let g = T::getgeo(q, ffi::get_capacity(disk));
        (*geo).heads = g.heads;
        (*geo).sectors = g.sectors;
        (*geo).cylinders = g.cylinders;
        (*geo).start = g.start as _;
    }
    0
}
