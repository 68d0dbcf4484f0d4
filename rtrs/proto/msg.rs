// SPDX-License-Identifier: GPL-2.0-or-later

//! The RTRS wire messages of protocol 2.0 (`rtrs-pri.h`), byte for byte.
//!
//! Every message has a `SIZE` equal to the C `sizeof`, an `encode` that
//! writes all its little-endian fields at the C offsets (reserved bytes
//! zeroed) and a `decode` that checks what the C receiver checks. Messages
//! with a descriptor array decode into a view that borrows the buffer.

use super::error::Error;

/// Major protocol version (`RTRS_PROTO_VER_MAJOR`); peers with another
/// major version are refused.
pub const PROTO_VER_MAJOR: u16 = 2;
/// Minor protocol version (`RTRS_PROTO_VER_MINOR`); not checked by peers.
pub const PROTO_VER_MINOR: u16 = 0;
/// The version word sent in connection messages (`RTRS_PROTO_VER`).
pub const PROTO_VER: u16 = (PROTO_VER_MAJOR << 8) | PROTO_VER_MINOR;
/// The version as the C module prints it (`RTRS_PROTO_VER_STRING`).
pub const PROTO_VER_STRING: &str = "2.0";
/// Magic of the connection request and response (`RTRS_MAGIC`).
pub const MAGIC: u16 = 0x1BBD;

/// Largest session queue depth: it travels in a `__le16`
/// (`MAX_SESS_QUEUE_DEPTH`).
pub const MAX_SESS_QUEUE_DEPTH: u32 = 65535;
/// Receive queue depth of the service (user message) connection, cid 0
/// (`SERVICE_CON_QUEUE_DEPTH`).
pub const SERVICE_CON_QUEUE_DEPTH: u32 = 512;
/// Most paths a session may have (`MAX_PATHS_NUM`).
pub const MAX_PATHS_NUM: usize = 128;
/// Smallest server chunk size (`MIN_CHUNK_SIZE`).
pub const MIN_CHUNK_SIZE: u32 = 8192;
/// Most connections per path the server accepts in a connection request
/// (the "sanity check" of `rtrs_rdma_connect()`).
pub const MAX_CONN_NUM: u16 = 4096;
/// `NAME_MAX`: the size of the path name field and of the C `sessname`
/// buffers.
pub const NAME_MAX: usize = 255;
/// Longest path (session) name: `NAME_MAX` bytes including the C NUL.
pub const MAX_PATHNAME_LEN: usize = NAME_MAX - 1;

/// `RTRS_MSG_NEED_INVAL_F`: in [`RdmaRead::flags`], the client asks the
/// server to invalidate its rkey with the response.
pub const MSG_NEED_INVAL_F: u16 = 1 << 0;
/// `RTRS_MSG_NEW_RKEY_F`: in [`ConnRsp::flags`], the server runs with
/// `always_invalidate` and sends an [`RkeyRsp`] with every IO response.
pub const MSG_NEW_RKEY_F: u32 = 1 << 1;

/// A UUID as it travels (`uuid_t`: 16 bytes, no byte swapping).
pub type Uuid = [u8; 16];

/// The message types of the IO and info messages (`enum rtrs_msg_types`),
/// carried in the first `__le16` of each message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u16)]
pub enum MsgType {
    /// `RTRS_MSG_INFO_REQ`: client asks for the server's buffers.
    InfoReq = 0,
    /// `RTRS_MSG_INFO_RSP`: server describes its buffers.
    InfoRsp = 1,
    /// `RTRS_MSG_WRITE`: client wrote data into a server chunk.
    Write = 2,
    /// `RTRS_MSG_READ`: client asks the server to write data back.
    Read = 3,
    /// `RTRS_MSG_RKEY_RSP`: server sends the refreshed rkey of a chunk.
    RkeyRsp = 4,
}

impl MsgType {
    /// The type with wire value `v`, if there is one.
    pub const fn from_u16(v: u16) -> Option<Self> {
        match v {
            0 => Some(MsgType::InfoReq),
            1 => Some(MsgType::InfoRsp),
            2 => Some(MsgType::Write),
            3 => Some(MsgType::Read),
            4 => Some(MsgType::RkeyRsp),
            _ => None,
        }
    }

    /// The wire value.
    pub const fn as_u16(self) -> u16 {
        self as u16
    }

    /// The type of the message at the start of `buf` (`struct
    /// rtrs_msg_rdma_hdr`): [`Error::MsgSize`] if `buf` is shorter than two
    /// bytes, [`Error::Inval`] for an unknown type.
    pub fn peek(buf: &[u8]) -> Result<Self, Error> {
        Self::from_u16(get_u16(buf, 0)?).ok_or(Error::Inval)
    }
}

// Little-endian field access. Every accessor is bounds-checked and returns
// `Error::MsgSize` instead of panicking, although the callers check the
// length once up front.

fn get_array<const W: usize>(buf: &[u8], off: usize) -> Result<[u8; W], Error> {
    let end = off.checked_add(W).ok_or(Error::MsgSize)?;
    let bytes = buf.get(off..end).ok_or(Error::MsgSize)?;
    <[u8; W]>::try_from(bytes).map_err(|_| Error::MsgSize)
}

fn get_u16(buf: &[u8], off: usize) -> Result<u16, Error> {
    get_array(buf, off).map(u16::from_le_bytes)
}

fn get_u32(buf: &[u8], off: usize) -> Result<u32, Error> {
    get_array(buf, off).map(u32::from_le_bytes)
}

fn get_u64(buf: &[u8], off: usize) -> Result<u64, Error> {
    get_array(buf, off).map(u64::from_le_bytes)
}

fn put(buf: &mut [u8], off: usize, bytes: &[u8]) -> Result<(), Error> {
    let end = off.checked_add(bytes.len()).ok_or(Error::MsgSize)?;
    buf.get_mut(off..end)
        .ok_or(Error::MsgSize)?
        .copy_from_slice(bytes);
    Ok(())
}

/// The first `size` bytes of `buf`, zeroed, ready for the fields.
fn zeroed(buf: &mut [u8], size: usize) -> Result<&mut [u8], Error> {
    let out = buf.get_mut(..size).ok_or(Error::MsgSize)?;
    out.fill(0);
    Ok(out)
}

/// Checks that `buf` holds at least `size` bytes and starts with `ty`.
fn check_hdr(buf: &[u8], size: usize, ty: MsgType) -> Result<(), Error> {
    if buf.len() < size {
        return Err(Error::MsgSize);
    }
    if get_u16(buf, 0)? != ty.as_u16() {
        return Err(Error::Inval);
    }
    Ok(())
}

/// Size of a message of `hdr` bytes followed by `sg_cnt` descriptors.
fn size_with_descs(hdr: usize, sg_cnt: usize) -> Option<usize> {
    sg_cnt.checked_mul(SgDesc::SIZE)?.checked_add(hdr)
}

/// An RDMA buffer descriptor (`struct rtrs_sg_desc`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SgDesc {
    /// Address of the remote buffer.
    pub addr: u64,
    /// rkey that grants access to it.
    pub key: u32,
    /// Its length in bytes.
    pub len: u32,
}

impl SgDesc {
    /// `sizeof(struct rtrs_sg_desc)`.
    pub const SIZE: usize = 16;

    /// Writes the descriptor into the first [`Self::SIZE`] bytes of `buf`.
    pub fn encode(&self, buf: &mut [u8]) -> Result<usize, Error> {
        let b = zeroed(buf, Self::SIZE)?;
        put(b, 0, &self.addr.to_le_bytes())?;
        put(b, 8, &self.key.to_le_bytes())?;
        put(b, 12, &self.len.to_le_bytes())?;
        Ok(Self::SIZE)
    }

    /// Reads a descriptor from the first [`Self::SIZE`] bytes of `buf`.
    pub fn decode(buf: &[u8]) -> Result<Self, Error> {
        Ok(SgDesc {
            addr: get_u64(buf, 0)?,
            key: get_u32(buf, 8)?,
            len: get_u32(buf, 12)?,
        })
    }
}

/// A list of [`SgDesc`]: either borrowed from a received buffer (what
/// `decode` returns) or from a slice (what a sender builds).
#[derive(Clone, Copy, Debug)]
pub struct SgList<'a>(SgRepr<'a>);

