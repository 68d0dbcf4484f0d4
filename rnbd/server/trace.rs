// SPDX-License-Identifier: GPL-2.0-or-later

//! The trace events of C's rnbd-server (`rnbd_srv`), defined in
//! `rnbd_srv_trace.h` beside this file with the same fields and format.

use kernel::str::CStr;

rb::declare_trace! {
    /// `trace_create_sess()`: a session came (its queue depth).
    pub(crate) fn create_sess(qdepth: i32, sessname: &CStr);
    /// `trace_destroy_sess()`: a session went.
    pub(crate) fn destroy_sess(qdepth: i32, sessname: &CStr);
    /// `trace_process_rdma()`: an IO request.
    pub(crate) fn process_rdma(
        sessname: &CStr,
        dir: u8,
        ver: u8,
        device_id: u32,
        sector: u64,
        flags: u32,
        bi_size: u32,
        ioprio: u16,
        datalen: u32,
        usrlen: usize,
    );
    /// `trace_process_msg_sess_info()`: the protocol version agreed.
    pub(crate) fn process_msg_sess_info(proto_ver: u8, clt_ver: u8, srv_ver: u8, sessname: &CStr);
    /// `trace_process_msg_open()`: an OPEN.
    pub(crate) fn process_msg_open(access_mode: u8, sessname: &CStr, dev_name: &CStr);
    /// `trace_process_msg_close()`: a CLOSE.
    pub(crate) fn process_msg_close(device_id: u32, sessname: &CStr);
}
