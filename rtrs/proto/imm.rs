// SPDX-License-Identifier: GPL-2.0-or-later

//! The 32-bit immediate data of RTRS RDMA writes (`rtrs-pri.h`).
//!
//! An IMM is a 4-bit type and a 28-bit payload. An IO request's payload is
//! the chunk id and the offset of the RTRS message in the chunk; an IO
//! response's is the request id and the errno; heartbeats carry none.

use super::error::Error;
use super::msg::{MAX_SESS_QUEUE_DEPTH, MIN_CHUNK_SIZE};

/// Bits of the IMM type (`MAX_IMM_TYPE_BITS`).
pub const MAX_IMM_TYPE_BITS: u32 = 4;
/// Mask of the IMM type (`MAX_IMM_TYPE_MASK`).
pub const MAX_IMM_TYPE_MASK: u32 = (1 << MAX_IMM_TYPE_BITS) - 1;
/// Bits of the IMM payload (`MAX_IMM_PAYL_BITS`).
pub const MAX_IMM_PAYL_BITS: u32 = 28;
/// Mask of the IMM payload (`MAX_IMM_PAYL_MASK`).
pub const MAX_IMM_PAYL_MASK: u32 = (1 << MAX_IMM_PAYL_BITS) - 1;

/// Bits of the request id in an IO response payload.
pub const IO_RSP_MSG_ID_BITS: u32 = 19;
/// Mask of the request id in an IO response payload.
pub const IO_RSP_MSG_ID_MASK: u32 = (1 << IO_RSP_MSG_ID_BITS) - 1;
/// Largest errno an IO response carries: 9 bits.
pub const IO_RSP_ERRNO_MAX: u32 = 0x1ff;
/// Bits of a fence's number in [`Imm::Fence`] and [`Imm::FenceAck`]; the
/// path id takes the 16 above them.
pub const FENCE_SEQ_BITS: u32 = 12;
/// Mask of a fence's number.
pub const FENCE_SEQ_MASK: u32 = (1 << FENCE_SEQ_BITS) - 1;

/// The IMM types (`enum rtrs_imm_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum ImmType {
    /// `RTRS_IO_REQ_IMM`: client to server, a request is in a chunk.
    IoReq = 0,
    /// `RTRS_IO_RSP_IMM`: server to client, a request is done.
    IoRsp = 1,
    /// `RTRS_IO_RSP_W_INV_IMM`: as [`ImmType::IoRsp`], sent with
    /// invalidation of the client's rkey.
    IoRspWInv = 2,
    /// Client to server, on a path of RTRS 2.1 only: close another path
    /// of the session before failed-over IO comes ([`super::ext`]).
    Fence = 4,
    /// Server to client: the fence is done.
    FenceAck = 5,
    /// `RTRS_HB_MSG_IMM`: heartbeat.
    HbMsg = 8,
    /// `RTRS_HB_ACK_IMM`: heartbeat acknowledgement.
    HbAck = 9,
}

impl ImmType {
    /// The type with number `ty`, if it is one of RTRS's.
    pub const fn from_u32(ty: u32) -> Option<Self> {
        match ty {
            0 => Some(ImmType::IoReq),
            1 => Some(ImmType::IoRsp),
            2 => Some(ImmType::IoRspWInv),
            4 => Some(ImmType::Fence),
            5 => Some(ImmType::FenceAck),
            8 => Some(ImmType::HbMsg),
            9 => Some(ImmType::HbAck),
            _ => None,
        }
    }
}

/// `rtrs_to_imm()`: type in the top 4 bits, payload in the low 28; both
/// are masked to their width.
pub const fn to_imm(ty: u32, payload: u32) -> u32 {
    ((ty & MAX_IMM_TYPE_MASK) << MAX_IMM_PAYL_BITS) | (payload & MAX_IMM_PAYL_MASK)
}

/// `rtrs_from_imm()`: the `(type, payload)` of `imm`.
pub const fn from_imm(imm: u32) -> (u32, u32) {
    (imm >> MAX_IMM_PAYL_BITS, imm & MAX_IMM_PAYL_MASK)
}