#[derive(Clone, Copy, Debug)]
enum SgRepr<'a> {
    /// Wire bytes, a multiple of `SgDesc::SIZE` long.
    Wire(&'a [u8]),
    Descs(&'a [SgDesc]),
}

impl<'a> SgList<'a> {
    /// A list over the descriptors of `descs`.
    pub const fn new(descs: &'a [SgDesc]) -> Self {
        SgList(SgRepr::Descs(descs))
    }

    /// The empty list.
    pub const fn empty() -> Self {
        SgList(SgRepr::Descs(&[]))
    }

    /// The first `sg_cnt` descriptors on the wire in `buf`.
    fn from_wire(buf: &'a [u8], sg_cnt: usize) -> Result<Self, Error> {
        let len = size_with_descs(0, sg_cnt).ok_or(Error::MsgSize)?;
        Ok(SgList(SgRepr::Wire(buf.get(..len).ok_or(Error::MsgSize)?)))
    }

    /// Number of descriptors.
    pub fn len(&self) -> usize {
        match self.0 {
            SgRepr::Wire(bytes) => bytes.len() / SgDesc::SIZE,
            SgRepr::Descs(descs) => descs.len(),
        }
    }

    /// Whether the list has no descriptor.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Descriptor `i`, if `i < len()`.
    pub fn get(&self, i: usize) -> Option<SgDesc> {
        match self.0 {
            SgRepr::Wire(bytes) => {
                if i >= self.len() {
                    return None;
                }
                let off = i.checked_mul(SgDesc::SIZE)?;
                SgDesc::decode(bytes.get(off..)?).ok()
            }
            SgRepr::Descs(descs) => descs.get(i).copied(),
        }
    }

    /// Iterates over the descriptors in order.
    pub fn iter(&self) -> SgIter<'a> {
        SgIter {
            list: *self,
            next: 0,
        }
    }

    /// Writes the descriptors one after the other at the start of `buf`.
    fn encode(&self, buf: &mut [u8]) -> Result<usize, Error> {
        let mut off = 0usize;
        for desc in self.iter() {
            off = off
                .checked_add(desc.encode(buf.get_mut(off..).ok_or(Error::MsgSize)?)?)
                .ok_or(Error::MsgSize)?;
        }
        Ok(off)
    }
}

impl PartialEq for SgList<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl Eq for SgList<'_> {}

impl<'a> IntoIterator for SgList<'a> {
    type Item = SgDesc;
    type IntoIter = SgIter<'a>;

    fn into_iter(self) -> SgIter<'a> {
        self.iter()
    }
}

/// Iterator over the descriptors of an [`SgList`].
#[derive(Clone, Debug)]
pub struct SgIter<'a> {
    list: SgList<'a>,
    next: usize,
}

impl Iterator for SgIter<'_> {
    type Item = SgDesc;

    fn next(&mut self) -> Option<SgDesc> {
        let desc = self.list.get(self.next)?;
        self.next = self.next.saturating_add(1);
        Some(desc)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.list.len().saturating_sub(self.next);
        (left, Some(left))
    }
}

impl ExactSizeIterator for SgIter<'_> {}

/// Connection request, the private data of `rdma_connect()` for every
/// connection of a path (`struct rtrs_msg_conn_req`).
///
/// The first two bytes belong to the RDMA CM (`__cma_version`,
/// `__ip_version`): we send zeros and ignore what arrives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConnReq {
    /// Protocol version of the client, normally [`PROTO_VER`].
    pub version: u16,
    /// Id of this connection within the path, `0..cid_num`.
    pub cid: u16,
    /// Number of connections of the path.
    pub cid_num: u16,
    /// Reconnect counter of the path.
    pub recon_cnt: u16,
    /// UUID of the path (`sess_uuid` in C).
    pub sess_uuid: Uuid,
    /// UUID of the session, shared by all its paths (`paths_uuid`).
    pub paths_uuid: Uuid,
    /// Set on the connections of the first path of a new session: the
    /// server creates the session instead of failing with `ENXIO`.
    pub first_conn: bool,
}

impl ConnReq {
    /// `sizeof(struct rtrs_msg_conn_req)`.
    pub const SIZE: usize = 56;

    /// Writes the request; the CM bytes and all reserved bits are zero.
    pub fn encode(&self, buf: &mut [u8]) -> Result<usize, Error> {
        let b = zeroed(buf, Self::SIZE)?;
        put(b, 2, &MAGIC.to_le_bytes())?;
        put(b, 4, &self.version.to_le_bytes())?;
        put(b, 6, &self.cid.to_le_bytes())?;
        put(b, 8, &self.cid_num.to_le_bytes())?;
        put(b, 10, &self.recon_cnt.to_le_bytes())?;
        put(b, 12, &self.sess_uuid)?;
        put(b, 28, &self.paths_uuid)?;
        // `u8 first_conn : 1` is bit 0 of byte 44 as GCC lays out
        // bitfields on little-endian machines.
        put(b, 44, &[u8::from(self.first_conn)])?;
        Ok(Self::SIZE)
    }

    /// Reads a request as the server does (`rtrs_rdma_connect()`): every
    /// failure is [`Error::ConnReset`], the errno the C server rejects
    /// with. Checked: length, magic, major version, `cid_num <=`
    /// [`MAX_CONN_NUM`] and `cid < cid_num`. Reserved bits are ignored.
    pub fn decode(buf: &[u8]) -> Result<Self, Error> {
        Self::check(buf).map_err(|_| Error::ConnReset)
    }

    /// As [`ConnReq::decode`], in the order `rtrs_rdma_connect()` checks,
    /// naming the first fault for the server's log.
    pub fn check(buf: &[u8]) -> Result<Self, ConnReqFault> {
        let field = |off| get_u16(buf, off).map_err(|_| ConnReqFault::Short);
        if buf.len() < Self::SIZE {
            return Err(ConnReqFault::Short);
        }
        if field(2)? != MAGIC {
            return Err(ConnReqFault::Magic);
        }
        let req = ConnReq {
            version: field(4)?,
            cid: field(6)?,
            cid_num: field(8)?,
            recon_cnt: field(10)?,
            sess_uuid: get_array(buf, 12).map_err(|_| ConnReqFault::Short)?,
            paths_uuid: get_array(buf, 28).map_err(|_| ConnReqFault::Short)?,
            first_conn: get_array::<1>(buf, 44).map_err(|_| ConnReqFault::Short)?[0] & 1 != 0,
        };
        if req.version >> 8 != PROTO_VER_MAJOR {
            return Err(ConnReqFault::Version(req.version >> 8));
        }
        if req.cid_num > MAX_CONN_NUM {
            return Err(ConnReqFault::TooManyCons(req.cid_num));
        }
        if req.cid >= req.cid_num {
            return Err(ConnReqFault::Cid(req.cid, req.cid_num));
        }
        Ok(req)
    }
}

/// Why a server refuses a [`ConnReq`] (all with `ECONNRESET`), as the C
/// server tells apart in its log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConnReqFault {
    /// Shorter than [`ConnReq::SIZE`].
    Short,
    /// Not [`MAGIC`].
    Magic,
    /// This major version, not [`PROTO_VER_MAJOR`].
    Version(u16),
    /// `cid_num` above [`MAX_CONN_NUM`].
    TooManyCons(u16),
    /// `cid >= cid_num`: the two.
    Cid(u16, u16),
}

/// Why the server refuses an IO request found in a chunk
/// ([`IoReq::check`]); each closes the path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IoReqFault {
    /// A type other than read or write: the type.
    UnknownType(u16),
    /// The message does not fit between its offset and the chunk's end.
    PastChunk,
    /// A read with `sg_cnt` other than 0 or 1: the count.
    SgCnt(u16),
    /// The user message is longer than the offset: `usr_len`.
    UsrLen(u16),
}

/// An IO request as the server finds it at offset `off` of a chunk of
/// `chunk_size` bytes: `buf` holds what of the chunk follows `off` (at most
/// the largest request, a read with one descriptor).
pub struct IoReq;

impl IoReq {
    /// The largest request: a read with one descriptor.
    pub const MAX_SIZE: usize = RdmaRead::SIZE + SgDesc::SIZE;

    /// Decodes and checks the request at `off` (`process_io_req()`,
    /// `process_read()`, `process_write()`): its type, that it lies inside
    /// the chunk, a read's `sg_cnt`, and `usr_len <= off`. C drops a read
    /// with a bad `sg_cnt` and any request with `usr_len > off` without an
    /// answer, and reads a request that runs past the chunk from the
    /// memory after it; the caller closes the path on each.
    pub fn check(buf: &[u8], off: u32) -> Result<RdmaMsg<'_>, IoReqFault> {
        let msg = match MsgType::peek(buf) {
            Err(Error::MsgSize) => return Err(IoReqFault::PastChunk),
            Ok(MsgType::Write) => RdmaWrite::decode(buf).map(RdmaMsg::Write),
            Ok(MsgType::Read) => RdmaRead::decode(buf).map(RdmaMsg::Read),
            _ => return Err(IoReqFault::UnknownType(get_u16(buf, 0).unwrap_or(0))),
        };
        let msg = msg.map_err(|e| match e {
            Error::MsgSize => IoReqFault::PastChunk,
            _ => IoReqFault::SgCnt(get_u16(buf, 6).unwrap_or(0)),
        })?;
        let usr_len = match &msg {
            RdmaMsg::Write(w) => w.usr_len,
            RdmaMsg::Read(r) => r.usr_len,
        };
        if u32::from(usr_len) > off {
            return Err(IoReqFault::UsrLen(usr_len));
        }
        Ok(msg)
    }
}

