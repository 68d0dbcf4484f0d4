// SPDX-License-Identifier: GPL-2.0-or-later

//! stampio: the late-write checker's writer and reader (see stamp.rs).
//!
//! ```text
//! stampio write <dev> <run> <first block> <blocks> <seconds> <log>
//! stampio check <dev> <run> <log>...
//! ```
//!
//! `write` rewrites blocks `first..first+blocks` of `dev` in turn, one at a
//! time through O_DIRECT, for `seconds`, each write with the next stamp;
//! then writes to `log` one line per block, `<block> <last acked stamp>
//! [<failed stamp>,...]`, and prints `writes=N ok=N failed=N max_ms=N
//! oldest_ack_ms=N`: the longest write, and when the block whose last
//! acknowledged write is the oldest got it (ms from the start; 0 if a block
//! never had one).
//! `check` reads every block the logs name and judges it; it prints the
//! count of each verdict and the first bad blocks, and exits 0 if every
//! block is good, 2 if one is not, 1 if it could not read.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, Write};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use stampio::{judge, Stamp, Told, Verdict, BLOCK};

/// O_DIRECT of x86_64 Linux: the IO goes to the device, not the page cache.
const O_DIRECT: i32 = 0o40000;

/// A block-aligned buffer of one block, as O_DIRECT needs, in safe code:
/// the aligned block within a buffer of two.
struct Aligned {
    buf: Vec<u8>,
    off: usize,
}

impl Aligned {
    fn new() -> Self {
        let buf = vec![0u8; 2 * BLOCK];
        let off = buf.as_ptr().align_offset(BLOCK);
        assert!(off <= BLOCK, "no aligned block in the buffer");
        Aligned { buf, off }
    }
    fn get(&mut self) -> &mut [u8] {
        &mut self.buf[self.off..self.off + BLOCK]
    }
}

fn open(dev: &str, write: bool) -> io::Result<File> {
    OpenOptions::new()
        .read(true)
        .write(write)
        .custom_flags(O_DIRECT)
        .open(dev)
}

fn num(s: &str, what: &str) -> Result<u64, String> {
    s.parse().map_err(|_| format!("{what}: not a number: {s}"))
}

fn write(args: &[String]) -> Result<(), String> {
    let [dev, run, first, blocks, secs, log] = args else {
        return Err("write <dev> <run> <first block> <blocks> <seconds> <log>".into());
    };
    let (run, first, blocks) = (
        num(run, "run")?,
        num(first, "first block")?,
        num(blocks, "blocks")?,
    );
    let secs = num(secs, "seconds")?;
    if blocks == 0 {
        return Err("blocks: at least 1".into());
    }
    let f = open(dev, true).map_err(|e| format!("{dev}: {e}"))?;
    let mut told: BTreeMap<u64, Told> = (first..first + blocks)
        .map(|b| (b, Told::default()))
        .collect();
    // When each block's last acknowledged write completed, from the start.
    let mut last_ack: BTreeMap<u64, Duration> = BTreeMap::new();
    let start = Instant::now();
    let mut buf = Aligned::new();
    let (mut seq, mut ok, mut failed, mut max) = (0u64, 0u64, 0u64, Duration::ZERO);
    let end = start + Duration::from_secs(secs);
    while Instant::now() < end {
        let block = first + seq % blocks;
        seq += 1;
        Stamp { block, run, seq }.fill(buf.get());
        let t0 = Instant::now();
        let done = f.write_at(buf.get(), block * BLOCK as u64);
        max = max.max(t0.elapsed());
        let good = matches!(done, Ok(n) if n == BLOCK);
        told.entry(block).or_default().record(seq, good);
        if good {
            ok += 1;
            last_ack.insert(block, start.elapsed());
        } else {
            failed += 1;
            // With no path up every write fails at once: do not spin.
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    let mut out = String::new();
    for (b, t) in &told {
        let failed: Vec<String> = t.failed.iter().map(u64::to_string).collect();
        out += &format!("{b} {} {}\n", t.acked, failed.join(","));
    }
    std::fs::write(log, out).map_err(|e| format!("{log}: {e}"))?;
    // The block acknowledged longest ago: 0 if one never was.
    let oldest = if last_ack.len() as u64 == blocks {
        last_ack.values().min().copied().unwrap_or_default()
    } else {
        Duration::ZERO
    };
    println!(
        "writes={seq} ok={ok} failed={failed} max_ms={} oldest_ack_ms={}",
        max.as_millis(),
        oldest.as_millis()
    );
    Ok(())
}

fn read_log(path: &str, into: &mut BTreeMap<u64, Told>) -> Result<(), String> {
    let f = File::open(path).map_err(|e| format!("{path}: {e}"))?;
    for line in BufReader::new(f).lines() {
        let line = line.map_err(|e| format!("{path}: {e}"))?;
        let mut w = line.split_whitespace();
        let (Some(b), Some(acked)) = (w.next(), w.next()) else {
            return Err(format!("{path}: bad line: {line}"));
        };
        let mut t = Told {
            acked: num(acked, "acked")?,
            failed: Vec::new(),
        };
        if let Some(list) = w.next() {
            for s in list.split(',') {
                t.failed.push(num(s, "failed")?);
            }
        }
        into.insert(num(b, "block")?, t);
    }
    Ok(())
}

fn check(args: &[String]) -> Result<bool, String> {
    let [dev, run, logs @ ..] = args else {
        return Err("check <dev> <run> <log>...".into());
    };
    let run = num(run, "run")?;
    let mut told = BTreeMap::new();
    for l in logs {
        read_log(l, &mut told)?;
    }
    let f = open(dev, false).map_err(|e| format!("{dev}: {e}"))?;
    let mut buf = Aligned::new();
    let mut counts: BTreeMap<&str, u64> = BTreeMap::new();
    let mut bad = Vec::new();
    for (&b, t) in &told {
        f.read_exact_at(buf.get(), b * BLOCK as u64)
            .map_err(|e| format!("{dev}: block {b}: {e}"))?;
        let read = Stamp::parse(buf.get());
        let v = judge(b, run, t, read);
        *counts.entry(name(v)).or_default() += 1;
        if !v.good() {
            let holds = match read {
                Ok(s) => format!("stamp {} of block {} run {}", s.seq, s.block, s.run),
                Err(e) => format!("{e:?}"),
            };
            bad.push(format!(
                "block {b}: {}: holds {holds}, last acknowledged {}",
                name(v),
                t.acked
            ));
        }
    }
    let summary: Vec<String> = counts.iter().map(|(k, n)| format!("{k}={n}")).collect();
    println!("blocks={} {}", told.len(), summary.join(" "));
    for line in bad.iter().take(10) {
        println!("{line}");
    }
    Ok(bad.is_empty())
}

fn name(v: Verdict) -> &'static str {
    match v {
        Verdict::Last => "last",
        Verdict::LaterFailed => "later_failed",
        Verdict::Unwritten => "unwritten",
        Verdict::Stale => "stale",
        Verdict::Wrong => "wrong",
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let res = match args.first().map(String::as_str) {
        Some("write") => write(&args[1..]).map(|()| true),
        Some("check") => check(&args[1..]),
        _ => Err("usage: stampio write|check ...".into()),
    };
    let _ = io::stdout().flush();
    match res {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(2),
        Err(e) => {
            eprintln!("stampio: {e}");
            ExitCode::from(1)
        }
    }
}
