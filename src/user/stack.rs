//! The initial process stack as the Linux ELF loader builds it: strings at the top, then
//! (16-byte aligned at sp) argc, argv[], NULL, envp[], NULL, auxv pairs, AT_NULL.

use super::mem::GuestMemory;

/// Auxiliary vector keys.
pub mod at {
    pub const NULL: u32 = 0;
    pub const PHDR: u32 = 3;
    pub const PHENT: u32 = 4;
    pub const PHNUM: u32 = 5;
    pub const PAGESZ: u32 = 6;
    pub const BASE: u32 = 7;
    pub const FLAGS: u32 = 8;
    pub const ENTRY: u32 = 9;
    pub const UID: u32 = 11;
    pub const EUID: u32 = 12;
    pub const GID: u32 = 13;
    pub const EGID: u32 = 14;
    pub const PLATFORM: u32 = 15;
    pub const HWCAP: u32 = 16;
    pub const CLKTCK: u32 = 17;
    pub const SECURE: u32 = 23;
    pub const RANDOM: u32 = 25;
    pub const EXECFN: u32 = 31;
}

/// AT_HWCAP for RV32IMAFDC: one bit per single-letter extension (`1 << (letter - 'A')`).
pub const HWCAP_IMAFDC: u32 = {
    let mut bits = 0u32;
    let letters = b"IMAFDC";
    let mut i = 0;
    while i < letters.len() {
        bits |= 1 << (letters[i] - b'A');
        i += 1;
    }
    bits
};

/// What goes on the initial stack.
pub struct StackContents<'a> {
    /// argv strings (argv[0] included), without NULs.
    pub args: &'a [Vec<u8>],
    /// envp strings ("NAME=value"), without NULs.
    pub env: &'a [Vec<u8>],
    /// The file name the program was started as (AT_EXECFN).
    pub execfn: &'a [u8],
    /// Auxiliary vector entries; AT_RANDOM, AT_EXECFN, AT_PLATFORM and AT_NULL are added here.
    pub auxv: &'a [(u32, u32)],
    /// The 16 bytes AT_RANDOM points at.
    pub random: [u8; 16],
}

/// The stack did not fit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StackTooSmall;

/// Write `contents` below `top` (the stack must be mapped writable down to `limit`); returns
/// the initial sp.
pub fn build(
    mem: &mut GuestMemory,
    top: u32,
    limit: u32,
    contents: &StackContents<'_>,
) -> Result<u32, StackTooSmall> {
    let mut cursor = top as u64;
    let mut push = |mem: &mut GuestMemory, bytes: &[u8], nul: bool| -> Result<u32, StackTooSmall> {
        let len = bytes.len() as u64 + nul as u64;
        cursor = cursor
            .checked_sub(len)
            .filter(|&c| c >= limit as u64)
            .ok_or(StackTooSmall)?;
        let at = cursor as u32;
        mem.write(at, bytes).map_err(|_| StackTooSmall)?;
        if nul {
            mem.write(at + bytes.len() as u32, &[0])
                .map_err(|_| StackTooSmall)?;
        }
        Ok(at)
    };
    // A zero word at the very top, then the strings.
    push(mem, &[0; 4], false)?;
    let execfn = push(mem, contents.execfn, true)?;
    let env_ptrs = contents
        .env
        .iter()
        .rev()
        .map(|s| push(mem, s, true))
        .collect::<Result<Vec<_>, _>>()?;
    let arg_ptrs = contents
        .args
        .iter()
        .rev()
        .map(|s| push(mem, s, true))
        .collect::<Result<Vec<_>, _>>()?;
    let platform = push(mem, b"riscv32", true)?;
    let random = push(mem, &contents.random, false)?;

    let mut auxv: Vec<(u32, u32)> = contents.auxv.to_vec();
    auxv.push((at::PLATFORM, platform));
    auxv.push((at::RANDOM, random));
    auxv.push((at::EXECFN, execfn));
    auxv.push((at::NULL, 0));

    let mut table: Vec<u32> = Vec::new();
    table.push(contents.args.len() as u32);
    table.extend(arg_ptrs.iter().rev());
    table.push(0);
    table.extend(env_ptrs.iter().rev());
    table.push(0);
    for (k, v) in auxv {
        table.push(k);
        table.push(v);
    }
    let bytes: Vec<u8> = table.iter().flat_map(|w| w.to_le_bytes()).collect();
    let sp = cursor
        .checked_sub(bytes.len() as u64)
        .map(|s| s & !15)
        .filter(|&s| s >= limit as u64)
        .ok_or(StackTooSmall)? as u32;
    mem.write(sp, &bytes).map_err(|_| StackTooSmall)?;
    Ok(sp)
}