/// Connection response, the private data of `rdma_accept()` and
/// `rdma_reject()` (`struct rtrs_msg_conn_rsp`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConnRsp {
    /// Protocol version of the server, normally [`PROTO_VER`].
    pub version: u16,
    /// 0 when accepting; the negative errno when rejecting (the C server
    /// stores the `int` errno truncated to 16 bits).
    pub errno: i16,
    /// Number of chunks of the session (its queue depth).
    pub queue_depth: u16,
    /// Largest IO the server takes (`max_chunk_size - MAX_HDR_SIZE`).
    pub max_io_size: u32,
    /// Largest header (user message + RTRS message) the server takes.
    pub max_hdr_size: u32,
    /// [`MSG_NEW_RKEY_F`], and in RTRS 2.1 [`super::ext::MSG_FENCE_F`].
    pub flags: u32,
    /// In RTRS 2.1, the server's id of the path (the first two reserved
    /// bytes of 2.0, which C leaves zero and does not read); else 0.
    pub path_id: u16,
}

impl ConnRsp {
    /// `sizeof(struct rtrs_msg_conn_rsp)`.
    pub const SIZE: usize = 56;

    /// The response of an accepted connection (`rtrs_rdma_do_accept()`).
    pub const fn accept(
        queue_depth: u16,
        max_io_size: u32,
        max_hdr_size: u32,
        new_rkey: bool,
    ) -> Self {
        ConnRsp {
            version: PROTO_VER,
            errno: 0,
            queue_depth,
            max_io_size,
            max_hdr_size,
            flags: if new_rkey { MSG_NEW_RKEY_F } else { 0 },
            path_id: 0,
        }
    }

    /// The response of a rejected connection (`rtrs_rdma_do_reject()`):
    /// `errno` is the negative kernel errno, kept in 16 bits as C does.
    pub const fn reject(errno: i32) -> Self {
        ConnRsp {
            version: PROTO_VER,
            errno: errno as i16,
            queue_depth: 0,
            max_io_size: 0,
            max_hdr_size: 0,
            flags: 0,
            path_id: 0,
        }
    }

    /// Writes the response; the reserved bytes are zero.
    pub fn encode(&self, buf: &mut [u8]) -> Result<usize, Error> {
        let b = zeroed(buf, Self::SIZE)?;
        put(b, 0, &MAGIC.to_le_bytes())?;
        put(b, 2, &self.version.to_le_bytes())?;
        put(b, 4, &self.errno.to_le_bytes())?;
        put(b, 6, &self.queue_depth.to_le_bytes())?;
        put(b, 8, &self.max_io_size.to_le_bytes())?;
        put(b, 12, &self.max_hdr_size.to_le_bytes())?;
        put(b, 16, &self.flags.to_le_bytes())?;
        put(b, 20, &self.path_id.to_le_bytes())?;
        Ok(Self::SIZE)
    }

    /// Reads the response of an established connection as the client does
    /// (`rtrs_rdma_conn_established()`): length, magic and major version,
    /// each failure being [`Error::ConnReset`]. A non-zero `errno` is left
    /// to [`ConnRsp::check_accepted`].
    pub fn decode(buf: &[u8]) -> Result<Self, Error> {
        Self::parse(buf).map_err(|_| Error::ConnReset)
    }

    fn parse(buf: &[u8]) -> Result<Self, Error> {
        if buf.len() < Self::SIZE || get_u16(buf, 0)? != MAGIC {
            return Err(Error::ConnReset);
        }
        let rsp = ConnRsp {
            version: get_u16(buf, 2)?,
            errno: get_u16(buf, 4)? as i16,
            queue_depth: get_u16(buf, 6)?,
            max_io_size: get_u32(buf, 8)?,
            max_hdr_size: get_u32(buf, 12)?,
            flags: get_u32(buf, 16)?,
            path_id: get_u16(buf, 20)?,
        };
        if rsp.version >> 8 != PROTO_VER_MAJOR {
            return Err(Error::ConnReset);
        }
        Ok(rsp)
    }

    /// [`Error::ConnReset`] if an established connection's response carries
    /// an errno, as `rtrs_rdma_conn_established()` refuses it.
    pub fn check_accepted(&self) -> Result<(), Error> {
        if self.errno != 0 {
            return Err(Error::ConnReset);
        }
        Ok(())
    }

    /// [`Error::ConnReset`] if the parameters a path learns from its first
    /// connection's response leave it no chunk: a queue depth of 0 (C
    /// takes it, and fails at the INFO_RSP, for which it then has a
    /// receive buffer too small for any descriptor).
    pub fn check_params(&self) -> Result<(), Error> {
        if self.queue_depth == 0 {
            return Err(Error::ConnReset);
        }
        Ok(())
    }

    /// The errno of a rejected connection, from the consumer reject data
    /// (`rtrs_rdma_conn_rejected()`): the sign-extended `errno` field when
    /// the data holds a whole response (magic and version are not
    /// checked), else `-ECONNRESET`. Note that, as in C, a response with
    /// `errno` 0 gives 0.
    pub fn reject_errno(private_data: &[u8]) -> i32 {
        if private_data.len() < Self::SIZE {
            return Error::ConnReset.to_errno();
        }
        match get_u16(private_data, 4) {
            Ok(v) => i32::from(v as i16),
            Err(_) => Error::ConnReset.to_errno(),
        }
    }

    /// Whether the server sends an [`RkeyRsp`] with each IO response.
    pub const fn new_rkey(&self) -> bool {
        self.flags & MSG_NEW_RKEY_F != 0
    }

    /// The chunk size the client derives: `max_io_size + max_hdr_size` in
    /// the 32 bits of `clt_path->chunk_size` (wrapping as C does).
    pub const fn chunk_size(&self) -> u32 {
        self.max_io_size.wrapping_add(self.max_hdr_size)
    }
}

/// Checks a path (session) name as both C sides do (`rtrs_clt_open()`,
/// `process_info_req()`): it may contain neither `/` nor `.`, since it
/// names a sysfs directory.
pub fn check_pathname(name: &[u8]) -> Result<(), Error> {
    if name.iter().any(|&c| c == b'/' || c == b'.') {
        return Err(Error::Inval);
    }
    Ok(())
}

/// Info request: the client sends its path name once all connections of
/// a path are up (`struct rtrs_msg_info_req`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InfoReq {
    /// The name, NUL padded; at most [`MAX_PATHNAME_LEN`] bytes before the
    /// first NUL.
    pathname: [u8; NAME_MAX],
}

impl InfoReq {
    /// `sizeof(struct rtrs_msg_info_req)`.
    pub const SIZE: usize = 272;

    /// A request for `pathname`: [`Error::Inval`] if it is longer than
    /// [`MAX_PATHNAME_LEN`] or contains a NUL.
    pub fn new(pathname: &[u8]) -> Result<Self, Error> {
        if pathname.len() > MAX_PATHNAME_LEN || pathname.contains(&0) {
            return Err(Error::Inval);
        }
        let mut field = [0u8; NAME_MAX];
        field
            .get_mut(..pathname.len())
            .ok_or(Error::Inval)?
            .copy_from_slice(pathname);
        Ok(InfoReq { pathname: field })
    }

    /// The path name, without the NUL padding.
    pub fn pathname(&self) -> &[u8] {
        let len = self
            .pathname
            .iter()
            .position(|&c| c == 0)
            .unwrap_or(NAME_MAX);
        self.pathname.get(..len).unwrap_or_default()
    }

    /// Writes the request; padding and reserved bytes are zero.
    pub fn encode(&self, buf: &mut [u8]) -> Result<usize, Error> {
        let b = zeroed(buf, Self::SIZE)?;
        put(b, 0, &MsgType::InfoReq.as_u16().to_le_bytes())?;
        put(b, 2, &self.pathname)?;
        Ok(Self::SIZE)
    }

    /// Reads a request as the server does (`rtrs_srv_info_req_done()`,
    /// `process_info_req()`): [`Error::MsgSize`] if short, [`Error::Inval`]
    /// for another type, a name without a NUL in its 255 bytes (C would
    /// scan on into the reserved bytes) or a name with `/` or `.`.
    pub fn decode(buf: &[u8]) -> Result<Self, Error> {
        check_hdr(buf, Self::SIZE, MsgType::InfoReq)?;
        let pathname: [u8; NAME_MAX] = get_array(buf, 2)?;
        if !pathname.contains(&0) {
            return Err(Error::Inval);
        }
        let req = InfoReq { pathname };
        check_pathname(req.pathname())?;
        Ok(req)
    }
}

