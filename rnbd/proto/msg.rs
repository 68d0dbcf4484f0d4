// SPDX-License-Identifier: GPL-2.0-or-later

//! The RNBD wire messages of protocol 2.0 (`rnbd-proto.h`), the IO op and
//! flag encoding, access modes and cache policy.
//!
//! Every message is little-endian at exactly the offsets of its C struct and
//! is `SIZE` bytes long, the C `sizeof`. Decoding ignores reserved bytes and
//! padding (the C client sends them uninitialised) and validates what the C
//! receiver relies on; it never panics, whatever the input.

use super::error::Error;

/// Major protocol version we speak (`RNBD_PROTO_VER_MAJOR`).
pub const PROTO_VER_MAJOR: u8 = 2;
/// Minor protocol version we speak (`RNBD_PROTO_VER_MINOR`).
pub const PROTO_VER_MINOR: u8 = 0;
/// Default port of the RTRS server (`RTRS_PORT`).
pub const RTRS_PORT: u16 = 1234;
/// Longest file name (`NAME_MAX`): size of [`Open`]'s name field and of the C
/// buffers for session names and device paths, NUL included.
pub const NAME_MAX: usize = 255;

/// The version a session runs at once both sides announced theirs: the
/// smaller of the peer's and ours (both C sides do `min_t(u8, ver, 2)`).
pub fn negotiate_version(peer: u8) -> u8 {
    peer.min(PROTO_VER_MAJOR)
}

/// Reads the little-endian `u16` at `off`; 0 if `buf` is too short, which the
/// decoders rule out by checking the length first.
fn get_u16(buf: &[u8], off: usize) -> u16 {
    buf.get(off..off + 2)
        .and_then(|b| b.try_into().ok())
        .map_or(0, u16::from_le_bytes)
}

/// Reads the little-endian `u32` at `off` (see [`get_u16`]).
fn get_u32(buf: &[u8], off: usize) -> u32 {
    buf.get(off..off + 4)
        .and_then(|b| b.try_into().ok())
        .map_or(0, u32::from_le_bytes)
}

/// Reads the little-endian `u64` at `off` (see [`get_u16`]).
fn get_u64(buf: &[u8], off: usize) -> u64 {
    buf.get(off..off + 8)
        .and_then(|b| b.try_into().ok())
        .map_or(0, u64::from_le_bytes)
}

/// Writes `bytes` at `off`; the encoders size `buf` first, so it always fits.
fn put(buf: &mut [u8], off: usize, bytes: &[u8]) {
    if let Some(dst) = buf.get_mut(off..off + bytes.len()) {
        dst.copy_from_slice(bytes);
    }
}

/// The first `size` bytes of `buf` for an encoder, zeroed, so that reserved
/// bytes and padding go out as zero.
fn encode_buf(buf: &mut [u8], size: usize) -> Result<&mut [u8], Error> {
    let out = buf.get_mut(..size).ok_or(Error::MsgSize)?;
    out.fill(0);
    Ok(out)
}

/// The message of at least `size` bytes in `buf` with header type `ty`.
fn decode_buf(buf: &[u8], size: usize, ty: MsgType) -> Result<&[u8], Error> {
    let msg = buf.get(..size).ok_or(Error::Inval)?;
    if MsgHdr::decode(msg)?.msg_type != ty {
        return Err(Error::Inval);
    }
    Ok(msg)
}

/// Message types (`enum rnbd_msg_type`), the `type` of [`MsgHdr`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u16)]
pub enum MsgType {
    /// Session info, client to server ([`SessInfo`]).
    SessInfo = 0,
    /// Session info response, server to client ([`SessInfoRsp`]).
    SessInfoRsp = 1,
    /// Open (map) a device ([`Open`]).
    Open = 2,
    /// Response to an open ([`OpenRsp`]).
    OpenRsp = 3,
    /// Block IO ([`Io`]).
    Io = 4,
    /// Close (unmap) a device ([`Close`]).
    Close = 5,
}

impl MsgType {
    /// The type with wire value `v`; `EINVAL` for an unknown one, which the C
    /// server answers with `EINVAL` too.
    pub const fn from_wire(v: u16) -> Result<Self, Error> {
        Ok(match v {
            0 => MsgType::SessInfo,
            1 => MsgType::SessInfoRsp,
            2 => MsgType::Open,
            3 => MsgType::OpenRsp,
            4 => MsgType::Io,
            5 => MsgType::Close,
            _ => return Err(Error::Inval),
        })
    }

    /// The wire value.
    pub const fn to_wire(self) -> u16 {
        self as u16
    }
}

/// Header of every message (`struct rnbd_msg_hdr`): type and 2 bytes of
/// padding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MsgHdr {
    /// What the message is.
    pub msg_type: MsgType,
}

impl MsgHdr {
    /// `sizeof(struct rnbd_msg_hdr)`.
    pub const SIZE: usize = 4;
    const OFF_TYPE: usize = 0;

    /// Writes the header to the start of `buf`; returns [`Self::SIZE`].
    pub fn encode(&self, buf: &mut [u8]) -> Result<usize, Error> {
        let out = encode_buf(buf, Self::SIZE)?;
        put(out, Self::OFF_TYPE, &self.msg_type.to_wire().to_le_bytes());
        Ok(Self::SIZE)
    }

    /// Reads the header at the start of `buf`: what the server dispatches on.
    pub fn decode(buf: &[u8]) -> Result<Self, Error> {
        let hdr = buf.get(..Self::SIZE).ok_or(Error::Inval)?;
        Ok(Self {
            msg_type: MsgType::from_wire(get_u16(hdr, Self::OFF_TYPE))?,
        })
    }
}

/// Session info, client to server (`struct rnbd_msg_sess_info`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SessInfo {
    /// The client's protocol version.
    pub ver: u8,
}

impl SessInfo {
    /// `sizeof(struct rnbd_msg_sess_info)`.
    pub const SIZE: usize = 36;
    const OFF_VER: usize = 4;

    /// Writes the message to `buf`; returns [`Self::SIZE`].
    pub fn encode(&self, buf: &mut [u8]) -> Result<usize, Error> {
        let out = encode_buf(buf, Self::SIZE)?;
        MsgHdr {
            msg_type: MsgType::SessInfo,
        }
        .encode(out)?;
        put(out, Self::OFF_VER, &[self.ver]);
        Ok(Self::SIZE)
    }

    /// Reads the message from `buf`.
    pub fn decode(buf: &[u8]) -> Result<Self, Error> {
        let msg = decode_buf(buf, Self::SIZE, MsgType::SessInfo)?;
        Ok(Self {
            ver: msg.get(Self::OFF_VER).copied().unwrap_or(0),
        })
    }
}

/// Session info response, server to client (`struct rnbd_msg_sess_info_rsp`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SessInfoRsp {
    /// The negotiated protocol version (see [`negotiate_version`]).
    pub ver: u8,
}

impl SessInfoRsp {
    /// `sizeof(struct rnbd_msg_sess_info_rsp)`.
    pub const SIZE: usize = 36;
    const OFF_VER: usize = 4;

    /// Writes the message to `buf`; returns [`Self::SIZE`].
    pub fn encode(&self, buf: &mut [u8]) -> Result<usize, Error> {
        let out = encode_buf(buf, Self::SIZE)?;
        MsgHdr {
            msg_type: MsgType::SessInfoRsp,
        }
        .encode(out)?;
        put(out, Self::OFF_VER, &[self.ver]);
        Ok(Self::SIZE)
    }

