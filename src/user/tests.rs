//! Tests of the process as the engine sees it: loading, translation, and syscalls and traps
//! through `handle_trap`, with the hart's registers set as a guest would set them.

use std::path::PathBuf;

use super::syscall::nr;
use super::*;
use crate::elf::tests::TestElf;

/// A temporary file removed on drop.
struct TempFile(PathBuf);

impl TempFile {
    fn new(tag: &str, contents: &[u8]) -> TempFile {
        let path = std::env::temp_dir().join(format!(
            "rv32vm-user-{}-{tag}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        std::fs::write(&path, contents).expect("write temp file");
        TempFile(path)
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

fn start(args: &[&str]) -> (Process, Hart, TempFile) {
    let elf = TempFile::new("prog", &TestElf::default().build());
    let opts = UserOptions {
        program: elf.0.clone(),
        args: args.iter().map(|s| s.to_string()).collect(),
        ..UserOptions::default()
    };
    let (p, h) = Process::new(&opts).expect("load test program");
    (p, h, elf)
}

/// Issue syscall `number`; returns a0 as a signed value.
fn sys(p: &mut Process, h: &mut Hart, number: u32, args: &[u32]) -> Result<i32, Stop> {
    for (i, a) in args.iter().enumerate() {
        h.x[10 + i] = *a;
    }
    h.x[17] = number;
    let pc = h.pc;
    p.handle_trap(h, Trap::new(Exception::EcallFromU, 0))?;
    assert_eq!(h.pc, pc + 4, "pc steps over the ecall");
    Ok(h.x[10] as i32)
}

fn ok(r: Result<i32, Stop>) -> i32 {
    r.expect("syscall returned")
}

/// mmap2 of anonymous private memory.
fn mmap_anon(
    p: &mut Process,
    h: &mut Hart,
    addr: u32,
    len: u32,
    prot: u32,
    extra_flags: u32,
) -> i32 {
    ok(sys(
        p,
        h,
        nr::MMAP2,
        &[addr, len, prot, 0x22 | extra_flags, u32::MAX, 0],
    ))
}

fn can(p: &mut Process, h: &mut Hart, va: u32, access: Access) -> bool {
    p.translate(h, va, access).is_ok()
}

#[test]
fn process_starts_in_user_mode_with_argv_on_the_stack() {
    let (p, h, elf) = start(&["one", "two"]);
    assert_eq!(h.pc, 0x11000);
    assert_eq!(h.prv, Priv::User);
    assert_eq!(h.csr.mstatus & MSTATUS_FS, MSTATUS_FS_INITIAL);
    let sp = h.x[2];
    assert_eq!(sp % 16, 0);
    assert!(sp < STACK_TOP && sp > STACK_TOP - STACK_SIZE);
    assert_eq!(p.mem.read_u32(sp), Ok(3));
    let arg = |i: u32| {
        let ptr = p.mem.read_u32(sp + 4 + 4 * i).expect("argv");
        p.mem
            .read_cstr(ptr, 4096)
            .expect("string")
            .expect("terminated")
    };
    assert_eq!(arg(0), elf.0.as_os_str().as_encoded_bytes());
    assert_eq!(arg(1), b"one");
    assert_eq!(arg(2), b"two");
    assert_eq!(p.mem.read_u32(sp + 16), Ok(0), "argv NULL");
    assert_eq!(p.brk(), 0x15000);
}

#[test]
fn missing_and_invalid_programs_are_load_errors() {
    let opts = UserOptions {
        program: PathBuf::from("/nonexistent/prog"),
        ..UserOptions::default()
    };
    let err = Process::new(&opts).err().expect("fails");
    assert!(err.to_string().contains("/nonexistent/prog"), "{err}");
    let not_elf = TempFile::new("notelf", b"#!/bin/sh\necho hi\n");
    let opts = UserOptions {
        program: not_elf.0.clone(),
        ..UserOptions::default()
    };
    let err = Process::new(&opts).err().expect("fails");
    assert!(matches!(err, UserError::Elf { .. }), "{err}");
    assert!(err.to_string().contains("not an ELF file"), "{err}");
}

#[test]
fn programs_that_are_not_regular_files_are_refused() {
    let opts = UserOptions {
        program: PathBuf::from("/dev/zero"),
        ..UserOptions::default()
    };
    let err = Process::new(&opts).err().expect("fails");
    assert!(
        matches!(
            err,
            UserError::Read(crate::hostfile::InputError::NotRegular { .. })
        ),
        "{err}"
    );
}

#[test]
fn proc_self_maps_lists_the_guest_mappings() {
    let (mut p, mut h, elf) = start(&[]);
    let anon = mmap_anon(&mut p, &mut h, 0, 0x3000, 3, 0) as u32;
    assert_eq!(
        sys(&mut p, &mut h, nr::MPROTECT, &[anon + 0x1000, 0x1000, 1]),
        Ok(0)
    );
    let text = String::from_utf8(p.maps_text()).expect("utf-8");
    let lines: Vec<&str> = text.lines().collect();
    let program = std::fs::canonicalize(&elf.0).expect("canonical path");
    let program = program.to_str().expect("utf-8 path");
    // Linux's 32-bit layout: the name starts in column 50.
    let text_line = lines
        .iter()
        .find(|l| l.starts_with("00011000-") || l.starts_with("00010000-"))
        .expect("program text listed");
    assert!(text_line.contains(" r-xp "), "{text_line}");
    assert!(text_line.ends_with(program), "{text_line}");
    assert_eq!(text_line.find('/'), Some(49), "{text_line}");
    let stack = lines.last().expect("lines");
    assert!(
        stack.starts_with(&format!(
            "{:08x}-c0000000 rw-p 00000000 00:00 0",
            STACK_TOP - STACK_SIZE
        )) && stack.ends_with(" [stack]"),
        "{stack}"
    );
    let split = |at: u32, perms: &str| {
        lines
            .iter()
            .any(|l| l.starts_with(&format!("{at:08x}-{:08x} {perms} ", at + 0x1000)))
    };
    assert!(split(anon + 0x1000, "r--p"), "{text}");
    assert!(split(anon + 0x2000, "rw-p"), "{text}");
}

#[test]
fn proc_self_maps_is_made_again_by_a_read_from_the_start() {
    let (mut p, mut h, _elf) = start(&[]);
    let fd = p
        .open_proc_self(super::procfs::ProcSelfFile::Maps, 0)
        .expect("open")
        .expect("faked");
    // Mapped after the open: only a text made at the read shows it; a read from the start
    // again (pread at 0) shows what was mapped since, as on Linux.
    let buf = mmap_anon(&mut p, &mut h, 0, 0x10000, 3, 0) as u32;
    let read_maps = |p: &mut Process, h: &mut Hart, number: u32| {
        let n = ok(sys(p, h, number, &[fd, buf, 0x10000, 0, 0])) as usize;
        let mut text = vec![0u8; n];
        p.mem.read(buf, &mut text).expect("read back");
        String::from_utf8_lossy(&text).into_owned()
    };
    let text = read_maps(&mut p, &mut h, nr::READ);
    assert!(text.contains(&format!("{buf:08x}-")), "{text}");
    let later = mmap_anon(&mut p, &mut h, 0, 0x1000, 1, 0) as u32;
    let text = read_maps(&mut p, &mut h, nr::PREAD64);
    assert!(text.contains(&format!("{later:08x}-")), "{text}");
}

#[test]
fn proc_self_stat_describes_the_guest() {
    let (mut p, h, _elf) = start(&["arg"]);
    let text = String::from_utf8(p.stat_text()).expect("utf-8");
    let (head, rest) = text.rsplit_once(") ").expect("name in parentheses");
    // The name is the program file's, cut to 15 bytes.
    assert!(
        head.starts_with(&format!("{} (rv32vm-user-", std::process::id())),
        "{text}"
    );
    // rest[0] is field 3, so field N is rest[N - 3].
    let fields: Vec<i128> = rest
        .split_whitespace()
        .skip(1)
        .map(|f| f.parse().expect("number"))
        .collect();
    let field = |n: usize| fields[n - 4] as u64;
    assert_eq!(field(20), 1, "threads: the guest's, not rv32vm's");
    assert_eq!(field(28), u64::from(h.x[2]), "startstack is the initial sp");
    assert!(
        field(26) <= u64::from(h.pc) && u64::from(h.pc) < field(27),
        "code range: {text}"
    );
    assert!(field(23) > 0 && field(23) < 1 << 32, "mapped size: {text}");
    assert_eq!(field(47), u64::from(p.brk()), "heap start");
}

#[test]
fn translate_follows_page_permissions() {
    let (mut p, mut h, _elf) = start(&[]);
    assert!(can(&mut p, &mut h, 0x11000, Access::Execute));
    assert!(can(&mut p, &mut h, 0x11000, Access::Read));
    assert!(!can(&mut p, &mut h, 0x11000, Access::Write));
    assert!(can(&mut p, &mut h, 0x12000, Access::Write));
    assert!(!can(&mut p, &mut h, 0x12000, Access::Execute));
    assert_eq!(
        p.translate(&mut h, 0x10, Access::Read),
        Err(Trap::new(Exception::LoadPageFault, 0x10))
    );
    assert_eq!(
        p.translate(&mut h, 0x11000, Access::Write),
        Err(Trap::new(Exception::StorePageFault, 0x11000))
    );
    assert_eq!(
        p.translate(&mut h, 0x12000, Access::Execute),
        Err(Trap::new(Exception::InsnPageFault, 0x12000))
    );
    match p.translate(&mut h, 0x12004, Access::Read) {
        Ok(Target::Ram { host, cacheable }) => {
            assert!(cacheable);
            assert_eq!(host, p.mem.host_ptr(0x12004));
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn brk_grows_and_shrinks() {
    let (mut p, mut h, _elf) = start(&[]);
    let base = ok(sys(&mut p, &mut h, nr::BRK, &[0])) as u32;
    assert_eq!(base, 0x15000);
    assert!(!can(&mut p, &mut h, base, Access::Write));
    let grown = ok(sys(&mut p, &mut h, nr::BRK, &[base + 0x2800])) as u32;
    assert_eq!(grown, base + 0x2800);
    assert!(can(&mut p, &mut h, base + 0x2fff, Access::Write));
    assert!(!can(&mut p, &mut h, base + 0x3000, Access::Read));
    assert_eq!(
        ok(sys(&mut p, &mut h, nr::BRK, &[base + 0x1000])) as u32,
        base + 0x1000
    );
    assert!(!can(&mut p, &mut h, base + 0x1000, Access::Read));
    // Below the start: unchanged.
    assert_eq!(
        ok(sys(&mut p, &mut h, nr::BRK, &[0x1000])) as u32,
        base + 0x1000
    );
    // Into an existing mapping: refused, unchanged.
    let fixed = mmap_anon(&mut p, &mut h, base + 0x10000, 0x1000, 3, 0x10);
    assert_eq!(fixed as u32, base + 0x10000);
    assert_eq!(
        ok(sys(&mut p, &mut h, nr::BRK, &[base + 0x20000])) as u32,
        base + 0x1000
    );
}

#[test]
fn mmap_munmap_mprotect_bookkeeping() {
    let (mut p, mut h, _elf) = start(&[]);
    let a = mmap_anon(&mut p, &mut h, 0, 0x3000, 3, 0) as u32;
    let b = mmap_anon(&mut p, &mut h, 0, 0x1000, 1, 0) as u32;
    assert_eq!(a % 4096, 0);
    assert!((MMAP_MIN..MMAP_TOP).contains(&a));
    assert!(b + 0x1000 <= a || b >= a + 0x3000, "disjoint");
    assert!(can(&mut p, &mut h, a + 0x2fff, Access::Write));
    assert!(can(&mut p, &mut h, b, Access::Read));
    assert!(!can(&mut p, &mut h, b, Access::Write));

    assert_eq!(
        ok(sys(&mut p, &mut h, nr::MPROTECT, &[a + 0x1000, 0x1000, 1])),
        0
    );
    assert!(!can(&mut p, &mut h, a + 0x1000, Access::Write));
    assert!(can(&mut p, &mut h, a + 0x2000, Access::Write));
    // mprotect of unmapped memory: ENOMEM.
    assert_eq!(
        ok(sys(&mut p, &mut h, nr::MPROTECT, &[0x5000_0000, 0x1000, 1])),
        -libc::ENOMEM
    );

    assert_eq!(ok(sys(&mut p, &mut h, nr::MUNMAP, &[a, 0x1000])), 0);
    assert!(!can(&mut p, &mut h, a, Access::Read));
    assert!(can(&mut p, &mut h, a + 0x1000, Access::Read));
    assert_eq!(
        ok(sys(&mut p, &mut h, nr::MUNMAP, &[a + 1, 0x1000])),
        -libc::EINVAL
    );
    assert_eq!(ok(sys(&mut p, &mut h, nr::MUNMAP, &[a, 0])), -libc::EINVAL);

    // Fixed mappings and NOREPLACE.
    let f = mmap_anon(&mut p, &mut h, 0x2000_0000, 0x2000, 3, 0x10);
    assert_eq!(f as u32, 0x2000_0000);
    let clash = mmap_anon(&mut p, &mut h, 0x2000_1000, 0x1000, 3, 0x10_0000);
    assert_eq!(clash, -libc::EEXIST);
    assert_eq!(
        mmap_anon(&mut p, &mut h, 0x2000_0001, 0x1000, 3, 0x10),
        -libc::EINVAL
    );
    assert_eq!(mmap_anon(&mut p, &mut h, 0, 0, 3, 0), -libc::EINVAL);
    assert_eq!(
        mmap_anon(&mut p, &mut h, 0xbfff_f000, 0x2000, 3, 0x10),
        -libc::ENOMEM
    );
    // A hint that is free is honoured.
    assert_eq!(
        mmap_anon(&mut p, &mut h, 0x3000_0000, 0x1000, 3, 0) as u32,
        0x3000_0000
    );
}

#[test]
fn mapping_changes_flush_tlb_and_code() {
    let (mut p, mut h, _elf) = start(&[]);
    let a = mmap_anon(&mut p, &mut h, 0, 0x1000, 7, 0) as u32;
    h.tlb.insert(a, Access::Execute, p.mem.host_ptr(a));
    h.x[10] = a;
    h.x[11] = 0x1000;
    h.x[17] = nr::MUNMAP;
    let r = p.handle_trap(&mut h, Trap::new(Exception::EcallFromU, 0));
    assert_eq!(r, Ok(Resume::FlushCode));
    assert_eq!(h.tlb.lookup(a, Access::Execute), None);
    // Unmapping plain data needs no code flush.
    let d = mmap_anon(&mut p, &mut h, 0, 0x1000, 3, 0) as u32;
    h.x[10] = d;
    h.x[11] = 0x1000;
    h.x[17] = nr::MUNMAP;
    let r = p.handle_trap(&mut h, Trap::new(Exception::EcallFromU, 0));
    assert_eq!(r, Ok(Resume::Continue));
}

#[test]
fn mremap_grows_in_place_or_moves_with_contents() {
    let (mut p, mut h, _elf) = start(&[]);
    let a = mmap_anon(&mut p, &mut h, 0x2000_0000, 0x2000, 3, 0x10) as u32;
    p.mem.write(a + 0x1ff0, b"keep me").expect("write");
    // Free space above: grows in place.
    let g = ok(sys(&mut p, &mut h, nr::MREMAP, &[a, 0x2000, 0x4000, 0, 0])) as u32;
    assert_eq!(g, a);
    assert!(can(&mut p, &mut h, a + 0x3fff, Access::Write));
    // Block the space above; without MAYMOVE growth fails, with it the mapping moves.
    mmap_anon(&mut p, &mut h, a + 0x4000, 0x1000, 3, 0x10);
    let r = ok(sys(&mut p, &mut h, nr::MREMAP, &[a, 0x4000, 0x8000, 0, 0]));
    assert_eq!(r, -libc::ENOMEM);
    let m = ok(sys(&mut p, &mut h, nr::MREMAP, &[a, 0x4000, 0x8000, 1, 0])) as u32;
    assert_ne!(m, a);
    assert_eq!(p.mem.slice(m + 0x1ff0, 7).expect("moved"), b"keep me");
    assert!(can(&mut p, &mut h, m + 0x7fff, Access::Write));
    assert!(!can(&mut p, &mut h, a, Access::Read), "old range unmapped");
    // Shrink.
    assert_eq!(
        ok(sys(&mut p, &mut h, nr::MREMAP, &[m, 0x8000, 0x1000, 0, 0])) as u32,
        m
    );
    assert!(!can(&mut p, &mut h, m + 0x1000, Access::Read));
    // Unmapped source.
    let r = ok(sys(
        &mut p,
        &mut h,
        nr::MREMAP,
        &[0x6000_0000, 0x1000, 0x2000, 1, 0],
    ));
    assert_eq!(r, -libc::EFAULT);
}

/// Put a NUL-terminated string into fresh guest memory and return its address.
fn guest_str(p: &mut Process, h: &mut Hart, s: &str) -> u32 {
    let a = mmap_anon(p, h, 0, 0x1000, 3, 0) as u32;
    let mut bytes = s.as_bytes().to_vec();
    bytes.push(0);
    p.mem.write(a, &bytes).expect("write");
    a
}

#[test]
fn files_open_read_mmap_and_close() {
    let (mut p, mut h, _elf) = start(&[]);
    let file = TempFile::new("data", b"0123456789abcdef");
    let path = guest_str(&mut p, &mut h, file.0.to_str().expect("utf-8 temp path"));
    let fd = ok(sys(&mut p, &mut h, nr::OPENAT, &[AT_FDCWD_U32, path, 0, 0]));
    assert!(fd >= 3, "{fd}");
    let fd = fd as u32;
    let buf = mmap_anon(&mut p, &mut h, 0, 0x1000, 3, 0) as u32;
    assert_eq!(ok(sys(&mut p, &mut h, nr::READ, &[fd, buf, 4])), 4);
    assert_eq!(p.mem.slice(buf, 4).expect("read"), b"0123");
    // _llseek(fd, high, low, result*, SEEK_SET)
    assert_eq!(
        ok(sys(&mut p, &mut h, nr::LLSEEK, &[fd, 0, 10, buf + 64, 0])),
        0
    );
    assert_eq!(p.mem.read_u64(buf + 64), Ok(10));
    assert_eq!(ok(sys(&mut p, &mut h, nr::READ, &[fd, buf, 100])), 6);
    // Private file mapping: contents read in, the rest of the page zero.
    let m = ok(sys(&mut p, &mut h, nr::MMAP2, &[0, 0x1000, 1, 2, fd, 0])) as u32;
    assert_eq!(p.mem.slice(m, 17).expect("mapped"), b"0123456789abcdef\0");
    // statx size.
    let empty = guest_str(&mut p, &mut h, "");
    let r = ok(sys(
        &mut p,
        &mut h,
        nr::STATX,
        &[fd, empty, 0x1000, 0x7ff, buf],
    ));
    assert_eq!(r, 0);
    assert_eq!(p.mem.read_u64(buf + 40), Ok(16), "stx_size");
    assert_eq!(ok(sys(&mut p, &mut h, nr::CLOSE, &[fd])), 0);
    assert_eq!(ok(sys(&mut p, &mut h, nr::CLOSE, &[fd])), -libc::EBADF);
    assert_eq!(
        ok(sys(&mut p, &mut h, nr::READ, &[fd, buf, 1])),
        -libc::EBADF
    );
}

const AT_FDCWD_U32: u32 = fs::AT_FDCWD as u32;

#[test]
fn bad_guest_pointers_give_efault() {
    let (mut p, mut h, _elf) = start(&[]);
    assert_eq!(
        ok(sys(&mut p, &mut h, nr::WRITE, &[1, 0xdead_0000, 10])),
        -libc::EFAULT
    );
    assert_eq!(
        ok(sys(&mut p, &mut h, nr::OPENAT, &[AT_FDCWD_U32, 0x10, 0, 0])),
        -libc::EFAULT
    );
    assert_eq!(
        ok(sys(&mut p, &mut h, nr::UNAME, &[0xffff_fff0])),
        -libc::EFAULT
    );
    // Reading into read-only memory (the text segment) is EFAULT too.
    let mut fds = [0u32; 2];
    let buf = mmap_anon(&mut p, &mut h, 0, 0x1000, 3, 0) as u32;
    assert_eq!(ok(sys(&mut p, &mut h, nr::PIPE2, &[buf, 0])), 0);
    fds[0] = p.mem.read_u32(buf).expect("fd");
    fds[1] = p.mem.read_u32(buf + 4).expect("fd");
    p.mem.write(buf + 16, b"xy").expect("write");
    assert_eq!(
        ok(sys(&mut p, &mut h, nr::WRITE, &[fds[1], buf + 16, 2])),
        2
    );
    assert_eq!(
        ok(sys(&mut p, &mut h, nr::READ, &[fds[0], 0x11000, 2])),
        -libc::EFAULT
    );
    assert_eq!(ok(sys(&mut p, &mut h, nr::READ, &[fds[0], buf + 32, 2])), 2);
    assert_eq!(p.mem.slice(buf + 32, 2).expect("read"), b"xy");
}

#[test]
fn unknown_syscall_is_enosys_and_exit_stops() {
    let (mut p, mut h, _elf) = start(&[]);
    assert_eq!(ok(sys(&mut p, &mut h, 9999, &[])), -libc::ENOSYS);
    assert_eq!(ok(sys(&mut p, &mut h, nr::RSEQ, &[])), -libc::ENOSYS);
    assert_eq!(
        sys(&mut p, &mut h, nr::EXIT_GROUP, &[0x1_2a]),
        Err(Stop::Exit(0x2a))
    );
}

#[test]
fn execveat_runs_an_open_program_and_refuses_as_linux_does() {
    let (mut p, mut h, elf) = start(&[]);
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&elf.0, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let entry = h.pc;
    let empty = guest_str(&mut p, &mut h, "");
    let program = guest_str(&mut p, &mut h, elf.0.to_str().expect("utf-8 temp path"));
    let fd = ok(sys(
        &mut p,
        &mut h,
        nr::OPENAT,
        &[AT_FDCWD_U32, program, 0, 0],
    )) as u32;
    let link_path = std::env::temp_dir().join(format!("rv32vm-execveat-{}", std::process::id()));
    let _ = std::fs::remove_file(&link_path);
    std::os::unix::fs::symlink(&elf.0, &link_path).expect("symlink");
    let link = guest_str(&mut p, &mut h, link_path.to_str().expect("utf-8 temp path"));
    const AT_SYMLINK_NOFOLLOW: u32 = 0x100;
    const AT_EMPTY_PATH: u32 = 0x1000;
    let cases = [
        ([fd, empty, 0, 0, 0, 0], -libc::ENOENT),
        ([fd, empty, 0, 0, 1, 0], -libc::EINVAL),
        ([77, empty, 0, 0, AT_EMPTY_PATH, 0], -libc::EBADF),
        (
            [AT_FDCWD_U32, link, 0, 0, AT_SYMLINK_NOFOLLOW, 0],
            -libc::ELOOP,
        ),
    ];
    for (args, expected) in cases {
        assert_eq!(
            ok(sys(&mut p, &mut h, nr::EXECVEAT, &args)),
            expected,
            "{args:x?}"
        );
    }
    std::fs::remove_file(&link_path).expect("remove symlink");
    // fexecve of the program itself: it starts again at its entry.
    h.pc += 0x40;
    for (i, a) in [fd, empty, 0, 0, AT_EMPTY_PATH].iter().enumerate() {
        h.x[10 + i] = *a;
    }
    h.x[17] = nr::EXECVEAT;
    p.handle_trap(&mut h, Trap::new(Exception::EcallFromU, 0))
        .expect("execveat returns to the new program");
    assert_eq!(h.pc, entry, "a0 = {}", h.x[10] as i32);
}

#[test]
fn mincore_reports_the_pages_in_memory() {
    let (mut p, mut h, _elf) = start(&[]);
    let area = mmap_anon(&mut p, &mut h, 0, 0x3000, 3, 0) as u32;
    let vec = mmap_anon(&mut p, &mut h, 0, 0x1000, 3, 0) as u32;
    p.mem.write(area, b"x").expect("touch the first page");
    p.mem
        .write(area + 0x2000, b"x")
        .expect("touch the third page");
    assert_eq!(
        ok(sys(&mut p, &mut h, nr::MINCORE, &[area, 0x2001, vec])),
        0
    );
    assert_eq!(p.mem.slice(vec, 3).expect("vec"), &[1, 0, 1]);
    assert_eq!(
        ok(sys(&mut p, &mut h, nr::MINCORE, &[area + 1, 1, vec])),
        -libc::EINVAL
    );
    assert_eq!(
        ok(sys(&mut p, &mut h, nr::MUNMAP, &[area + 0x1000, 0x1000])),
        0
    );
    assert_eq!(
        ok(sys(&mut p, &mut h, nr::MINCORE, &[area, 0x3000, vec])),
        -libc::ENOMEM
    );
    assert_eq!(
        ok(sys(&mut p, &mut h, nr::MINCORE, &[area, 0x1000, 0x10])),
        -libc::EFAULT
    );
}

#[test]
fn faults_become_fatal_signals() {
    let (mut p, mut h, _elf) = start(&[]);
    h.pc = 0x11000;
    let segv = p.handle_trap(&mut h, Trap::new(Exception::LoadPageFault, 0));
    match segv {
        Err(Stop::Fatal { status, message }) => {
            assert_eq!(status, 139);
            assert!(
                message.contains("SIGSEGV") && message.contains("0x00011000"),
                "{message}"
            );
        }
        other => panic!("{other:?}"),
    }
    let ill = p.handle_trap(&mut h, Trap::illegal(0));
    assert!(
        matches!(ill, Err(Stop::Fatal { status: 132, .. })),
        "{ill:?}"
    );
}

#[test]
fn abort_pattern_kills_with_sigabrt() {
    let (mut p, mut h, _elf) = start(&[]);
    let set = mmap_anon(&mut p, &mut h, 0, 0x1000, 3, 0) as u32;
    p.mem.write_u64(set, u64::MAX).expect("write");
    let pid = p.pid;
    // Block everything, raise SIGABRT (pending), then unblock: the signal kills.
    assert_eq!(
        ok(sys(&mut p, &mut h, nr::RT_SIGPROCMASK, &[0, set, 0, 8])),
        0
    );
    assert_eq!(ok(sys(&mut p, &mut h, nr::TKILL, &[pid, 6])), 0);
    let r = sys(&mut p, &mut h, nr::RT_SIGPROCMASK, &[1, set, 0, 8]);
    assert!(matches!(r, Err(Stop::Fatal { status: 134, .. })), "{r:?}");
}

#[test]
fn ignored_signals_do_not_kill() {
    let (mut p, mut h, _elf) = start(&[]);
    let act = mmap_anon(&mut p, &mut h, 0, 0x1000, 3, 0) as u32;
    p.mem.write_u32(act, 1).expect("SIG_IGN");
    let pid = p.pid;
    assert_eq!(
        ok(sys(
            &mut p,
            &mut h,
            nr::RT_SIGACTION,
            &[10, act, act + 32, 8]
        )),
        0
    );
    assert_eq!(p.mem.read_u32(act + 32), Ok(0), "old action was SIG_DFL");
    assert_eq!(ok(sys(&mut p, &mut h, nr::KILL, &[pid, 10])), 0);
    // SIGCHLD's default action is to ignore.
    assert_eq!(ok(sys(&mut p, &mut h, nr::KILL, &[0, 17])), 0);
    let r = sys(&mut p, &mut h, nr::KILL, &[0, 15]);
    assert!(matches!(r, Err(Stop::Fatal { status: 143, .. })), "{r:?}");
}

#[test]
fn dup3_and_fcntl_follow_the_fd_table() {
    let (mut p, mut h, _elf) = start(&[]);
    assert_eq!(ok(sys(&mut p, &mut h, nr::DUP3, &[1, 7, 0o2_000_000])), 7);
    assert_eq!(
        ok(sys(&mut p, &mut h, nr::FCNTL64, &[7, 1, 0])),
        1,
        "FD_CLOEXEC"
    );
    assert_eq!(ok(sys(&mut p, &mut h, nr::FCNTL64, &[7, 2, 0])), 0);
    assert_eq!(ok(sys(&mut p, &mut h, nr::FCNTL64, &[7, 1, 0])), 0);
    assert_eq!(ok(sys(&mut p, &mut h, nr::DUP3, &[7, 7, 0])), -libc::EINVAL);
    assert_eq!(
        ok(sys(&mut p, &mut h, nr::FCNTL64, &[7, 0, 5])),
        5,
        "F_DUPFD >= 5"
    );
    assert_eq!(ok(sys(&mut p, &mut h, nr::DUP, &[7])), 3);
    assert_eq!(ok(sys(&mut p, &mut h, nr::DUP, &[99])), -libc::EBADF);
}

#[test]
fn handler_runs_and_sigreturn_restores_the_context() {
    let (mut p, mut h, _elf) = start(&[]);
    let act = mmap_anon(&mut p, &mut h, 0, 0x1000, 3, 0) as u32;
    // handler 0x11000, flags SA_SIGINFO, empty mask
    p.mem.write_u32(act, 0x11000).expect("write");
    p.mem.write_u32(act + 4, 4).expect("write");
    assert_eq!(
        ok(sys(&mut p, &mut h, nr::RT_SIGACTION, &[10, act, 0, 8])),
        0
    );
    h.x[9] = 0x5555;
    h.f[3] = 0x1234_5678;
    let pid = p.pid;
    let pc_before = h.pc;
    let sp_before = h.x[2];
    // kill(getpid(), SIGUSR1): the handler is entered at syscall return.
    h.x[10] = pid;
    h.x[11] = 10;
    h.x[17] = nr::KILL;
    assert!(p
        .handle_trap(&mut h, Trap::new(Exception::EcallFromU, 0))
        .is_ok());
    assert_eq!(h.pc, 0x11000);
    assert_eq!(h.x[10], 10);
    assert_eq!(h.x[1], SIGRETURN_TRAMPOLINE);
    assert!(h.x[2] < sp_before && h.x[2] % 16 == 0);
    assert_eq!(p.mem.read_u32(h.x[11]), Ok(10), "siginfo.si_signo");
    assert_eq!(p.mem.read_u32(h.x[11] + 12), Ok(pid), "siginfo.si_pid");
    // The handler clobbers registers, then returns through the trampoline.
    h.x[9] = 0;
    h.f[3] = 0;
    h.pc = SIGRETURN_TRAMPOLINE + 4;
    h.x[17] = 139;
    assert!(p
        .handle_trap(&mut h, Trap::new(Exception::EcallFromU, 0))
        .is_ok());
    assert_eq!(h.pc, pc_before + 4, "back after the kill ecall");
    assert_eq!(h.x[10], 0, "kill's result");
    assert_eq!(h.x[9], 0x5555);
    assert_eq!(h.f[3], 0x1234_5678);
    assert_eq!(h.x[2], sp_before);
    assert_eq!(p.signals.mask, 0, "mask restored");
}

#[test]
fn trampoline_is_li_a7_139_ecall() {
    let (mut p, mut h, _elf) = start(&[]);
    assert!(can(&mut p, &mut h, SIGRETURN_TRAMPOLINE, Access::Execute));
    let insn = crate::isa::decode(p.mem.read_u32(SIGRETURN_TRAMPOLINE).expect("mapped"));
    assert_eq!(
        (insn.op, insn.rd, insn.rs1, insn.imm),
        (crate::isa::Op::Addi, 17, 0, 139)
    );
    let ecall = crate::isa::decode(p.mem.read_u32(SIGRETURN_TRAMPOLINE + 4).expect("mapped"));
    assert_eq!(ecall.op, crate::isa::Op::Ecall);
}

/// Place `insn` in a fresh executable page, point pc at it and a1 at a data buffer whose
/// byte i is 0x10 + i; raise `cause` for `a1 + offset`.
fn misaligned(
    insn: u32,
    cause: Exception,
    offset: u32,
) -> (Process, Hart, u32, Result<Resume, Stop>) {
    let (mut p, mut h, _elf) = start(&[]);
    // Fixed addresses with unmapped pages after each.
    let code = mmap_anon(&mut p, &mut h, 0x2000_0000, 0x1000, 7, 0x10) as u32;
    p.mem.write_u32(code, insn).expect("write");
    let data = mmap_anon(&mut p, &mut h, 0x3000_0000, 0x1000, 3, 0x10) as u32;
    let bytes: Vec<u8> = (0..32).map(|i| 0x10 + i as u8).collect();
    p.mem.write(data, &bytes).expect("write");
    h.pc = code;
    h.x[11] = data;
    let r = p.handle_trap(&mut h, Trap::new(cause, data + offset));
    (p, h, data, r)
}

#[test]
fn misaligned_loads_are_emulated() {
    // lw a0, 1(a1)
    let (_p, h, _, r) = misaligned(0x0015_a503, Exception::LoadMisaligned, 1);
    assert_eq!(r, Ok(Resume::Continue));
    assert_eq!(h.x[10], 0x1413_1211);
    assert_eq!(h.pc % 4096, 4);
    // lh a0, 1(a1) of 0x8f.. sign-extends; put a negative halfword first.
    let (mut p, mut h, data, _) = misaligned(0x0015_9503, Exception::LoadMisaligned, 1);
    p.mem.write(data + 1, &[0x34, 0x92]).expect("write");
    h.pc -= 4;
    let r = p.handle_trap(&mut h, Trap::new(Exception::LoadMisaligned, data + 1));
    assert_eq!(r, Ok(Resume::Continue));
    assert_eq!(h.x[10], 0xffff_9234);
    // lhu a0, 1(a1)
    let (_p, h, _, _) = misaligned(0x0015_d503, Exception::LoadMisaligned, 1);
    assert_eq!(h.x[10], 0x1211);
    // flw f1, 1(a1): NaN-boxed, FS dirty.
    let (_p, h, _, _) = misaligned(0x0015_a087, Exception::LoadMisaligned, 1);
    assert_eq!(h.f[1], 0xffff_ffff_1413_1211);
    assert_eq!(h.csr.mstatus & MSTATUS_FS, MSTATUS_FS);
}

#[test]
fn misaligned_stores_are_emulated() {
    // sw a2, 1(a1)
    let (mut p, mut h, data, _) = misaligned(0x00c5_a0a3, Exception::StoreMisaligned, 1);
    h.pc -= 4;
    h.x[12] = 0xa1b2_c3d4;
    let r = p.handle_trap(&mut h, Trap::new(Exception::StoreMisaligned, data + 1));
    assert_eq!(r, Ok(Resume::Continue));
    assert_eq!(
        p.mem.slice(data, 6).expect("read"),
        &[0x10, 0xd4, 0xc3, 0xb2, 0xa1, 0x15]
    );
    // fsd f1, 3(a1)
    let (mut p, mut h, data, _) = misaligned(0x0015_b1a7, Exception::StoreMisaligned, 3);
    h.pc -= 4;
    h.f[1] = 0x0102_0304_0506_0708;
    let r = p.handle_trap(&mut h, Trap::new(Exception::StoreMisaligned, data + 3));
    assert_eq!(r, Ok(Resume::Continue));
    assert_eq!(p.mem.read_u64(data + 3), Ok(0x0102_0304_0506_0708));
}

#[test]
fn misaligned_faults_and_atomics_are_fatal() {
    // amoadd.w a0, a2, (a1) at a misaligned address: SIGBUS.
    let (_p, _h, _, r) = misaligned(0x00c5_a52f, Exception::StoreMisaligned, 1);
    assert!(matches!(r, Err(Stop::Fatal { status: 135, .. })), "{r:?}");
    // lw a0, 1(a1) straddling into an unmapped page: SIGSEGV.
    let (mut p, mut h, data, _) = misaligned(0x0015_a503, Exception::LoadMisaligned, 1);
    h.pc -= 4;
    h.x[11] = data + 0xffd;
    let r = p.handle_trap(&mut h, Trap::new(Exception::LoadMisaligned, data + 0xffe));
    assert!(matches!(r, Err(Stop::Fatal { status: 139, .. })), "{r:?}");
}

/// xorshift64*: deterministic randomness without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

/// Random arguments to syscalls that cannot block, sleep, signal or touch the host's files
/// never panic (debug builds check every arithmetic overflow) and always return.
#[test]
fn random_syscall_arguments_never_panic() {
    let (mut p, mut h, _elf) = start(&[]);
    let buf = mmap_anon(&mut p, &mut h, 0, 0x4000, 3, 0) as u32;
    let safe = [
        nr::BRK,
        nr::MMAP2,
        nr::MUNMAP,
        nr::MPROTECT,
        nr::MREMAP,
        nr::MADVISE,
        nr::MSYNC,
        nr::UNAME,
        nr::GETRANDOM,
        nr::CLOCK_GETTIME64,
        nr::CLOCK_GETRES_TIME64,
        nr::STATX,
        nr::FSTATAT64,
        nr::FSTAT64,
        nr::GETCWD,
        nr::SYSINFO,
        nr::TIMES,
        nr::GETRUSAGE,
        nr::PRLIMIT64,
        nr::GETRLIMIT,
        nr::SCHED_GETAFFINITY,
        nr::RT_SIGPROCMASK,
        nr::RT_SIGPENDING,
        nr::SIGALTSTACK,
        nr::CLOSE,
        nr::GETDENTS64,
        nr::READLINKAT,
        nr::FACCESSAT,
        nr::LLSEEK,
        nr::PREAD64,
        nr::READV,
        nr::STATFS64,
        nr::FSTATFS64,
        nr::GETPID,
        nr::PRCTL,
        nr::FUTEX_TIME64,
        nr::RT_SIGRETURN,
        nr::RISCV_FLUSH_ICACHE,
        nr::PPOLL_TIME64,
        nr::PSELECT6_TIME64,
        nr::RT_SIGTIMEDWAIT_TIME64,
        nr::GETPRIORITY,
        nr::SCHED_GETPARAM,
        nr::SCHED_GETSCHEDULER,
        nr::GETRESUID,
        nr::GETRESGID,
        nr::GETCPU,
        nr::CLOSE_RANGE,
        nr::SOCKET,
        nr::SOCKETPAIR,
        nr::GETSOCKNAME,
        nr::GETPEERNAME,
        nr::SETSOCKOPT,
        nr::GETSOCKOPT,
        nr::SHUTDOWN,
        nr::SENDMSG,
        nr::EPOLL_CREATE1,
        nr::EPOLL_CTL,
        nr::EPOLL_PWAIT,
        nr::EVENTFD2,
        nr::GETXATTR,
        nr::LGETXATTR,
        nr::FGETXATTR,
        nr::LISTXATTR,
        nr::LLISTXATTR,
        nr::FLISTXATTR,
        nr::CAPGET,
        nr::GETGROUPS,
        nr::SYNCFS,
        nr::READAHEAD,
        nr::PREADV2,
        nr::MLOCK2,
        nr::PIDFD_OPEN,
        nr::SCHED_RR_GET_INTERVAL_TIME64,
        nr::MQ_GETSETATTR,
        // Not shmat or shmctl: a random id may be another process's segment.
        nr::SHMDT,
        nr::MINCORE,
        4321,
    ];
    let mut rng = Rng(0x1234_5678_9abc_def1);
    for _ in 0..20_000 {
        let number = safe[(rng.next() % safe.len() as u64) as usize];
        let mut args = [0u32; 6];
        for a in &mut args {
            *a = match rng.next() % 6 {
                0 => rng.next() as u32 % 8,
                1 => buf + (rng.next() as u32 % 0x4000),
                2 => u32::MAX - (rng.next() as u32 % 16),
                3 => rng.next() as u32 & !0xfff,
                _ => rng.next() as u32,
            };
        }
        if matches!(number, nr::READV | nr::PREAD64 | nr::PREADV2 | nr::LLSEEK) && args[0] < 3 {
            args[0] = 7; // never read or seek the test's own stdin/stdout/stderr
        }
        if number == nr::MMAP2 && args[4] < 3 {
            args[4] = u32::MAX; // never map the test's own streams
        }
        if number == nr::FUTEX_TIME64 {
            args[3] = 0; // no timed waits
        }
        if number == nr::RT_SIGPROCMASK {
            args[0] = 0; // only block: nothing becomes deliverable
        }
        if number == nr::SENDMSG {
            args[2] |= 0x40; // MSG_DONTWAIT: a full socket buffer fails instead of waiting
        }
        if number == nr::EPOLL_PWAIT {
            args[3] = 0; // no waiting
        }
        if matches!(
            number,
            nr::PPOLL_TIME64 | nr::PSELECT6_TIME64 | nr::RT_SIGTIMEDWAIT_TIME64
        ) {
            // A zero timeout (no waiting), the random fds and sets otherwise. A random
            // munmap or mprotect may have taken the buffer: then not this time.
            if p.mem.write(buf, &[0; 16]).is_err() {
                continue;
            }
            args[match number {
                nr::PPOLL_TIME64 | nr::RT_SIGTIMEDWAIT_TIME64 => 2,
                _ => 4,
            }] = buf;
        }
        let pc = h.pc;
        h.x[10..16].copy_from_slice(&args);
        h.x[17] = number;
        let r = p.handle_trap(&mut h, Trap::new(Exception::EcallFromU, 0));
        if number == nr::RT_SIGRETURN {
            // Restores a random context (or dies of SIGSEGV): start from a sane state again.
            h.pc = 0x11000;
            h.x[2] = STACK_TOP - 0x1000;
            continue;
        }
        assert!(r.is_ok(), "syscall {number} {args:x?} stopped: {r:?}");
        assert_eq!(h.pc, pc + 4);
    }
}