/// A server buffer as the client keeps it (`struct rtrs_rbuf`): one per
/// chunk, filled from the [`InfoRsp`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Rbuf {
    /// Remote address of the chunk.
    pub addr: u64,
    /// rkey of the chunk.
    pub rkey: u32,
}

/// Info response: the server's memory regions, which the client cuts into
/// chunks (`struct rtrs_msg_info_rsp` and its `desc[]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InfoRsp<'a> {
    /// One descriptor per server memory region (`sg_cnt` of them).
    pub descs: SgList<'a>,
}

impl<'a> InfoRsp<'a> {
    /// `sizeof(struct rtrs_msg_info_rsp)`: the header before `desc[]`.
    pub const SIZE: usize = 8;

    /// Size on the wire of a response with `sg_cnt` descriptors.
    pub fn wire_size(sg_cnt: usize) -> Option<usize> {
        size_with_descs(Self::SIZE, sg_cnt)
    }

    /// Writes the header and the descriptors; returns the bytes written.
    /// [`Error::Inval`] if there are more than `u16::MAX` descriptors.
    pub fn encode(&self, buf: &mut [u8]) -> Result<usize, Error> {
        let sg_cnt = u16::try_from(self.descs.len()).map_err(|_| Error::Inval)?;
        let size = Self::wire_size(self.descs.len()).ok_or(Error::MsgSize)?;
        let b = zeroed(buf, size)?;
        put(b, 0, &MsgType::InfoRsp.as_u16().to_le_bytes())?;
        put(b, 2, &sg_cnt.to_le_bytes())?;
        self.descs
            .encode(b.get_mut(Self::SIZE..).ok_or(Error::MsgSize)?)?;
        Ok(size)
    }

    /// Reads a response as the client does (`rtrs_clt_info_rsp_done()`):
    /// [`Error::MsgSize`] if `buf` is shorter than the header or than the
    /// `sg_cnt` descriptors it announces, [`Error::Inval`] for another type.
    pub fn decode(buf: &'a [u8]) -> Result<Self, Error> {
        check_hdr(buf, Self::SIZE, MsgType::InfoRsp)?;
        let sg_cnt = usize::from(get_u16(buf, 2)?);
        let descs = buf.get(Self::SIZE..).ok_or(Error::MsgSize)?;
        Ok(InfoRsp {
            descs: SgList::from_wire(descs, sg_cnt)?,
        })
    }

    /// Cuts the regions into `rbufs.len()` (the queue depth) chunks of
    /// `chunk_size` bytes, as `process_info_rsp()` does, with its checks,
    /// each failure being [`Error::Inval`]:
    ///
    /// - `sg_cnt` is not zero and divides the queue depth;
    /// - `sg_cnt` regions of `chunk_size` fit the IMM payload
    ///   ([`super::imm::imm_fits`]);
    /// - every region length is a non-zero multiple of `chunk_size`;
    /// - the regions map exactly all chunks, with a total length of
    ///   `chunk_size * queue_depth` (the total summed in 32 bits, as C).
    ///
    /// On error some `rbufs` may already be written, as in C.
    pub fn map_rbufs(&self, chunk_size: u32, rbufs: &mut [Rbuf]) -> Result<(), Error> {
        let sg_cnt = self.descs.len();
        let queue_depth = rbufs.len();
        // sg_cnt must be non-zero and divide the queue depth.
        if queue_depth.checked_rem(sg_cnt) != Some(0) {
            return Err(Error::Inval);
        }
        let sg_cnt32 = u32::try_from(sg_cnt).map_err(|_| Error::Inval)?;
        if !super::imm::imm_fits(sg_cnt32, chunk_size) {
            return Err(Error::Inval);
        }
        let mut total_len = 0u32;
        let mut slots = rbufs.iter_mut();
        let mut mapped = 0usize;
        let mut used = 0usize;
        for desc in self.descs.iter() {
            if mapped >= queue_depth {
                break;
            }
            used += 1;
            total_len = total_len.wrapping_add(desc.len);
            if desc.len == 0 || desc.len.checked_rem(chunk_size) != Some(0) {
                return Err(Error::Inval);
            }
            let (mut len, mut addr) = (desc.len, desc.addr);
            while len != 0 {
                let Some(slot) = slots.next() else { break };
                *slot = Rbuf {
                    addr,
                    rkey: desc.key,
                };
                mapped += 1;
                // len is a non-zero multiple of chunk_size.
                len = len.saturating_sub(chunk_size);
                addr = addr.wrapping_add(u64::from(chunk_size));
            }
        }
        if used != sg_cnt || mapped != queue_depth {
            return Err(Error::Inval);
        }
        let expected = u64::from(chunk_size).checked_mul(queue_depth as u64);
        if expected != Some(u64::from(total_len)) {
            return Err(Error::Inval);
        }
        Ok(())
    }
}

/// Refreshed rkey of a chunk, sent with the IO response when the server
/// runs with `always_invalidate` (`struct rtrs_msg_rkey_rsp`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RkeyRsp {
    /// The chunk (and request) id.
    pub buf_id: u16,
    /// Its new rkey.
    pub rkey: u32,
}

impl RkeyRsp {
    /// `sizeof(struct rtrs_msg_rkey_rsp)`.
    pub const SIZE: usize = 8;

    /// Writes the message.
    pub fn encode(&self, buf: &mut [u8]) -> Result<usize, Error> {
        let b = zeroed(buf, Self::SIZE)?;
        put(b, 0, &MsgType::RkeyRsp.as_u16().to_le_bytes())?;
        put(b, 2, &self.buf_id.to_le_bytes())?;
        put(b, 4, &self.rkey.to_le_bytes())?;
        Ok(Self::SIZE)
    }

    /// Reads the message as the client does (`rtrs_clt_rkey_rsp_done()`):
    /// [`Error::MsgSize`] if short, [`Error::Inval`] for another type.
    /// `buf_id < queue_depth` is for the caller to check.
    pub fn decode(buf: &[u8]) -> Result<Self, Error> {
        check_hdr(buf, Self::SIZE, MsgType::RkeyRsp)?;
        Ok(RkeyRsp {
            buf_id: get_u16(buf, 2)?,
            rkey: get_u32(buf, 4)?,
        })
    }
}

/// The data part of a request chunk: the RTRS message sits at offset `off`
/// (from the IMM), preceded by `usr_len` bytes of user message, preceded
/// by the data. [`Error::Inval`] if `usr_len > off`, which the C server
/// drops (`process_read()`, `process_write()`).
fn data_len(off: u32, usr_len: u16) -> Result<u32, Error> {
    off.checked_sub(u32::from(usr_len)).ok_or(Error::Inval)
}

/// Write request: written by the client after the data and the user
/// message into a server chunk (`struct rtrs_msg_rdma_write`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RdmaWrite {
    /// Length of the user message before this one.
    pub usr_len: u16,
}

impl RdmaWrite {
    /// `sizeof(struct rtrs_msg_rdma_write)`.
    pub const SIZE: usize = 4;

    /// Writes the message.
    pub fn encode(&self, buf: &mut [u8]) -> Result<usize, Error> {
        let b = zeroed(buf, Self::SIZE)?;
        put(b, 0, &MsgType::Write.as_u16().to_le_bytes())?;
        put(b, 2, &self.usr_len.to_le_bytes())?;
        Ok(Self::SIZE)
    }

    /// Reads the message: [`Error::MsgSize`] if short, [`Error::Inval`]
    /// for another type.
    pub fn decode(buf: &[u8]) -> Result<Self, Error> {
        check_hdr(buf, Self::SIZE, MsgType::Write)?;
        Ok(RdmaWrite {
            usr_len: get_u16(buf, 2)?,
        })
    }

    /// Length of the data before the user message when this message is at
    /// chunk offset `off`; [`Error::Inval`] if `usr_len > off`.
    pub fn data_len(&self, off: u32) -> Result<u32, Error> {
        data_len(off, self.usr_len)
    }
}

/// Read request: written by the client after the user message into a
/// server chunk; the descriptor says where the server writes the data back
/// (`struct rtrs_msg_rdma_read`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RdmaRead<'a> {
    /// Length of the user message before this one.
    pub usr_len: u16,
    /// [`MSG_NEED_INVAL_F`] or 0.
    pub flags: u16,
    /// Client buffers for the data: none (no data) or one, the only counts
    /// the C server accepts.
    pub descs: SgList<'a>,
}