/// The auxiliary vector of the initial stack at `sp` (argc, argv, NULL, envp, NULL, then the
/// pairs up to and including AT_NULL), as the bytes `/proc/self/auxv` shows.
pub fn read_auxv(mem: &GuestMemory, sp: u32) -> Option<Vec<u8>> {
    let word = |va: u32| mem.read_u32(va).ok();
    let argc = word(sp)?;
    let mut at = sp.checked_add(4 * (argc.checked_add(2)?))?;
    while word(at)? != 0 {
        at = at.checked_add(4)?;
    }
    at = at.checked_add(4)?;
    let mut out = Vec::new();
    loop {
        let (key, value) = (word(at)?, word(at.checked_add(4)?)?);
        out.extend_from_slice(&key.to_le_bytes());
        out.extend_from_slice(&value.to_le_bytes());
        if key == at::NULL {
            return Some(out);
        }
        at = at.checked_add(8)?;
    }
}

#[cfg(test)]
mod tests {
    use super::super::mem::perm;
    use super::*;

    fn read_str(mem: &GuestMemory, va: u32) -> Vec<u8> {
        mem.read_cstr(va, 4096)
            .expect("readable")
            .expect("terminated")
    }

    #[test]
    fn hwcap_bits() {
        assert_eq!(
            HWCAP_IMAFDC,
            (1 << 8) | (1 << 12) | 1 | (1 << 5) | (1 << 3) | (1 << 2)
        );
    }

    #[test]
    fn layout_reads_back() {
        let mut mem = GuestMemory::new().expect("reserve");
        let top = 0xc000_0000u32;
        mem.map(top - 0x10000, 0x10000, perm::R | perm::W);
        let args = vec![b"/bin/prog".to_vec(), b"a".to_vec(), b"bc d".to_vec()];
        let env = vec![b"HOME=/root".to_vec(), b"X=1".to_vec()];
        let contents = StackContents {
            args: &args,
            env: &env,
            execfn: b"/bin/prog",
            auxv: &[
                (at::PAGESZ, 4096),
                (at::ENTRY, 0x10074),
                (at::HWCAP, HWCAP_IMAFDC),
            ],
            random: [7; 16],
        };
        let sp = build(&mut mem, top, top - 0x10000, &contents).expect("fits");
        assert_eq!(sp % 16, 0);
        let word = |i: u32| mem.read_u32(sp + 4 * i).expect("readable");
        assert_eq!(word(0), 3);
        for (i, a) in args.iter().enumerate() {
            assert_eq!(&read_str(&mem, word(1 + i as u32)), a);
        }
        assert_eq!(word(4), 0);
        assert_eq!(read_str(&mem, word(5)), b"HOME=/root");
        assert_eq!(read_str(&mem, word(6)), b"X=1");
        assert_eq!(word(7), 0);
        let mut aux = std::collections::HashMap::new();
        let mut i = 8;
        loop {
            let (k, v) = (word(i), word(i + 1));
            i += 2;
            if k == at::NULL {
                break;
            }
            aux.insert(k, v);
        }
        assert_eq!(aux[&at::PAGESZ], 4096);
        assert_eq!(aux[&at::ENTRY], 0x10074);
        assert_eq!(aux[&at::HWCAP], HWCAP_IMAFDC);
        assert_eq!(read_str(&mem, aux[&at::EXECFN]), b"/bin/prog");
        assert_eq!(read_str(&mem, aux[&at::PLATFORM]), b"riscv32");
        let mut rnd = [0u8; 16];
        mem.read(aux[&at::RANDOM], &mut rnd).expect("readable");
        assert_eq!(rnd, [7; 16]);
        // Everything lies between sp and the top.
        for v in [aux[&at::EXECFN], aux[&at::RANDOM], word(1), word(5)] {
            assert!(v > sp && v < top);
        }
    }

    #[test]
    fn too_large_is_an_error() {
        let mut mem = GuestMemory::new().expect("reserve");
        let top = 0x20_0000u32;
        mem.map(top - 0x1000, 0x1000, perm::R | perm::W);
        let big = vec![vec![b'x'; 5000]];
        let contents = StackContents {
            args: &big,
            env: &[],
            execfn: b"p",
            auxv: &[],
            random: [0; 16],
        };
        assert_eq!(
            build(&mut mem, top, top - 0x1000, &contents),
            Err(StackTooSmall)
        );
    }
}
