// SPDX-License-Identifier: GPL-2.0-or-later
//! decode(encode(x)) == x for every RTRS message built from arbitrary
//! fields, encoding into a buffer of arbitrary size: too short is
//! `MsgSize` and nothing past the message is written; what the receiver
//! refuses (bad version, cid, path name) is refused by the decoder.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use rtrs_proto::error::Error;
use rtrs_proto::msg::*;

#[derive(Arbitrary, Debug)]
struct Desc {
    addr: u64,
    key: u32,
    len: u32,
}

impl Desc {
    fn get(&self) -> SgDesc {
        SgDesc {
            addr: self.addr,
            key: self.key,
            len: self.len,
        }
    }
}

#[derive(Arbitrary, Debug)]
enum Msg {
    ConnReq {
        version: u16,
        cid: u16,
        cid_num: u16,
        recon_cnt: u16,
        sess_uuid: Uuid,
        paths_uuid: Uuid,
        first_conn: bool,
    },
    ConnRsp {
        version: u16,
        errno: i16,
        queue_depth: u16,
        max_io_size: u32,
        max_hdr_size: u32,
        flags: u32,
        path_id: u16,
    },
    Accept(u16, u32, u32, bool),
    Reject(i32),
    InfoReq(Vec<u8>),
    InfoRsp(Vec<Desc>),
    RkeyRsp(u16, u32),
    Write(u16),
    Read(u16, u16, Vec<Desc>),
    SgDesc(Desc),
}

#[derive(Arbitrary, Debug)]
struct Input {
    msg: Msg,
    buf_len: u16,
}

/// Encodes with `encode` into a buffer of `len` bytes: `MsgSize` when
/// shorter than `size`, else `size` bytes written and none past them.
/// Returns the encoding, if it fit.
fn encode(
    len: usize,
    size: usize,
    encode: impl FnOnce(&mut [u8]) -> Result<usize, Error>,
) -> Option<Vec<u8>> {
    let mut buf = vec![0xa5u8; len];
    let got = encode(&mut buf);
    if len < size {
        assert_eq!(got, Err(Error::MsgSize));
        assert!(buf.iter().all(|&b| b == 0xa5), "short encode wrote");
        return None;
    }
    assert_eq!(got, Ok(size));
    assert!(
        buf[size..].iter().all(|&b| b == 0xa5),
        "wrote past the message"
    );
    buf.truncate(size);
    Some(buf)
}