impl<'a> RdmaRead<'a> {
    /// `sizeof(struct rtrs_msg_rdma_read)`: the header before `desc[]`.
    pub const SIZE: usize = 8;
    /// Most descriptors in a read request: the C client sends 0 or 1
    /// (one fast-registered MR) and the C server drops anything else.
    pub const MAX_SG_CNT: usize = 1;

    /// Size on the wire of a request with `sg_cnt` descriptors.
    pub fn wire_size(sg_cnt: usize) -> Option<usize> {
        size_with_descs(Self::SIZE, sg_cnt)
    }

    /// Writes the message with its descriptors; returns the bytes written.
    /// [`Error::Inval`] for more than [`Self::MAX_SG_CNT`] descriptors.
    pub fn encode(&self, buf: &mut [u8]) -> Result<usize, Error> {
        let sg_cnt = self.descs.len();
        if sg_cnt > Self::MAX_SG_CNT {
            return Err(Error::Inval);
        }
        let size = Self::wire_size(sg_cnt).ok_or(Error::MsgSize)?;
        let b = zeroed(buf, size)?;
        put(b, 0, &MsgType::Read.as_u16().to_le_bytes())?;
        put(b, 2, &self.usr_len.to_le_bytes())?;
        put(b, 4, &self.flags.to_le_bytes())?;
        put(b, 6, &(sg_cnt as u16).to_le_bytes())?;
        self.descs
            .encode(b.get_mut(Self::SIZE..).ok_or(Error::MsgSize)?)?;
        Ok(size)
    }

    /// Reads the message as the server does (`process_read()`):
    /// [`Error::MsgSize`] if `buf` is shorter than the header or the
    /// descriptors, [`Error::Inval`] for another type or an `sg_cnt` above
    /// [`Self::MAX_SG_CNT`].
    pub fn decode(buf: &'a [u8]) -> Result<Self, Error> {
        check_hdr(buf, Self::SIZE, MsgType::Read)?;
        let sg_cnt = usize::from(get_u16(buf, 6)?);
        if sg_cnt > Self::MAX_SG_CNT {
            return Err(Error::Inval);
        }
        let descs = buf.get(Self::SIZE..).ok_or(Error::MsgSize)?;
        Ok(RdmaRead {
            usr_len: get_u16(buf, 2)?,
            flags: get_u16(buf, 4)?,
            descs: SgList::from_wire(descs, sg_cnt)?,
        })
    }

    /// Whether the client asks for invalidation with the response.
    pub const fn need_inval(&self) -> bool {
        self.flags & MSG_NEED_INVAL_F != 0
    }

    /// Length of the data (to be read) when this message is at chunk
    /// offset `off`; [`Error::Inval`] if `usr_len > off`.
    pub fn data_len(&self, off: u32) -> Result<u32, Error> {
        data_len(off, self.usr_len)
    }
}

/// An IO request found in a server chunk, dispatched on its type as
/// `process_io_req()` does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RdmaMsg<'a> {
    /// [`MsgType::Write`].
    Write(RdmaWrite),
    /// [`MsgType::Read`].
    Read(RdmaRead<'a>),
}

