//! Developer aid for profiling compiled code: with `RV32VM_JIT_DUMP=DIR`, every piece of
//! compiled code (a tier-1 block, a tier-2 region) is appended to `DIR/perf-PID.map` (the
//! format `perf report` reads for JIT symbols) and its bytes to `DIR/PREFIX-PID.bin`, at the
//! offset named in `DIR/PREFIX-PID.idx` (`host-address file-offset length guest-pc`), for
//! `objdump -b binary`. Tier 1 (the CPU thread) and tier 2 (its compile thread) write the same
//! map, a whole line per write, and code files of their own.

use std::fs::File;
use std::io::Write;
use std::path::PathBuf;

/// The dump files of one writer.
pub struct CodeDump {
    /// The dump directory (`RV32VM_JIT_DUMP`).
    pub dir: PathBuf,
    map: File,
    idx: File,
    bin: File,
    bin_len: u64,
}

impl CodeDump {
    /// The dump files for code files named `prefix`, if `RV32VM_JIT_DUMP` asks for them.
    pub fn from_env(prefix: &str) -> Option<CodeDump> {
        let dir = PathBuf::from(std::env::var_os("RV32VM_JIT_DUMP")?);
        let pid = std::process::id();
        let open = |name: String| {
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(dir.join(name))
        };
        let files = (|| {
            Ok::<_, std::io::Error>((
                open(format!("perf-{pid}.map"))?,
                open(format!("{prefix}-{pid}.idx"))?,
                open(format!("{prefix}-{pid}.bin"))?,
            ))
        })();
        match files {
            Ok((map, idx, bin)) => Some(CodeDump {
                dir,
                map,
                idx,
                bin,
                bin_len: 0,
            }),
            Err(e) => {
                tracing::warn!("RV32VM_JIT_DUMP: cannot open dump files: {e}");
                None
            }
        }
    }

    /// Record `code`, which lives at host address `entry`, as `name` (guest `pc`).
    pub fn record(&mut self, entry: usize, pc: u32, name: &str, code: &[u8]) {
        let len = code.len();
        // One write per line: the other tier may append to the same map at the same time.
        let line = format!("{entry:x} {len:x} {name}\n");
        let written = self
            .map
            .write_all(line.as_bytes())
            .and_then(|_| {
                let line = format!("{entry:x} {} {len} {pc:08x}\n", self.bin_len);
                self.idx.write_all(line.as_bytes())
            })
            .and_then(|_| self.bin.write_all(code));
        match written {
            Ok(()) => self.bin_len += len as u64,
            Err(e) => tracing::warn!("RV32VM_JIT_DUMP: write failed: {e}"),
        }
    }
}