    /// Reads the message from `buf`.
    pub fn decode(buf: &[u8]) -> Result<Self, Error> {
        let msg = decode_buf(buf, Self::SIZE, MsgType::SessInfoRsp)?;
        Ok(Self {
            ver: msg.get(Self::OFF_VER).copied().unwrap_or(0),
        })
    }
}

/// How a client maps a device (`enum rnbd_access_mode`): many readers, one
/// writer, or a second writer for migration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum AccessMode {
    /// Read-only (`ro`).
    Ro = 0,
    /// Read-write, one writer at a time (`rw`).
    Rw = 1,
    /// Read-write as the second writer, e.g. for VM migration (`migration`).
    Migration = 2,
}

impl AccessMode {
    /// The mode with wire value `v`; `EINVAL` for an unknown one.
    pub const fn from_wire(v: u8) -> Result<Self, Error> {
        Ok(match v {
            0 => AccessMode::Ro,
            1 => AccessMode::Rw,
            2 => AccessMode::Migration,
            _ => return Err(Error::Inval),
        })
    }

    /// The wire value.
    pub const fn to_wire(self) -> u8 {
        self as u8
    }

    /// The name used by `access_mode=` and shown by the `access_mode` sysfs
    /// attributes (`rnbd_access_modes[]`).
    pub const fn as_str(self) -> &'static str {
        match self {
            AccessMode::Ro => "ro",
            AccessMode::Rw => "rw",
            AccessMode::Migration => "migration",
        }
    }

    /// The mode named exactly `name` (as `access_mode=` compares it, with
    /// `strcmp`); `EINVAL` otherwise.
    pub fn from_name(name: &[u8]) -> Result<Self, Error> {
        match name {
            b"ro" => Ok(AccessMode::Ro),
            b"rw" => Ok(AccessMode::Rw),
            b"migration" => Ok(AccessMode::Migration),
            _ => Err(Error::Inval),
        }
    }

    /// Whether the device is opened for writing (anything but [`AccessMode::Ro`]).
    pub const fn is_write(self) -> bool {
        !matches!(self, AccessMode::Ro)
    }
}

/// Open (map) a remote device (`struct rnbd_msg_open`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Open<'a> {
    /// How to open it.
    pub access_mode: AccessMode,
    /// The device path on the server, relative to its `dev_search_path`:
    /// at most `NAME_MAX - 1` bytes, no NUL.
    pub dev_name: &'a [u8],
}

impl<'a> Open<'a> {
    /// `sizeof(struct rnbd_msg_open)`.
    pub const SIZE: usize = 264;
    const OFF_ACCESS_MODE: usize = 4;
    const OFF_DEV_NAME: usize = 6;

    /// Writes the message to `buf`; returns [`Self::SIZE`]. `ENAMETOOLONG`
    /// if the name does not fit with its NUL (the C client would silently
    /// truncate it), `EINVAL` if it contains a NUL.
    pub fn encode(&self, buf: &mut [u8]) -> Result<usize, Error> {
        if self.dev_name.len() >= NAME_MAX {
            return Err(Error::NameTooLong);
        }
        if self.dev_name.contains(&0) {
            return Err(Error::Inval);
        }
        let out = encode_buf(buf, Self::SIZE)?;
        MsgHdr {
            msg_type: MsgType::Open,
        }
        .encode(out)?;
        put(out, Self::OFF_ACCESS_MODE, &[self.access_mode.to_wire()]);
        put(out, Self::OFF_DEV_NAME, self.dev_name);
        Ok(Self::SIZE)
    }

    /// Reads the message from `buf`, borrowing the name from it. `EINVAL` for
    /// an unknown access mode or a name field without NUL; C does not check
    /// either (it reads past an unterminated name, and answers an unknown
    /// mode with `EINVAL` only after looking the device up).
    pub fn decode(buf: &'a [u8]) -> Result<Self, Error> {
        let msg = decode_buf(buf, Self::SIZE, MsgType::Open)?;
        let mode = msg.get(Self::OFF_ACCESS_MODE).copied().unwrap_or(u8::MAX);
        let field = msg
            .get(Self::OFF_DEV_NAME..Self::OFF_DEV_NAME + NAME_MAX)
            .ok_or(Error::Inval)?;
        let len = field.iter().position(|&b| b == 0).ok_or(Error::Inval)?;
        Ok(Self {
            access_mode: AccessMode::from_wire(mode)?,
            dev_name: field.get(..len).ok_or(Error::Inval)?,
        })
    }
}

/// Close (unmap) a device (`struct rnbd_msg_close`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Close {
    /// The server's id of the device, from its [`OpenRsp`].
    pub device_id: u32,
}

impl Close {
    /// `sizeof(struct rnbd_msg_close)`.
    pub const SIZE: usize = 8;
    const OFF_DEVICE_ID: usize = 4;

    /// Writes the message to `buf`; returns [`Self::SIZE`].
    pub fn encode(&self, buf: &mut [u8]) -> Result<usize, Error> {
        let out = encode_buf(buf, Self::SIZE)?;
        MsgHdr {
            msg_type: MsgType::Close,
        }
        .encode(out)?;
        put(out, Self::OFF_DEVICE_ID, &self.device_id.to_le_bytes());
        Ok(Self::SIZE)
    }

    /// Reads the message from `buf`.
    pub fn decode(buf: &[u8]) -> Result<Self, Error> {
        let msg = decode_buf(buf, Self::SIZE, MsgType::Close)?;
        Ok(Self {
            device_id: get_u32(msg, Self::OFF_DEVICE_ID),
        })
    }
}

/// Cache policy of the exported device (`enum rnbd_cache_policy` bits).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CachePolicy {
    /// `RNBD_FUA`: the device supports forced unit access.
    pub fua: bool,
    /// `RNBD_WRITEBACK`: the device has a volatile write cache.
    pub writeback: bool,
}

impl CachePolicy {
    /// `RNBD_FUA`.
    pub const FUA: u8 = 1 << 0;
    /// `RNBD_WRITEBACK`.
    pub const WRITEBACK: u8 = 1 << 1;

    /// The policy of wire byte `bits`; unknown bits are ignored, as in C.
    pub const fn from_bits(bits: u8) -> Self {
        Self {
            fua: bits & Self::FUA != 0,
            writeback: bits & Self::WRITEBACK != 0,
        }
    }

    /// The wire byte.
    pub const fn bits(self) -> u8 {
        (if self.fua { Self::FUA } else { 0 }) | (if self.writeback { Self::WRITEBACK } else { 0 })
    }

    /// Whether the client's disk announces FUA: the C client honours
    /// `RNBD_FUA` only together with `RNBD_WRITEBACK`.
    pub const fn client_fua(self) -> bool {
        self.writeback && self.fua
    }
}