/// A decoded IMM.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Imm {
    /// An IO request; the payload is a [`ChunkLayout`] encoding of the
    /// chunk id and the offset of the RTRS message in the chunk.
    IoReq {
        /// The 28-bit payload.
        payload: u32,
    },
    /// An IO response (`rtrs_to_io_rsp_imm()`).
    IoRsp {
        /// The request (and chunk) id, 19 bits.
        msg_id: u32,
        /// 0 or a negative errno; its magnitude travels in 9 bits.
        errno: i32,
        /// Sent as [`ImmType::IoRspWInv`]: the server invalidated the
        /// client's rkey, so the client need not.
        w_inval: bool,
    },
    /// A fence (RTRS 2.1): close the session's path `path_id` and answer
    /// [`Imm::FenceAck`] with `seq` once its IO is answered.
    Fence {
        /// The server's id of the path to close (CON_RSP of 2.1).
        path_id: u16,
        /// The fence's number, 12 bits.
        seq: u16,
    },
    /// The answer to the fence for path `path_id` numbered `seq`.
    FenceAck {
        /// As in the fence.
        path_id: u16,
        /// As in the fence, 12 bits.
        seq: u16,
    },
    /// A heartbeat. It is sent with payload 0; the payload is ignored.
    HbMsg,
    /// A heartbeat acknowledgement. Sent with payload 0, payload ignored.
    HbAck,
    /// A type RTRS does not know; the C receivers warn and go on.
    Unknown {
        /// The 4-bit type.
        ty: u32,
        /// The 28-bit payload.
        payload: u32,
    },
}

impl Imm {
    /// The response to request `msg_id` with status `errno` (0 or a
    /// negative errno), as `rtrs_to_io_rsp_imm()` packs it: 9 bits of
    /// `|errno|`, 19 bits of `msg_id`, both masked.
    pub const fn io_rsp(msg_id: u32, errno: i32, w_inval: bool) -> Self {
        Imm::IoRsp {
            msg_id: msg_id & IO_RSP_MSG_ID_MASK,
            errno: -((errno.unsigned_abs() & IO_RSP_ERRNO_MAX) as i32),
            w_inval,
        }
    }

    /// The 32-bit IMM. Fields wider than their wire width are masked, as
    /// the C helpers do; a positive `errno` goes as its magnitude.
    pub const fn encode(self) -> u32 {
        match self {
            Imm::IoReq { payload } => to_imm(ImmType::IoReq as u32, payload),
            Imm::IoRsp {
                msg_id,
                errno,
                w_inval,
            } => {
                let payload = ((errno.unsigned_abs() & IO_RSP_ERRNO_MAX) << IO_RSP_MSG_ID_BITS)
                    | (msg_id & IO_RSP_MSG_ID_MASK);
                let ty = if w_inval {
                    ImmType::IoRspWInv
                } else {
                    ImmType::IoRsp
                };
                to_imm(ty as u32, payload)
            }
            Imm::Fence { path_id, seq } => to_imm(
                ImmType::Fence as u32,
                ((path_id as u32) << FENCE_SEQ_BITS) | (seq as u32 & FENCE_SEQ_MASK),
            ),
            Imm::FenceAck { path_id, seq } => to_imm(
                ImmType::FenceAck as u32,
                ((path_id as u32) << FENCE_SEQ_BITS) | (seq as u32 & FENCE_SEQ_MASK),
            ),
            Imm::HbMsg => to_imm(ImmType::HbMsg as u32, 0),
            Imm::HbAck => to_imm(ImmType::HbAck as u32, 0),
            Imm::Unknown { ty, payload } => to_imm(ty, payload),
        }
    }

    /// Decodes any 32-bit IMM (`rtrs_from_imm()`, then
    /// `rtrs_from_io_rsp_imm()` for responses). `decode(x).encode() == x`
    /// for every `x` except heartbeats with a non-zero payload.
    pub const fn decode(imm: u32) -> Self {
        let (ty, payload) = from_imm(imm);
        match ImmType::from_u32(ty) {
            Some(ImmType::IoReq) => Imm::IoReq { payload },
            Some(t @ (ImmType::IoRsp | ImmType::IoRspWInv)) => Imm::IoRsp {
                msg_id: payload & IO_RSP_MSG_ID_MASK,
                errno: -(((payload >> IO_RSP_MSG_ID_BITS) & IO_RSP_ERRNO_MAX) as i32),
                w_inval: matches!(t, ImmType::IoRspWInv),
            },
            Some(ImmType::Fence) => Imm::Fence {
                path_id: (payload >> FENCE_SEQ_BITS) as u16,
                seq: (payload & FENCE_SEQ_MASK) as u16,
            },
            Some(ImmType::FenceAck) => Imm::FenceAck {
                path_id: (payload >> FENCE_SEQ_BITS) as u16,
                seq: (payload & FENCE_SEQ_MASK) as u16,
            },
            Some(ImmType::HbMsg) => Imm::HbMsg,
            Some(ImmType::HbAck) => Imm::HbAck,
            None => Imm::Unknown { ty, payload },
        }
    }
}

