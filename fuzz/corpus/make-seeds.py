#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Writes the seed corpus of the fuzz targets, fuzz/corpus/<target>/<name>:
a few valid encodings and inputs per target, taken from the unit tests of
rtrs/proto and rnbd/proto. Run it from anywhere; it rewrites the seeds it
knows and leaves other files alone. Seeds only: what libFuzzer grows goes
to fuzz/grown/, which git ignores."""

import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))


def le16(v):
    return struct.pack("<H", v & 0xFFFF)


def le32(v):
    return struct.pack("<I", v & 0xFFFFFFFF)


def le64(v):
    return struct.pack("<Q", v)


def pad(b, n):
    assert len(b) <= n
    return b + bytes(n - len(b))


# RTRS (rtrs/proto/msg.rs tests)
def conn_req(version=0x0200, cid=0x0102, cid_num=0x0203, recon=0x0A0B, first=1):
    b = bytes(2) + le16(0x1BBD) + le16(version) + le16(cid) + le16(cid_num) + le16(recon)
    b += bytes(range(0x10, 0x20)) + bytes(range(0x40, 0x50)) + bytes([first])
    return pad(b, 56)


def conn_rsp(errno=0, qd=0x200, max_io=0x1F000, max_hdr=0x1000, flags=2):
    b = le16(0x1BBD) + le16(0x0200) + le16(errno) + le16(qd)
    b += le32(max_io) + le32(max_hdr) + le32(flags)
    return pad(b, 56)


def info_req(name):
    return le16(0) + pad(name, 255) + bytes(15)


def sg(addr, key, length):
    return le64(addr) + le32(key) + le32(length)


DESCS = sg(0x1122334455667788, 0xAABBCCDD, 0x40000) + sg(0x1000, 7, 0x20000)
CHUNK = 0x20000
REGIONS = sg(0x100000, 1, 2 * CHUNK) + sg(0x800000, 2, 2 * CHUNK)


def info_rsp(descs):
    return le16(1) + le16(len(descs) // 16) + bytes(4) + descs


def rdma_read(usr_len, flags, descs):
    return le16(3) + le16(usr_len) + le16(flags) + le16(len(descs) // 16) + descs


# RNBD (rnbd/proto/msg.rs tests)
def sess_info(ty, ver=2):
    return pad(le16(ty) + bytes(2) + bytes([ver]), 36)


def rnbd_open(mode, name):
    return le16(2) + bytes(2) + bytes([mode, 0]) + pad(name, 255) + bytes(3)


def open_rsp():
    b = le16(3) + bytes(2) + le32(0x11223344) + le64(0x0102030405060708)
    for v in (0x10000001, 0x20000002, 0x30000003, 0x40000004, 0x50000005):
        b += le32(v)
    b += le16(4096) + le16(512) + le16(0x6006) + le16(0x7007) + bytes([0, 3])
    return pad(b, 56)


def io(rw, prio=0xD1D2, size=32):
    b = le16(4) + bytes(2) + le32(0xA1A2A3A4) + le64(0xB1B2B3B4B5B6B7B8)
    b += le32(rw) + le32(0xC1C2C3C4) + le16(prio)
    return pad(b, 32)[:size]


SEEDS = {
    "rtrs_conn_req": {
        "valid": conn_req(),
        "cm-bytes": b"\x11\x40" + conn_req()[2:44] + b"\xfe" + conn_req()[45:],
        "minor-7": conn_req(version=0x0207),
        "last-cid": conn_req(cid=4095, cid_num=4096, first=0),
    },
    "rtrs_conn_rsp": {
        "accept": conn_rsp(),
        "reject-econnreset": conn_rsp(errno=-104, qd=0, max_io=0, max_hdr=0, flags=0),
        "accept-ib-padded": pad(conn_rsp(qd=1, max_io=2, max_hdr=3, flags=0), 196),
    },
    "rtrs_info_req": {
        "sess-1": info_req(b"sess-1"),
        "longest": info_req(b"a" * 254),
        "dot": info_req(b"a.b"),
    },
    # chunk size (4), queue depth (2), message
    "rtrs_info_rsp": {
        "two-regions": le32(CHUNK) + le16(4) + info_rsp(REGIONS),
        "descs": le32(CHUNK) + le16(3) + info_rsp(DESCS) + b"\xff" * 8,
        "one-2p28": le32(1 << 28) + le16(1) + info_rsp(sg(0, 1, 1 << 28)),
        "empty": le32(4096) + le16(8) + info_rsp(b""),
    },
    "rtrs_rkey_rsp": {
        "rkey": le16(4) + le16(0x0123) + le32(0xDEADBEEF),
    },
    "rtrs_rdma_msg": {
        "write": le16(2) + le16(0x0102),
        "read-inval": rdma_read(0x10, 1, DESCS[:16]),
        "read-no-data": rdma_read(5, 0, b""),
    },
    "rtrs_msg_roundtrip": {
        "conn-req": conn_req(),
        "info-rsp": info_rsp(DESCS),
        "read": rdma_read(0x10, 1, DESCS[:16]),
    },
    # imm, ty, msg_id, errno, w_inval, queue_depth, buf_id, off,
    # max_chunk_size, (sess_queue_depth, max_chunk_size)
    "rtrs_imm": {
        "io-rsp": le32(0x10000000 | (5 << 19) | 5) + le32(1) + le32(5) + le32(-5)
        + b"\x00" + le32(512) + le32(3) + le32(0x100) + le32(128 << 10)
        + le32(512) + le32(128 << 10),
        "hb-ack": le32(0x90000000) + le32(9) + le32(0x7FFFF) + le32(-511)
        + b"\x01" + le32(65535) + le32(65534) + le32(0xFFF) + le32(8192)
        + le32(65535) + le32(8192),
        "io-req": le32(0x0ABCDEF0) + le32(0) + le32(0) + le32(0) + b"\x00"
        + le32(1) + le32(0) + le32((1 << 28) - 1) + le32(1 << 28)
        + le32(1) + le32(1 << 28),
    },
    "rtrs_parse_addr": {
        "v4": b"ip:10.0.0.1",
        "v4-quirks": b"ip:010.001.0.7:80",
        "v6-link-local-eth0": b"ip:fe80::1%eth0",
        "v6-scope-number": b"ip:fe80::1%2",
        "v4-mapped": b"ip:::ffff:1.2.3.4",
        "v6-full": b"ip:1:0:2:3:4:5:6:7",
        "gid": b"gid:fe80::2:c903:10:c0f5",
    },
    "rtrs_parse_addr_c": {
        "v4": b"ip:10.0.0.1",
        "v4-quirks": b"ip:010.001.0.7:80",
        "v6-link-local-eth0": b"ip:fe80::1%eth0",
        "v6-scope-number": b"ip:ff02::1%0x10",
        "v4-mapped": b"ip:::ffff:1.2.3.4",
        "v6-full": b"ip:1:0:2:3:4:5:6:7",
        "gid": b"gid:fe80::2:c903:10:c0f5",
    },
    "rtrs_parse_path": {
        "src-at-dst": b"ip:192.0.2.2@ip:192.0.2.1",
        "src-comma-dst": b"ip:1.1.1.1,ip:2.2.2.2",
        "gids": b"gid:fe80::1@gid:fe80::2",
        "dst-only": b"ip:fe80::2%eth0",
    },
    "rtrs_parse_add_path": {
        "add-path": b"ip:192.0.2.2@ip:192.0.2.1\n",
        "after-newline": b"ip:10.0.0.1\nip:1.1.1.1,junk",
    },
    # base selector, text (sysfs_streq: the halves around 0xff)
    "rtrs_kstr": {
        "hex-auto": b"\x00" + b"0x1f\n",
        "uint-max": b"\x02" + b"4294967295",
        "int-min": b"\x02" + b"-2147483648",
        "octal": b"\x00" + b"+017",
        "hex": b"\x03" + b"0XfF",
        "streq": b"\x02" + b"12\xff12\n",
    },
    # base (selector byte modulo 17), text
    "rtrs_kstr_c": {
        "hex-auto": b"\x00" + b"0x1f\n",
        "uint-max": b"\x0a" + b"4294967295",
        "int-min": b"\x0a" + b"-2147483648",
        "octal": b"\x08" + b"+017",
        "hex": b"\x10" + b"0XfF",
        "overflow": b"\x10" + b"1ffffffffffffffff",
    },
    "rtrs_mpath_policy": {
        "round-robin": b"round-robin\n",
        "min-inflight": b"MIN-INFLIGHT junk",
        "ml": b"ml\n",
        "id": b"2\n",
    },
    "rtrs_max_reconnect": {
        "forever": b"-1\n",
        "max": b"9999",
        "over": b"10000\n",
        "never": b"+0",
    },
    # paths (connected, inflight i32, latency i64)..., policy, cursor...
    "rtrs_path_iter": {
        "three": bytes([1]) + le32(5) + le64(100) + bytes([1]) + le32(1) + le64(300)
        + bytes([0]) + le32(0) + le64(0) + bytes([1, 1, 2, 0, 0, 0, 0, 0, 0, 0, 3]),
    },
    "rnbd_msg_hdr": {
        "open": le16(2) + bytes(2),
        "close": le16(5) + bytes(2),
    },
    "rnbd_msg_sess_info": {
        "sess-info": sess_info(0),
        "sess-info-rsp": sess_info(1),
        "old-version": sess_info(0, 1),
    },
    "rnbd_msg_open": {
        "rw-nullb0": rnbd_open(1, b"/dev/nullb0"),
        "migration": rnbd_open(2, b"a/b"),
        "ro-longest": rnbd_open(0, b"x" * 254),
    },
    "rnbd_msg_close": {
        "close": le16(5) + bytes(2) + le32(7),
    },
    "rnbd_msg_open_rsp": {
        "sample": open_rsp(),
    },
    "rnbd_msg_io": {
        "write-fua": io(0x201),
        "read-sync": io(0x100),
        "flush-v1": io(0x302, size=24),
        "discard": io(3),
    },
    "rnbd_msg_roundtrip": {
        "open": rnbd_open(1, b"/dev/nullb0"),
        "io": io(0x201),
        "open-rsp": open_rsp(),
    },
    "rnbd_map_options": {
        "readme": b"sessname=blya path=ip:10.50.100.66 device_path=/dev/ram0\n",
        "all": b"  dest_port=4321 sessname=s1 path=ip:1.1.1.1,ip:2.2.2.2 "
        b"path=gid:fe80::1@gid:fe80::2 device_path=a/b access_mode=migration "
        b"nr_poll_queues=3\t\n",
        "ports": b"sessname=s path=ip:a dest_port=7 path=ip:b device_path=d "
        b"nr_poll_queues=-1",
    },
    "rnbd_unmap": {"normal": b"normal\n", "force": b" force\t"},
    "rnbd_remap": {"one": b"1\n", "spaces": b" 1 "},
    "rnbd_resize": {"dec": b"2048\n", "hex": b"0x800", "octal": b"+017"},
    "rnbd_force_close": {"one": b"1\n", "bare": b"1"},
    # search path, session name, device path, output size (2 bytes LE)
    "rnbd_full_path": {
        "root": b"/\xffs\xff/dev/ram0",
        "slashes": b"/dev//block/\xffs\xff//x///y/",
        "sessname": b"/run/rnbd/%SESSNAME%\xffclient1\xff/disk0",
        "twice": b"%SESSNAME%/%SESSNAME%\xffc\xffd",
        "small-out": b"/dev\xffs\xffram0\xff" + le16(8),
        "param-newline": b"/srv/disks\n\xffs\xffd",
    },
    # device path, session name, output size (2 bytes LE)
    "rnbd_symlink_name": {
        "nullb0": b"/dev/nullb0\xffsess-1",
        "long": b"/" + b"d" * 300 + b"\xffs",
        "small-out": b"/dev/ram0\xffs\xff" + le16(12),
    },
    # modes (low 2 bits; 0x80 = close)
    "rnbd_open_perm": {
        "rw-migration": bytes([1, 2, 2, 0x81, 1, 0x82, 0]),
    },
}


SEEDS["rnbd_map_options_c"] = dict(
    SEEDS["rnbd_map_options"],
    **{
        "bad-path": b"sessname=s path=ip:1.2.3 device_path=d",
        "port-hex": b"sessname=s dest_port=0x10 path=gid:fe80::1 device_path=d",
        # The crash that found the UTF-8 check (rnbd: proto: options).
        "non-utf8-after-colon": b"  dest_port=4321 sessname=s1 path=ip:1.1.1.1,ip:2.2.2.8:0\x8c:2 "
        b"device_path=a/b access_mode=migration nr_poll_queues=1\t\n",
    },
)


# dev_search_path, session name, device path (each cut at a NUL)
SEEDS["rnbd_full_path_c"] = {
    "root": b"/\xffs\xff/dev/ram0",
    "slashes": b"/dev//block/\xffs\xff//x///y/",
    "sessname": b"/run/rnbd/%SESSNAME%\xffclient1\xff/disk0",
    "param-newline": b"/srv/%SESSNAME%/x\n\xffc\xffd",
    "dotdot-sess": b"/srv/%SESSNAME%\xff..\xffd",
}


# a write to mpath_policy or max_reconnect_attempts
SEEDS["rtrs_sysfs_c"] = {
    "round-robin": b"round-robin\n",
    "mi": b"MI\n",
    "ml-junk": b"min-latency junk",
    "id": b"2\n",
    "forever": b"-1\n",
    "over": b"10000",
}


def main():
    for target, seeds in SEEDS.items():
        d = os.path.join(HERE, target)
        os.makedirs(d, exist_ok=True)
        for name, data in seeds.items():
            with open(os.path.join(d, name), "wb") as f:
                f.write(data)


if __name__ == "__main__":
    main()