/// Response to an [`Open`]: the device id and geometry
/// (`struct rnbd_msg_open_rsp`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OpenRsp {
    /// The server's id of the device, used in [`Io`] and [`Close`].
    pub device_id: u32,
    /// Capacity in 512-byte sectors.
    pub nsectors: u64,
    /// Largest request in 512-byte sectors.
    pub max_hw_sectors: u32,
    /// Largest WRITE ZEROES in 512-byte sectors.
    pub max_write_zeroes_sectors: u32,
    /// Largest discard in 512-byte sectors.
    pub max_discard_sectors: u32,
    /// Discard allocation unit in bytes.
    pub discard_granularity: u32,
    /// Discard offset from the allocation unit in bytes.
    pub discard_alignment: u32,
    /// Physical block size in bytes.
    pub physical_block_size: u16,
    /// Logical block size in bytes; never 0 in a decoded message.
    pub logical_block_size: u16,
    /// Most segments in one transfer.
    pub max_segments: u16,
    /// Nonzero if the device supports secure discard (the C server puts the
    /// low 16 bits of its max secure erase sectors here).
    pub secure_discard: u16,
    /// Write cache and FUA support.
    pub cache_policy: CachePolicy,
}

impl OpenRsp {
    /// `sizeof(struct rnbd_msg_open_rsp)`.
    pub const SIZE: usize = 56;
    const OFF_DEVICE_ID: usize = 4;
    const OFF_NSECTORS: usize = 8;
    const OFF_MAX_HW_SECTORS: usize = 16;
    const OFF_MAX_WRITE_ZEROES_SECTORS: usize = 20;
    const OFF_MAX_DISCARD_SECTORS: usize = 24;
    const OFF_DISCARD_GRANULARITY: usize = 28;
    const OFF_DISCARD_ALIGNMENT: usize = 32;
    const OFF_PHYSICAL_BLOCK_SIZE: usize = 36;
    const OFF_LOGICAL_BLOCK_SIZE: usize = 38;
    const OFF_MAX_SEGMENTS: usize = 40;
    const OFF_SECURE_DISCARD: usize = 42;
    /// `obsolete_rotational` (44) is sent as 0 and ignored.
    const OFF_CACHE_POLICY: usize = 45;

    /// Writes the message to `buf`; returns [`Self::SIZE`].
    pub fn encode(&self, buf: &mut [u8]) -> Result<usize, Error> {
        let out = encode_buf(buf, Self::SIZE)?;
        MsgHdr {
            msg_type: MsgType::OpenRsp,
        }
        .encode(out)?;
        put(out, Self::OFF_DEVICE_ID, &self.device_id.to_le_bytes());
        put(out, Self::OFF_NSECTORS, &self.nsectors.to_le_bytes());
        put(
            out,
            Self::OFF_MAX_HW_SECTORS,
            &self.max_hw_sectors.to_le_bytes(),
        );
        put(
            out,
            Self::OFF_MAX_WRITE_ZEROES_SECTORS,
            &self.max_write_zeroes_sectors.to_le_bytes(),
        );
        put(
            out,
            Self::OFF_MAX_DISCARD_SECTORS,
            &self.max_discard_sectors.to_le_bytes(),
        );
        put(
            out,
            Self::OFF_DISCARD_GRANULARITY,
            &self.discard_granularity.to_le_bytes(),
        );
        put(
            out,
            Self::OFF_DISCARD_ALIGNMENT,
            &self.discard_alignment.to_le_bytes(),
        );
        put(
            out,
            Self::OFF_PHYSICAL_BLOCK_SIZE,
            &self.physical_block_size.to_le_bytes(),
        );
        put(
            out,
            Self::OFF_LOGICAL_BLOCK_SIZE,
            &self.logical_block_size.to_le_bytes(),
        );
        put(
            out,
            Self::OFF_MAX_SEGMENTS,
            &self.max_segments.to_le_bytes(),
        );
        put(
            out,
            Self::OFF_SECURE_DISCARD,
            &self.secure_discard.to_le_bytes(),
        );
        put(out, Self::OFF_CACHE_POLICY, &[self.cache_policy.bits()]);
        Ok(Self::SIZE)
    }

    /// Reads the message from `buf`. `EINVAL` if the logical block size is 0,
    /// which the C client refuses too (`process_msg_open_rsp`).
    pub fn decode(buf: &[u8]) -> Result<Self, Error> {
        let msg = decode_buf(buf, Self::SIZE, MsgType::OpenRsp)?;
        let rsp = Self {
            device_id: get_u32(msg, Self::OFF_DEVICE_ID),
            nsectors: get_u64(msg, Self::OFF_NSECTORS),
            max_hw_sectors: get_u32(msg, Self::OFF_MAX_HW_SECTORS),
            max_write_zeroes_sectors: get_u32(msg, Self::OFF_MAX_WRITE_ZEROES_SECTORS),
            max_discard_sectors: get_u32(msg, Self::OFF_MAX_DISCARD_SECTORS),
            discard_granularity: get_u32(msg, Self::OFF_DISCARD_GRANULARITY),
            discard_alignment: get_u32(msg, Self::OFF_DISCARD_ALIGNMENT),
            physical_block_size: get_u16(msg, Self::OFF_PHYSICAL_BLOCK_SIZE),
            logical_block_size: get_u16(msg, Self::OFF_LOGICAL_BLOCK_SIZE),
            max_segments: get_u16(msg, Self::OFF_MAX_SEGMENTS),
            secure_discard: get_u16(msg, Self::OFF_SECURE_DISCARD),
            cache_policy: CachePolicy::from_bits(
                msg.get(Self::OFF_CACHE_POLICY).copied().unwrap_or(0),
            ),
        };
        if rsp.logical_block_size == 0 {
            return Err(Error::Inval);
        }
        Ok(rsp)
    }

    /// The client's `max_secure_erase_sectors`: the max discard sectors if
    /// the server announced secure discard, else 0.
    pub const fn secure_erase_sectors(&self) -> u32 {
        if self.secure_discard != 0 {
            self.max_discard_sectors
        } else {
            0
        }
    }
}

/// The operation of an IO (`RNBD_OP_*`, the low [`Rw::OP_BITS`] bits of
/// [`Io::rw`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Op {
    /// `RNBD_OP_READ`: read sectors.
    Read = 0,
    /// `RNBD_OP_WRITE`: write sectors.
    Write = 1,
    /// `RNBD_OP_FLUSH`: flush the volatile write cache.
    Flush = 2,
    /// `RNBD_OP_DISCARD`: discard sectors.
    Discard = 3,
    /// `RNBD_OP_SECURE_ERASE`: securely erase sectors.
    SecureErase = 4,
    /// `RNBD_OP_WRITE_ZEROES`: write zeroes.
    WriteZeroes = 5,
}

impl Op {
    /// The op with wire value `v`; `EINVAL` for an unknown one (C warns and
    /// turns it into a read).
    pub const fn from_wire(v: u32) -> Result<Self, Error> {
        Ok(match v {
            0 => Op::Read,
            1 => Op::Write,
            2 => Op::Flush,
            3 => Op::Discard,
            4 => Op::SecureErase,
            5 => Op::WriteZeroes,
            _ => return Err(Error::Inval),
        })
    }

    /// The wire value.
    pub const fn to_wire(self) -> u32 {
        self as u32
    }
}

/// The flags of an IO (`RNBD_F_*`, above the op bits of [`Io::rw`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OpFlags(u32);

impl OpFlags {
    /// No flag.
    pub const NONE: Self = Self(0);
    /// `RNBD_F_SYNC`: the request is synchronous.
    pub const SYNC: Self = Self(1 << Rw::OP_BITS);
    /// `RNBD_F_FUA`: forced unit access.
    pub const FUA: Self = Self(1 << (Rw::OP_BITS + 1));
    const KNOWN: u32 = Self::SYNC.0 | Self::FUA.0;