/// `ilog2(n - 1) + 1` as the C code computes it with 32-bit `ilog2()`: the
/// bits needed for the numbers `0..n` (0 for `n` = 1, 32 for `n` = 0).
pub const fn imm_bits(n: u32) -> u32 {
    match n.wrapping_sub(1).checked_ilog2() {
        Some(log) => log + 1,
        None => 0,
    }
}

/// Whether `count` chunks of `chunk_size` bytes can be addressed by an IO
/// request payload: `imm_bits(count) + imm_bits(chunk_size) <= 28`, the
/// check of `process_info_rsp()` and of the server's module parameters.
pub const fn imm_fits(count: u32, chunk_size: u32) -> bool {
    imm_bits(count) + imm_bits(chunk_size) <= MAX_IMM_PAYL_BITS
}

/// Default `max_chunk_size` of the server module (128 KiB).
pub const DEFAULT_MAX_CHUNK_SIZE: u32 = 128 << 10;
/// Default `sess_queue_depth` of the server module.
pub const DEFAULT_SESS_QUEUE_DEPTH: u32 = 512;

/// Which of the server's module parameter checks failed; each is
/// `EINVAL` ([`BadChunkParams::errno`]) with its own message in C.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BadChunkParams {
    /// `sess_queue_depth` outside `1..=MAX_SESS_QUEUE_DEPTH`.
    QueueDepth,
    /// `max_chunk_size` below [`MIN_CHUNK_SIZE`] or not a power of two.
    ChunkSize,
    /// Both fine alone, but a chunk id and an offset in the chunk do not
    /// fit the [`MAX_IMM_PAYL_BITS`] of an IMM together.
    ImmBits,
}

impl BadChunkParams {
    /// The errno of every failed check: `EINVAL`.
    pub const fn errno(self) -> Error {
        Error::Inval
    }
}

/// The server's module parameter checks (`check_module_params()`), in C's
/// order: `sess_queue_depth` in `1..=65535`, `max_chunk_size` a power of
/// two of at least [`MIN_CHUNK_SIZE`], and both fitting the IMM payload.
pub fn check_chunk_params(
    sess_queue_depth: i32,
    max_chunk_size: i32,
) -> Result<(), BadChunkParams> {
    let depth = u32::try_from(sess_queue_depth)
        .ok()
        .filter(|d| (1..=MAX_SESS_QUEUE_DEPTH).contains(d))
        .ok_or(BadChunkParams::QueueDepth)?;
    let chunk = u32::try_from(max_chunk_size)
        .ok()
        .filter(|c| *c >= MIN_CHUNK_SIZE && c.is_power_of_two())
        .ok_or(BadChunkParams::ChunkSize)?;
    if !imm_fits(depth, chunk) {
        return Err(BadChunkParams::ImmBits);
    }
    Ok(())
}

/// Where an IO request payload splits into chunk id and offset: the chunk
/// id takes the top `imm_bits(queue_depth)` bits of the 28, the offset the
/// `mem_bits` below. Client (`alloc_permits()`) and server
/// (`map_cont_bufs()`) derive it from the same queue depth.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChunkLayout {
    mem_bits: u32,
}

impl ChunkLayout {
    /// The layout for a session of `queue_depth` chunks;
    /// [`Error::Inval`] unless `1 <= queue_depth <= 65535`.
    pub const fn new(queue_depth: u32) -> Result<Self, Error> {
        if queue_depth < 1 || queue_depth > MAX_SESS_QUEUE_DEPTH {
            return Err(Error::Inval);
        }
        Ok(ChunkLayout {
            mem_bits: MAX_IMM_PAYL_BITS - imm_bits(queue_depth),
        })
    }

    /// Bits of the offset (`srv_path->mem_bits`).
    pub const fn mem_bits(&self) -> u32 {
        self.mem_bits
    }

    /// The payload base of chunk `buf_id` (`permit->mem_off`).
    pub const fn mem_off(&self, buf_id: u32) -> u32 {
        buf_id.wrapping_shl(self.mem_bits)
    }