fuzz_target!(|input: Input| {
    let len = usize::from(input.buf_len) % 2200;
    match input.msg {
        Msg::ConnReq {
            version,
            cid,
            cid_num,
            recon_cnt,
            sess_uuid,
            paths_uuid,
            first_conn,
        } => {
            let req = ConnReq {
                version,
                cid,
                cid_num,
                recon_cnt,
                sess_uuid,
                paths_uuid,
                first_conn,
            };
            let Some(b) = encode(len, ConnReq::SIZE, |b| req.encode(b)) else {
                return;
            };
            let valid = version >> 8 == PROTO_VER_MAJOR && cid_num <= MAX_CONN_NUM && cid < cid_num;
            let want = if valid {
                Ok(req)
            } else {
                Err(Error::ConnReset)
            };
            assert_eq!(ConnReq::decode(&b), want);
        }
        Msg::ConnRsp {
            version,
            errno,
            queue_depth,
            max_io_size,
            max_hdr_size,
            flags,
            path_id,
        } => {
            let rsp = ConnRsp {
                version,
                errno,
                queue_depth,
                max_io_size,
                max_hdr_size,
                flags,
                path_id,
            };
            let Some(b) = encode(len, ConnRsp::SIZE, |b| rsp.encode(b)) else {
                return;
            };
            let want = if version >> 8 == PROTO_VER_MAJOR {
                Ok(rsp)
            } else {
                Err(Error::ConnReset)
            };
            assert_eq!(ConnRsp::decode(&b), want);
            assert_eq!(ConnRsp::reject_errno(&b), i32::from(errno));
        }
        Msg::Accept(queue_depth, max_io, max_hdr, new_rkey) => {
            let rsp = ConnRsp::accept(queue_depth, max_io, max_hdr, new_rkey);
            let Some(b) = encode(len, ConnRsp::SIZE, |b| rsp.encode(b)) else {
                return;
            };
            let got = ConnRsp::decode(&b).expect("an accept decodes");
            assert_eq!(got, rsp);
            assert_eq!(got.check_accepted(), Ok(()));
            assert_eq!(got.new_rkey(), new_rkey);
            assert_eq!(got.queue_depth, queue_depth);
        }
        Msg::Reject(errno) => {
            let rsp = ConnRsp::reject(errno);
            let Some(b) = encode(len, ConnRsp::SIZE, |b| rsp.encode(b)) else {
                return;
            };
            // The C server keeps the errno in 16 bits.
            assert_eq!(ConnRsp::reject_errno(&b), i32::from(errno as i16));
            let got = ConnRsp::decode(&b).expect("a reject decodes");
            assert_eq!(got.check_accepted().is_ok(), errno as i16 == 0);
        }
        Msg::InfoReq(name) => {
            let req = InfoReq::new(&name);
            if name.len() > MAX_PATHNAME_LEN || name.contains(&0) {
                assert_eq!(req, Err(Error::Inval));
                return;
            }
            let req = req.expect("a short NUL-free name is taken");
            assert_eq!(req.pathname(), &name[..]);
            let Some(b) = encode(len, InfoReq::SIZE, |b| req.encode(b)) else {
                return;
            };
            let got = InfoReq::decode(&b);
            if name.contains(&b'/') || name.contains(&b'.') {
                assert_eq!(got, Err(Error::Inval));
            } else {
                assert_eq!(got, Ok(req));
            }
        }
        Msg::InfoRsp(descs) => {
            let descs: Vec<SgDesc> = descs.iter().map(Desc::get).collect();
            let rsp = InfoRsp {
                descs: SgList::new(&descs),
            };
            let size = InfoRsp::wire_size(descs.len()).unwrap();
            let Some(b) = encode(len, size, |b| rsp.encode(b)) else {
                return;
            };
            let got = InfoRsp::decode(&b).expect("an encoded InfoRsp decodes");
            assert_eq!(got, rsp);
            assert!(got.descs.iter().eq(descs.iter().copied()));
        }
        Msg::RkeyRsp(buf_id, rkey) => {
            let m = RkeyRsp { buf_id, rkey };
            let Some(b) = encode(len, RkeyRsp::SIZE, |b| m.encode(b)) else {
                return;
            };
            assert_eq!(RkeyRsp::decode(&b), Ok(m));
        }
        Msg::Write(usr_len) => {
            let m = RdmaWrite { usr_len };
            let Some(b) = encode(len, RdmaWrite::SIZE, |b| m.encode(b)) else {
                return;
            };
            assert_eq!(RdmaWrite::decode(&b), Ok(m));
            assert_eq!(RdmaMsg::decode(&b), Ok(RdmaMsg::Write(m)));
        }
        Msg::Read(usr_len, flags, descs) => {
            let descs: Vec<SgDesc> = descs.iter().map(Desc::get).collect();
            let m = RdmaRead {
                usr_len,
                flags,
                descs: SgList::new(&descs),
            };
            if descs.len() > RdmaRead::MAX_SG_CNT {
                let mut buf = vec![0u8; len];
                assert_eq!(m.encode(&mut buf), Err(Error::Inval));
                return;
            }
            let size = RdmaRead::wire_size(descs.len()).unwrap();
            let Some(b) = encode(len, size, |b| m.encode(b)) else {
                return;
            };
            assert_eq!(RdmaRead::decode(&b), Ok(m));
            assert_eq!(RdmaMsg::decode(&b), Ok(RdmaMsg::Read(m)));
        }
        Msg::SgDesc(d) => {
            let d = d.get();
            let Some(b) = encode(len, SgDesc::SIZE, |b| d.encode(b)) else {
                return;
            };
            assert_eq!(SgDesc::decode(&b), Ok(d));
        }
    }
});