    /// The flags set in wire value `rw`; the op bits and unknown flags are
    /// dropped (C ignores them).
    pub const fn from_wire(rw: u32) -> Self {
        Self(rw & Self::KNOWN)
    }

    /// The wire bits.
    pub const fn bits(self) -> u32 {
        self.0
    }

    /// Whether every flag of `other` is set.
    pub const fn contains(self, other: Self) -> bool {
        self.0 & other.0 == other.0
    }

    /// The flags of both.
    pub const fn union(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }
}

impl core::ops::BitOr for OpFlags {
    type Output = Self;

    fn bitor(self, rhs: Self) -> Self {
        self.union(rhs)
    }
}

/// The `rw` word of an [`Io`]: op and flags (`enum rnbd_io_flags`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rw {
    /// What to do.
    pub op: Op,
    /// How.
    pub flags: OpFlags,
}

/// Block layer request ops RNBD carries (`enum req_op` of
/// `include/linux/blk_types.h`, with its values).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum ReqOp {
    /// `REQ_OP_READ`.
    Read = 0,
    /// `REQ_OP_WRITE`.
    Write = 1,
    /// `REQ_OP_FLUSH`.
    Flush = 2,
    /// `REQ_OP_DISCARD`.
    Discard = 3,
    /// `REQ_OP_SECURE_ERASE`.
    SecureErase = 5,
    /// `REQ_OP_WRITE_ZEROES`.
    WriteZeroes = 9,
}

impl ReqOp {
    /// The op with `req_op()` value `v`; `EINVAL` for ops RNBD cannot carry
    /// (zone ops, driver private ops; C warns and sends a read).
    pub const fn from_raw(v: u32) -> Result<Self, Error> {
        Ok(match v {
            0 => ReqOp::Read,
            1 => ReqOp::Write,
            2 => ReqOp::Flush,
            3 => ReqOp::Discard,
            5 => ReqOp::SecureErase,
            9 => ReqOp::WriteZeroes,
            _ => return Err(Error::Inval),
        })
    }

    /// The `REQ_OP_*` value.
    pub const fn to_raw(self) -> u32 {
        self as u32
    }
}

/// A block layer op with the `REQ_*` flags RNBD reads or sets (`blk_opf_t`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlkOpf {
    /// The request op.
    pub op: ReqOp,
    /// `REQ_SYNC`.
    pub sync: bool,
    /// `REQ_FUA`.
    pub fua: bool,
    /// `REQ_PREFLUSH`.
    pub preflush: bool,
}

impl Rw {
    /// `RNBD_OP_BITS`: the op is the low 8 bits.
    pub const OP_BITS: u32 = 8;
    /// `RNBD_OP_MASK`.
    pub const OP_MASK: u32 = (1 << Self::OP_BITS) - 1;

    /// Reads wire value `rw`: `EINVAL` for an unknown op, unknown flags
    /// ignored.
    pub const fn from_wire(rw: u32) -> Result<Self, Error> {
        match Op::from_wire(rw & Self::OP_MASK) {
            Ok(op) => Ok(Self {
                op,
                flags: OpFlags::from_wire(rw),
            }),
            Err(e) => Err(e),
        }
    }

    /// The wire value.
    pub const fn to_wire(self) -> u32 {
        self.op.to_wire() | self.flags.bits()
    }

    /// The bio op and flags the server submits (`rnbd_to_bio_flags`): a
    /// flush becomes a write with `REQ_PREFLUSH`, `RNBD_F_SYNC` and
    /// `RNBD_F_FUA` become `REQ_SYNC` and `REQ_FUA`.
    pub const fn to_bio(self) -> BlkOpf {
        let (op, preflush) = match self.op {
            Op::Read => (ReqOp::Read, false),
            Op::Write => (ReqOp::Write, false),
            Op::Flush => (ReqOp::Write, true),
            Op::Discard => (ReqOp::Discard, false),
            Op::SecureErase => (ReqOp::SecureErase, false),
            Op::WriteZeroes => (ReqOp::WriteZeroes, false),
        };
        BlkOpf {
            op,
            sync: self.flags.contains(OpFlags::SYNC),
            fua: self.flags.contains(OpFlags::FUA),
            preflush,
        }
    }

    /// The `rw` the client sends for a request (`rq_to_rnbd_flags`):
    /// `RNBD_F_SYNC` if `op_is_sync()` (reads, or `REQ_SYNC`, `REQ_FUA` or
    /// `REQ_PREFLUSH`), `RNBD_F_FUA` if `op_is_flush()` (`REQ_FUA` or
    /// `REQ_PREFLUSH`).
    pub const fn from_request(rq: BlkOpf) -> Self {
        let op = match rq.op {
            ReqOp::Read => Op::Read,
            ReqOp::Write => Op::Write,
            ReqOp::Flush => Op::Flush,
            ReqOp::Discard => Op::Discard,
            ReqOp::SecureErase => Op::SecureErase,
            ReqOp::WriteZeroes => Op::WriteZeroes,
        };
        let is_flush = rq.fua || rq.preflush;
        let is_sync = matches!(rq.op, ReqOp::Read) || rq.sync || is_flush;
        let mut flags = OpFlags::NONE;
        if is_sync {
            flags = flags.union(OpFlags::SYNC);
        }
        if is_flush {
            flags = flags.union(OpFlags::FUA);
        }
        Self { op, flags }
    }
}

/// Block IO, sent along with every request (`struct rnbd_msg_io`, not packed:
/// 6 bytes of tail padding).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Io {
    /// The server's id of the device.
    pub device_id: u32,
    /// First 512-byte sector.
    pub sector: u64,
    /// Op and flags.
    pub rw: Rw,
    /// Length in bytes.
    pub bi_size: u32,
    /// IO priority (`req_get_ioprio()`).
    pub prio: u16,
}

impl Io {
    /// `sizeof(struct rnbd_msg_io)`.
    pub const SIZE: usize = 32;
    /// Length of a message without `prio` (protocol 1): shorter messages are
    /// refused, ones from here to [`Self::SIZE`] read as priority 0, as the C
    /// server treats a `usrlen < sizeof(*msg)`.
    pub const MIN_SIZE: usize = Self::OFF_PRIO;
    const OFF_DEVICE_ID: usize = 4;
    const OFF_SECTOR: usize = 8;
    const OFF_RW: usize = 16;
    const OFF_BI_SIZE: usize = 20;
    const OFF_PRIO: usize = 24;

    /// Writes the message to `buf`; returns [`Self::SIZE`].
    pub fn encode(&self, buf: &mut [u8]) -> Result<usize, Error> {
        let out = encode_buf(buf, Self::SIZE)?;
        MsgHdr {
            msg_type: MsgType::Io,
        }
        .encode(out)?;
        put(out, Self::OFF_DEVICE_ID, &self.device_id.to_le_bytes());
        put(out, Self::OFF_SECTOR, &self.sector.to_le_bytes());
        put(out, Self::OFF_RW, &self.rw.to_wire().to_le_bytes());
        put(out, Self::OFF_BI_SIZE, &self.bi_size.to_le_bytes());
        put(out, Self::OFF_PRIO, &self.prio.to_le_bytes());
        Ok(Self::SIZE)
    }