    /// The IO request IMM for the RTRS message at offset `off` of chunk
    /// `buf_id` (`rtrs_to_io_req_imm(mem_off + off)`); [`Error::Inval`] if
    /// either does not fit its bits, where C would send a payload the
    /// server splits differently.
    pub const fn io_req_imm(&self, buf_id: u32, off: u32) -> Result<u32, Error> {
        let id_bits = MAX_IMM_PAYL_BITS - self.mem_bits;
        if buf_id >> id_bits != 0 || off >> self.mem_bits != 0 {
            return Err(Error::Inval);
        }
        Ok(to_imm(ImmType::IoReq as u32, self.mem_off(buf_id) | off))
    }

    /// Splits an IO request payload into `(buf_id, off)`, as the server
    /// does before any check.
    pub const fn split(&self, payload: u32) -> (u32, u32) {
        let payload = payload & MAX_IMM_PAYL_MASK;
        (
            payload >> self.mem_bits,
            payload & ((1 << self.mem_bits) - 1),
        )
    }

    /// Splits an IO request payload and checks it as the server does
    /// (`rtrs_srv_rdma_done()`): [`Error::Inval`] if `buf_id >=
    /// queue_depth` or `off >= max_chunk_size` (the C server closes the
    /// path).
    pub const fn split_checked(
        &self,
        payload: u32,
        queue_depth: u32,
        max_chunk_size: u32,
    ) -> Result<(u32, u32), Error> {
        let (buf_id, off) = self.split(payload);
        if buf_id >= queue_depth || off >= max_chunk_size {
            return Err(Error::Inval);
        }
        Ok((buf_id, off))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constants_are_rtrs_pri_h() {
        assert_eq!(MAX_IMM_TYPE_MASK, 0xf);
        assert_eq!(MAX_IMM_PAYL_MASK, 0x0fff_ffff);
        assert_eq!(ImmType::IoReq as u8, 0);
        assert_eq!(ImmType::IoRsp as u8, 1);
        assert_eq!(ImmType::IoRspWInv as u8, 2);
        assert_eq!(ImmType::HbMsg as u8, 8);
        assert_eq!(ImmType::HbAck as u8, 9);
        // Ours, of RTRS 2.1, in types C does not use.
        assert_eq!(ImmType::Fence as u8, 4);
        assert_eq!(ImmType::FenceAck as u8, 5);
        for t in [0u32, 1, 2, 4, 5, 8, 9] {
            assert_eq!(ImmType::from_u32(t).map(|t| t as u32), Some(t));
        }
        for t in [3u32, 6, 7, 10, 15, 16] {
            assert_eq!(ImmType::from_u32(t), None);
        }
    }

    #[test]
    fn raw_packing() {
        assert_eq!(to_imm(9, 0), 0x9000_0000);
        assert_eq!(to_imm(0x1f, 0xffff_ffff), 0xffff_ffff);
        assert_eq!(to_imm(1, 0x1000_0001), 0x1000_0001);
        assert_eq!(from_imm(0x9123_4567), (9, 0x0123_4567));
        assert_eq!(from_imm(0), (0, 0));
    }

    #[test]
    fn exact_encodings() {
        // rtrs_to_imm(RTRS_HB_MSG_IMM, 0), rtrs_to_imm(RTRS_HB_ACK_IMM, 0)
        assert_eq!(Imm::HbMsg.encode(), 0x8000_0000);
        assert_eq!(Imm::HbAck.encode(), 0x9000_0000);
        // rtrs_to_io_rsp_imm(5, -EIO, false): (5 << 19) | 5 in type 1
        assert_eq!(
            Imm::io_rsp(5, -5, false).encode(),
            0x1000_0000 | (5 << 19) | 5
        );
        // rtrs_to_io_rsp_imm(0x7ffff, -511, true)
        assert_eq!(Imm::io_rsp(0x7ffff, -511, true).encode(), 0x2fff_ffff);
        // rtrs_to_io_rsp_imm(0, 0, false)
        assert_eq!(Imm::io_rsp(0, 0, false).encode(), 0x1000_0000);
        assert_eq!(
            Imm::IoReq {
                payload: 0x0abc_def0
            }
            .encode(),
            0x0abc_def0
        );
    }

    #[test]
    fn io_rsp_masks_like_c() {
        // abs(errno) & 0x1ff, msg_id & 0x7ffff
        assert_eq!(
            Imm::io_rsp(0x8_0001, -512 - 7, false),
            Imm::IoRsp {
                msg_id: 1,
                errno: -7,
                w_inval: false
            }
        );
        assert_eq!(
            Imm::io_rsp(3, 22, true),
            Imm::IoRsp {
                msg_id: 3,
                errno: -22,
                w_inval: true
            }
        );
        assert_eq!(
            Imm::io_rsp(3, i32::MIN, false),
            Imm::IoRsp {
                msg_id: 3,
                errno: 0,
                w_inval: false
            }
        );
        // encode masks pub fields set directly, too.
        let raw = Imm::IoRsp {
            msg_id: 0xff_ffff,
            errno: 1024 + 12,
            w_inval: false,
        };
        assert_eq!(Imm::decode(raw.encode()), Imm::io_rsp(0x7ffff, -12, false));
    }

    #[test]
    fn decode_every_type() {
        assert_eq!(
            Imm::decode(0x0123_4567),
            Imm::IoReq {
                payload: 0x0123_4567
            }
        );
        assert_eq!(
            Imm::decode(0x1000_0000 | (110 << 19) | 42),
            Imm::IoRsp {
                msg_id: 42,
                errno: -110,
                w_inval: false
            }
        );
        assert_eq!(
            Imm::decode(0x2000_0000 | 42),
            Imm::IoRsp {
                msg_id: 42,
                errno: 0,
                w_inval: true
            }
        );
        assert_eq!(Imm::decode(0x8000_0000), Imm::HbMsg);
        assert_eq!(Imm::decode(0x8000_0001), Imm::HbMsg);
        assert_eq!(Imm::decode(0x9fff_ffff), Imm::HbAck);
        assert_eq!(Imm::decode(0x3000_0007), Imm::Unknown { ty: 3, payload: 7 });
        assert_eq!(
            Imm::decode(0xffff_ffff),
            Imm::Unknown {
                ty: 15,
                payload: MAX_IMM_PAYL_MASK
            }
        );
    }

    #[test]
    fn round_trips() {
        let samples = [
            Imm::IoReq { payload: 0 },
            Imm::IoReq {
                payload: MAX_IMM_PAYL_MASK,
            },
            Imm::io_rsp(0, 0, false),
            Imm::io_rsp(0, 0, true),
            Imm::io_rsp(IO_RSP_MSG_ID_MASK, -(IO_RSP_ERRNO_MAX as i32), false),
            Imm::io_rsp(IO_RSP_MSG_ID_MASK, -(IO_RSP_ERRNO_MAX as i32), true),
            Imm::io_rsp(65534, -5, true),
            Imm::HbMsg,
            Imm::HbAck,
            Imm::Unknown { ty: 3, payload: 0 },
            Imm::Unknown {
                ty: 15,
                payload: MAX_IMM_PAYL_MASK,
            },
        ];
        for imm in samples {
            assert_eq!(Imm::decode(imm.encode()), imm, "{imm:?}");
        }
        for imm in [
            Imm::Fence {
                path_id: 0xffff,
                seq: 0xfff,
            },
            Imm::Fence { path_id: 1, seq: 0 },
            Imm::FenceAck { path_id: 3, seq: 7 },
        ] {
            assert_eq!(Imm::decode(imm.encode()), imm, "{imm:?}");
        }
        assert_eq!(
            Imm::Fence {
                path_id: 0x1234,
                seq: 0x56
            }
            .encode(),
            0x4123_4056
        );
        // Every type and payload edge: decode then encode is the identity,
        // except for the ignored heartbeat payloads.
        for ty in 0..16u32 {
            for payload in [0, 1, 0x7ffff, 0x80000, 0x0fff_fffe, MAX_IMM_PAYL_MASK] {
                let raw = to_imm(ty, payload);
                let want = match ty {
                    8 | 9 => to_imm(ty, 0),
                    _ => raw,
                };
                assert_eq!(Imm::decode(raw).encode(), want, "{raw:#x}");
            }
        }
    }

    #[test]
    fn imm_bits_is_ilog2_plus_one() {
        assert_eq!(imm_bits(0), 32);
        assert_eq!(imm_bits(1), 0);
        assert_eq!(imm_bits(2), 1);
        assert_eq!(imm_bits(3), 2);
        assert_eq!(imm_bits(4), 2);
        assert_eq!(imm_bits(5), 3);
        assert_eq!(imm_bits(512), 9);
        assert_eq!(imm_bits(513), 10);
        assert_eq!(imm_bits(65535), 16);
        assert_eq!(imm_bits(128 << 10), 17);
        assert_eq!(imm_bits(u32::MAX), 32);
        assert!(imm_fits(512, 128 << 10));
        assert!(imm_fits(2048, 128 << 10));
        assert!(!imm_fits(2049, 128 << 10));
        assert!(!imm_fits(0, 1));
    }

    #[test]
    fn server_params_like_check_module_params() {
        assert_eq!(DEFAULT_MAX_CHUNK_SIZE, 131072);
        assert_eq!(
            check_chunk_params(
                DEFAULT_SESS_QUEUE_DEPTH as i32,
                DEFAULT_MAX_CHUNK_SIZE as i32
            ),
            Ok(())
        );
        use BadChunkParams::*;
        assert_eq!(check_chunk_params(0, 131072), Err(QueueDepth));
        assert_eq!(check_chunk_params(-1, 131072), Err(QueueDepth));
        assert_eq!(check_chunk_params(65536, 8192), Err(QueueDepth));
        // C checks the depth first.
        assert_eq!(check_chunk_params(0, 4096), Err(QueueDepth));
        assert_eq!(check_chunk_params(65535, 4096), Err(ChunkSize));
        assert_eq!(check_chunk_params(512, 8192 + 4096), Err(ChunkSize));
        assert_eq!(check_chunk_params(512, -8192), Err(ChunkSize));
        // 16 bits of chunk id leave 12 for the offset: 8 KiB does not fit.
        assert_eq!(check_chunk_params(65535, 8192), Err(ImmBits));
        assert_eq!(check_chunk_params(32768, 8192), Ok(()));
        assert_eq!(check_chunk_params(1, 1 << 28), Ok(()));
        assert_eq!(check_chunk_params(2, 1 << 28), Err(ImmBits));
        assert_eq!(ImmBits.errno(), Error::Inval);
    }

    #[test]
    fn chunk_layout_splits_like_client_and_server() {
        // Queue depth 512: 9 bits of chunk id, 19 bits of offset.
        let l = ChunkLayout::new(512).unwrap();
        assert_eq!(l.mem_bits(), 19);
        assert_eq!(l.mem_off(3), 3 << 19);
        let imm = l.io_req_imm(3, 0x1234).unwrap();
        assert_eq!(imm, (3 << 19) | 0x1234);
        assert_eq!(Imm::decode(imm), Imm::IoReq { payload: imm });
        assert_eq!(l.split(imm), (3, 0x1234));
        assert_eq!(l.split_checked(imm, 512, 128 << 10), Ok((3, 0x1234)));
        assert_eq!(l.split_checked(imm, 3, 128 << 10), Err(Error::Inval));
        assert_eq!(l.split_checked(imm, 512, 0x1234), Err(Error::Inval));
        // The largest id and offset.
        let imm = l.io_req_imm(511, (1 << 19) - 1).unwrap();
        assert_eq!(imm, MAX_IMM_PAYL_MASK);
        assert_eq!(l.split(imm), (511, (1 << 19) - 1));
        assert_eq!(l.io_req_imm(512, 0), Err(Error::Inval));
        assert_eq!(l.io_req_imm(0, 1 << 19), Err(Error::Inval));
        // Queue depth 1: the offset has all 28 bits.
        let l = ChunkLayout::new(1).unwrap();
        assert_eq!(l.mem_bits(), 28);
        assert_eq!(l.split(MAX_IMM_PAYL_MASK), (0, MAX_IMM_PAYL_MASK));
        assert_eq!(l.io_req_imm(0, MAX_IMM_PAYL_MASK), Ok(MAX_IMM_PAYL_MASK));
        assert_eq!(l.io_req_imm(1, 0), Err(Error::Inval));
        // Queue depth 65535: 16 bits of id, 12 of offset.
        let l = ChunkLayout::new(65535).unwrap();
        assert_eq!(l.mem_bits(), 12);
        assert_eq!(l.split(0xffff_ffff), (0xffff, 0xfff));
        assert_eq!(ChunkLayout::new(0), Err(Error::Inval));
        assert_eq!(ChunkLayout::new(65536), Err(Error::Inval));
    }
}