impl<'a> RdmaMsg<'a> {
    /// Reads the request at the start of `buf`; [`Error::Inval`] for a type
    /// other than write or read (the C server closes the path).
    pub fn decode(buf: &'a [u8]) -> Result<Self, Error> {
        match MsgType::peek(buf)? {
            MsgType::Write => RdmaWrite::decode(buf).map(RdmaMsg::Write),
            MsgType::Read => RdmaRead::decode(buf).map(RdmaMsg::Read),
            _ => Err(Error::Inval),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Sizes and offsets computed from rtrs-pri.h (Linux 6.12), natural
    // alignment on x86_64, and checked with gcc's sizeof/offsetof:
    //
    // struct rtrs_sg_desc      { le64 addr@0; le32 key@8; le32 len@12; }  = 16
    // struct rtrs_msg_conn_req { u8 __cma_version@0; u8 __ip_version@1;
    //     le16 magic@2, version@4, cid@6, cid_num@8, recon_cnt@10;
    //     uuid_t sess_uuid@12, paths_uuid@28; u8 first_conn:1 @44 bit 0;
    //     u8 reserved[11]@45 }                                           = 56
    // struct rtrs_msg_conn_rsp { le16 magic@0, version@2, errno@4,
    //     queue_depth@6; le32 max_io_size@8, max_hdr_size@12, flags@16;
    //     u8 reserved[36]@20 }                                           = 56
    // struct rtrs_msg_info_req { le16 type@0; u8 pathname[255]@2;
    //     u8 reserved[15]@257 }                                          = 272
    // struct rtrs_msg_info_rsp { le16 type@0, sg_cnt@2; u8 reserved[4]@4;
    //     desc[]@8 }                                                     = 8
    // struct rtrs_msg_rkey_rsp { le16 type@0, buf_id@2; le32 rkey@4 }    = 8
    // struct rtrs_msg_rdma_read { le16 type@0, usr_len@2, flags@4,
    //     sg_cnt@6; desc[]@8 }                                           = 8
    // struct rtrs_msg_rdma_write { le16 type@0, usr_len@2 }              = 4
    const C_SIZEOF_SG_DESC: usize = 16;
    const C_SIZEOF_CONN_REQ: usize = 56;
    const C_SIZEOF_CONN_RSP: usize = 56;
    const C_SIZEOF_INFO_REQ: usize = 272;
    const C_SIZEOF_INFO_RSP: usize = 8;
    const C_SIZEOF_RKEY_RSP: usize = 8;
    const C_SIZEOF_RDMA_READ: usize = 8;
    const C_SIZEOF_RDMA_WRITE: usize = 4;

    #[test]
    fn sizes_are_the_c_sizeof() {
        assert_eq!(SgDesc::SIZE, C_SIZEOF_SG_DESC);
        assert_eq!(ConnReq::SIZE, C_SIZEOF_CONN_REQ);
        assert_eq!(ConnRsp::SIZE, C_SIZEOF_CONN_RSP);
        assert_eq!(InfoReq::SIZE, C_SIZEOF_INFO_REQ);
        assert_eq!(InfoRsp::SIZE, C_SIZEOF_INFO_RSP);
        assert_eq!(RkeyRsp::SIZE, C_SIZEOF_RKEY_RSP);
        assert_eq!(RdmaRead::SIZE, C_SIZEOF_RDMA_READ);
        assert_eq!(RdmaWrite::SIZE, C_SIZEOF_RDMA_WRITE);
    }

    #[test]
    fn constants_are_rtrs_pri_h() {
        assert_eq!(PROTO_VER, 0x0200);
        assert_eq!(MAGIC, 0x1bbd);
        assert_eq!(MAX_PATHS_NUM, 128);
        assert_eq!(MIN_CHUNK_SIZE, 8192);
        assert_eq!(MAX_SESS_QUEUE_DEPTH, 65535);
        assert_eq!(SERVICE_CON_QUEUE_DEPTH, 512);
        assert_eq!(MSG_NEED_INVAL_F, 1);
        assert_eq!(MSG_NEW_RKEY_F, 2);
        assert_eq!(MAX_PATHNAME_LEN, 254);
        assert_eq!(MsgType::InfoReq.as_u16(), 0);
        assert_eq!(MsgType::InfoRsp.as_u16(), 1);
        assert_eq!(MsgType::Write.as_u16(), 2);
        assert_eq!(MsgType::Read.as_u16(), 3);
        assert_eq!(MsgType::RkeyRsp.as_u16(), 4);
        for v in 0..5u16 {
            assert_eq!(MsgType::from_u16(v).map(MsgType::as_u16), Some(v));
        }
        assert_eq!(MsgType::from_u16(5), None);
        assert_eq!(MsgType::peek(&[3, 0, 9]), Ok(MsgType::Read));
        assert_eq!(MsgType::peek(&[7, 0]), Err(Error::Inval));
        assert_eq!(MsgType::peek(&[3]), Err(Error::MsgSize));
    }

    fn uuid(base: u8) -> Uuid {
        core::array::from_fn(|i| base + i as u8)
    }

    fn conn_req() -> ConnReq {
        ConnReq {
            version: PROTO_VER,
            cid: 0x0102,
            cid_num: 0x0203,
            recon_cnt: 0x0a0b,
            sess_uuid: uuid(0x10),
            paths_uuid: uuid(0x40),
            first_conn: true,
        }
    }

    #[test]
    fn conn_req_layout() {
        let mut buf = [0xffu8; 64];
        assert_eq!(conn_req().encode(&mut buf), Ok(56));
        let mut want = [0u8; 56];
        want[2..4].copy_from_slice(&[0xbd, 0x1b]); // magic
        want[4..6].copy_from_slice(&[0x00, 0x02]); // version 2.0
        want[6..8].copy_from_slice(&[0x02, 0x01]); // cid
        want[8..10].copy_from_slice(&[0x03, 0x02]); // cid_num
        want[10..12].copy_from_slice(&[0x0b, 0x0a]); // recon_cnt
        want[12..28].copy_from_slice(&uuid(0x10)); // sess_uuid
        want[28..44].copy_from_slice(&uuid(0x40)); // paths_uuid
        want[44] = 0x01; // first_conn
        assert_eq!(buf[..56], want);
        assert_eq!(buf[56..], [0xff; 8], "wrote past SIZE");
        assert_eq!(ConnReq::decode(&buf[..56]), Ok(conn_req()));
    }

    #[test]
    fn conn_req_checks_like_rtrs_rdma_connect() {
        let mut buf = [0u8; 56];
        conn_req().encode(&mut buf).unwrap();
        // The CM may rewrite its two bytes; reserved bits are ignored.
        let mut cm = buf;
        cm[0] = 0x11;
        cm[1] = 0x40;
        cm[44] = 0xfe;
        cm[55] = 0x77;
        let got = ConnReq::decode(&cm).unwrap();
        assert!(!got.first_conn);
        assert_eq!(got.cid, 0x0102);
        // Too short.
        assert_eq!(ConnReq::decode(&buf[..55]), Err(Error::ConnReset));
        // Bad magic.
        let mut bad = buf;
        bad[2] = 0xbc;
        assert_eq!(ConnReq::decode(&bad), Err(Error::ConnReset));
        // Another major version is refused, another minor one is not.
        let mut bad = buf;
        bad[5] = 3;
        assert_eq!(ConnReq::decode(&bad), Err(Error::ConnReset));
        let mut minor = buf;
        minor[4] = 7;
        assert_eq!(ConnReq::decode(&minor).map(|r| r.version), Ok(0x0207));
        // cid_num above 4096, cid not below cid_num.
        let with = |cid: u16, cid_num: u16| {
            let mut b = [0u8; 56];
            ConnReq {
                cid,
                cid_num,
                ..conn_req()
            }
            .encode(&mut b)
            .unwrap();
            ConnReq::decode(&b)
        };
        assert!(with(4095, 4096).is_ok());
        assert_eq!(with(0, 4097).err(), Some(Error::ConnReset));
        assert_eq!(with(3, 3).err(), Some(Error::ConnReset));
        assert_eq!(with(0, 0).err(), Some(Error::ConnReset));
        assert!(with(2, 3).is_ok());
        // Encode needs room for the whole message.
        assert_eq!(conn_req().encode(&mut [0u8; 55]), Err(Error::MsgSize));
    }

    #[test]
    fn conn_rsp_layout() {
        let rsp = ConnRsp::accept(0x0200, 0x0001_f000, 0x1000, true);
        let mut buf = [0xffu8; 60];
        assert_eq!(rsp.encode(&mut buf), Ok(56));
        let mut want = [0u8; 56];
        want[0..2].copy_from_slice(&[0xbd, 0x1b]); // magic
        want[2..4].copy_from_slice(&[0x00, 0x02]); // version
        want[4..6].copy_from_slice(&[0x00, 0x00]); // errno
        want[6..8].copy_from_slice(&[0x00, 0x02]); // queue_depth 512
        want[8..12].copy_from_slice(&[0x00, 0xf0, 0x01, 0x00]); // max_io_size
        want[12..16].copy_from_slice(&[0x00, 0x10, 0x00, 0x00]); // max_hdr_size
        want[16..20].copy_from_slice(&[0x02, 0x00, 0x00, 0x00]); // NEW_RKEY
        assert_eq!(buf[..56], want);
        assert_eq!(buf[56..], [0xff; 4]);
        let got = ConnRsp::decode(&buf[..56]).unwrap();
        assert_eq!(got, rsp);
        assert!(got.new_rkey());
        assert_eq!(got.check_accepted(), Ok(()));
        assert_eq!(got.chunk_size(), 0x2_0000);
    }

    #[test]
    fn conn_rsp_reject_and_checks() {
        let mut buf = [0u8; 56];
        ConnRsp::reject(-104).encode(&mut buf).unwrap();
        assert_eq!(buf[4..6], [0x98, 0xff]); // (u16)-104
        assert_eq!(ConnRsp::reject_errno(&buf), -104);
        let rsp = ConnRsp::decode(&buf).unwrap();
        assert_eq!(rsp.errno, -104);
        assert_eq!(rsp.check_accepted(), Err(Error::ConnReset));
        // Reject data shorter than the message: ECONNRESET.
        assert_eq!(ConnRsp::reject_errno(&buf[..55]), -104);
        assert_eq!(ConnRsp::reject_errno(&[]), -104);
        // Reject data is not checked for magic, as in C.
        let mut busy = [0u8; 56];
        busy[4..6].copy_from_slice(&(-16i16).to_le_bytes());
        assert_eq!(ConnRsp::reject_errno(&busy), -16);
        // Established-path checks.
        assert_eq!(ConnRsp::decode(&buf[..55]), Err(Error::ConnReset));
        let mut bad = buf;
        bad[1] = 0;
        assert_eq!(ConnRsp::decode(&bad), Err(Error::ConnReset));
        let mut bad = buf;
        bad[3] = 1;
        assert_eq!(ConnRsp::decode(&bad), Err(Error::ConnReset));
        // A longer private data buffer is fine (IB pads it).
        let mut long = [0u8; 196];
        ConnRsp::accept(1, 2, 3, false).encode(&mut long).unwrap();
        let got = ConnRsp::decode(&long).unwrap();
        assert!(!got.new_rkey());
        assert_eq!(got.queue_depth, 1);
        // chunk_size wraps in 32 bits like clt_path->chunk_size.
        assert_eq!(ConnRsp::accept(1, u32::MAX, 2, false).chunk_size(), 1);
    }

    #[test]
    fn conn_rsp_params() {
        assert_eq!(ConnRsp::accept(1, 4096, 4096, false).check_params(), Ok(()));
        assert_eq!(
            ConnRsp::accept(u16::MAX, 4096, 4096, false).check_params(),
            Ok(())
        );
        assert_eq!(
            ConnRsp::accept(0, 4096, 4096, false).check_params(),
            Err(Error::ConnReset)
        );
    }

    #[test]
    fn info_req_layout_and_checks() {
        let req = InfoReq::new(b"sess-1").unwrap();
        assert_eq!(req.pathname(), b"sess-1");
        let mut buf = [0xffu8; 280];
        assert_eq!(req.encode(&mut buf), Ok(272));
        assert_eq!(buf[0..2], [0, 0]); // type INFO_REQ
        assert_eq!(buf[2..8], *b"sess-1");
        assert!(buf[8..272].iter().all(|&b| b == 0));
        assert_eq!(buf[272..], [0xff; 8]);
        assert_eq!(InfoReq::decode(&buf[..272]), Ok(req));

        // Longest name: 254 bytes and the NUL.
        let long = [b'a'; 254];
        let req = InfoReq::new(&long).unwrap();
        req.encode(&mut buf).unwrap();
        assert_eq!(buf[2..256], long);
        assert_eq!(buf[256], 0);
        assert_eq!(InfoReq::decode(&buf[..272]).unwrap().pathname(), &long);
        assert_eq!(InfoReq::new(&[b'a'; 255]), Err(Error::Inval));
        assert_eq!(InfoReq::new(b"a\0b"), Err(Error::Inval));
        // No NUL in the field.
        let mut bad = buf;
        bad[256] = b'a';
        assert_eq!(InfoReq::decode(&bad[..272]), Err(Error::Inval));
        // '/' and '.' are refused.
        for name in [&b"a/b"[..], b"a.b", b".", b"/"] {
            let mut b = [0u8; 272];
            InfoReq::new(name).unwrap().encode(&mut b).unwrap();
            assert_eq!(InfoReq::decode(&b), Err(Error::Inval));
            assert_eq!(check_pathname(name), Err(Error::Inval));
        }
        assert_eq!(check_pathname(b"ok-name_1"), Ok(()));
        // Short, wrong type.
        InfoReq::new(b"x").unwrap().encode(&mut buf).unwrap();
        assert_eq!(InfoReq::decode(&buf[..271]), Err(Error::MsgSize));
        buf[0] = 1;
        assert_eq!(InfoReq::decode(&buf[..272]), Err(Error::Inval));
        assert_eq!(req.encode(&mut [0u8; 271]), Err(Error::MsgSize));
    }

    const DESCS: [SgDesc; 2] = [
        SgDesc {
            addr: 0x1122_3344_5566_7788,
            key: 0xaabb_ccdd,
            len: 0x0004_0000,
        },
        SgDesc {
            addr: 0x1000,
            key: 7,
            len: 0x0002_0000,
        },
    ];

    #[test]
    fn sg_desc_layout() {
        let mut buf = [0u8; 16];
        assert_eq!(DESCS[0].encode(&mut buf), Ok(16));
        assert_eq!(
            buf,
            [
                0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, // addr
                0xdd, 0xcc, 0xbb, 0xaa, // key
                0x00, 0x00, 0x04, 0x00, // len
            ]
        );
        assert_eq!(SgDesc::decode(&buf), Ok(DESCS[0]));
        assert_eq!(SgDesc::decode(&buf[..15]), Err(Error::MsgSize));
    }

    #[test]
    fn info_rsp_layout() {
        let rsp = InfoRsp {
            descs: SgList::new(&DESCS),
        };
        assert_eq!(InfoRsp::wire_size(2), Some(40));
        let mut buf = [0xffu8; 48];
        assert_eq!(rsp.encode(&mut buf), Ok(40));
        assert_eq!(buf[0..8], [1, 0, 2, 0, 0, 0, 0, 0]); // type, sg_cnt, reserved
        assert_eq!(buf[8..16], 0x1122_3344_5566_7788u64.to_le_bytes());
        assert_eq!(buf[24..32], 0x1000u64.to_le_bytes());
        assert_eq!(buf[32..36], 7u32.to_le_bytes());
        assert_eq!(buf[36..40], 0x0002_0000u32.to_le_bytes());
        assert_eq!(buf[40..], [0xff; 8]);
        // Trailing bytes after the announced descriptors are ignored.
        let got = InfoRsp::decode(&buf).unwrap();
        assert_eq!(got, rsp);
        assert_eq!(got.descs.len(), 2);
        assert_eq!(got.descs.get(1), Some(DESCS[1]));
        assert_eq!(got.descs.get(2), None);
        assert_eq!(got.descs.iter().len(), 2);
        let mut n = 0;
        for (i, d) in got.descs.into_iter().enumerate() {
            assert_eq!(d, DESCS[i]);
            n += 1;
        }
        assert_eq!(n, 2);
        // Re-encoding the view gives the same bytes.
        let mut again = [0u8; 40];
        assert_eq!(got.encode(&mut again), Ok(40));
        assert_eq!(again, buf[..40]);
    }

    #[test]
    fn info_rsp_checks_like_the_client() {
        let mut buf = [0u8; 40];
        InfoRsp {
            descs: SgList::new(&DESCS),
        }
        .encode(&mut buf)
        .unwrap();
        assert_eq!(InfoRsp::decode(&buf[..7]), Err(Error::MsgSize));
        assert_eq!(InfoRsp::decode(&buf[..39]), Err(Error::MsgSize));
        let mut bad = buf;
        bad[0] = 0;
        assert_eq!(InfoRsp::decode(&bad), Err(Error::Inval));
        // sg_cnt 0xffff with an 8-byte buffer.
        assert_eq!(
            InfoRsp::decode(&[1, 0, 0xff, 0xff, 0, 0, 0, 0]),
            Err(Error::MsgSize)
        );
        let empty = InfoRsp::decode(&[1, 0, 0, 0, 9, 9, 9, 9]).unwrap();
        assert!(empty.descs.is_empty());
        assert_eq!(empty.descs, SgList::empty());
        assert_eq!(
            InfoRsp {
                descs: SgList::new(&DESCS)
            }
            .encode(&mut [0u8; 39]),
            Err(Error::MsgSize)
        );
    }

    #[test]
    fn info_rsp_maps_rbufs_like_process_info_rsp() {
        const CHUNK: u32 = 0x2_0000;
        let rsp = InfoRsp {
            descs: SgList::new(&DESCS),
        };
        // Two regions of 2 and 1 chunks: sg_cnt 2 does not divide 3.
        let mut rbufs = [Rbuf::default(); 3];
        assert_eq!(rsp.map_rbufs(CHUNK, &mut rbufs), Err(Error::Inval));

        // One region per chunk, queue depth 4 = 2 regions x 2 chunks.
        let regions = [
            SgDesc {
                addr: 0x10_0000,
                key: 1,
                len: 2 * CHUNK,
            },
            SgDesc {
                addr: 0x80_0000,
                key: 2,
                len: 2 * CHUNK,
            },
        ];
        let rsp = InfoRsp {
            descs: SgList::new(&regions),
        };
        let mut rbufs = [Rbuf::default(); 4];
        assert_eq!(rsp.map_rbufs(CHUNK, &mut rbufs), Ok(()));
        assert_eq!(
            rbufs,
            [
                Rbuf {
                    addr: 0x10_0000,
                    rkey: 1
                },
                Rbuf {
                    addr: 0x12_0000,
                    rkey: 1
                },
                Rbuf {
                    addr: 0x80_0000,
                    rkey: 2
                },
                Rbuf {
                    addr: 0x82_0000,
                    rkey: 2
                },
            ]
        );
        // A length that is not a multiple of the chunk size.
        let odd = [SgDesc {
            addr: 0,
            key: 1,
            len: CHUNK + 1,
        }];
        let rsp = InfoRsp {
            descs: SgList::new(&odd),
        };
        assert_eq!(
            rsp.map_rbufs(CHUNK, &mut [Rbuf::default(); 1]),
            Err(Error::Inval)
        );
        // Zero length.
        let zero = [SgDesc::default()];
        let rsp = InfoRsp {
            descs: SgList::new(&zero),
        };
        assert_eq!(
            rsp.map_rbufs(CHUNK, &mut [Rbuf::default(); 1]),
            Err(Error::Inval)
        );
        // A region bigger than all chunks: the total length is wrong.
        let big = [SgDesc {
            addr: 0,
            key: 1,
            len: 3 * CHUNK,
        }];
        let rsp = InfoRsp {
            descs: SgList::new(&big),
        };
        assert_eq!(
            rsp.map_rbufs(CHUNK, &mut [Rbuf::default(); 2]),
            Err(Error::Inval)
        );
        // Regions that do not cover all chunks.
        let short = [
            SgDesc {
                addr: 0,
                key: 1,
                len: CHUNK,
            },
            SgDesc {
                addr: 0,
                key: 1,
                len: CHUNK,
            },
        ];
        let rsp = InfoRsp {
            descs: SgList::new(&short),
        };
        assert_eq!(
            rsp.map_rbufs(CHUNK, &mut [Rbuf::default(); 4]),
            Err(Error::Inval)
        );
        // No regions, or no chunks.
        let rsp = InfoRsp {
            descs: SgList::empty(),
        };
        assert_eq!(
            rsp.map_rbufs(CHUNK, &mut [Rbuf::default(); 4]),
            Err(Error::Inval)
        );
        let rsp = InfoRsp {
            descs: SgList::new(&short),
        };
        assert_eq!(rsp.map_rbufs(CHUNK, &mut []), Err(Error::Inval));
        // Chunk size 0 never divides (C would divide by zero).
        assert_eq!(
            rsp.map_rbufs(0, &mut [Rbuf::default(); 2]),
            Err(Error::Inval)
        );
        // The IMM payload must hold sg_cnt and the chunk offset:
        // 1 region of 2^28 bytes fits, 2 regions of 2^28 do not.
        let one = [SgDesc {
            addr: 0,
            key: 1,
            len: 1 << 28,
        }];
        let rsp = InfoRsp {
            descs: SgList::new(&one),
        };
        assert_eq!(rsp.map_rbufs(1 << 28, &mut [Rbuf::default(); 1]), Ok(()));
        let two = [one[0], one[0]];
        let rsp = InfoRsp {
            descs: SgList::new(&two),
        };
        assert_eq!(
            rsp.map_rbufs(1 << 28, &mut [Rbuf::default(); 2]),
            Err(Error::Inval)
        );
    }

    #[test]
    fn rkey_rsp_layout() {
        let msg = RkeyRsp {
            buf_id: 0x0123,
            rkey: 0xdead_beef,
        };
        let mut buf = [0xffu8; 10];
        assert_eq!(msg.encode(&mut buf), Ok(8));
        assert_eq!(buf, [4, 0, 0x23, 0x01, 0xef, 0xbe, 0xad, 0xde, 0xff, 0xff]);
        assert_eq!(RkeyRsp::decode(&buf), Ok(msg));
        assert_eq!(RkeyRsp::decode(&buf[..7]), Err(Error::MsgSize));
        buf[0] = 3;
        assert_eq!(RkeyRsp::decode(&buf), Err(Error::Inval));
    }

    #[test]
    fn rdma_write_layout() {
        let msg = RdmaWrite { usr_len: 0x0102 };
        let mut buf = [0xffu8; 6];
        assert_eq!(msg.encode(&mut buf), Ok(4));
        assert_eq!(buf, [2, 0, 0x02, 0x01, 0xff, 0xff]);
        assert_eq!(RdmaWrite::decode(&buf), Ok(msg));
        assert_eq!(RdmaMsg::decode(&buf), Ok(RdmaMsg::Write(msg)));
        assert_eq!(RdmaWrite::decode(&buf[..3]), Err(Error::MsgSize));
        assert_eq!(msg.data_len(0x0102), Ok(0));
        assert_eq!(msg.data_len(0x1102), Ok(0x1000));
        assert_eq!(msg.data_len(0x0101), Err(Error::Inval));
        buf[0] = 1;
        assert_eq!(RdmaWrite::decode(&buf), Err(Error::Inval));
        assert_eq!(RdmaMsg::decode(&buf), Err(Error::Inval));
    }

    #[test]
    fn rdma_read_layout() {
        let desc = [DESCS[0]];
        let msg = RdmaRead {
            usr_len: 0x0010,
            flags: MSG_NEED_INVAL_F,
            descs: SgList::new(&desc),
        };
        assert_eq!(RdmaRead::wire_size(1), Some(24));
        let mut buf = [0xffu8; 26];
        assert_eq!(msg.encode(&mut buf), Ok(24));
        assert_eq!(buf[..8], [3, 0, 0x10, 0, 1, 0, 1, 0]);
        assert_eq!(buf[8..16], 0x1122_3344_5566_7788u64.to_le_bytes());
        assert_eq!(buf[16..20], 0xaabb_ccddu32.to_le_bytes());
        assert_eq!(buf[20..24], 0x0004_0000u32.to_le_bytes());
        assert_eq!(buf[24..], [0xff; 2]);
        let got = RdmaRead::decode(&buf).unwrap();
        assert_eq!(got, msg);
        assert!(got.need_inval());
        assert_eq!(got.data_len(0x1010), Ok(0x1000));
        assert_eq!(RdmaMsg::decode(&buf), Ok(RdmaMsg::Read(msg)));

        // Without data: no descriptor, no invalidation.
        let none = RdmaRead {
            usr_len: 5,
            flags: 0,
            descs: SgList::empty(),
        };
        let mut buf = [0u8; 8];
        assert_eq!(none.encode(&mut buf), Ok(8));
        assert_eq!(buf, [3, 0, 5, 0, 0, 0, 0, 0]);
        let got = RdmaRead::decode(&buf).unwrap();
        assert_eq!(got, none);
        assert!(!got.need_inval());
        assert_eq!(got.data_len(4), Err(Error::Inval));
    }

    #[test]
    fn rdma_read_checks_like_process_read() {
        // sg_cnt 2 is refused, encoding or decoding.
        let two = RdmaRead {
            usr_len: 0,
            flags: 0,
            descs: SgList::new(&DESCS),
        };
        assert_eq!(two.encode(&mut [0u8; 40]), Err(Error::Inval));
        let mut buf = [0u8; 40];
        buf[0] = 3;
        buf[6] = 2;
        assert_eq!(RdmaRead::decode(&buf), Err(Error::Inval));
        // sg_cnt 1 without the descriptor bytes.
        buf[6] = 1;
        assert_eq!(RdmaRead::decode(&buf[..23]), Err(Error::MsgSize));
        assert!(RdmaRead::decode(&buf[..24]).is_ok());
        assert_eq!(RdmaRead::decode(&buf[..7]), Err(Error::MsgSize));
        buf[0] = 4;
        assert_eq!(RdmaRead::decode(&buf), Err(Error::Inval));
        assert_eq!(RdmaMsg::decode(&buf), Err(Error::Inval));
        assert_eq!(RdmaMsg::decode(&buf[..1]), Err(Error::MsgSize));
    }

    #[test]
    fn decoders_never_panic_on_short_or_odd_input() {
        let mut buf = [0u8; 300];
        for (i, b) in buf.iter_mut().enumerate() {
            *b = (i as u8).wrapping_mul(37).wrapping_add(11);
        }
        for ty in 0..6u8 {
            buf[0] = ty;
            buf[1] = 0;
            for len in 0..buf.len() {
                let b = &buf[..len];
                let _ = ConnReq::decode(b);
                let _ = ConnRsp::decode(b);
                let _ = ConnRsp::reject_errno(b);
                let _ = InfoReq::decode(b);
                if let Ok(rsp) = InfoRsp::decode(b) {
                    let _ = rsp.descs.iter().count();
                    let _ = rsp.map_rbufs(4096, &mut [Rbuf::default(); 8]);
                }
                let _ = RkeyRsp::decode(b);
                let _ = RdmaMsg::decode(b);
                let _ = SgDesc::decode(b);
            }
        }
    }
    #[test]
    fn conn_req_check_names_the_fault() {
        let good = ConnReq {
            version: PROTO_VER,
            cid: 1,
            cid_num: 2,
            recon_cnt: 0,
            sess_uuid: [1; 16],
            paths_uuid: [2; 16],
            first_conn: true,
        };
        let mut b = [0u8; ConnReq::SIZE];
        good.encode(&mut b).unwrap();
        assert_eq!(ConnReq::check(&b), Ok(good));
        assert_eq!(
            ConnReq::check(&b[..ConnReq::SIZE - 1]),
            Err(ConnReqFault::Short)
        );
        let with = |off: usize, v: u16| {
            let mut x = b;
            x[off..off + 2].copy_from_slice(&v.to_le_bytes());
            x
        };
        assert_eq!(
            ConnReq::check(&with(2, MAGIC ^ 1)),
            Err(ConnReqFault::Magic)
        );
        assert_eq!(
            ConnReq::check(&with(4, 0x0300)),
            Err(ConnReqFault::Version(3))
        );
        // A minor version of its own is accepted, as in C.
        assert!(ConnReq::check(&with(4, 0x0207)).is_ok());
        assert_eq!(
            ConnReq::check(&with(8, 5000)),
            Err(ConnReqFault::TooManyCons(5000))
        );
        assert!(ConnReq::check(&with(8, MAX_CONN_NUM)).is_ok());
        assert_eq!(ConnReq::check(&with(6, 2)), Err(ConnReqFault::Cid(2, 2)));
        // decode folds every fault into ECONNRESET.
        assert_eq!(ConnReq::decode(&with(2, 0)), Err(Error::ConnReset));
    }

    #[test]
    fn io_req_check_refuses_what_c_drops_or_reads_past() {
        let mut w = [0u8; IoReq::MAX_SIZE];
        RdmaWrite { usr_len: 24 }.encode(&mut w).unwrap();
        assert_eq!(
            IoReq::check(&w, 24),
            Ok(RdmaMsg::Write(RdmaWrite { usr_len: 24 }))
        );
        // The user message would start before the chunk.
        assert_eq!(IoReq::check(&w, 23), Err(IoReqFault::UsrLen(24)));
        // A write header cut by the chunk's end.
        assert_eq!(IoReq::check(&w[..3], 24), Err(IoReqFault::PastChunk));
        assert_eq!(IoReq::check(&w[..1], 24), Err(IoReqFault::PastChunk));

        let d = [SgDesc {
            addr: 1,
            key: 2,
            len: 3,
        }];
        let mut r = [0u8; IoReq::MAX_SIZE];
        RdmaRead {
            usr_len: 0,
            flags: 0,
            descs: SgList::new(&d),
        }
        .encode(&mut r)
        .unwrap();
        assert!(matches!(IoReq::check(&r, 0), Ok(RdmaMsg::Read(_))));
        // Its descriptor past the chunk's end, or its header.
        assert_eq!(IoReq::check(&r[..23], 0), Err(IoReqFault::PastChunk));
        assert_eq!(IoReq::check(&r[..4], 0), Err(IoReqFault::PastChunk));
        // sg_cnt other than 0 or 1.
        r[6..8].copy_from_slice(&0xffffu16.to_le_bytes());
        assert_eq!(IoReq::check(&r, 0), Err(IoReqFault::SgCnt(0xffff)));
        r[6..8].copy_from_slice(&2u16.to_le_bytes());
        assert_eq!(IoReq::check(&r, 0), Err(IoReqFault::SgCnt(2)));
        // Other types.
        let mut x = [0u8; 4];
        x[0..2].copy_from_slice(&0x99u16.to_le_bytes());
        assert_eq!(IoReq::check(&x, 0), Err(IoReqFault::UnknownType(0x99)));
        x[0..2].copy_from_slice(&MsgType::InfoReq.as_u16().to_le_bytes());
        assert_eq!(
            IoReq::check(&x, 0),
            Err(IoReqFault::UnknownType(MsgType::InfoReq.as_u16()))
        );
    }
}