    /// Reads the message from `buf` (at least [`Self::MIN_SIZE`] bytes).
    /// `EINVAL` for an unknown op.
    pub fn decode(buf: &[u8]) -> Result<Self, Error> {
        let len = buf.len().min(Self::SIZE);
        let msg = decode_buf(buf, len.max(Self::MIN_SIZE), MsgType::Io)?;
        Ok(Self {
            device_id: get_u32(msg, Self::OFF_DEVICE_ID),
            sector: get_u64(msg, Self::OFF_SECTOR),
            rw: Rw::from_wire(get_u32(msg, Self::OFF_RW))?,
            bi_size: get_u32(msg, Self::OFF_BI_SIZE),
            prio: if msg.len() >= Self::SIZE {
                get_u16(msg, Self::OFF_PRIO)
            } else {
                0
            },
        })
    }

    /// The sector a client sends for a request at `sector` of `bi_size`
    /// bytes: 0 for a request without data. blk-mq hands a driver the
    /// flush of a flush sequence with no position (`blk_rq_init()` sets
    /// `__sector` to `(sector_t)-1`), and a server whose device has 4 KiB
    /// logical blocks submits a zero-sized bio at sector -1, which
    /// `bio_unaligned()` fails with EIO: every flush would fail there.
    pub const fn wire_sector(sector: u64, bi_size: u32) -> u64 {
        if bi_size == 0 {
            0
        } else {
            sector
        }
    }

    /// The sector the server submits the IO's bio at: for an IO without
    /// data (a flush) 0, whatever the client sent, so that a flush of a
    /// client that sends blk-mq's position -1 (C's) succeeds on a device
    /// with large logical blocks. Nothing is read or written at the sector
    /// of a zero-sized bio.
    pub const fn bio_sector(&self) -> u64 {
        Self::wire_sector(self.sector, self.bi_size)
    }

    /// The priority the server applies on a session of version `ver`: none
    /// before protocol 2.
    pub const fn prio_for_version(&self, ver: u8) -> u16 {
        if ver < PROTO_VER_MAJOR {
            0
        } else {
            self.prio
        }
    }

    /// Checks the length of the data that came with the IO: none (discard,
    /// write zeroes: the size is `bi_size`) or exactly `bi_size` bytes;
    /// `EINVAL` otherwise, as in `process_rdma`.
    pub fn check_data_len(&self, datalen: usize) -> Result<(), Error> {
        if datalen == 0 || u32::try_from(datalen) == Ok(self.bi_size) {
            Ok(())
        } else {
            Err(Error::Inval)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Expected sizes and offsets, worked out by hand from the structs of
    // rnbd-proto.h for x86_64 (natural alignment; only __le64 makes a struct
    // 8-aligned), and confirmed by the BUILD_BUG_ONs of rnbd-srv.c/rnbd-clt.c
    // where they exist.

    // struct rnbd_msg_hdr { __le16 type; __le16 __padding; }
    const HDR_SIZE: usize = 4;
    const HDR_TYPE: usize = 0;
    // struct rnbd_msg_sess_info{,_rsp} { hdr; u8 ver; u8 reserved[31]; }
    const SESS_INFO_SIZE: usize = 36;
    const SESS_INFO_VER: usize = 4;
    // struct rnbd_msg_open { hdr; u8 access_mode; u8 resv1;
    //                        s8 dev_name[NAME_MAX]; u8 reserved[3]; }
    const OPEN_SIZE: usize = 264;
    const OPEN_ACCESS_MODE: usize = 4;
    const OPEN_DEV_NAME: usize = 6;
    const OPEN_RESERVED: usize = 261;
    // struct rnbd_msg_close { hdr; __le32 device_id; }
    const CLOSE_SIZE: usize = 8;
    const CLOSE_DEVICE_ID: usize = 4;
    // struct rnbd_msg_open_rsp { hdr; __le32 device_id; __le64 nsectors;
    //   __le32 max_hw_sectors, max_write_zeroes_sectors, max_discard_sectors,
    //   discard_granularity, discard_alignment; __le16 physical_block_size,
    //   logical_block_size, max_segments, secure_discard;
    //   u8 obsolete_rotational; u8 cache_policy; u8 reserved[10]; }
    const RSP_SIZE: usize = 56;
    const RSP_DEVICE_ID: usize = 4;
    const RSP_NSECTORS: usize = 8;
    const RSP_MAX_HW_SECTORS: usize = 16;
    const RSP_MAX_WRITE_ZEROES: usize = 20;
    const RSP_MAX_DISCARD: usize = 24;
    const RSP_DISCARD_GRANULARITY: usize = 28;
    const RSP_DISCARD_ALIGNMENT: usize = 32;
    const RSP_PHYSICAL_BS: usize = 36;
    const RSP_LOGICAL_BS: usize = 38;
    const RSP_MAX_SEGMENTS: usize = 40;
    const RSP_SECURE_DISCARD: usize = 42;
    const RSP_ROTATIONAL: usize = 44;
    const RSP_CACHE_POLICY: usize = 45;
    // struct rnbd_msg_io { hdr; __le32 device_id; __le64 sector; __le32 rw;
    //   __le32 bi_size; __le16 prio; } -- 26 bytes padded to 32.
    const IO_SIZE: usize = 32;
    const IO_DEVICE_ID: usize = 4;
    const IO_SECTOR: usize = 8;
    const IO_RW: usize = 16;
    const IO_BI_SIZE: usize = 20;
    const IO_PRIO: usize = 24;

    fn le16(b: &[u8], off: usize) -> u16 {
        u16::from_le_bytes([b[off], b[off + 1]])
    }

    fn le32(b: &[u8], off: usize) -> u32 {
        u32::from_le_bytes(b[off..off + 4].try_into().unwrap())
    }

    fn le64(b: &[u8], off: usize) -> u64 {
        u64::from_le_bytes(b[off..off + 8].try_into().unwrap())
    }

    #[test]
    fn sizes_and_offsets_are_the_c_ones() {
        assert_eq!(MsgHdr::SIZE, HDR_SIZE);
        assert_eq!(MsgHdr::OFF_TYPE, HDR_TYPE);
        assert_eq!(SessInfo::SIZE, SESS_INFO_SIZE);
        assert_eq!(SessInfo::OFF_VER, SESS_INFO_VER);
        assert_eq!(SessInfoRsp::SIZE, SESS_INFO_SIZE);
        assert_eq!(SessInfoRsp::OFF_VER, SESS_INFO_VER);
        assert_eq!(Open::SIZE, OPEN_SIZE);
        assert_eq!(Open::OFF_ACCESS_MODE, OPEN_ACCESS_MODE);
        assert_eq!(Open::OFF_DEV_NAME, OPEN_DEV_NAME);
        assert_eq!(Open::OFF_DEV_NAME + NAME_MAX, OPEN_RESERVED);
        assert_eq!(Close::SIZE, CLOSE_SIZE);
        assert_eq!(Close::OFF_DEVICE_ID, CLOSE_DEVICE_ID);
        assert_eq!(OpenRsp::SIZE, RSP_SIZE);
        assert_eq!(OpenRsp::OFF_DEVICE_ID, RSP_DEVICE_ID);
        assert_eq!(OpenRsp::OFF_NSECTORS, RSP_NSECTORS);
        assert_eq!(OpenRsp::OFF_MAX_HW_SECTORS, RSP_MAX_HW_SECTORS);
        assert_eq!(OpenRsp::OFF_MAX_WRITE_ZEROES_SECTORS, RSP_MAX_WRITE_ZEROES);
        assert_eq!(OpenRsp::OFF_MAX_DISCARD_SECTORS, RSP_MAX_DISCARD);
        assert_eq!(OpenRsp::OFF_DISCARD_GRANULARITY, RSP_DISCARD_GRANULARITY);
        assert_eq!(OpenRsp::OFF_DISCARD_ALIGNMENT, RSP_DISCARD_ALIGNMENT);
        assert_eq!(OpenRsp::OFF_PHYSICAL_BLOCK_SIZE, RSP_PHYSICAL_BS);
        assert_eq!(OpenRsp::OFF_LOGICAL_BLOCK_SIZE, RSP_LOGICAL_BS);
        assert_eq!(OpenRsp::OFF_MAX_SEGMENTS, RSP_MAX_SEGMENTS);
        assert_eq!(OpenRsp::OFF_SECURE_DISCARD, RSP_SECURE_DISCARD);
        assert_eq!(OpenRsp::OFF_CACHE_POLICY, RSP_CACHE_POLICY);
        assert_eq!(Io::SIZE, IO_SIZE);
        assert_eq!(Io::OFF_DEVICE_ID, IO_DEVICE_ID);
        assert_eq!(Io::OFF_SECTOR, IO_SECTOR);
        assert_eq!(Io::OFF_RW, IO_RW);
        assert_eq!(Io::OFF_BI_SIZE, IO_BI_SIZE);
        assert_eq!(Io::OFF_PRIO, IO_PRIO);
        assert_eq!(Io::MIN_SIZE, 24);
    }

    #[test]
    fn constants() {
        assert_eq!(PROTO_VER_MAJOR, 2);
        assert_eq!(PROTO_VER_MINOR, 0);
        assert_eq!(RTRS_PORT, 1234);
        assert_eq!(NAME_MAX, 255);
        assert_eq!(negotiate_version(1), 1);
        assert_eq!(negotiate_version(2), 2);
        assert_eq!(negotiate_version(200), 2);
    }

    #[test]
    fn msg_types() {
        let all = [
            (MsgType::SessInfo, 0),
            (MsgType::SessInfoRsp, 1),
            (MsgType::Open, 2),
            (MsgType::OpenRsp, 3),
            (MsgType::Io, 4),
            (MsgType::Close, 5),
        ];
        for (ty, v) in all {
            assert_eq!(ty.to_wire(), v);
            assert_eq!(MsgType::from_wire(v), Ok(ty));
        }
        assert_eq!(MsgType::from_wire(6), Err(Error::Inval));
        assert_eq!(MsgType::from_wire(0xffff), Err(Error::Inval));
    }

    #[test]
    fn hdr() {
        let mut b = [0xaau8; 8];
        let hdr = MsgHdr {
            msg_type: MsgType::Close,
        };
        assert_eq!(hdr.encode(&mut b), Ok(4));
        assert_eq!(b, [5, 0, 0, 0, 0xaa, 0xaa, 0xaa, 0xaa]);
        assert_eq!(MsgHdr::decode(&b), Ok(hdr));
        // The padding is ignored.
        assert_eq!(
            MsgHdr::decode(&[4, 0, 0x12, 0x34]).unwrap().msg_type,
            MsgType::Io
        );
        assert_eq!(MsgHdr::decode(&[4, 0, 0]), Err(Error::Inval));
        assert_eq!(MsgHdr::decode(&[4, 1, 0, 0]), Err(Error::Inval));
        assert_eq!(hdr.encode(&mut [0; 3]), Err(Error::MsgSize));
    }

    #[test]
    fn sess_info() {
        let mut b = [0xffu8; 40];
        assert_eq!(SessInfo { ver: 2 }.encode(&mut b), Ok(36));
        assert_eq!(le16(&b, HDR_TYPE), 0);
        assert_eq!(b[SESS_INFO_VER], 2);
        assert!(b[5..36].iter().all(|&x| x == 0));
        assert_eq!(b[36], 0xff);
        assert_eq!(SessInfo::decode(&b), Ok(SessInfo { ver: 2 }));
        // The C client does not clear reserved[].
        b[5..36].fill(0x5a);
        b[2] = 0x77;
        assert_eq!(SessInfo::decode(&b[..36]), Ok(SessInfo { ver: 2 }));
        assert_eq!(SessInfo::decode(&b[..35]), Err(Error::Inval));
        assert_eq!(SessInfoRsp::decode(&b), Err(Error::Inval));
        assert_eq!(
            SessInfo { ver: 2 }.encode(&mut [0; 35]),
            Err(Error::MsgSize)
        );

        let mut r = [0u8; 36];
        assert_eq!(SessInfoRsp { ver: 1 }.encode(&mut r), Ok(36));
        assert_eq!(le16(&r, HDR_TYPE), 1);
        assert_eq!(r[SESS_INFO_VER], 1);
        assert_eq!(SessInfoRsp::decode(&r), Ok(SessInfoRsp { ver: 1 }));
        assert_eq!(SessInfo::decode(&r), Err(Error::Inval));
    }

    #[test]
    fn access_modes() {
        let all = [
            (AccessMode::Ro, 0, "ro", false),
            (AccessMode::Rw, 1, "rw", true),
            (AccessMode::Migration, 2, "migration", true),
        ];
        for (mode, v, name, write) in all {
            assert_eq!(mode.to_wire(), v);
            assert_eq!(AccessMode::from_wire(v), Ok(mode));
            assert_eq!(mode.as_str(), name);
            assert_eq!(AccessMode::from_name(name.as_bytes()), Ok(mode));
            assert_eq!(mode.is_write(), write);
        }
        assert_eq!(AccessMode::from_wire(3), Err(Error::Inval));
        assert_eq!(AccessMode::from_name(b"RW"), Err(Error::Inval));
        assert_eq!(AccessMode::from_name(b"rw\n"), Err(Error::Inval));
        assert_eq!(AccessMode::from_name(b""), Err(Error::Inval));
    }

    #[test]
    fn open() {
        let msg = Open {
            access_mode: AccessMode::Migration,
            dev_name: b"/dev/ram0",
        };
        let mut b = [0xeeu8; OPEN_SIZE];
        assert_eq!(msg.encode(&mut b), Ok(264));
        assert_eq!(le16(&b, HDR_TYPE), 2);
        assert_eq!(b[OPEN_ACCESS_MODE], 2);
        assert_eq!(&b[OPEN_DEV_NAME..OPEN_DEV_NAME + 10], b"/dev/ram0\0");
        assert!(b[OPEN_DEV_NAME + 9..].iter().all(|&x| x == 0));
        assert_eq!(Open::decode(&b), Ok(msg));

        // Garbage after the NUL and in resv1/reserved, as the C client sends.
        b[5] = 0x42;
        b[OPEN_DEV_NAME + 10..].fill(0x61);
        assert_eq!(Open::decode(&b), Ok(msg));

        // The longest name: NAME_MAX - 1 bytes and its NUL.
        let long = [b'a'; NAME_MAX - 1];
        let msg = Open {
            access_mode: AccessMode::Ro,
            dev_name: &long,
        };
        assert_eq!(msg.encode(&mut b), Ok(264));
        assert_eq!(b[OPEN_RESERVED - 1], 0);
        assert_eq!(Open::decode(&b), Ok(msg));
        // No NUL in the name field.
        b[OPEN_RESERVED - 1] = b'a';
        assert_eq!(Open::decode(&b), Err(Error::Inval));

        let too_long = [b'a'; NAME_MAX];
        let msg = Open {
            access_mode: AccessMode::Ro,
            dev_name: &too_long,
        };
        assert_eq!(msg.encode(&mut b), Err(Error::NameTooLong));
        let msg = Open {
            access_mode: AccessMode::Ro,
            dev_name: b"a\0b",
        };
        assert_eq!(msg.encode(&mut b), Err(Error::Inval));

        let msg = Open {
            access_mode: AccessMode::Rw,
            dev_name: b"",
        };
        assert_eq!(msg.encode(&mut b), Ok(264));
        assert_eq!(Open::decode(&b), Ok(msg));
        b[OPEN_ACCESS_MODE] = 3;
        assert_eq!(Open::decode(&b), Err(Error::Inval));
        b[OPEN_ACCESS_MODE] = 1;
        assert_eq!(Open::decode(&b[..263]), Err(Error::Inval));
        assert_eq!(msg.encode(&mut [0; 263]), Err(Error::MsgSize));
    }

    #[test]
    fn close() {
        let mut b = [0u8; CLOSE_SIZE];
        let msg = Close {
            device_id: 0x0102_0304,
        };
        assert_eq!(msg.encode(&mut b), Ok(8));
        assert_eq!(b, [5, 0, 0, 0, 4, 3, 2, 1]);
        assert_eq!(le32(&b, CLOSE_DEVICE_ID), 0x0102_0304);
        assert_eq!(Close::decode(&b), Ok(msg));
        assert_eq!(Close::decode(&b[..7]), Err(Error::Inval));
        b[0] = 4;
        assert_eq!(Close::decode(&b), Err(Error::Inval));
    }

    fn sample_rsp() -> OpenRsp {
        OpenRsp {
            device_id: 0x1122_3344,
            nsectors: 0x0102_0304_0506_0708,
            max_hw_sectors: 0x1000_0001,
            max_write_zeroes_sectors: 0x2000_0002,
            max_discard_sectors: 0x3000_0003,
            discard_granularity: 0x4000_0004,
            discard_alignment: 0x5000_0005,
            physical_block_size: 4096,
            logical_block_size: 512,
            max_segments: 0x6006,
            secure_discard: 0x7007,
            cache_policy: CachePolicy {
                fua: true,
                writeback: true,
            },
        }
    }

    #[test]
    fn open_rsp() {
        let rsp = sample_rsp();
        let mut b = [0xffu8; RSP_SIZE];
        assert_eq!(rsp.encode(&mut b), Ok(56));
        assert_eq!(le16(&b, HDR_TYPE), 3);
        assert_eq!(le32(&b, RSP_DEVICE_ID), 0x1122_3344);
        assert_eq!(le64(&b, RSP_NSECTORS), 0x0102_0304_0506_0708);
        assert_eq!(le32(&b, RSP_MAX_HW_SECTORS), 0x1000_0001);
        assert_eq!(le32(&b, RSP_MAX_WRITE_ZEROES), 0x2000_0002);
        assert_eq!(le32(&b, RSP_MAX_DISCARD), 0x3000_0003);
        assert_eq!(le32(&b, RSP_DISCARD_GRANULARITY), 0x4000_0004);
        assert_eq!(le32(&b, RSP_DISCARD_ALIGNMENT), 0x5000_0005);
        assert_eq!(le16(&b, RSP_PHYSICAL_BS), 4096);
        assert_eq!(le16(&b, RSP_LOGICAL_BS), 512);
        assert_eq!(le16(&b, RSP_MAX_SEGMENTS), 0x6006);
        assert_eq!(le16(&b, RSP_SECURE_DISCARD), 0x7007);
        assert_eq!(b[RSP_ROTATIONAL], 0);
        assert_eq!(b[RSP_CACHE_POLICY], 3);
        assert!(b[46..56].iter().all(|&x| x == 0));
        assert_eq!(OpenRsp::decode(&b), Ok(rsp));
        assert_eq!(rsp.secure_erase_sectors(), 0x3000_0003);

        // Rotational, reserved and unknown cache bits are ignored.
        b[RSP_ROTATIONAL] = 1;
        b[RSP_CACHE_POLICY] = 0xfd;
        b[46..56].fill(0x99);
        let got = OpenRsp::decode(&b).unwrap();
        assert_eq!(
            got.cache_policy,
            CachePolicy {
                fua: true,
                writeback: false
            }
        );
        assert!(!got.cache_policy.client_fua());

        // The C client refuses a zero logical block size.
        b[RSP_LOGICAL_BS] = 0;
        b[RSP_LOGICAL_BS + 1] = 0;
        assert_eq!(OpenRsp::decode(&b), Err(Error::Inval));
        assert_eq!(OpenRsp::decode(&b[..55]), Err(Error::Inval));
        assert_eq!(rsp.encode(&mut [0; 55]), Err(Error::MsgSize));

        let no_secure = OpenRsp {
            secure_discard: 0,
            ..rsp
        };
        assert_eq!(no_secure.secure_erase_sectors(), 0);
    }

    #[test]
    fn cache_policy() {
        assert_eq!(CachePolicy::FUA, 1);
        assert_eq!(CachePolicy::WRITEBACK, 2);
        for bits in 0..4u8 {
            assert_eq!(CachePolicy::from_bits(bits).bits(), bits);
        }
        assert!(CachePolicy::from_bits(3).client_fua());
        assert!(!CachePolicy::from_bits(1).client_fua());
        assert!(!CachePolicy::from_bits(2).client_fua());
    }

    #[test]
    fn rw_wire_encoding() {
        assert_eq!(Rw::OP_BITS, 8);
        assert_eq!(Rw::OP_MASK, 0xff);
        assert_eq!(OpFlags::SYNC.bits(), 0x100);
        assert_eq!(OpFlags::FUA.bits(), 0x200);
        let ops = [
            (Op::Read, 0),
            (Op::Write, 1),
            (Op::Flush, 2),
            (Op::Discard, 3),
            (Op::SecureErase, 4),
            (Op::WriteZeroes, 5),
        ];
        for (op, v) in ops {
            assert_eq!(op.to_wire(), v);
            assert_eq!(Op::from_wire(v), Ok(op));
            let rw = Rw {
                op,
                flags: OpFlags::SYNC | OpFlags::FUA,
            };
            assert_eq!(rw.to_wire(), v | 0x300);
            assert_eq!(Rw::from_wire(v | 0x300), Ok(rw));
        }
        assert_eq!(Op::from_wire(6), Err(Error::Inval));
        assert_eq!(Rw::from_wire(6), Err(Error::Inval));
        assert_eq!(Rw::from_wire(0xff | 0x100), Err(Error::Inval));
        // Unknown flag bits are dropped.
        assert_eq!(
            Rw::from_wire(0xffff_fc01),
            Ok(Rw {
                op: Op::Write,
                flags: OpFlags::NONE
            })
        );
        assert_eq!(
            Rw::from_wire(0x0000_0501),
            Ok(Rw {
                op: Op::Write,
                flags: OpFlags::SYNC
            })
        );
        assert!(OpFlags::SYNC.union(OpFlags::FUA).contains(OpFlags::FUA));
        assert!(!OpFlags::SYNC.contains(OpFlags::FUA));
    }

    fn opf(op: ReqOp, sync: bool, fua: bool, preflush: bool) -> BlkOpf {
        BlkOpf {
            op,
            sync,
            fua,
            preflush,
        }
    }

    #[test]
    fn rw_to_bio_is_rnbd_to_bio_flags() {
        let cases = [
            (0x000, opf(ReqOp::Read, false, false, false)),
            (0x001, opf(ReqOp::Write, false, false, false)),
            (0x002, opf(ReqOp::Write, false, false, true)),
            (0x003, opf(ReqOp::Discard, false, false, false)),
            (0x004, opf(ReqOp::SecureErase, false, false, false)),
            (0x005, opf(ReqOp::WriteZeroes, false, false, false)),
            (0x101, opf(ReqOp::Write, true, false, false)),
            (0x201, opf(ReqOp::Write, false, true, false)),
            (0x302, opf(ReqOp::Write, true, true, true)),
        ];
        for (wire, bio) in cases {
            assert_eq!(Rw::from_wire(wire).unwrap().to_bio(), bio, "{wire:#x}");
        }
    }

    #[test]
    fn rw_from_request_is_rq_to_rnbd_flags() {
        let cases = [
            // Reads are always sync.
            (opf(ReqOp::Read, false, false, false), 0x100),
            (opf(ReqOp::Write, false, false, false), 0x001),
            (opf(ReqOp::Write, true, false, false), 0x101),
            // FUA and PREFLUSH are sync and become RNBD_F_FUA.
            (opf(ReqOp::Write, false, true, false), 0x301),
            (opf(ReqOp::Write, false, false, true), 0x301),
            (opf(ReqOp::Flush, false, false, false), 0x002),
            (opf(ReqOp::Flush, false, false, true), 0x302),
            (opf(ReqOp::Discard, false, false, false), 0x003),
            (opf(ReqOp::SecureErase, false, false, false), 0x004),
            (opf(ReqOp::WriteZeroes, true, false, false), 0x105),
        ];
        for (rq, wire) in cases {
            assert_eq!(Rw::from_request(rq).to_wire(), wire, "{rq:?}");
        }
    }

    #[test]
    fn req_ops_are_blk_types() {
        let ops = [
            (ReqOp::Read, 0),
            (ReqOp::Write, 1),
            (ReqOp::Flush, 2),
            (ReqOp::Discard, 3),
            (ReqOp::SecureErase, 5),
            (ReqOp::WriteZeroes, 9),
        ];
        for (op, v) in ops {
            assert_eq!(op.to_raw(), v);
            assert_eq!(ReqOp::from_raw(v), Ok(op));
        }
        // REQ_OP_ZONE_APPEND, REQ_OP_ZONE_OPEN, REQ_OP_DRV_IN
        for v in [4, 7, 11, 34] {
            assert_eq!(ReqOp::from_raw(v), Err(Error::Inval));
        }
    }

    #[test]
    fn io() {
        let msg = Io {
            device_id: 0xa1a2_a3a4,
            sector: 0xb1b2_b3b4_b5b6_b7b8,
            rw: Rw {
                op: Op::Write,
                flags: OpFlags::FUA,
            },
            bi_size: 0xc1c2_c3c4,
            prio: 0xd1d2,
        };
        let mut b = [0xffu8; IO_SIZE + 4];
        assert_eq!(msg.encode(&mut b), Ok(32));
        assert_eq!(le16(&b, HDR_TYPE), 4);
        assert_eq!(le16(&b, 2), 0);
        assert_eq!(le32(&b, IO_DEVICE_ID), 0xa1a2_a3a4);
        assert_eq!(le64(&b, IO_SECTOR), 0xb1b2_b3b4_b5b6_b7b8);
        assert_eq!(le32(&b, IO_RW), 0x201);
        assert_eq!(le32(&b, IO_BI_SIZE), 0xc1c2_c3c4);
        assert_eq!(le16(&b, IO_PRIO), 0xd1d2);
        assert!(b[26..32].iter().all(|&x| x == 0));
        assert_eq!(b[32], 0xff);
        assert_eq!(Io::decode(&b[..32]), Ok(msg));
        assert_eq!(Io::decode(&b), Ok(msg));

        // Uninitialised padding from the C client is ignored.
        b[2] = 0x12;
        b[26..32].fill(0x34);
        assert_eq!(Io::decode(&b), Ok(msg));

        // A protocol 1 message has no prio: it reads as 0.
        let old = Io::decode(&b[..24]).unwrap();
        assert_eq!(old.prio, 0);
        assert_eq!(old.device_id, msg.device_id);
        assert_eq!(Io::decode(&b[..31]).unwrap().prio, 0);
        assert_eq!(Io::decode(&b[..23]), Err(Error::Inval));
        assert_eq!(Io::decode(&[]), Err(Error::Inval));

        assert_eq!(msg.prio_for_version(2), 0xd1d2);
        assert_eq!(msg.prio_for_version(1), 0);
        assert_eq!(msg.prio_for_version(0), 0);

        b[IO_RW] = 9;
        assert_eq!(Io::decode(&b), Err(Error::Inval));
        b[IO_RW] = 1;
        b[0] = 5;
        assert_eq!(Io::decode(&b), Err(Error::Inval));
        assert_eq!(msg.encode(&mut [0; 31]), Err(Error::MsgSize));
    }

    #[test]
    fn io_without_data_has_sector_0() {
        // blk-mq's flush request: REQ_OP_FLUSH at sector (sector_t)-1.
        assert_eq!(Io::wire_sector(u64::MAX, 0), 0);
        assert_eq!(Io::wire_sector(8, 4096), 8);
        let flush = |sector| Io {
            device_id: 3,
            sector,
            rw: Rw::from_request(BlkOpf {
                op: ReqOp::Flush,
                sync: false,
                fua: false,
                preflush: true,
            }),
            bi_size: 0,
            prio: 0,
        };
        // C's client sends -1; the bio goes to sector 0, aligned for any
        // logical block size.
        assert_eq!(flush(u64::MAX).bio_sector(), 0);
        assert_eq!(flush(0).bio_sector(), 0);
        let write = Io {
            bi_size: 4096,
            rw: Rw {
                op: Op::Write,
                flags: OpFlags::FUA,
            },
            ..flush(24)
        };
        assert_eq!(write.bio_sector(), 24);
    }

    #[test]
    fn io_data_len() {
        let msg = Io {
            device_id: 1,
            sector: 0,
            rw: Rw {
                op: Op::Write,
                flags: OpFlags::NONE,
            },
            bi_size: 4096,
            prio: 0,
        };
        assert_eq!(msg.check_data_len(0), Ok(()));
        assert_eq!(msg.check_data_len(4096), Ok(()));
        assert_eq!(msg.check_data_len(512), Err(Error::Inval));
        assert_eq!(msg.check_data_len(4096 + (1 << 32)), Err(Error::Inval));
    }

    #[test]
    fn decoders_survive_any_prefix() {
        // Every length of a few patterns: no panic, and the short ones fail.
        for fill in [0u8, 1, 2, 3, 4, 5, 0xff] {
            let b = [fill; 300];
            for len in 0..b.len() {
                let b = &b[..len];
                let _ = MsgHdr::decode(b);
                let _ = SessInfo::decode(b);
                let _ = SessInfoRsp::decode(b);
                let _ = Open::decode(b);
                let _ = Close::decode(b);
                let _ = OpenRsp::decode(b);
                let _ = Io::decode(b);
                if len < Io::MIN_SIZE {
                    assert!(Io::decode(b).is_err());
                }
            }
        }
    }
}
