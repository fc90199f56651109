//! Lockstep differential testing: random blocks run under the interpreter without the block
//! optimiser's passes (the reference), and under the optimised interpreter and tier 1 with and
//! without them, from the same state; registers, pc, instret, the trap taken and every byte of data
//! memory must agree. Blocks use every operand aliasing (rd == rs1 == rs2, x0 anywhere),
//! boundary immediates and register values, and loads/stores at page edges, across unmapped
//! pages and MMIO, misaligned or not.
//!
//! `RV32VM_LOCKSTEP_CASES=N` runs N cases instead of the CI default (scripts or a long run),
//! `RV32VM_LOCKSTEP_FIRST=S` starts at seed S instead of 0 (split a long run over processes),
//! and `RV32VM_LOCKSTEP_ONLY=TEXT` compares only the configurations whose name contains TEXT
//! (e.g. `--tier t2`) with the reference.

use crate::cpu::tlb::PAGE_MASK;
use crate::cpu::{Access, Exception, Hart, Trap};
use crate::exec::ir::IrOptions;
use crate::exec::platform::{Platform, Resume, Stop, Target};
use crate::exec::{Engine, EngineConfig, T2Opt, Tier};
use crate::isa::ops::OpClass;
use crate::isa::{decode, Op};

/// Guest address of the two code pages.
const CODE_BASE: u32 = 0x0000_1000;
const CODE_SIZE: usize = 0x2000;
/// Guest address of the first of the data pages (RAM).
const DATA_BASE: u32 = 0x0001_0000;
const DATA_PAGES: u32 = 3;
/// A page with nothing behind it: accesses fault.
const HOLE: u32 = DATA_BASE + DATA_PAGES * 0x1000;
/// A page of MMIO: reads return a function of the address, writes are logged.
const MMIO_BASE: u32 = 0x0002_0000;
/// A store here maps the second code page to its alternate host page, if the platform has
/// one ([`TestPlatform::alternate_code`]), and flushes the TLB (as `sfence.vma` would).
const REMAP_MMIO: u32 = MMIO_BASE + 0xff0;
/// A load or store here makes the platform stop the hart at the next `between_blocks`, as a
/// device that raises an interrupt does: where the run loop gets to the platform shows.
const STOP_MMIO: u32 = MMIO_BASE + 0x7e0;

/// A small machine: one code page, a few data pages, a hole, an MMIO page.
struct TestPlatform {
    /// Code memory: `CODE_SIZE` bytes from `code_at`, page aligned on the host like real guest
    /// RAM (code invalidation works on host pages).
    code: Vec<u8>,
    code_at: usize,
    data: Vec<u8>,
    mmio_writes: Vec<(u32, u32, u64)>,
    allow_misaligned: bool,
    /// The one trap that ended the run: (cause, tval, pc, instret).
    trap: Option<(u32, u32, u32, u64)>,
    /// Flat memory, like user mode: `code` holds one region where guest `va` is at host
    /// `flat_base + va` (code pages, data pages and the hole's filler), and the platform says
    /// so through `flat_host_base`.
    flat_base: Option<usize>,
    /// Where `code` holds another page of code for guest page `CODE_BASE + 0x1000`, mapped
    /// there after a store to [`REMAP_MMIO`] (`remapped`).
    alternate_at: Option<usize>,
    remapped: bool,
    /// The guest touched [`STOP_MMIO`]: `between_blocks` stops the run.
    stop_pending: bool,
}

impl TestPlatform {
    fn new(code: &[u8], data: &[u8], allow_misaligned: bool, flat: bool) -> Self {
        if flat {
            let mut region = vec![0u8; (HOLE + 0x1000) as usize + 4096];
            let at = region.as_ptr().align_offset(4096);
            let code_at = at + CODE_BASE as usize;
            region[code_at..code_at + code.len()].copy_from_slice(code);
            let data_at = at + DATA_BASE as usize;
            region[data_at..data_at + data.len()].copy_from_slice(data);
            // The hole is guest-unmapped; its host bytes are filler that a wrong access shows.
            region[at + HOLE as usize..at + (HOLE + 0x1000) as usize].fill(0xa5);
            let flat_base = region.as_ptr() as usize + at;
            return TestPlatform {
                code: region,
                code_at,
                data: Vec::new(),
                mmio_writes: Vec::new(),
                allow_misaligned,
                trap: None,
                flat_base: Some(flat_base),
                alternate_at: None,
                remapped: false,
                stop_pending: false,
            };
        }
        // The code pages, room for an alternate page, and slack to align them.
        let mut pages = vec![0u8; CODE_SIZE + 2 * 4096];
        let code_at = pages.as_ptr().align_offset(4096);
        pages[code_at..code_at + code.len()].copy_from_slice(code);
        TestPlatform {
            flat_base: None,
            code: pages,
            code_at,
            // Each guest page is followed on the host by a page of filler, so an access that
            // wrongly runs past its page on the host reads or writes the filler, not the next
            // guest page, and the outcome differs.
            data: data
                .chunks(4096)
                .flat_map(|page| page.iter().copied().chain([0xa5; 4096]))
                .collect(),
            mmio_writes: Vec::new(),
            allow_misaligned,
            trap: None,
            alternate_at: None,
            remapped: false,
            stop_pending: false,
        }
    }

    /// Give guest page `CODE_BASE + 0x1000` a second host page holding `page`, mapped instead
    /// of the first once the guest stores to [`REMAP_MMIO`] (only for non-flat memory).
    fn alternate_code(mut self, page: &[u8]) -> Self {
        assert!(self.flat_base.is_none() && page.len() <= 4096);
        let at = self.code_at + CODE_SIZE;
        self.code[at..at + page.len()].copy_from_slice(page);
        self.alternate_at = Some(at);
        self
    }
}

impl Platform for TestPlatform {
    // The random regions' indirect jumps are profiled and predicted under `auto`.
    const PREDICTS_INDIRECT_JUMPS: bool = true;

    fn translate(&mut self, _hart: &mut Hart, va: u32, access: Access) -> Result<Target, Trap> {
        let fault = match access {
            Access::Read => Exception::LoadAccessFault,
            Access::Write => Exception::StoreAccessFault,
            Access::Execute => Exception::InsnAccessFault,
        };
        if let (Some(at), true) = (self.alternate_at, self.remapped) {
            if va & !PAGE_MASK == CODE_BASE + 0x1000 {
                let host = self
                    .code
                    .as_mut_ptr()
                    .wrapping_add(at + (va & PAGE_MASK) as usize);
                return Ok(Target::Ram {
                    host,
                    cacheable: true,
                });
            }
        }
        if (CODE_BASE..CODE_BASE + CODE_SIZE as u32).contains(&va) {
            let offset = self.code_at + (va - CODE_BASE) as usize;
            let host = self.code.as_mut_ptr().wrapping_add(offset);
            return Ok(Target::Ram {
                host,
                cacheable: true,
            });
        }
        if access != Access::Execute && (DATA_BASE..HOLE).contains(&va) && self.flat_base.is_some()
        {
            let offset = self.code_at - CODE_BASE as usize + va as usize;
            return Ok(Target::Ram {
                host: self.code.as_mut_ptr().wrapping_add(offset),
                cacheable: true,
            });
        }
        if access != Access::Execute && (DATA_BASE..HOLE).contains(&va) {
            let host = self
                .data
                .as_mut_ptr()
                .wrapping_add(2 * (va - DATA_BASE) as usize - (va & PAGE_MASK) as usize);
            return Ok(Target::Ram {
                host,
                cacheable: true,
            });
        }
        if access != Access::Execute && va & !PAGE_MASK == MMIO_BASE {
            return Ok(Target::Mmio { paddr: va });
        }
        Err(Trap::new(fault, va))
    }

    fn mmio_read(&mut self, _hart: &mut Hart, paddr: u32, size: u32) -> Result<u64, Trap> {
        self.stop_pending |= paddr == STOP_MMIO;
        Ok((paddr as u64).wrapping_mul(0x9e37_79b9) ^ size as u64)
    }

    fn mmio_write(
        &mut self,
        hart: &mut Hart,
        paddr: u32,
        size: u32,
        value: u64,
    ) -> Result<(), Trap> {
        if paddr == REMAP_MMIO && self.alternate_at.is_some() {
            self.remapped = true;
            hart.tlb.flush();
        }
        self.stop_pending |= paddr == STOP_MMIO;
        self.mmio_writes.push((paddr, size, value));
        Ok(())
    }

    fn between_blocks(&mut self, _hart: &mut Hart) -> Option<Stop> {
        self.stop_pending.then_some(Stop::Exit(0))
    }

    fn between_blocks_quiet(&mut self, _hart: &mut Hart) -> bool {
        !self.stop_pending
    }

    fn handle_trap(&mut self, hart: &mut Hart, trap: Trap) -> Result<Resume, Stop> {
        self.trap = Some((trap.cause, trap.tval, hart.pc, hart.instret));
        Err(Stop::Exit(0))
    }

    fn allow_misaligned(&self) -> bool {
        self.allow_misaligned
    }

    fn flat_host_base(&self) -> Option<usize> {
        self.flat_base
    }
}

/// xorshift64*: deterministic, dependency-free randomness.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u32) -> u32 {
        (self.next() % n as u64) as u32
    }
    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len() as u32) as usize]
    }
}

fn r_type(funct7: u32, rs2: u32, rs1: u32, funct3: u32, rd: u32, opcode: u32) -> u32 {
    funct7 << 25 | rs2 << 20 | rs1 << 15 | funct3 << 12 | rd << 7 | opcode
}

fn i_type(imm: i32, rs1: u32, funct3: u32, rd: u32, opcode: u32) -> u32 {
    ((imm as u32) & 0xfff) << 20 | rs1 << 15 | funct3 << 12 | rd << 7 | opcode
}

fn s_type(imm: i32, rs2: u32, rs1: u32, funct3: u32) -> u32 {
    let imm = imm as u32;
    (imm >> 5 & 0x7f) << 25 | rs2 << 20 | rs1 << 15 | funct3 << 12 | (imm & 0x1f) << 7 | 0x23
}

fn j_type(imm: i32, rd: u32) -> u32 {
    let imm = imm as u32;
    (imm >> 20 & 1) << 31
        | (imm >> 1 & 0x3ff) << 21
        | (imm >> 11 & 1) << 20
        | (imm >> 12 & 0xff) << 12
        | rd << 7
        | 0x6f
}

fn b_type(imm: i32, rs2: u32, rs1: u32, funct3: u32) -> u32 {
    let imm = imm as u32;
    (imm >> 12 & 1) << 31
        | (imm >> 5 & 0x3f) << 25
        | rs2 << 20
        | rs1 << 15
        | funct3 << 12
        | (imm >> 1 & 0xf) << 8
        | (imm >> 11 & 1) << 7
        | 0x63
}

/// Register-register operations: (funct7, funct3).
const R_OPS: &[(u32, u32)] = &[
    (0, 0),
    (0x20, 0),
    (0, 1),
    (0, 2),
    (0, 3),
    (0, 4),
    (0, 5),
    (0x20, 5),
    (0, 6),
    (0, 7),
    (1, 0),
    (1, 1),
    (1, 2),
    (1, 3),
    (1, 4),
    (1, 5),
    (1, 6),
    (1, 7),
    (0x10, 2),
    (0x10, 4),
    (0x10, 6),
    (0x20, 7),
    (0x20, 6),
    (0x20, 4),
    (0x05, 6),
    (0x05, 7),
    (0x05, 4),
    (0x05, 5),
    (0x30, 1),
    (0x30, 5),
    (0x05, 1),
    (0x05, 2),
    (0x05, 3),
    (0x24, 1),
    (0x24, 5),
    (0x34, 1),
    (0x14, 1),
    (0x07, 5),
    (0x07, 7),
];

/// Immediates worth hitting: boundaries of the 12-bit range and of shifts.
const IMMS: &[i32] = &[0, 1, -1, 2, 31, 32, 2047, -2048, 0x7ff, 0x555, -0x556, 4, 3];

/// Register values worth hitting.
const VALUES: &[u32] = &[
    0,
    1,
    2,
    0xffff_ffff,
    0x8000_0000,
    0x7fff_ffff,
    0xffff_fffe,
    31,
    32,
    0x1234_5678,
    0xdead_beef,
];

/// Base addresses for memory operands: page edges of RAM, the hole, MMIO, misaligned.
fn address(rng: &mut Rng) -> u32 {
    let page = rng.pick(&[
        DATA_BASE,
        DATA_BASE + 0x1000,
        DATA_BASE + 0x2000,
        HOLE,
        MMIO_BASE,
    ]);
    let offset = rng.pick(&[0, 1, 2, 3, 4, 0x7fe, 0xffc, 0xffd, 0xffe, 0xfff, 0x1000]);
    (page + offset).wrapping_sub(rng.pick(&[0, 0, 4, 1]))
}

/// One random instruction that does not end the block.
fn random_insn(rng: &mut Rng) -> u32 {
    let reg = |rng: &mut Rng| {
        let any = rng.below(32);
        rng.pick(&[0, 1, 2, 3, 5, 10, 31, any])
    };
    let (rd, rs1, rs2) = (reg(rng), reg(rng), reg(rng));
    let imm = if rng.below(4) == 0 {
        rng.below(4096) as i32 - 2048
    } else {
        rng.pick(IMMS)
    };
    match rng.below(10) {
        0..=2 => {
            let (f7, f3) = rng.pick(R_OPS);
            r_type(f7, rs2, rs1, f3, rd, 0x33)
        }
        3 | 4 => {
            let f3 = rng.pick(&[0, 2, 3, 4, 6, 7]);
            i_type(imm, rs1, f3, rd, 0x13)
        }
        5 => {
            // Shifts and single-bit immediates: (funct7, funct3) with a 5-bit shamt.
            let (f7, f3) = rng.pick(&[
                (0, 1),
                (0, 5),
                (0x20, 5),
                (0x30, 5),
                (0x24, 1),
                (0x14, 1),
                (0x34, 1),
                (0x24, 5),
            ]);
            r_type(f7, rng.below(32), rs1, f3, rd, 0x13)
        }
        6 => {
            // Unary Zbb: clz ctz cpop sext.b sext.h (funct3 1), orc.b rev8 (funct3 5), zext.h.
            match rng.below(8) {
                0..=4 => i_type(0x600 + rng.pick(&[0, 1, 2, 4, 5]), rs1, 1, rd, 0x13),
                5 => i_type(0x287, rs1, 5, rd, 0x13),
                6 => i_type(0x698, rs1, 5, rd, 0x13),
                _ => r_type(0x04, 0, rs1, 4, rd, 0x33),
            }
        }
        7 => {
            if rng.below(2) == 0 {
                (rng.next() as u32 & 0xffff_f000) | rd << 7 | 0x37 // lui
            } else {
                (rng.next() as u32 & 0xffff_f000) | rd << 7 | 0x17 // auipc
            }
        }
        8 => i_type(
            rng.pick(&[0, 1, 2, 3, -1, -4, 4]),
            rs1,
            rng.pick(&[0, 1, 2, 4, 5]),
            rd,
            0x03,
        ),
        9 if rng.below(3) == 0 => {
            // F/D/Zfh loads and stores (inline TLB path; FP on or off; NaN-boxing)
            let offset = rng.pick(&[0, 1, 2, 4, -4, 8]);
            let funct3 = rng.pick(&[2, 3, 2, 3, 1]);
            if rng.below(2) == 0 {
                i_type(offset, rs1, funct3, rd, 0x07)
            } else {
                let mut w = s_type(offset, rs2, rs1, funct3);
                w = (w & !0x7f) | 0x27;
                w
            }
        }
        9 if rng.below(4) == 0 => {
            // A: amoswap amoadd amoxor amoand amoor amomin amomax amominu amomaxu, lr, sc;
            // Zacas' amocas; in words and (Zabha) bytes and halfwords, amocas.d on register
            // pairs (helpers that read rd, write rd or a pair, and may store, fault, misalign,
            // or be illegal: lr/sc are words only, pairs start at even registers).
            let funct5 = rng.pick(&[1, 0, 4, 12, 8, 16, 20, 24, 28, 2, 3, 5]);
            let (mut width, mut rd, mut rs2) = (rng.pick(&[2, 2, 2, 0, 1, 3]), rd, rs2);
            if funct5 == 2 || funct5 == 3 {
                width = 2;
            }
            if width == 3 {
                (rd, rs2) = (rd & !1, rs2 & !1);
            }
            let (funct5, rs2) = match (funct5, width) {
                (2, _) => (2, 0),
                (_, 3) => (5, rs2),
                _ => (funct5, rs2),
            };
            r_type(funct5 << 2, rs2, rs1, width, rd, 0x2f)
        }
        _ => s_type(
            rng.pick(&[0, 1, 2, 3, -1, -4, 4]),
            rs2,
            rs1,
            rng.pick(&[0, 1, 2]),
        ),
    }
}

/// Sequences the block optimiser rewrites (fusion patterns, constants feeding operations and
/// addresses), with the same operand variety as single instructions.
fn random_pattern(rng: &mut Rng, words: &mut Vec<u32>) {
    let reg = |rng: &mut Rng| {
        let any = rng.below(32);
        rng.pick(&[0, 1, 2, 5, 10, 31, any])
    };
    let (rd, rs) = (reg(rng), reg(rng));
    let imm = rng.pick(IMMS);
    match rng.below(6) {
        // lui+addi / auipc+addi on one register (or, sometimes, not quite).
        0 => {
            let opcode = rng.pick(&[0x37, 0x17]);
            words.push((rng.next() as u32 & 0xffff_f000) | rd << 7 | opcode);
            let src = if rng.below(4) == 0 { rs } else { rd };
            words.push(i_type(imm, src, 0, rd, 0x13));
        }
        // slli+srli by one amount: a zero-extension.
        1 => {
            let any = rng.below(32) as i32;
            let k = rng.pick(&[0, 1, 8, 16, 24, 31, any]);
            words.push(r_type(0, k as u32, rs, 1, rd, 0x13));
            words.push(r_type(0, k as u32, rd, 5, rd, 0x13));
        }
        // A run of lw or sw off one base, sometimes loading into the base.
        2 | 3 => {
            let base = reg(rng);
            let store = rng.below(2) == 0;
            for _ in 0..2 + rng.below(5) {
                let offset = rng.pick(&[0, 4, 8, 12, -4, -8, 2, 0x7fc, -2048]);
                if store {
                    words.push(s_type(offset, reg(rng), base, 2));
                } else {
                    let rd = if rng.below(5) == 0 { base } else { reg(rng) };
                    words.push(i_type(offset, base, 2, rd, 0x03));
                }
            }
        }
        // A constant (li or lui) feeding an operation, an address or a jump base.
        _ => {
            if rng.below(2) == 0 {
                words.push(i_type(imm, 0, 0, rd, 0x13));
            } else {
                words.push(address(rng) & 0xffff_f000 | rd << 7 | 0x37);
            }
            match rng.below(3) {
                0 => {
                    let (f7, f3) = rng.pick(R_OPS);
                    let (a, b) = if rng.below(2) == 0 {
                        (rd, rs)
                    } else {
                        (rs, rd)
                    };
                    words.push(r_type(f7, b, a, f3, reg(rng), 0x33));
                }
                1 => words.push(i_type(
                    rng.pick(&[0, 4, -4, 1, 0x7fc]),
                    rd,
                    rng.pick(&[0, 1, 2, 4, 5]),
                    reg(rng),
                    0x03,
                )),
                _ => words.push(s_type(
                    rng.pick(&[0, 4, 3]),
                    reg(rng),
                    rd,
                    rng.pick(&[0, 1, 2]),
                )),
            }
        }
    }
}

/// A random block: straight-line instructions, then a branch, jump or ecall.
fn random_block(rng: &mut Rng) -> Vec<u32> {
    let n = 1 + rng.below(24);
    let mut words = Vec::new();
    for _ in 0..n {
        if rng.below(4) == 0 {
            random_pattern(rng, &mut words);
        } else if rng.below(5) == 0 {
            words.push(random_fp_insn(rng));
        } else {
            words.push(random_insn(rng));
        }
    }
    let rs1 = rng.below(32);
    let rs2 = rng.below(32);
    match rng.below(9) {
        // An ALU operation whose result the branch compares (a compare-and-branch unit).
        6 | 7 => {
            let any = 1 + rng.below(31);
            let rd = rng.pick(&[rs1, rs2, any]);
            if rng.below(2) == 0 {
                let f3 = rng.pick(&[0, 2, 3, 4, 6, 7]);
                words.push(i_type(rng.pick(IMMS), rs1, f3, rd, 0x13));
            } else {
                let (f7, f3) =
                    rng.pick(&[(0, 0), (0x20, 0), (0, 2), (0, 3), (0, 4), (0, 6), (0, 7)]);
                words.push(r_type(f7, rs2, rs1, f3, rd, 0x33));
            }
            let other = rng.pick(&[0, rs2]);
            let (a, b) = if rng.below(2) == 0 {
                (rd, other)
            } else {
                (other, rd)
            };
            words.push(b_type(8, b, a, rng.pick(&[0, 1, 4, 5, 6, 7])));
        }
        // A jump through a constant base: lui/addi then jalr (to the second ecall).
        8 => {
            let at = CODE_BASE + 4 * (words.len() as u32 + 2) + 4;
            words.push(at & 0xffff_f000 | 7 << 7 | 0x37);
            words.push(i_type((at & 0xfff) as i32, 7, 0, 7, 0x13));
            words.push(i_type(0, 7, 0, rng.below(32), 0x67));
        }
        // A branch over the ecall below, or not.
        0 => words.push(b_type(8, rs2, rs1, rng.pick(&[0, 1, 4, 5, 6, 7]))),
        // jal x1, +8
        1 => words.push(0x0080_00ef),
        // auipc x5, 0; jalr rd, 12(x5) (to the second ecall), with any link register
        2 => {
            words.push(5 << 7 | 0x17);
            words.push(i_type(12, 5, 0, rng.below(32), 0x67));
        }
        // csrrs rd, minstret or mcycle, x0: the count must be exact at any point
        3 => words.push(i_type(rng.pick(&[0xb02, 0xb00]), 0, 2, rng.below(32), 0x73)),
        _ => {}
    }
    words.push(0x0000_0073); // ecall
    words.push(0x0000_0073); // ecall (target of the taken branch / jump)
    words
}

/// A random multi-block program for region formation: segments of random instructions, each
/// ending in a branch (backwards or forwards), a jump, a jump through a constant base, an
/// indirect jump through a random register, a return through ra, or falling through; loops are welcome (the run
/// stops at the instruction limit, exactly where the interpreter would).
fn random_region(rng: &mut Rng) -> Vec<u32> {
    random_region_of(rng, false)
}

/// An integer instruction that cannot trap and leaves x1 (the link), x6, x7 and x28 (the
/// terminators' scratch registers and jump counter) alone.
fn random_safe_insn(rng: &mut Rng) -> u32 {
    loop {
        let w = random_insn(rng);
        let i = decode(w);
        if matches!(i.op.class(), OpClass::Alu | OpClass::Auipc) && ![1, 6, 7, 28].contains(&i.rd) {
            return w;
        }
    }
}

/// [`random_region`], or with `loops` a program that runs until the instruction limit:
/// bodies of [`random_safe_insn`] and no jumps through arbitrary registers, so it keeps
/// looping through its calls, returns and two-target indirect jumps (what `auto` profiles and
/// predicts).
fn random_region_of(rng: &mut Rng, loops: bool) -> Vec<u32> {
    let segments = 2 + rng.below(5) as usize;
    let bodies: Vec<Vec<u32>> = (0..segments)
        .map(|_| {
            let mut body = Vec::new();
            for _ in 0..1 + rng.below(8) {
                match rng.below(6) {
                    _ if loops => body.push(random_safe_insn(rng)),
                    0 => random_pattern(rng, &mut body),
                    1 => body.push(random_fp_insn(rng)),
                    _ => body.push(random_insn(rng)),
                }
            }
            body
        })
        .collect();
    // Every terminator is 9 words (padded with nops), so segment addresses are known first.
    const NOP: u32 = 0x0000_0013;
    const TERM_WORDS: u32 = 9;
    let mut starts = Vec::new();
    let mut at = CODE_BASE;
    for body in &bodies {
        starts.push(at);
        at += 4 * (body.len() as u32 + TERM_WORDS);
    }
    let end = at; // the final ecall
    let mut words = Vec::new();
    for body in &bodies {
        words.extend_from_slice(body);
        let here = CODE_BASE + 4 * words.len() as u32;
        let target = if rng.below(if loops { 20 } else { 5 }) == 0 {
            end
        } else {
            starts[rng.below(segments as u32) as usize]
        };
        let rel = target.wrapping_sub(here) as i32;
        let (rs1, rs2) = (rng.below(32), rng.below(32));
        let kind = match rng.below(8) {
            // Instead of a jump through whatever a register holds: the two-target jump.
            4 if loops => 6,
            k => k,
        };
        let mut term: Vec<u32> = match kind {
            0 | 1 => vec![b_type(rel, rs2, rs1, rng.pick(&[0, 1, 4, 5, 6, 7]))],
            2 => vec![j_type(rel, rng.pick(&[0, 1]))],
            3 => vec![
                target & 0xffff_f000 | 7 << 7 | 0x37,
                i_type((target & 0xfff) as i32, 7, 0, 7, 0x13),
                i_type(0, 7, 0, rng.below(32), 0x67),
            ],
            // A return (jalr x0, 0(ra)): after a `jal ra` (case 2) it comes back to the
            // call's return site, which tier 2 may follow inside the region.
            5 => vec![i_type(0, 1, 0, 0, 0x67)],
            // Indirect through whatever the register holds (often a fault).
            4 => vec![i_type(rng.pick(IMMS), rs1, 0, rng.below(32), 0x67)],
            // An indirect jump (or call) with two segment targets, picked without a branch
            // by the low bits of a register (`other` one time in 4, 16 or 32, or always, or
            // never, as the values go): one block whose jump `auto` profiles and predicts, and
            // whose prediction misses now and then.
            6 => {
                let other = starts[rng.below(segments as u32) as usize];
                // Mostly x28, which counts the jumps, so the pick varies as the loops run.
                let rs1 = rng.pick(&[28, 28, 28, 2, 10, rs1]);
                let delta = other.wrapping_sub(target) as i32;
                vec![
                    i_type(1, 28, 0, 28, 0x13), // addi x28, x28, 1
                    target & 0xffff_f000 | 7 << 7 | 0x37,
                    i_type((target & 0xfff) as i32, 7, 0, 7, 0x13),
                    i_type(rng.pick(&[3, 15, 31]), rs1, 7, 6, 0x13), // andi x6, rs1, mask
                    i_type(1, 6, 3, 6, 0x13),                        // sltiu x6, x6, 1
                    r_type(0x20, 6, 0, 0, 6, 0x33),                  // sub x6, x0, x6
                    i_type(delta, 6, 7, 6, 0x13),                    // andi x6, x6, delta
                    r_type(0, 6, 7, 0, 7, 0x33),                     // add x7, x7, x6
                    i_type(0, 7, 0, rng.pick(&[0, 1]), 0x67),        // jalr x0|x1, 0(x7)
                ]
            }
            _ => Vec::new(),
        };
        term.resize(TERM_WORDS as usize, NOP);
        words.extend_from_slice(&term);
    }
    words.push(0x0000_0073); // ecall
    words
}

/// Everything a run can change.
#[derive(Debug, PartialEq)]
struct Outcome {
    x: [u32; 32],
    f: [u64; 32],
    fflags: u8,
    mstatus: u32,
    code: Vec<u8>,
    pc: u32,
    instret: u64,
    trap: Option<(u32, u32, u32, u64)>,
    data: Vec<u8>,
    mmio_writes: Vec<(u32, u32, u64)>,
}

fn run(tier: Tier, code: &[u8], regs: &[u32; 32], data: &[u8], allow_misaligned: bool) -> Outcome {
    let fp = RunSetup::integer();
    run_with_fp(
        tier,
        ALL_PASSES,
        None,
        code,
        regs,
        data,
        allow_misaligned,
        &fp,
    )
}

/// [`run`] as one of [`OTHER_TIERS`] runs: its tier, block passes and tier-2 pipeline.
fn run_as(
    &(tier, ir, t2_opt, _): &(Tier, IrOptions, Option<T2Opt>, &str),
    code: &[u8],
    regs: &[u32; 32],
    data: &[u8],
) -> Outcome {
    let fp = RunSetup::integer();
    run_with_fp(tier, ir, t2_opt, code, regs, data, false, &fp)
}

/// A run's starting machine: the memory layout and the FP unit's state.
struct RunSetup {
    /// Flat guest memory (user-mode layout, `Platform::flat_host_base`).
    flat: bool,
    /// mstatus.FS = Initial (else Off: every FP instruction is illegal).
    on: bool,
    f: [u64; 32],
    frm: u8,
}

impl RunSetup {
    /// Paged memory and the FP unit off: for integer code.
    fn integer() -> Self {
        RunSetup {
            flat: false,
            on: false,
            f: [0; 32],
            frm: 0,
        }
    }
}

/// Every other tier's run (`run(tier, passes, t2_opt)`) ends as the interpreter's did
/// (`interp`): registers, pc, instret and the trap; `what` names the case in a failure.
fn assert_other_tiers_end_as(
    interp: &Outcome,
    run: impl Fn(Tier, IrOptions, Option<T2Opt>) -> Outcome,
    what: &str,
) {
    for &(tier, ir, t2_opt, name) in OTHER_TIERS {
        let other = run(tier, ir, t2_opt);
        assert_eq!(other.x, interp.x, "{what}, {name}: registers");
        assert_eq!(
            (other.pc, other.instret, other.trap),
            (interp.pc, interp.instret, interp.trap),
            "{what}, {name}: pc, instret, trap"
        );
    }
}

/// FP register values worth hitting: signed zeros, tiny and huge values, infinities, quiet
/// and signalling NaNs, as doubles and as boxed (and badly boxed) singles.
const F_VALUES: &[u64] = &[
    0x0000_0000_0000_0000,
    0x8000_0000_0000_0000,
    0x3ff0_0000_0000_0000, // 1.0
    0xbff8_0000_0000_0000, // -1.5
    0x4009_21fb_5444_2d18, // pi
    0x0000_0000_0000_0001, // smallest subnormal
    0x0010_0000_0000_0000, // smallest normal
    0x7fef_ffff_ffff_ffff, // largest finite
    0x7ff0_0000_0000_0000, // inf
    0xfff0_0000_0000_0000, // -inf
    0x7ff8_0000_0000_0000, // canonical qNaN
    0x7ff0_0000_0000_0001, // sNaN
    0x41e0_0000_0000_0000, // 2^31
    0xc1e0_0000_0000_0000, // -2^31
    0x3fe0_0000_0000_0000, // 0.5
    0xffff_ffff_3f80_0000, // 1.0f
    0xffff_ffff_bfc0_0000, // -1.5f
    0xffff_ffff_0000_0001, // subnormal single
    0xffff_ffff_7f7f_ffff, // FLT_MAX
    0xffff_ffff_7f80_0000, // inf f
    0xffff_ffff_7fc0_0000, // qNaN f
    0xffff_ffff_7f80_0001, // sNaN f
    0xffff_ffff_4f00_0000, // 2^31 f
    0x0000_0000_3f80_0000, // badly boxed 1.0f
    0xffff_ffff_0080_0000, // smallest normal single
    0xffff_ffff_ffff_3c00, // 1.0 half
    0xffff_ffff_ffff_be00, // -1.5 half
    0xffff_ffff_ffff_0001, // subnormal half
    0xffff_ffff_ffff_7bff, // largest half
    0xffff_ffff_ffff_7c00, // inf half
    0xffff_ffff_ffff_7c01, // sNaN half
    0xffff_ffff_ffff_8000, // -0 half
];

/// A random F/D computation (OP-FP or a fused multiply-add) in single or double.
fn random_fp_insn(rng: &mut Rng) -> u32 {
    let reg = |rng: &mut Rng| rng.below(32);
    let (rd, rs1, rs2, rs3) = (reg(rng), reg(rng), reg(rng), reg(rng));
    // Equal operands often: where flt and fle, fsgnjx's signs and fmin/fmax of zeros differ.
    let rs2 = if rng.below(4) == 0 { rs1 } else { rs2 };
    // Single, double, and now and then half (Zfh).
    let fmt = rng.pick(&[0, 1, 0, 1, 2]);
    let rm = rng.pick(&[0, 7, 7, 7, 1, 2, 3, 4]);
    if rng.below(4) == 0 {
        let opcode = rng.pick(&[0x43, 0x47, 0x4b, 0x4f]);
        return rs3 << 27 | fmt << 25 | rs2 << 20 | rs1 << 15 | rm << 12 | rd << 7 | opcode;
    }
    let (funct7, rs2, funct3) = match rng.below(14) {
        0 => (fmt, rs2, rm),
        1 => (0x04 | fmt, rs2, rm),
        2 => (0x08 | fmt, rs2, rm),
        3 => (0x0c | fmt, rs2, rm),
        4 => (0x2c | fmt, 0, rm),
        5 => (0x10 | fmt, rs2, rng.below(3)),
        6 => (0x50 | fmt, rs2, rng.below(3)),
        7 => (0x60 | fmt, rng.below(2), rm),
        8 => (0x68 | fmt, rng.below(2), rm),
        9 => (0x70 | (fmt & 2), 0, 0),
        10 => (0x78 | (fmt & 2), 0, 0),
        11 => (0x14 | fmt, rs2, rng.below(2)),
        12 => (0x70 | fmt, 0, 1),
        // Conversions between the formats: s <-> d, and h <-> s, d.
        _ if fmt == 2 => {
            let (funct7, source) = rng.pick(&[(0x22, 0), (0x22, 1), (0x20, 2), (0x21, 2)]);
            (funct7, source, rm)
        }
        _ => (0x20 | fmt, 1 - fmt, rm),
    };
    r_type(funct7, rs2, rs1, funct3, rd, 0x53)
}

const ALL_PASSES: IrOptions = IrOptions {
    constopt: true,
    fuse: true,
};
const NO_PASSES: IrOptions = IrOptions {
    constopt: false,
    fuse: false,
};

/// The reference run: the interpreter on the unoptimised block ([`run_with_fp`]).
fn reference_run(
    code: &[u8],
    regs: &[u32; 32],
    data: &[u8],
    allow_misaligned: bool,
    fp: &RunSetup,
) -> Outcome {
    run_with_fp(
        Tier::Interp,
        NO_PASSES,
        None,
        code,
        regs,
        data,
        allow_misaligned,
        fp,
    )
}

/// Run with the FP unit on (mstatus.FS = Initial) or off, and FP registers made from `regs`.
#[allow(clippy::too_many_arguments)]
fn run_with_fp(
    tier: Tier,
    ir: IrOptions,
    t2_opt: Option<T2Opt>,
    code: &[u8],
    regs: &[u32; 32],
    data: &[u8],
    allow_misaligned: bool,
    fp: &RunSetup,
) -> Outcome {
    let plat = TestPlatform::new(code, data, allow_misaligned, fp.flat);
    run_on(plat, tier, ir, t2_opt, regs, fp)
}

/// Run on `plat` from `CODE_BASE` with `regs` and `fp` for at most 10 000 instructions.
fn run_on(
    mut plat: TestPlatform,
    tier: Tier,
    ir: IrOptions,
    t2_opt: Option<T2Opt>,
    regs: &[u32; 32],
    fp: &RunSetup,
) -> Outcome {
    let reoptimising = tier == Tier::T2 && t2_opt.is_none();
    let mut hart = Hart::new();
    hart.x = *regs;
    hart.x[0] = 0;
    hart.f = fp.f;
    hart.frm = fp.frm;
    if fp.on {
        hart.csr.mstatus |= crate::cpu::csr::MSTATUS_FS_INITIAL;
    }
    hart.pc = CODE_BASE;
    let mut engine = Engine::new(EngineConfig {
        tier,
        ir,
        t2_opt,
        // `auto` as a short run can see it: a few interpreted runs profile each block (its
        // indirect jump's targets), then a region is compiled before the block runs again.
        t1_threshold: 16,
        // `--tier t2` with a region at every block, re-optimised at its first sample.
        t2_threshold: 0,
        t2_reoptimise_threshold: 0,
        // Compiles installed at the same instruction in every run, so a failing seed
        // reproduces: `auto`'s regions, and `--tier t2`'s re-optimisations.
        deterministic: tier == Tier::Auto || reoptimising,
        ..EngineConfig::default()
    });
    // `--tier t2` re-optimises regions where long runs of compiled code come back to the run
    // loop: a short run gets there by counting every return.
    #[cfg(tier2)]
    if reoptimising {
        engine.sample_every_region_exit();
    }
    engine.run(&mut hart, &mut plat, Some(10_000));
    Outcome {
        x: hart.x,
        f: hart.f,
        fflags: hart.fflags,
        mstatus: hart.csr.mstatus,
        code: plat.code[plat.code_at..plat.code_at + CODE_SIZE].to_vec(),
        pc: hart.pc,
        instret: hart.instret,
        trap: plat.trap,
        // The guest pages and the filler between them (or after them, for flat memory).
        data: match plat.flat_base {
            Some(_) => {
                let at = plat.code_at - CODE_BASE as usize;
                plat.code[at + DATA_BASE as usize..at + (HOLE + 0x1000) as usize].to_vec()
            }
            None => plat.data,
        },
        mmio_writes: plat.mmio_writes,
    }
}

/// A floating-point value near a limit of its format (tiny, subnormal, huge, around 1),
/// as a double or a boxed single, with a random mantissa.
/// Few values, so that the pairs that matter come up often: signed zeros (fmin/fmax), each
/// class (fclass), NaNs, and the ends of the word range (fcvt.w[u]), doubles and boxed singles.
const F_SPECIALS: &[u64] = &[
    0x0000_0000_0000_0000,
    0x8000_0000_0000_0000,
    0xffff_ffff_0000_0000, // +0f
    0xffff_ffff_8000_0000, // -0f
    0xfff0_0000_0000_0000, // -inf
    0x7ff0_0000_0000_0001, // sNaN
    0x8000_0000_0000_0001, // -subnormal
    0x41ef_ffff_ffe0_0000, // 2^32 - 1
    0xbfe0_0000_0000_0000, // -0.5
    0x41df_ffff_ffe0_0000, // 2^31 - 1
    0xffff_ffff_7fc0_0000, // qNaN f
    0xffff_ffff_4f80_0000, // 2^32 f
    0xffff_ffff_bf00_0000, // -0.5f
    0xffff_ffff_3f80_0000, // 1.0f
];

/// An F/D instruction of those [`CaseKind::FloatSpecials`] tests: fmin/fmax, fclass, compares,
/// and conversions to a signed or unsigned word (RTZ, RNE, dynamic or another mode).
fn random_special_fp_insn(rng: &mut Rng) -> u32 {
    let reg = |rng: &mut Rng| rng.below(32);
    let (rd, rs1, rs2) = (reg(rng), reg(rng), reg(rng));
    let rs2 = if rng.below(4) == 0 { rs1 } else { rs2 };
    let fmt = rng.below(2);
    let (funct7, rs2, funct3) = match rng.below(4) {
        0 => (0x14 | fmt, rs2, rng.below(2)),
        1 => (0x70 | fmt, 0, 1),
        2 => (0x50 | fmt, rs2, rng.below(3)),
        _ => (0x60 | fmt, rng.below(2), rng.pick(&[1, 1, 0, 7, 2, 3, 4])),
    };
    r_type(funct7, rs2, rs1, funct3, rd, 0x53)
}

fn near_limit_float(rng: &mut Rng) -> u64 {
    let sign = rng.below(2) as u64;
    // One in four: a zero or an infinity, the smallest subnormal, a signalling or a quiet NaN
    // (either sign), where fmin/fmax of zeros and fclass's classes differ.
    let special = rng.below(4) == 0;
    let mantissa = match special {
        true => rng.pick(&[0u64, 0, 1, 1 << 51 | 1 << 22]),
        false => rng.next(),
    };
    if rng.below(2) == 0 {
        let exp = match special {
            true => rng.pick(&[0u64, 0x7ff]),
            false => rng.pick(&[0u64, 1, 2, 3, 0x34, 0x35, 0x36, 0x3fe, 0x3ff, 0x7fd, 0x7fe]),
        };
        sign << 63 | exp << 52 | mantissa & ((1 << 52) - 1)
    } else {
        let exp = match special {
            true => rng.pick(&[0u64, 0xff]),
            false => rng.pick(&[0u64, 1, 2, 3, 0x17, 0x18, 0x19, 0x7e, 0x7f, 0xfd, 0xfe]),
        };
        0xffff_ffff_0000_0000 | sign << 31 | exp << 23 | mantissa & ((1 << 23) - 1)
    }
}

/// What a case's block is made of.
#[derive(Clone, Copy, PartialEq)]
enum CaseKind {
    /// Everything [`random_block`] makes.
    Mixed,
    /// A multi-block program with loops and indirect jumps ([`random_region`]).
    Region,
    /// A multi-block program of integer instructions that loops through calls, returns and
    /// two-target indirect jumps until the instruction limit ([`random_region_of`]).
    IndirectLoops,
    /// Only F/D computations on operands near the limits of their format (underflow,
    /// overflow, rounding near subnormals), then an ecall.
    FloatLimits,
    /// Only min/max, classification, compares and conversions to a word, on a few special
    /// values (signed zeros, infinities, NaNs, the ends of the integer range), then an ecall.
    FloatSpecials,
}

fn check_case(seed: u64) {
    check_case_of(seed, CaseKind::Mixed)
}

fn check_case_of(seed: u64, kind: CaseKind) {
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let words = match kind {
        CaseKind::Mixed => random_block(&mut rng),
        CaseKind::Region => random_region(&mut rng),
        CaseKind::IndirectLoops => random_region_of(&mut rng, true),
        CaseKind::FloatSpecials => {
            let n = 4 + rng.below(12);
            let mut w: Vec<u32> = (0..n).map(|_| random_special_fp_insn(&mut rng)).collect();
            w.push(0x0000_0073);
            w
        }
        CaseKind::FloatLimits => {
            let n = 1 + rng.below(12);
            let mut w: Vec<u32> = (0..n).map(|_| random_fp_insn(&mut rng)).collect();
            w.push(0x0000_0073);
            w
        }
    };
    for &w in &words {
        assert_ne!(
            decode(w).op,
            Op::Illegal,
            "generator made an illegal word {w:#010x}"
        );
    }
    let code: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    let mut regs = [0u32; 32];
    for r in regs.iter_mut() {
        *r = match rng.below(3) {
            0 => rng.pick(VALUES),
            1 => address(&mut rng),
            _ => rng.next() as u32,
        };
    }
    let data: Vec<u8> = (0..DATA_PAGES * 4096).map(|_| rng.next() as u8).collect();
    let allow_misaligned = rng.below(4) == 0;
    let mut f = [0u64; 32];
    for v in f.iter_mut() {
        *v = match (kind, rng.below(3)) {
            (CaseKind::FloatLimits, _) => near_limit_float(&mut rng),
            // A third of them zeros: a pair of zeros of one format is where fmin/fmax differ.
            (CaseKind::FloatSpecials, 0) => rng.pick(&F_SPECIALS[..4]),
            (CaseKind::FloatSpecials, _) => rng.pick(F_SPECIALS),
            (_, 0) => rng.next(),
            _ => rng.pick(F_VALUES),
        };
    }
    let fp = RunSetup {
        flat: rng.below(3) == 0,
        on: matches!(kind, CaseKind::FloatLimits | CaseKind::FloatSpecials) || rng.below(4) != 0,
        f,
        frm: rng.pick(&[0, 0, 0, 1, 2, 3, 4, 5]),
    };
    // Every tier, with the block optimiser's passes on and off, must match the reference.
    let interp = reference_run(&code, &regs, &data, allow_misaligned, &fp);
    let only = std::env::var("RV32VM_LOCKSTEP_ONLY").unwrap_or_default();
    for &(tier, ir, t2_opt, name) in OTHER_TIERS.iter().filter(|c| c.3.contains(&only)) {
        let t1 = run_with_fp(tier, ir, t2_opt, &code, &regs, &data, allow_misaligned, &fp);
        if interp == t1 {
            continue;
        }
        let listing: Vec<String> = words
            .iter()
            .map(|&w| format!("{w:#010x} {:?}", decode(w)))
            .collect();
        let regs_diff: Vec<String> = (0..32)
            .filter(|&i| interp.x[i] != t1.x[i])
            .map(|i| format!("x{i}: interp {:#x} other {:#x}", interp.x[i], t1.x[i]))
            .collect();
        panic!(
            "seed {seed}: {name} diverges from the interpreter\nblock:\n{}\nregisters in: {regs:x?}\n\
             differing registers: {regs_diff:?}\npc {:#x} vs {:#x}, instret {} vs {}, trap {:x?} vs {:x?}, \
             data equal: {}, mmio {:x?} vs {:x?}, f equal: {}, fflags {:#x} vs {:#x}, mstatus {:#x} vs {:#x}\n\
             f in: {:x?}\nf out: {:x?}\nvs     {:x?}",
            listing.join("\n"),
            interp.pc,
            t1.pc,
            interp.instret,
            t1.instret,
            interp.trap,
            t1.trap,
            interp.data == t1.data,
            interp.mmio_writes,
            t1.mmio_writes,
            interp.f == t1.f,
            interp.fflags,
            t1.fflags,
            interp.mstatus,
            t1.mstatus,
            fp.f,
            interp.f,
            t1.f,
        );
    }
}

/// Every tier this build has, with the block optimiser's passes on and off, each checked
/// against the unoptimised interpreter.
/// Tier 2 runs once as `--tier t2` does (fast pipeline, hot regions re-optimised), once with
/// the fast pipeline alone, once with full optimisation (O2,
/// regions that follow calls to their return sites: the indirect-jump candidates) and once
/// under `auto`, where regions follow the indirect-jump targets the interpreter profiled.
const OTHER_TIERS: &[(Tier, IrOptions, Option<T2Opt>, &str)] = &[
    (Tier::Interp, ALL_PASSES, None, "the optimised interpreter"),
    #[cfg(tier1)]
    (Tier::T1, ALL_PASSES, None, "tier 1"),
    #[cfg(tier1)]
    (Tier::T1, NO_PASSES, None, "tier 1 without block passes"),
    #[cfg(tier2)]
    (
        Tier::T2,
        ALL_PASSES,
        None,
        "tier 2 as --tier t2 runs (fast regions, re-optimised where runs come back to the run loop)",
    ),
    #[cfg(tier2)]
    (
        Tier::T2,
        NO_PASSES,
        Some(T2Opt::Fast),
        "tier 2 without block passes",
    ),
    #[cfg(tier2)]
    (
        Tier::T2,
        ALL_PASSES,
        Some(T2Opt::Full),
        "tier 2 optimised (O2, calls followed)",
    ),
    #[cfg(tier2)]
    (
        Tier::Auto,
        ALL_PASSES,
        Some(T2Opt::Fast),
        "auto (interpreted runs profile indirect jumps, regions predict them)",
    ),
];

/// Cases per randomized test: `RV32VM_LOCKSTEP_CASES`, or 3000.
fn lockstep_cases() -> u64 {
    env_number("RV32VM_LOCKSTEP_CASES").unwrap_or(3000)
}

/// The seeds of a randomized test with `cases` cases, from `RV32VM_LOCKSTEP_FIRST` (or 0).
fn seeds(cases: u64) -> std::ops::Range<u64> {
    let first = env_number("RV32VM_LOCKSTEP_FIRST").unwrap_or(0);
    first..first + cases
}

fn env_number(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.parse().ok())
}

#[test]
fn every_tier_matches_interpreter_on_random_blocks() {
    for seed in seeds(lockstep_cases()) {
        check_case(seed);
    }
}

#[test]
fn every_tier_matches_interpreter_on_random_regions() {
    // A third as many: each case compiles several multi-block regions through LLVM, once at O2.
    for seed in seeds(lockstep_cases().div_ceil(3)) {
        check_case_of(seed, CaseKind::Region);
    }
}

#[test]
fn every_tier_matches_interpreter_on_random_indirect_loops() {
    // A tenth as many: each case runs to the instruction limit in every tier.
    for seed in seeds(lockstep_cases().div_ceil(10)) {
        check_case_of(seed, CaseKind::IndirectLoops);
    }
}

#[test]
fn native_floating_point_matches_softfloat_near_format_limits() {
    for seed in seeds(lockstep_cases()) {
        check_case_of(seed, CaseKind::FloatLimits);
    }
}

#[test]
fn min_max_classification_and_conversions_of_special_values_match() {
    for seed in seeds(lockstep_cases() / 6) {
        check_case_of(seed, CaseKind::FloatSpecials);
    }
}

/// `setup`, then a loop of one block that adds x1 to x2 and counts x1 down to 0, then `ecall`.
fn summing_loop_after(setup: &[u32]) -> Vec<u8> {
    let body = [
        r_type(0, 1, 2, 0, 2, 0x33), // loop: add x2, x2, x1
        i_type(-1, 1, 0, 1, 0x13),   // addi x1, x1, -1
        b_type(-8, 0, 1, 1),         // bne x1, x0, loop
        0x0000_0073,                 // ecall
    ];
    setup
        .iter()
        .chain(&body)
        .flat_map(|w| w.to_le_bytes())
        .collect()
}

#[test]
fn every_tier_matches_interpreter_on_a_loop_that_chains_to_itself() {
    // x1 counts down from 1000 by 1; x2 accumulates; the loop block chains to itself and
    // must return to the run loop at the budget and at the instruction limit alike.
    let code = summing_loop_after(&[
        i_type(1000, 0, 0, 1, 0x13), // addi x1, x0, 1000
        i_type(0, 0, 0, 2, 0x13),    // addi x2, x0, 0
    ]);
    let data = vec![0u8; (DATA_PAGES * 4096) as usize];
    let interp = run(Tier::Interp, &code, &[0; 32], &data, false);
    assert_eq!(interp.x[2], 500_500);
    for other in OTHER_TIERS {
        assert!(
            run_as(other, &code, &[0; 32], &data) == interp,
            "{}",
            other.3
        );
    }
}

#[test]
#[cfg(tier1)]
fn a_short_self_loop_takes_from_the_chaining_budget_once_per_several_iterations() {
    // Tier 1's self-loop counts an iteration of a short loop as a fraction of a transfer, so a
    // run of 100 000 iterations of three instructions comes back to the run loop a few dozen
    // times (once per 256 budget units of 16 iterations), not once per 256 iterations (390
    // times), and still at least once per 256 x 64 iterations; the registers and the limit
    // are the interpreter's. The loop starts at an odd instret, which the budget's test must
    // not depend on.
    let code = summing_loop_after(&[
        i_type(0, 0, 0, 2, 0x13),    // addi x2, x0, 0
        0x0001_8000 | 1 << 7 | 0x37, // lui x1, 0x18 (98 304)
        i_type(1696, 1, 0, 1, 0x13), // addi x1, x1, 1696 (100 000)
    ]);
    let data = vec![0u8; (DATA_PAGES * 4096) as usize];
    let run_to = |tier: Tier, limit: u64| {
        let mut plat = TestPlatform::new(&code, &data, false, false);
        let mut hart = Hart::new();
        hart.pc = CODE_BASE;
        let mut engine = Engine::new(EngineConfig {
            tier,
            ir: ALL_PASSES,
            ..EngineConfig::default()
        });
        engine.run_blocks(&mut hart, &mut plat, limit);
        (hart, engine.stats.t1_entries)
    };
    for limit in [u64::MAX, 150_001] {
        let (interp, _) = run_to(Tier::Interp, limit);
        let (t1, entries) = run_to(Tier::T1, limit);
        assert_eq!(t1.x, interp.x, "limit {limit}: registers");
        assert_eq!(
            (t1.pc, t1.instret),
            (interp.pc, interp.instret),
            "limit {limit}"
        );
        if limit == u64::MAX {
            assert_eq!(interp.x[2], 5_000_050_000u64 as u32);
            assert!(
                (2..100).contains(&entries),
                "tier 1 entered {entries} times for 100 000 iterations"
            );
        }
    }
}

#[test]
fn compare_and_swap_pairs_and_narrow_amos_in_a_loop_match_in_every_tier() {
    // amocas.d reads and writes two register pairs, and code right after reads the pair's odd
    // register, which only the helper wrote: every tier must take it from the hart (a region
    // keeping x13 in an SSA value, or tier 1 in a callee-saved host register, would not see
    // it; x13 is among the loop's most used registers, so tier 1 keeps it in one). The compare
    // fails and succeeds in turn. Byte and halfword AMOs and amocas.b share
    // the loop.
    let amo = |funct5: u32, width: u32, rd: u32, rs1: u32, rs2: u32| {
        r_type(funct5 << 2, rs2, rs1, width, rd, 0x2f)
    };
    let words = [
        DATA_BASE | 5 << 7 | 0x37,         // lui x5, DATA_BASE
        i_type(16, 5, 0, 6, 0x13),         // addi x6, x5, 16
        i_type(50, 0, 0, 8, 0x13),         // addi x8, x0, 50
        amo(5, 3, 12, 5, 14),              // loop: amocas.d x12, x14, (x5)
        r_type(0, 13, 20, 0, 20, 0x33),    // add x20, x20, x13
        r_type(0, 13, 21, 4, 21, 0x33),    // xor x21, x21, x13
        r_type(0, 13, 25, 0, 25, 0x33),    // add x25, x25, x13
        r_type(0x20, 13, 26, 0, 26, 0x33), // sub x26, x26, x13
        r_type(0, 13, 27, 6, 27, 0x33),    // or x27, x27, x13
        r_type(0, 12, 28, 0, 28, 0x33),    // add x28, x28, x12
        i_type(1, 14, 0, 14, 0x13),        // addi x14, x14, 1
        i_type(3, 15, 0, 15, 0x13),        // addi x15, x15, 3
        amo(0, 1, 16, 6, 8),               // amoadd.h x16, x8, (x6)
        r_type(0, 16, 22, 0, 22, 0x33),    // add x22, x22, x16
        amo(5, 0, 17, 6, 8),               // amocas.b x17, x8, (x6)
        r_type(0, 17, 23, 0, 23, 0x33),    // add x23, x23, x17
        amo(0x10, 0, 18, 6, 20),           // amomin.b x18, x20, (x6)
        r_type(0, 18, 24, 0, 24, 0x33),    // add x24, x24, x18
        i_type(-1, 8, 0, 8, 0x13),         // addi x8, x8, -1
        b_type(-64, 0, 8, 1),              // bne x8, x0, loop
        0x0000_0073,                       // ecall
    ];
    let code: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    let data: Vec<u8> = (0..DATA_PAGES * 4096).map(|i| (i * 7 + 3) as u8).collect();
    let mut regs = [0u32; 32];
    (regs[14], regs[15]) = (0x1111_2222, 0x3333_4444);
    let interp = run(Tier::Interp, &code, &regs, &data, false);
    assert_eq!(
        interp.trap.map(|t| t.2),
        Some(CODE_BASE + 4 * 20),
        "ends at the ecall"
    );
    assert_eq!(interp.x[8], 0, "the loop ran to its end");
    for other in OTHER_TIERS {
        assert!(run_as(other, &code, &regs, &data) == interp, "{}", other.3);
    }
}

#[test]
fn a_loop_that_chains_to_itself_stays_exact_at_slow_paths_traps_and_the_limit() {
    // Tier 1 counts a self-loop's instret and budget in host registers; memory must hold
    // them wherever the loop leaves its fast path. The loop loads through x5, walking 256
    // bytes an iteration from the data pages into the hole (a page fault at an exact
    // instret), or from one device register (a helper call every iteration) until the
    // instruction limit stops it mid-loop.
    for (start, stride, name) in [
        (DATA_BASE, 256, "into the hole"),
        (MMIO_BASE, 0, "through the device"),
    ] {
        let words = [
            start | 5 << 7 | 0x37,         // lui x5, start
            i_type(0, 5, 2, 6, 0x03),      // loop: lw x6, 0(x5)
            r_type(0, 6, 7, 0, 7, 0x33),   // add x7, x7, x6
            i_type(stride, 5, 0, 5, 0x13), // addi x5, x5, stride
            i_type(1, 8, 0, 8, 0x13),      // addi x8, x8, 1
            b_type(-16, 0, 8, 4),          // blt x8, x0, loop
            0x0000_0073,                   // ecall
        ];
        let code: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        let data: Vec<u8> = (0..DATA_PAGES * 4096).map(|i| (i * 7 + 3) as u8).collect();
        let mut regs = [0u32; 32];
        regs[8] = -100_000i32 as u32;
        let interp = run(Tier::Interp, &code, &regs, &data, false);
        let expected = if start == DATA_BASE {
            Some(CODE_BASE + 4) // the load faults
        } else {
            None // stopped by the instruction limit
        };
        assert_eq!(interp.trap.map(|t| t.2), expected, "{name}");
        for other in OTHER_TIERS {
            assert!(
                run_as(other, &code, &regs, &data) == interp,
                "{name}: {}",
                other.3
            );
        }
    }
}

#[test]
#[cfg(tier2)]
fn regions_on_two_pages_chain_to_each_other_and_stop_at_the_limit() {
    // A loop in the first page calls a function in the second page (jal) that returns with
    // jalr: under tier 2 each page is a region, and every call and return goes from one
    // region straight into the other. The run must match the interpreter's exactly, also
    // when the instruction limit falls inside the chain.
    let mut code = vec![0u8; CODE_SIZE];
    let mut put = |addr: u32, word: u32| {
        let at = (addr - CODE_BASE) as usize;
        code[at..at + 4].copy_from_slice(&word.to_le_bytes());
    };
    put(0x1000, i_type(700, 0, 0, 3, 0x13)); // addi x3, x0, 700
    put(0x1004, i_type(0, 0, 0, 2, 0x13)); // loop: addi x2, x0, 0 (clobbered by the call)
    put(0x1008, j_type(0x2100 - 0x1008, 1)); // jal x1, f
    put(0x100c, r_type(0, 2, 4, 0, 4, 0x33)); // add x4, x4, x2
    put(0x1010, i_type(-1, 3, 0, 3, 0x13)); // addi x3, x3, -1
    put(0x1014, b_type(0x1004 - 0x1014, 0, 3, 1)); // bne x3, x0, loop
    put(0x1018, 0x0000_0073); // ecall
    put(0x2100, i_type(5, 3, 0, 2, 0x13)); // f: addi x2, x3, 5
    put(0x2104, r_type(0, 3, 2, 0, 2, 0x33)); // add x2, x2, x3
    put(0x2108, i_type(0, 1, 0, 0, 0x67)); // jalr x0, 0(x1)
    let data = vec![0u8; (DATA_PAGES * 4096) as usize];
    let interp = run(Tier::Interp, &code, &[0; 32], &data, false);
    assert_eq!(interp.x[4], (1..=700).map(|n| 2 * n + 5).sum::<u32>());
    for opt in [T2Opt::Fast, T2Opt::Full] {
        for limit in [10_000, 2_345] {
            let mut plat = TestPlatform::new(&code, &data, false, false);
            let mut hart = Hart::new();
            hart.pc = CODE_BASE;
            let mut engine = Engine::new(EngineConfig {
                tier: Tier::T2,
                ir: ALL_PASSES,
                t2_opt: Some(opt),
                t2_threshold: 0,
                ..EngineConfig::default()
            });
            engine.run(&mut hart, &mut plat, Some(limit));
            if limit == 10_000 {
                assert_eq!(hart.x, interp.x, "{opt:?}: registers");
                assert_eq!((hart.pc, hart.instret), (interp.pc, interp.instret));
            } else {
                let mut reference = Hart::new();
                reference.pc = CODE_BASE;
                let mut plat = TestPlatform::new(&code, &data, false, false);
                Engine::new(EngineConfig {
                    tier: Tier::Interp,
                    ..EngineConfig::default()
                })
                .run(&mut reference, &mut plat, Some(limit));
                assert_eq!(hart.x, reference.x, "{opt:?}: registers at the limit");
                assert_eq!((hart.pc, hart.instret), (reference.pc, limit));
            }
            assert!(
                engine.stats.t2_chained > 100,
                "{opt:?}: regions chained only {} times",
                engine.stats.t2_chained
            );
        }
    }
}

#[test]
fn chained_jump_into_a_block_changed_by_a_store_is_unlinked() {
    // A block at 0x1ffe starts with `addi x1, x1, 1` straddling into the next page. A loop in
    // the first page jumps to it (a chained jump under tier 1); code in the second page
    // rewrites the instruction's upper half to `addi x1, x1, 100`. Only the straddling block is
    // dropped (its second page was written), so the chained jump into it must be undone.
    let mut code = vec![0u8; CODE_SIZE];
    let mut put = |addr: u32, bytes: &[u8]| {
        let at = (addr - CODE_BASE) as usize;
        code[at..at + bytes.len()].copy_from_slice(bytes);
    };
    put(0x1000, &i_type(3, 0, 0, 3, 0x13).to_le_bytes()); // addi x3, x0, 3
    put(0x1004, &(0x2000 | 6 << 7 | 0x37u32).to_le_bytes()); // lui x6, 0x2
    put(0x1008, &i_type(0x640, 0, 0, 5, 0x13).to_le_bytes()); // addi x5, x0, 0x640
    put(0x100c, &j_type(0x1f00 - 0x100c, 0).to_le_bytes()); // j L
    put(0x1f00, &j_type(0x1ffe - 0x1f00, 0).to_le_bytes()); // L: j S
    put(0x1ffe, &i_type(1, 1, 0, 1, 0x13).to_le_bytes()); // S: addi x1, x1, 1
    put(0x2002, &s_type(0, 5, 6, 1).to_le_bytes()); // sh x5, 0(x6)
    put(0x2006, &i_type(-1, 3, 0, 3, 0x13).to_le_bytes()); // addi x3, x3, -1
    put(0x200a, &b_type(8, 0, 3, 0).to_le_bytes()); // beq x3, x0, +8
    put(0x200e, &j_type(0x1f00 - 0x200e, 0).to_le_bytes()); // j L
    put(0x2012, &0x0000_0073u32.to_le_bytes()); // ecall
    let data = vec![0u8; (DATA_PAGES * 4096) as usize];
    let interp = run(Tier::Interp, &code, &[0; 32], &data, false);
    assert_eq!(
        interp.x[1],
        1 + 100 + 100,
        "the interpreter sees the rewritten instruction"
    );
    for entry in OTHER_TIERS {
        let (other, name) = (run_as(entry, &code, &[0; 32], &data), entry.3);
        assert_eq!(other.x, interp.x, "{name}: registers");
        assert_eq!(
            (other.pc, other.instret, other.trap),
            (interp.pc, interp.instret, interp.trap),
            "{name}"
        );
        assert!(other.code == interp.code, "{name}: code memory differs");
    }
}

#[test]
fn chained_jump_to_another_page_follows_a_remapping() {
    // A loop in the first page jumps to code in the second page (chained under tier 1, behind
    // a guard on the execute TLB) and back. Midway, the second page is mapped to another host
    // page holding other code, and the TLB flushed: the next jump must run the new code, even
    // once the TLB maps the page again (now to the new host page).
    let code = code_of(&[
        (0x1000, i_type(7, 0, 0, 3, 0x13)), // addi x3, x0, 7
        (0x1004, (REMAP_MMIO + 0x10) & !PAGE_MASK | 6 << 7 | 0x37), // lui x6, page after REMAP_MMIO
        (0x1008, j_type(0x2000 - 0x1008, 0)), // j F (F runs once before L is compiled)
        (0x1100, j_type(0x2000 - 0x1100, 0)), // L: j F
        (0x1200, i_type(-1, 3, 0, 3, 0x13)), // R: addi x3, x3, -1
        (0x1204, i_type(3, 0, 0, 7, 0x13)), // addi x7, x0, 3
        (0x1208, b_type(8, 7, 3, 1)),       // bne x3, x7, +8
        (0x120c, s_type(-0x10, 0, 6, 2)),   // sw x0, -16(x6): remap the second page
        (0x1210, b_type(0x1100 - 0x1210, 0, 3, 1)), // bne x3, x0, L
        (0x1214, 0x0000_0073),              // ecall
        (0x2000, i_type(1, 1, 0, 1, 0x13)), // F: addi x1, x1, 1
        (0x2004, j_type(0x1200 - 0x2004, 0)), // j R
    ]);
    let mut alternate = vec![0u8; 8];
    alternate[..4].copy_from_slice(&i_type(100, 1, 0, 1, 0x13).to_le_bytes()); // addi x1, x1, 100
    alternate[4..].copy_from_slice(&j_type(0x1200 - 0x2004, 0).to_le_bytes()); // j R
    let data = vec![0u8; (DATA_PAGES * 4096) as usize];
    let fp = RunSetup::integer();
    let run = |tier, ir, t2_opt| {
        let plat = TestPlatform::new(&code, &data, false, false).alternate_code(&alternate);
        run_on(plat, tier, ir, t2_opt, &[0; 32], &fp)
    };
    let interp = run(Tier::Interp, NO_PASSES, None);
    assert_eq!(
        interp.x[1],
        4 + 3 * 100,
        "the interpreter runs the new code after the remap"
    );
    assert_eq!(interp.trap.map(|t| t.2), Some(0x1214), "ended at the ecall");
    assert_other_tiers_end_as(&interp, run, "a remapped code page");
}

/// Run `body`, a loop at 0x1100 that ends in an `ecall`, in every tier after a prologue that
/// sets x6 to the page after [`REMAP_MMIO`], x5 to the second code page (0x2000), x3 to 200
/// and x8 to 100, with `alternate` as the second page's other host page. Every tier must end
/// as the interpreter, code pages included (`what` names the case); returns the
/// interpreter's outcome.
fn remapping_loop_in_every_tier(body: &[(u32, u32)], alternate: &[u8], what: &str) -> Outcome {
    let mut words = vec![
        (0x1000, (REMAP_MMIO + 0x10) & !PAGE_MASK | 6 << 7 | 0x37), // lui x6, page after REMAP_MMIO
        (0x1004, 0x2000 | 5 << 7 | 0x37),                           // lui x5, 0x2
        (0x1008, i_type(200, 0, 0, 3, 0x13)),                       // addi x3, x0, 200
        (0x100c, i_type(100, 0, 0, 8, 0x13)),                       // addi x8, x0, 100
        (0x1010, j_type(0x1100 - 0x1010, 0)),                       // j 0x1100
    ];
    words.extend_from_slice(body);
    let code = code_of(&words);
    let data = vec![0u8; (DATA_PAGES * 4096) as usize];
    let fp = RunSetup::integer();
    let run = |tier, ir, t2_opt| {
        let plat = TestPlatform::new(&code, &data, false, false).alternate_code(alternate);
        run_on(plat, tier, ir, t2_opt, &[0; 32], &fp)
    };
    let interp = run(Tier::Interp, NO_PASSES, None);
    let ecall = body.last().map(|&(pc, _)| pc);
    assert_eq!(
        interp.trap.map(|t| t.2),
        ecall,
        "{what}: ended at the ecall"
    );
    assert_other_tiers_end_as(&interp, run, what);
    for &(tier, ir, t2_opt, name) in OTHER_TIERS {
        assert_eq!(
            run(tier, ir, t2_opt).code,
            interp.code,
            "{what}, {name}: code pages"
        );
    }
    interp
}

#[test]
fn a_load_in_a_loop_reads_through_a_remapping_made_by_a_device_store() {
    // A loop loads a word from the second code page every iteration (a tier-2 region
    // remembers the page's translation for its loads there). Midway, a device store maps the
    // page to another host page and flushes the TLB, and a load based on the same register
    // right after it, in the same block, must read the new page, as must every later one.
    let interp = remapping_loop_in_every_tier(
        &[
            (0x1100, i_type(0, 5, 2, 7, 0x03)),         // L: lw x7, 0(x5)
            (0x1104, r_type(0, 7, 1, 0, 1, 0x33)),      // add x1, x1, x7
            (0x1108, i_type(-1, 3, 0, 3, 0x13)),        // addi x3, x3, -1
            (0x110c, b_type(16, 8, 3, 1)),              // bne x3, x8, S
            (0x1110, s_type(-0x10, 0, 6, 2)),           // sw x0, -16(x6): remap the second page
            (0x1114, i_type(0, 5, 2, 7, 0x03)),         // lw x7, 0(x5)
            (0x1118, r_type(0, 7, 9, 0, 9, 0x33)),      // add x9, x9, x7
            (0x111c, b_type(0x1100 - 0x111c, 0, 3, 1)), // S: bne x3, x0, L
            (0x2000, 1),                                // the word the loop loads
            (0x1120, 0x0000_0073),                      // ecall
        ],
        &1000u32.to_le_bytes(),
        "a load through a remapped page",
    );
    assert_eq!(
        (interp.x[1], interp.x[9]),
        (100 + 100 * 1000, 1000),
        "the interpreter reads the new page from the remap on"
    );
}

#[test]
fn an_indirect_jump_to_another_page_follows_a_remapping() {
    // A loop jumps through a register to code in the second page (tier 1 probes the jump
    // cache inline at the `jalr`), which jumps back. Midway, a device store maps the page to
    // another host page holding other code and flushes the TLB: the jump cache still names
    // the old page's block, and every later jump must run the new code.
    let interp = remapping_loop_in_every_tier(
        &[
            (0x1100, i_type(0, 5, 0, 0, 0x67)),         // L: jalr x0, 0(x5)
            (0x1200, i_type(-1, 3, 0, 3, 0x13)),        // R: addi x3, x3, -1
            (0x1204, b_type(8, 8, 3, 1)),               // bne x3, x8, +8
            (0x1208, s_type(-0x10, 0, 6, 2)),           // sw x0, -16(x6): remap the second page
            (0x120c, b_type(0x1100 - 0x120c, 0, 3, 1)), // bne x3, x0, L
            (0x2000, i_type(1, 1, 0, 1, 0x13)),         // F: addi x1, x1, 1
            (0x2004, j_type(0x1200 - 0x2004, 0)),       // j R
            (0x1210, 0x0000_0073),                      // ecall
        ],
        &[
            i_type(1000, 1, 0, 1, 0x13).to_le_bytes(), // addi x1, x1, 1000
            j_type(0x1200 - 0x2004, 0).to_le_bytes(),  // j R
        ]
        .concat(),
        "an indirect jump into a remapped page",
    );
    assert_eq!(
        interp.x[1],
        100 + 100 * 1000,
        "the interpreter runs the new code from the remap on"
    );
}

#[test]
fn a_store_in_a_loop_writes_through_a_remapping_made_by_a_device_store() {
    // As for loads: a loop stores to the second page (a data page here, so it has write TLB
    // entries) every iteration; midway a device store maps the page to another host page,
    // and a store based on the same register right after it, in the same block, and every
    // later one must reach the new page, the old one keeping what was stored before.
    let interp = remapping_loop_in_every_tier(
        &[
            (0x1100, s_type(0, 3, 5, 2)),               // L: sw x3, 0(x5)
            (0x1104, i_type(-1, 3, 0, 3, 0x13)),        // addi x3, x3, -1
            (0x1108, b_type(12, 8, 3, 1)),              // bne x3, x8, S
            (0x110c, s_type(-0x10, 0, 6, 2)),           // sw x0, -16(x6): remap the second page
            (0x1110, s_type(4, 3, 5, 2)),               // sw x3, 4(x5)
            (0x1114, b_type(0x1100 - 0x1114, 0, 3, 1)), // S: bne x3, x0, L
            (0x1118, i_type(0, 5, 2, 10, 0x03)),        // lw x10, 0(x5)
            (0x111c, i_type(4, 5, 2, 11, 0x03)),        // lw x11, 4(x5)
            (0x1120, 0x0000_0073),                      // ecall
        ],
        &[0; 8],
        "a store through a remapped page",
    );
    let old_word = u32::from_le_bytes(interp.code[0x1000..0x1004].try_into().expect("4 bytes"));
    assert_eq!(
        (interp.x[10], interp.x[11], old_word),
        (1, 100, 101),
        "the interpreter stores to the new page from the remap on"
    );
}

#[test]
fn fp_flags_of_a_loop_that_chains_to_itself_reach_fflags() {
    // A block that loops on itself computing with doubles (inexact results): tier 1 keeps
    // MXCSR's flags pending across the back edge; fflags, read after the loop, and FS must be
    // the interpreter's.
    let fp_op = |funct7: u32, rs2: u32, rs1: u32, rd: u32| r_type(funct7, rs2, rs1, 7, rd, 0x53);
    let words = [
        fp_op(0x01, 2, 1, 1),      // fadd.d f1, f1, f2
        fp_op(0x09, 4, 1, 3),      // fmul.d f3, f1, f4
        fp_op(0x0d, 6, 3, 5),      // fdiv.d f5, f3, f6
        i_type(-1, 5, 0, 5, 0x13), // addi x5, x5, -1
        b_type(-16, 0, 5, 1),      // bne x5, x0, start
        i_type(1, 0, 2, 6, 0x73),  // csrrs x6, fflags, x0
        0x0000_0073,               // ecall
    ];
    let doubles = [(1, 1.0), (2, 0.1), (4, 3.0), (6, 7.0)];
    let interp = fp_program_in_every_tier(&words, &doubles, 50);
    assert_ne!(interp.x[6], 0, "the loop raised flags (inexact)");
}

#[test]
fn f_registers_live_across_a_device_access_keep_their_values() {
    // A loop whose first FP load reads a device (every iteration takes the slow path, which
    // a region with native F/D calls through a `preserve_all` wrapper) while f2-f5 carry
    // values across it: every tier must end with the interpreter's registers and flags.
    let fp_op = |funct7: u32, rs2: u32, rs1: u32, rd: u32| r_type(funct7, rs2, rs1, 7, rd, 0x53);
    let fld = |imm: i32, rs1: u32, rd: u32| i_type(imm, rs1, 3, rd, 0x07);
    let fsd = |imm: i32, rs2: u32, rs1: u32| (s_type(imm, rs2, rs1, 3) & !0x7f) | 0x27;
    let words = [
        MMIO_BASE | 6 << 7 | 0x37, // lui x6, MMIO_BASE
        DATA_BASE | 7 << 7 | 0x37, // lui x7, DATA_BASE
        fld(8, 6, 1),              // L: fld f1, 8(x6): the device
        fp_op(0x01, 3, 2, 2),      // fadd.d f2, f2, f3
        fp_op(0x09, 5, 4, 4),      // fmul.d f4, f4, f5
        fld(0, 7, 6),              // fld f6, 0(x7)
        fp_op(0x01, 6, 2, 2),      // fadd.d f2, f2, f6
        fsd(8, 2, 7),              // fsd f2, 8(x7)
        i_type(-1, 5, 0, 5, 0x13), // addi x5, x5, -1
        b_type(-28, 0, 5, 1),      // bne x5, x0, L
        0x0000_0073,               // ecall
    ];
    let doubles = [(2, 0.25), (3, 0.1), (4, 1.0), (5, 1.000_000_1)];
    let interp = fp_program_in_every_tier(&words, &doubles, 300);
    assert_ne!(interp.f[4], 1.0f64.to_bits(), "the loop ran");
}

#[test]
fn dependent_fp_operations_match_in_every_tier() {
    // Each operation reads results of the ones before it (tier 1 takes them from xmm
    // registers instead of the hart): as either operand of commutative and
    // non-commutative operations, both operands, a square root, FMA sources, singles; f7
    // turns negative part-way, so the square root's NaN results take the slow path, after
    // which the next operation must still see the helper's canonical NaN.
    let op = |funct7: u32, rs2: u32, rs1: u32, rd: u32| r_type(funct7, rs2, rs1, 7, rd, 0x53);
    let fmadd_d = |rs3: u32, rs2: u32, rs1: u32, rd: u32| {
        rs3 << 27 | 1 << 25 | rs2 << 20 | rs1 << 15 | 7 << 12 | rd << 7 | 0x43
    };
    let words = [
        op(0x05, 3, 2, 2),         // L: fsub.d f2, f2, f3
        op(0x09, 2, 4, 6),         // fmul.d f6, f4, f2 (rs2 held, commutative)
        op(0x05, 6, 5, 7),         // fsub.d f7, f5, f6 (rs2 held)
        op(0x2d, 0, 7, 8),         // fsqrt.d f8, f7
        op(0x0d, 8, 8, 9),         // fdiv.d f9, f8, f8 (both held)
        fmadd_d(9, 3, 9, 10),      // fmadd.d f10, f9, f3, f9
        op(0x01, 10, 10, 11),      // fadd.d f11, f10, f10
        op(0x01, 1, 11, 12),       // fadd.d f12, f11, f1
        op(0x20, 1, 12, 13),       // fcvt.s.d f13, f12
        op(0x00, 13, 13, 14),      // fadd.s f14, f13, f13
        op(0x08, 14, 14, 15),      // fmul.s f15, f14, f14
        op(0x0c, 15, 13, 16),      // fdiv.s f16, f13, f15 (rs2 held)
        op(0x04, 15, 14, 17),      // fsub.s f17, f14, f15 (older results)
        i_type(-1, 5, 0, 5, 0x13), // addi x5, x5, -1
        b_type(-56, 0, 5, 1),      // bne x5, x0, L
        0x0000_0073,               // ecall
    ];
    let doubles = [(1, 0.5), (2, 1.0), (3, 0.01), (4, 3.0), (5, 2.0)];
    let interp = fp_program_in_every_tier(&words, &doubles, 300);
    assert!(f64::from_bits(interp.f[2]) < -1.9, "the loop ran");
    assert_ne!(
        interp.fflags & 0x10,
        0,
        "a square root was invalid (NaN results)"
    );
    let single = interp.f[16];
    assert!(
        single >> 32 == 0xffff_ffff && !f32::from_bits(single as u32).is_nan(),
        "the single chain ended on a number: {single:#x}"
    );
    // Rounding toward zero: a dynamic-rounding operation takes the slow path (a number, not
    // a NaN), and the next one, rounding to nearest by its own field, runs natively on it.
    let words = [
        0x0020_d073,                    // csrwi frm, 1 (RTZ)
        op(0x0d, 3, 2, 2),              // L: fdiv.d f2, f2, f3 (dynamic: the helper)
        r_type(0x01, 5, 2, 0, 4, 0x53), // fadd.d f4, f2, f5, rne (native, f2 held)
        r_type(0x09, 4, 4, 0, 6, 0x53), // fmul.d f6, f4, f4, rne
        op(0x01, 6, 6, 2),              // fadd.d f2, f6, f6 (dynamic: the helper)
        r_type(0x05, 3, 2, 0, 2, 0x53), // fsub.d f2, f2, f3, rne
        r_type(0x01, 6, 4, 0, 7, 0x53), // fadd.d f7, f4, f6, rne (from before a helper)
        i_type(-1, 5, 0, 5, 0x13),      // addi x5, x5, -1
        b_type(-28, 0, 5, 1),           // bne x5, x0, L
        0x0000_0073,                    // ecall
    ];
    let doubles = [(2, 1.0), (3, 3.0), (5, 0.1)];
    let interp = fp_program_in_every_tier(&words, &doubles, 40);
    assert_ne!(interp.f[6], 0, "the loop ran");
    // More results than tier 1 keeps in registers (13): f3..f17 each the sum of the two
    // before, then f18 from two of the first (no longer kept) and f19 from two of the last.
    let mut words: Vec<u32> = (3..18).map(|k| op(0x01, k - 2, k - 1, k)).collect();
    words.push(op(0x01, 4, 3, 18));
    words.push(op(0x05, 16, 17, 19));
    let back = -4 * (words.len() as i32 + 1);
    words.push(i_type(-1, 5, 0, 5, 0x13)); // addi x5, x5, -1
    words.push(b_type(back, 0, 5, 1)); // bne x5, x0, L
    words.push(0x0000_0073); // ecall
    let doubles = [(1, 0.001), (2, 0.002)];
    let interp = fp_program_in_every_tier(&words, &doubles, 3);
    assert_ne!(interp.f[19], 0, "the loop ran");
}

/// Run `words` from `CODE_BASE` with FP on (RNE), f registers holding `doubles` and x5 =
/// `x5`, under the interpreter and then every other tier, which must end as it did (at the
/// last word, an `ecall`) with the same x and f registers, fflags, mstatus, pc and instret.
/// Returns the interpreter's outcome.
fn fp_program_in_every_tier(words: &[u32], doubles: &[(usize, f64)], x5: u32) -> Outcome {
    let mut code = vec![0u8; CODE_SIZE];
    for (i, w) in words.iter().enumerate() {
        code[4 * i..4 * i + 4].copy_from_slice(&w.to_le_bytes());
    }
    let data = vec![0u8; (DATA_PAGES * 4096) as usize];
    let mut f = [0u64; 32];
    for &(r, v) in doubles {
        f[r] = v.to_bits();
    }
    let fp = RunSetup {
        flat: false,
        on: true,
        f,
        frm: 0,
    };
    let mut regs = [0u32; 32];
    regs[5] = x5;
    let run = |tier, ir, t2_opt| {
        let plat = TestPlatform::new(&code, &data, false, false);
        run_on(plat, tier, ir, t2_opt, &regs, &fp)
    };
    let interp = run(Tier::Interp, NO_PASSES, None);
    let ecall = CODE_BASE + 4 * (words.len() as u32 - 1);
    assert_eq!(interp.trap.map(|t| t.2), Some(ecall), "ended at the ecall");
    for &(tier, ir, t2_opt, name) in OTHER_TIERS {
        let other = run(tier, ir, t2_opt);
        assert_eq!(other.x, interp.x, "{name}: registers");
        assert_eq!(other.f, interp.f, "{name}: f registers");
        assert_eq!(
            (other.fflags, other.mstatus, other.pc, other.instret),
            (interp.fflags, interp.mstatus, interp.pc, interp.instret),
            "{name}"
        );
    }
    interp
}

#[test]
fn an_fp_compare_after_a_load_that_traps_raises_no_flag() {
    // A loop loads a word, then compares two singles (or takes their minimum or maximum, or
    // widens one), the first a signalling NaN; the first load faults, so the FP instruction
    // never runs and every tier ends with fflags 0. Native code may not raise the invalid
    // flag ahead of the trap: an LLVM `fcmp` of values the loop does not change was hoisted
    // out of the loop, ahead of the load's trap path.
    let f_op = |funct7: u32, funct3: u32, rs2: u32| r_type(funct7, rs2, 1, funct3, 7, 0x53);
    for (op, name) in [
        (f_op(0x50, 1, 2), "flt.s x7, f1, f2"),
        (f_op(0x50, 0, 2), "fle.s x7, f1, f2"),
        (f_op(0x50, 2, 2), "feq.s x7, f1, f2"),
        (f_op(0x14, 0, 2), "fmin.s f7, f1, f2"),
        (f_op(0x14, 1, 2), "fmax.s f7, f1, f2"),
        (f_op(0x21, 0, 0), "fcvt.d.s f7, f1"),
    ] {
        let fmv_w_x = |rd: u32, rs1: u32| r_type(0x78, 0, rs1, 0, rd, 0x53);
        let code = code_of(&[
            (0x1000, i_type(3, 0, 0, 3, 0x13)),         // addi x3, x0, 3
            (0x1004, HOLE | 6 << 7 | 0x37),             // lui x6, HOLE
            (0x1008, 0x7f80_0000 | 8 << 7 | 0x37),      // lui x8, 0x7f800
            (0x100c, i_type(1, 8, 0, 8, 0x13)),         // addi x8, x8, 1: a signalling NaN
            (0x1010, 0x3f80_0000 | 10 << 7 | 0x37),     // lui x10, 0x3f800: 1.0
            (0x1014, fmv_w_x(1, 8)),                    // fmv.w.x f1, x8
            (0x1018, fmv_w_x(2, 10)),                   // fmv.w.x f2, x10
            (0x101c, j_type(4, 0)),                     // j L
            (0x1020, i_type(0, 6, 2, 5, 0x03)),         // L: lw x5, 0(x6): faults
            (0x1024, op),                               // the FP instruction
            (0x1028, i_type(-1, 3, 0, 3, 0x13)),        // addi x3, x3, -1
            (0x102c, b_type(0x1020 - 0x102c, 0, 3, 1)), // bne x3, x0, L
            (0x1030, 0x0000_0073),                      // ecall
        ]);
        let data = vec![0u8; (DATA_PAGES * 4096) as usize];
        let fp = RunSetup {
            flat: false,
            on: true,
            f: [0; 32],
            frm: 0,
        };
        let run = |tier, ir, t2_opt| {
            let plat = TestPlatform::new(&code, &data, false, false);
            run_on(plat, tier, ir, t2_opt, &[0; 32], &fp)
        };
        let interp = run(Tier::Interp, NO_PASSES, None);
        assert_eq!(
            (interp.trap.map(|t| (t.1, t.2)), interp.fflags, interp.f[1]),
            (Some((HOLE, 0x1020)), 0, 0xffff_ffff_7f80_0001),
            "{name}: the interpreter faults at the load, no flag raised"
        );
        for &(tier, ir, t2_opt, tier_name) in OTHER_TIERS {
            let other = run(tier, ir, t2_opt);
            assert_eq!(
                (other.x, other.f, other.trap),
                (interp.x, interp.f, interp.trap),
                "{name}, {tier_name}: registers and trap"
            );
            assert_eq!(
                (other.fflags, other.mstatus, other.pc, other.instret),
                (interp.fflags, interp.mstatus, interp.pc, interp.instret),
                "{name}, {tier_name}: fflags, mstatus, pc, instret"
            );
        }
    }
}

#[test]
fn fp_flags_pending_across_chained_blocks_reach_csr_reads_and_clears() {
    // Tier 1 leaves native FP flags pending in MXCSR across chained blocks: a CSR instruction
    // in a later block must see them (fold before its helper), and once it clears fflags no
    // flag raised before may come back (none left in MXCSR after it).
    fp_flags_reach_a_csr_after([
        j_type(8, 0), // 4: j 12 (a chained jump to another block)
        0x0000_0013,  // 8: nop
    ]);
}

#[test]
fn fp_flags_pending_across_an_indirect_jump_reach_csr_reads_and_clears() {
    // The dispatcher that compiled code calls for an indirect jump leaves the FP flags
    // pending in MXCSR when the platform has nothing to do between blocks
    // (`Platform::between_blocks_quiet`): the CSR instruction after the jump must still see
    // them, and none may come back after it cleared them.
    fp_flags_reach_a_csr_after([
        10 << 7 | 0x17,            // 4: auipc x10, 0
        i_type(8, 10, 0, 0, 0x67), // 8: jalr x0, 8(x10): to 12, through the dispatcher
    ]);
}

/// A loop: an inexact FP operation, `jump` (two instructions at 4 and 8 that go to 12), then
/// a CSR instruction that reads and clears fflags, an exact operation and a read. Run in every
/// tier; x7 collects what each clear read (inexact), x8 what the read after the exact
/// operation found (nothing).
fn fp_flags_reach_a_csr_after(jump: [u32; 2]) {
    let fp_op = |funct7: u32, rs2: u32, rs1: u32, rd: u32| r_type(funct7, rs2, rs1, 7, rd, 0x53);
    let words = [
        fp_op(0x01, 2, 1, 1), // 0: fadd.d f1, f1, f2 (inexact)
        jump[0],
        jump[1],
        i_type(1, 0, 1, 9, 0x73),    // 12: csrrw x9, fflags, x0
        r_type(0, 9, 7, 6, 7, 0x33), // 16: or x7, x7, x9
        fp_op(0x09, 4, 4, 3),        // 20: fmul.d f3, f4, f4 (exact)
        i_type(1, 0, 2, 6, 0x73),    // 24: csrrs x6, fflags, x0
        r_type(0, 6, 8, 6, 8, 0x33), // 28: or x8, x8, x6
        i_type(-1, 5, 0, 5, 0x13),   // 32: addi x5, x5, -1
        b_type(-36, 0, 5, 1),        // 36: bne x5, x0, 0
        0x0000_0073,                 // 40: ecall
    ];
    let interp = fp_program_in_every_tier(&words, &[(1, 1.0), (2, 0.1), (4, 3.0)], 200);
    assert_eq!(
        (interp.x[7], interp.x[8]),
        (u32::from(crate::cpu::fflags::NX), 0),
        "each clear read inexact; each read after the exact operation nothing"
    );
}

#[test]
#[cfg(all(tier1, tier2))]
fn fp_flags_pending_in_tier_1_reach_a_region_that_reads_them() {
    // Tier 1's block computes inexactly and chains (through its stub) into a region whose
    // CSR instruction reads and clears fflags: the flags tier 1 left pending in MXCSR must be
    // the CSR's, and none may come back after the clear. The region has native FP of its own
    // (it loads MXCSR clean at its entry) or none (it calls the helpers without folding).
    fp_flags_reach_a_region(false);
    fp_flags_reach_a_region(true);
}

#[cfg(all(tier1, tier2))]
fn fp_flags_reach_a_region(region_fp: bool) {
    let fp_op = |funct7: u32, rs2: u32, rs1: u32, rd: u32| r_type(funct7, rs2, rs1, 7, rd, 0x53);
    let mut words = vec![
        fp_op(0x01, 2, 1, 1), // 0: fadd.d f1, f1, f2 (inexact)
        j_type(8, 0),         // 4: j 12
        0x0000_0013,          // 8: nop
    ];
    // 12: code long enough for a region of its own while tier 1 is on (the CSR instruction
    // ends the region: its entry is on no cycle of it).
    if region_fp {
        words.push(fp_op(0x09, 4, 4, 3)); // fmul.d f3, f4, f4 (exact)
    }
    let addi_x11 = i_type(1, 11, 0, 11, 0x13);
    words.extend([addi_x11; crate::exec::policy::MIN_STRAIGHT_REGION_INSNS]);
    words.extend([
        i_type(1, 0, 1, 9, 0x73),    // csrrw x9, fflags, x0
        r_type(0, 9, 7, 6, 7, 0x33), // or x7, x7, x9
        i_type(1, 0, 2, 6, 0x73),    // csrrs x6, fflags, x0
        r_type(0, 6, 8, 6, 8, 0x33), // or x8, x8, x6
        i_type(-1, 5, 0, 5, 0x13),   // addi x5, x5, -1
    ]);
    let back = -4 * words.len() as i32;
    words.extend([
        b_type(back, 0, 5, 1), // bne x5, x0, 0
        0x0000_0073,           // ecall
    ]);
    let mut code = vec![0u8; CODE_SIZE];
    for (i, w) in words.iter().enumerate() {
        code[4 * i..4 * i + 4].copy_from_slice(&w.to_le_bytes());
    }
    let data = vec![0u8; (DATA_PAGES * 4096) as usize];
    let setup = |hart: &mut Hart| {
        hart.csr.mstatus |= crate::cpu::csr::MSTATUS_FS_INITIAL;
        hart.f[1] = 1.0f64.to_bits();
        hart.f[2] = 0.1f64.to_bits();
        hart.f[4] = 3.0f64.to_bits();
        hart.x[5] = 50;
    };
    let limit = 100_000;
    let interp = EngineConfig {
        tier: Tier::Interp,
        ..EngineConfig::default()
    };
    let (mut plat, mut reference, mut engine) = engine_at_start(&code, &data, interp);
    setup(&mut reference);
    engine.run(&mut reference, &mut plat, Some(limit));
    assert_eq!(
        plat.trap.map(|t| t.2),
        Some(CODE_BASE + 4 * (words.len() as u32 - 1))
    );
    assert_eq!(
        (reference.x[7], reference.x[8]),
        (u32::from(crate::cpu::fflags::NX), 0),
        "each clear read inexact; each read after it nothing"
    );
    let (mut plat, mut hart, mut engine) = regions_on_request(&code, &data);
    setup(&mut hart);
    // Tier 1 compiles the first iteration's blocks; then the region at the CSR's block.
    engine.run_blocks(&mut hart, &mut plat, 2 * words.len() as u64);
    let region = engine.request_region_at(
        &mut hart,
        &mut plat,
        CODE_BASE + 12,
        crate::exec::t2::RegionAsk::First,
    );
    assert_ne!(region, 0, "a region at the CSR's block");
    engine.run(&mut hart, &mut plat, Some(limit));
    assert!(engine.stats.t2_insns > 0, "no region ran");
    assert_eq!(
        hart.x, reference.x,
        "registers (x7, x8: fflags read); FP in the region: {region_fp}"
    );
    assert_eq!(
        (hart.fflags, hart.csr.mstatus, hart.pc, hart.instret),
        (
            reference.fflags,
            reference.csr.mstatus,
            reference.pc,
            reference.instret
        )
    );
}

#[test]
fn fused_multiply_adds_with_nan_results_match_in_every_tier() {
    // NaN results of fused multiply-adds, past a block's first instruction (a region computes
    // them natively, then takes the slow path for a NaN result): 0 * inf + qNaN raises
    // invalid in RISC-V, which IEEE leaves to the implementation (the x86 host this was
    // written on does not raise it, so a region that wrote the NaN natively and only fixed
    // the value would miss the flag); a qNaN operand alone raises nothing; an sNaN addend
    // raises invalid; each result is the canonical NaN. fflags, read at the end, and the f
    // registers must be the interpreter's.
    let fma = |funct2_op: u32, rs3: u32, rs2: u32, rs1: u32, rd: u32| {
        rs3 << 27 | 1 << 25 | rs2 << 20 | rs1 << 15 | 7 << 12 | rd << 7 | funct2_op
    };
    let qnan = 0x7ff8_0000_0000_0000u64;
    let snan = 0x7ff0_0000_0000_0001u64;
    let cases: [(u64, u64, u64, u32); 5] = [
        (0, f64::INFINITY.to_bits(), qnan, 0x43), // fmadd.d 0*inf+qNaN
        (f64::INFINITY.to_bits(), 0x8000_0000_0000_0000, qnan, 0x4f), // fnmadd.d inf*-0
        (1.0f64.to_bits(), 2.0f64.to_bits(), qnan, 0x47), // fmsub.d, no flag
        (1.0f64.to_bits(), 2.0f64.to_bits(), snan, 0x4b), // fnmsub.d, sNaN
        (0, f64::INFINITY.to_bits(), 1.0f64.to_bits(), 0x43), // 0*inf+1
    ];
    for (a, b, c, opcode) in cases {
        let words = [
            fp_op_d_add(5, 5, 5),     // fadd.d f5, f5, f5 (the first instruction)
            fma(opcode, 3, 2, 1, 4),  // f4 = f1 * f2 (+/-) f3
            i_type(1, 0, 2, 6, 0x73), // csrrs x6, fflags, x0
            0x0000_0073,              // ecall
        ];
        let mut code = vec![0u8; CODE_SIZE];
        for (i, w) in words.iter().enumerate() {
            code[4 * i..4 * i + 4].copy_from_slice(&w.to_le_bytes());
        }
        let data = vec![0u8; (DATA_PAGES * 4096) as usize];
        let mut f = [0u64; 32];
        (f[1], f[2], f[3], f[5]) = (a, b, c, 1.0f64.to_bits());
        let fp = RunSetup {
            flat: false,
            on: true,
            f,
            frm: 0,
        };
        let run = |tier, ir, t2_opt| {
            let plat = TestPlatform::new(&code, &data, false, false);
            run_on(plat, tier, ir, t2_opt, &[0; 32], &fp)
        };
        let interp = run(Tier::Interp, NO_PASSES, None);
        assert_eq!(interp.f[4], qnan, "{opcode:#x}: the canonical NaN");
        for &(tier, ir, t2_opt, name) in OTHER_TIERS {
            let other = run(tier, ir, t2_opt);
            assert_eq!(
                (other.x[6], other.f[4], other.fflags),
                (interp.x[6], interp.f[4], interp.fflags),
                "{name}: {opcode:#x} of {a:#x}, {b:#x}, {c:#x}: fflags (x6), result"
            );
        }
    }
}

/// `fadd.d rd, rs1, rs2` with dynamic rounding.
fn fp_op_d_add(rs2: u32, rs1: u32, rd: u32) -> u32 {
    r_type(0x01, rs2, rs1, 7, rd, 0x53)
}

/// Code memory with each `(address, word)` in place.
#[test]
fn every_tier_gets_to_the_platform_at_the_end_of_a_block_that_touched_a_device() {
    // A loop, then a block that loads or stores at STOP_MMIO (whose platform then stops the
    // hart at the next `between_blocks`, as a device raising an interrupt would), then more
    // blocks of the same region. The interpreter stops right after the device's block; so must
    // every tier, even where the device's block and the blocks after it are one region.
    for (access, name) in device_accesses() {
        let code = code_of(&[
            (0x1000, MMIO_BASE | 6 << 7 | 0x37), // lui x6, MMIO page
            (
                0x1004,
                i_type((STOP_MMIO - MMIO_BASE) as i32, 6, 0, 6, 0x13),
            ), // addi x6, x6, off
            (0x1008, i_type(5, 0, 0, 3, 0x13)),  // addi x3, x0, 5
            (0x100c, i_type(1, 1, 0, 1, 0x13)),  // L: addi x1, x1, 1
            (0x1010, i_type(-1, 3, 0, 3, 0x13)), // addi x3, x3, -1
            (0x1014, b_type(0x100c - 0x1014, 0, 3, 1)), // bne x3, x0, L
            (0x1018, i_type(7, 0, 0, 2, 0x13)),  // addi x2, x0, 7
            (0x101c, access),                    // the device access
            (0x1020, i_type(1, 2, 0, 2, 0x13)),  // addi x2, x2, 1
            (0x1024, j_type(8, 0)),              // j +8
            (0x102c, i_type(100, 1, 0, 1, 0x13)), // addi x1, x1, 100
            (0x1030, b_type(0x100c - 0x1030, 0, 1, 1)), // bne x1, x0, L
            (0x1034, 0x0000_0073),               // ecall
        ]);
        let interp = device_stop_in_every_tier(&code, name);
        assert_eq!(
            (interp.pc, interp.x[2], interp.trap),
            (0x102c, 8, None),
            "{name}: the interpreter stops after the device's block"
        );
    }
}

#[test]
fn every_tier_gets_to_the_platform_after_a_loop_iteration_that_touched_a_device() {
    // A loop that polls a device, as a program waiting for an HTIF reply does: the interpreter
    // calls the platform after every block, so the stop comes after the first iteration. A
    // tier that chains the loop to itself (tier 1 counts its budget in a register) must leave
    // there too, not when its chaining budget runs out. The loop first runs 300 times on RAM,
    // so chains are in place when the device is touched.
    for (access, name) in device_accesses() {
        let code = code_of(&[
            (0x1000, DATA_BASE | 6 << 7 | 0x37), // lui x6, DATA_BASE (RAM)
            (0x1004, MMIO_BASE | 9 << 7 | 0x37), // lui x9, MMIO page
            (
                0x1008,
                i_type((STOP_MMIO - MMIO_BASE) as i32, 9, 0, 9, 0x13),
            ), // addi x9, x9, off
            (0x100c, i_type(300, 0, 0, 7, 0x13)), // addi x7, x0, 300
            (0x1010, access),                    // L: the access through x6
            (0x1014, i_type(1, 1, 0, 1, 0x13)),  // addi x1, x1, 1
            (0x1018, b_type(0x1010 - 0x1018, 7, 1, 1)), // bne x1, x7, L
            (0x101c, i_type(0, 9, 0, 6, 0x13)),  // addi x6, x9, 0: now the device
            (0x1020, i_type(0, 0, 0, 1, 0x13)),  // addi x1, x0, 0
            (0x1024, j_type(0x1010 - 0x1024, 0)), // j L
        ]);
        let interp = device_stop_in_every_tier(&code, name);
        assert_eq!(
            (interp.pc, interp.x[1], interp.trap),
            (0x1010, 1, None),
            "{name}: the interpreter stops after the first iteration that touched the device"
        );
    }
}

/// A load and a store through x6 (at [`STOP_MMIO`] in the device tests), with their names.
fn device_accesses() -> [(u32, &'static str); 2] {
    [
        (i_type(0, 6, 2, 5, 0x03), "lw x5, 0(x6)"),
        (s_type(0, 3, 6, 2), "sw x3, 0(x6)"),
    ]
}

/// Run `code` (its platform stops the hart at the `between_blocks` after a [`STOP_MMIO`]
/// access) under the unoptimised interpreter, check that every other tier ends the same way,
/// and return the interpreter's outcome.
fn device_stop_in_every_tier(code: &[u8], name: &str) -> Outcome {
    let data = vec![0u8; (DATA_PAGES * 4096) as usize];
    let fp = RunSetup::integer();
    let run = |tier, ir, t2_opt| {
        let plat = TestPlatform::new(code, &data, false, false);
        run_on(plat, tier, ir, t2_opt, &[0; 32], &fp)
    };
    let interp = run(Tier::Interp, NO_PASSES, None);
    assert_other_tiers_end_as(&interp, run, name);
    interp
}

fn code_of(words: &[(u32, u32)]) -> Vec<u8> {
    let mut code = vec![0u8; CODE_SIZE];
    for &(addr, word) in words {
        let at = (addr - CODE_BASE) as usize;
        code[at..at + 4].copy_from_slice(&word.to_le_bytes());
    }
    code
}

/// Run `code` from its start with `config` (after `prepare` on the engine) for at most
/// `limit` instructions.
#[cfg(tier2)]
fn run_from_start(
    code: &[u8],
    data: &[u8],
    config: EngineConfig,
    limit: u64,
    prepare: impl FnOnce(&mut Engine),
) -> (Hart, Engine) {
    let mut plat = TestPlatform::new(code, data, false, false);
    let mut hart = Hart::new();
    hart.pc = CODE_BASE;
    let mut engine = Engine::new(config);
    prepare(&mut engine);
    engine.run(&mut hart, &mut plat, Some(limit));
    (hart, engine)
}

#[test]
#[cfg(tier2)]
fn a_profiled_indirect_jump_goes_on_inside_its_region_and_stays_exact_when_it_misses() {
    // A loop calls through a register (jalr x1, 0(x8)): f 31 times in 32, g otherwise, both in
    // the loop's page. Interpreted, the loop's block learns that f dominates its jump; the
    // region asked for at the loop then traces f as the call's successor, compares the target
    // with it and stays in the region on a hit. Calls of g miss and leave; every result is the
    // interpreter's, also when the instruction limit falls in the middle of the loop.
    let code = code_of(&[
        (0x1000, i_type(900, 0, 0, 3, 0x13)),       // addi x3, x0, 900
        (0x1004, 0x1000 | 5 << 7 | 0x37),           // lui x5, 0x1
        (0x1008, i_type(0x400, 5, 0, 5, 0x13)),     // addi x5, x5, 0x400   (f)
        (0x100c, i_type(31, 3, 7, 6, 0x13)),        // loop: andi x6, x3, 31
        (0x1010, i_type(1, 6, 3, 9, 0x13)),         // sltiu x9, x6, 1
        (0x1014, i_type(8, 9, 1, 9, 0x13)),         // slli x9, x9, 8
        (0x1018, r_type(0, 9, 5, 0, 8, 0x33)),      // add x8, x5, x9        (f or g = f + 0x100)
        (0x101c, i_type(0, 8, 0, 1, 0x67)),         // jalr x1, 0(x8)
        (0x1020, r_type(0, 2, 4, 0, 4, 0x33)),      // add x4, x4, x2
        (0x1024, i_type(-1, 3, 0, 3, 0x13)),        // addi x3, x3, -1
        (0x1028, b_type(0x100c - 0x1028, 0, 3, 1)), // bne x3, x0, loop
        (0x102c, 0x0000_0073),                      // ecall
        (0x1400, i_type(5, 3, 0, 2, 0x13)),         // f: addi x2, x3, 5
        (0x1404, i_type(0, 1, 0, 0, 0x67)),         // jalr x0, 0(x1)
        (0x1500, i_type(100, 3, 0, 2, 0x13)),       // g: addi x2, x3, 100
        (0x1504, i_type(0, 1, 0, 0, 0x67)),         // jalr x0, 0(x1)
    ]);
    let data = vec![0u8; (DATA_PAGES * 4096) as usize];
    let expected: u32 = (1..=900u32)
        .map(|n| if n % 32 == 0 { n + 100 } else { n + 5 })
        .sum();
    for limit in [20_000, 7_777] {
        let run_tier = |tier: Tier| {
            let config = EngineConfig {
                tier,
                ir: ALL_PASSES,
                // 24 interpreted runs profile the loop's jump (900..877: one call of g), then
                // the region is asked for at once, before tier 1 would compile the block.
                t1_threshold: 24,
                t2_threshold: 0,
                // Regions compile before they run, so the run is the same every time.
                deterministic: true,
                ..EngineConfig::default()
            };
            run_from_start(&code, &data, config, limit, |_| {})
        };
        let (reference, _) = run_tier(Tier::Interp);
        if limit == 20_000 {
            assert_eq!(reference.x[4], expected, "the interpreter's sum");
        }
        let (hart, engine) = run_tier(Tier::Auto);
        assert_eq!(hart.x, reference.x, "limit {limit}: registers");
        assert_eq!(
            (hart.pc, hart.instret),
            (reference.pc, reference.instret),
            "limit {limit}"
        );
        let s = &engine.stats;
        assert!(
            s.t2.predicted_jumps > 0,
            "limit {limit}: no region was given the call's profiled target"
        );
        assert!(
            s.t2_indirect_in_region > 100 && s.t2_indirect_left_region > 0,
            "limit {limit}: predictions hit {} times, missed {} times",
            s.t2_indirect_in_region,
            s.t2_indirect_left_region
        );
    }
}

/// An outer loop of `outer` runs around an inner loop of `inner`, summing 3 per inner run in
/// x2 (and x2 after each inner loop in x5), then `ecall`; all in one page.
#[cfg(tier2)]
fn nested_loops(outer: i32, inner: i32) -> Vec<u8> {
    code_of(&[
        (0x1000, i_type(outer, 0, 0, 3, 0x13)), // addi x3, x0, outer
        (0x1004, i_type(inner, 0, 0, 4, 0x13)), // outer: addi x4, x0, inner
        (0x1008, i_type(3, 2, 0, 2, 0x13)),     // inner: addi x2, x2, 3
        (0x100c, i_type(-1, 4, 0, 4, 0x13)),    // addi x4, x4, -1
        (0x1010, b_type(0x1008 - 0x1010, 0, 4, 1)), // bne x4, x0, inner
        (0x1014, r_type(0, 2, 5, 0, 5, 0x33)),  // add x5, x5, x2
        (0x1018, i_type(-1, 3, 0, 3, 0x13)),    // addi x3, x3, -1
        (0x101c, b_type(0x1004 - 0x101c, 0, 3, 1)), // bne x3, x0, outer
        (0x1020, 0x0000_0073),                  // ecall
    ])
}

/// Plain `--tier t2` (tier 1 on) at `CODE_BASE` of `code`, with no region but those a test asks
/// for (`Engine::request_region_at`), each compiled before the run goes on.
#[cfg(all(tier1, tier2))]
fn regions_on_request(code: &[u8], data: &[u8]) -> (TestPlatform, Hart, Engine) {
    engine_at_start(
        code,
        data,
        EngineConfig {
            tier: Tier::T2,
            ir: ALL_PASSES,
            t2_threshold: u32::MAX,
            deterministic: true,
            ..EngineConfig::default()
        },
    )
}

/// An engine made with `config`, and a hart at `CODE_BASE` of `code` (paged memory).
#[cfg(all(tier1, tier2))]
fn engine_at_start(code: &[u8], data: &[u8], config: EngineConfig) -> (TestPlatform, Hart, Engine) {
    let plat = TestPlatform::new(code, data, false, false);
    let mut hart = Hart::new();
    hart.pc = CODE_BASE;
    (plat, hart, Engine::new(config))
}

/// The hart after the interpreter ran `code` for `limit` instructions: the reference.
#[cfg(all(tier1, tier2))]
fn interpreted(code: &[u8], data: &[u8], limit: u64) -> Hart {
    let config = EngineConfig {
        tier: Tier::Interp,
        ..EngineConfig::default()
    };
    run_from_start(code, data, config, limit, |_| {}).0
}

/// Wait for the regions compiling in the background and install them.
#[cfg(all(tier1, tier2))]
fn install_background_compiles(engine: &mut Engine) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while engine.t2.busy() {
        assert!(
            std::time::Instant::now() < deadline,
            "the region never came"
        );
        std::thread::sleep(std::time::Duration::from_millis(1));
        engine.install_finished::<TestPlatform>();
    }
}

/// The index of the decoded block at `pc`.
#[cfg(all(tier1, tier2))]
fn block_index(engine: &Engine, hart: &mut Hart, plat: &mut TestPlatform, pc: u32) -> u32 {
    let host = super::block::fetch_host(hart, plat, pc).expect("mapped");
    engine.by_host[&host]
}

#[test]
#[cfg(all(tier1, tier2))]
fn blocks_of_a_retired_fast_region_stop_calling_it() {
    // Tier 1 on, as under plain `--tier t2`: regions are called by tier 1's code through
    // stubs. A fast region at the outer loop's head (its nest holds the inner loop) runs
    // both loops inside itself; the inner loop is then re-optimised on its own (its loop
    // nest), which retires that fast region. Its other blocks must leave it (their stubs
    // would keep running the loops in the old fast code), and results stay the
    // interpreter's.
    let code = nested_loops(300, 100);
    let data = vec![0u8; (DATA_PAGES * 4096) as usize];
    let limit = 400_000;
    let reference = interpreted(&code, &data, limit);
    assert_eq!(reference.x[2], 3 * 100 * 300, "the interpreter's sum");
    let (mut plat, mut hart, mut engine) = regions_on_request(&code, &data);
    // Tier 1 compiles the loops' blocks (`run_blocks`: a run with a limit ends in
    // one-instruction blocks, which drops them).
    engine.run_blocks(&mut hart, &mut plat, 2_000);
    let inner = CODE_BASE + 8;
    let fast = engine.request_region_at(
        &mut hart,
        &mut plat,
        CODE_BASE + 4,
        crate::exec::t2::RegionAsk::First,
    );
    assert_ne!(fast, 0, "a fast region at the outer loop");
    let full = engine.request_region_at(
        &mut hart,
        &mut plat,
        inner,
        crate::exec::t2::RegionAsk::Reoptimise,
    );
    assert_ne!(full, 0, "the inner loop re-optimised");
    assert_eq!(
        engine.stale_stubs(),
        Vec::new(),
        "stubs calling retired regions"
    );
    engine.run(&mut hart, &mut plat, Some(limit));
    assert_eq!(hart.x, reference.x, "registers");
    assert_eq!((hart.pc, hart.instret), (reference.pc, reference.instret));
    assert!(engine.stats.t2_insns > 0, "no region ran");
    assert_eq!(
        engine.stale_stubs(),
        Vec::new(),
        "stubs calling retired regions"
    );
}

/// `--tier auto` at `CODE_BASE` of `code`, tier 1 at a block's first run, and run-loop
/// entries never earning a region (`--t2-threshold` out of reach).
#[cfg(all(tier1, tier2))]
fn auto_without_entry_regions(code: &[u8], data: &[u8]) -> (TestPlatform, Hart, Engine) {
    engine_at_start(
        code,
        data,
        EngineConfig {
            tier: Tier::Auto,
            ir: ALL_PASSES,
            t1_threshold: 0,
            t2_threshold: u32::MAX,
            ..EngineConfig::default()
        },
    )
}

#[test]
#[cfg(all(tier1, tier2))]
fn blocks_of_a_region_being_compiled_ask_for_none_of_their_own() {
    // Under `auto` regions compile in the background. While the outer loop's region (its
    // loop nest holds the inner loop) compiles, the inner loop's block must not ask for a
    // region of its own (each block of a quicksort's nest did, 15 compiles of one nest); once
    // the region is installed, the inner loop runs in it.
    let code = nested_loops(300, 100);
    let data = vec![0u8; (DATA_PAGES * 4096) as usize];
    let (mut plat, mut hart, mut engine) = auto_without_entry_regions(&code, &data);
    engine.run_blocks(&mut hart, &mut plat, 2_000);
    let (outer, inner) = (CODE_BASE + 0x14, CODE_BASE + 8);
    let inner_idx = block_index(&engine, &mut hart, &mut plat, inner);
    assert!(
        engine.t2.wants(inner_idx),
        "the inner loop has no region yet"
    );
    let first = crate::exec::t2::RegionAsk::First;
    assert_eq!(
        engine.request_region_at(&mut hart, &mut plat, outer, first),
        0,
        "compiled in the background"
    );
    assert!(
        !engine.t2.wants(inner_idx),
        "the inner loop asks for a region while its nest's compiles"
    );
    install_background_compiles(&mut engine);
    assert_ne!(
        engine.t2.region_for(inner_idx, inner),
        0,
        "the inner loop runs in its nest's region"
    );
}

#[test]
#[cfg(all(tier1, tier2))]
fn with_tier_1_on_a_few_straight_instructions_get_no_region() {
    // Plain `--tier t2`: a hot block whose region would be a few instructions on no cycle
    // (here the final `ecall`) stays in tier 1, and is never asked for again; a short loop
    // (the inner loop, three instructions) gets its region.
    let code = nested_loops(3, 3);
    let data = vec![0u8; (DATA_PAGES * 4096) as usize];
    let (mut plat, mut hart, mut engine) = regions_on_request(&code, &data);
    engine.run_blocks(&mut hart, &mut plat, 10_000);
    let ecall = CODE_BASE + 0x20;
    assert_eq!(hart.pc, ecall, "the run stopped at the ecall");
    let first = crate::exec::t2::RegionAsk::First;
    assert_eq!(
        engine.request_region_at(&mut hart, &mut plat, ecall, first),
        0
    );
    let idx = block_index(&engine, &mut hart, &mut plat, ecall);
    assert!(!engine.t2.wants(idx), "declined for the rest of the epoch");
    let inner = CODE_BASE + 8;
    assert_ne!(
        engine.request_region_at(&mut hart, &mut plat, inner, first),
        0
    );
}

#[test]
#[cfg(all(tier1, tier2))]
fn a_loop_whose_chain_a_device_access_ends_is_not_sampled_as_hot() {
    // Under `--tier t2` the run loop counts samples (long runs of compiled code) where runs
    // end. Tier 1 ends a chain after an access that reached a device, so that the platform
    // gets a look in; that cut is no used-up budget, so a loop polling a device collects no
    // samples (the kernel's console write loop was re-optimised as hot in every boot), while
    // the same loop over RAM does.
    let samples_at_loop = |base: u32| {
        let code = code_of(&[
            (0x1000, base | 6 << 7 | 0x37),             // lui x6, base
            (0x1004, 0x5000 | 7 << 7 | 0x37),           // lui x7, 5 (20 480 iterations)
            (0x1008, i_type(0, 6, 2, 5, 0x03)),         // L: lw x5, 0(x6)
            (0x100c, i_type(1, 1, 0, 1, 0x13)),         // addi x1, x1, 1
            (0x1010, b_type(0x1008 - 0x1010, 7, 1, 1)), // bne x1, x7, L
            (0x1014, 0x0000_0073),                      // ecall
        ]);
        let data = vec![0u8; (DATA_PAGES * 4096) as usize];
        let config = EngineConfig {
            tier: Tier::T2,
            ir: ALL_PASSES,
            t2_threshold: u32::MAX,
            ..EngineConfig::default()
        };
        let (mut plat, mut hart, mut engine) = engine_at_start(&code, &data, config);
        engine.run_blocks(&mut hart, &mut plat, 100_000);
        assert_eq!(hart.x[1], 0x5000, "the loop ran to its end");
        let idx = block_index(&engine, &mut hart, &mut plat, CODE_BASE + 8);
        engine.blocks[idx as usize].profile.hot_samples
    };
    assert!(samples_at_loop(DATA_BASE) > 0, "a loop over RAM is sampled");
    assert_eq!(samples_at_loop(MMIO_BASE), 0, "a loop polling a device");
}

/// The instruction limit of the nested loops run by [`nested_loops_under_t2`].
#[cfg(all(tier1, tier2))]
const NESTED_LOOPS_LIMIT: u64 = 80_000;

/// Nested loops under plain `--tier t2` (tier 1 on, re-optimisation in the background after
/// `reoptimise_threshold` samples), run for a while with every region exit sampled; then
/// the inner loop's block gets `inner_samples` samples. Returns the machine, the
/// interpreter's state at [`NESTED_LOOPS_LIMIT`], the inner loop's pc and block index.
#[cfg(all(tier1, tier2))]
fn nested_loops_under_t2(
    reoptimise_threshold: u32,
    inner_samples: u32,
) -> (TestPlatform, Hart, Engine, Hart, u32, u32) {
    let code = nested_loops(300, 100);
    let data = vec![0u8; (DATA_PAGES * 4096) as usize];
    let reference = interpreted(&code, &data, NESTED_LOOPS_LIMIT);
    let (mut plat, mut hart, mut engine) = engine_at_start(
        &code,
        &data,
        EngineConfig {
            tier: Tier::T2,
            ir: ALL_PASSES,
            t2_threshold: u32::MAX,
            t2_reoptimise_threshold: reoptimise_threshold,
            ..EngineConfig::default()
        },
    );
    engine.sample_every_region_exit();
    engine.run_blocks(&mut hart, &mut plat, 1_000);
    let inner = CODE_BASE + 8;
    let inner_idx = block_index(&engine, &mut hart, &mut plat, inner);
    engine.blocks[inner_idx as usize].profile.hot_samples = inner_samples;
    (plat, hart, engine, reference, inner, inner_idx)
}

/// Install what the compile threads finish, check that the inner loop (at `inner`, block
/// `inner_idx`) now runs in a fully optimised region, run to [`NESTED_LOOPS_LIMIT`] and
/// compare with the interpreter's `reference`.
#[cfg(all(tier1, tier2))]
fn finish_nested_loops_in_the_optimised_region(
    mut plat: TestPlatform,
    mut hart: Hart,
    mut engine: Engine,
    reference: &Hart,
    (inner, inner_idx): (u32, u32),
) -> Engine {
    install_background_compiles(&mut engine);
    assert!(
        engine.t2.region_for(inner_idx, inner) != 0 && engine.t2.has_full_region(inner_idx),
        "the loops run in the optimised region"
    );
    let t2_before = engine.stats.t2_insns;
    let left = NESTED_LOOPS_LIMIT - hart.instret;
    engine.run(&mut hart, &mut plat, Some(left));
    assert!(
        engine.stats.t2_insns > t2_before,
        "the optimised region ran"
    );
    assert_eq!(hart.x, reference.x, "registers");
    assert_eq!((hart.pc, hart.instret), (reference.pc, reference.instret));
    engine
}

#[test]
#[cfg(all(tier1, tier2))]
fn a_block_sampled_hot_gets_its_first_region_optimised_in_the_background() {
    // Plain `--tier t2`: a block that already has more samples than the re-optimisation
    // threshold when it earns a region would have its fast region suspended at the next
    // sample, so the guest does not wait for one: the optimised region compiles in the
    // background while tier 1 runs the loops, and then takes over (no fast region, nothing
    // re-optimised). Results are the interpreter's.
    let (mut plat, mut hart, mut engine, reference, inner, inner_idx) = nested_loops_under_t2(2, 3);
    let first = crate::exec::t2::RegionAsk::First;
    assert_eq!(
        engine.request_region_at(&mut hart, &mut plat, inner, first),
        0,
        "the run goes on without waiting"
    );
    assert!(engine.t2.busy(), "the region is compiling");
    assert!(!engine.t2.wants(inner_idx), "asked for once");
    let t1_before = engine.stats.t1_insns;
    engine.run_blocks(&mut hart, &mut plat, 2_000);
    assert!(engine.stats.t1_insns > t1_before, "tier 1 ran the loops");
    let engine = finish_nested_loops_in_the_optimised_region(
        plat,
        hart,
        engine,
        &reference,
        (inner, inner_idx),
    );
    assert_eq!(
        engine.t2.stats.reoptimised, 0,
        "no fast region to re-optimise"
    );
}

/// Nested loops under `--tier auto` whose run-loop entries never earn a region
/// (`--t2-threshold` out of reach), every exit of compiled code sampled, the hart in `mode`;
/// after `insns` instructions, whether the inner loop asked for a region.
#[cfg(all(tier1, tier2))]
fn sampled_loops_ask_for_a_region(mode: crate::cpu::Priv, insns: u64) -> bool {
    let code = nested_loops(300, 100);
    let data = vec![0u8; (DATA_PAGES * 4096) as usize];
    let reference = interpreted(&code, &data, NESTED_LOOPS_LIMIT);
    let (mut plat, mut hart, mut engine) = auto_without_entry_regions(&code, &data);
    hart.prv = mode;
    engine.sample_every_region_exit();
    engine.policy.sample_regions_after(4);
    engine.run_blocks(&mut hart, &mut plat, insns);
    let inner = CODE_BASE + 8;
    let inner_idx = block_index(&engine, &mut hart, &mut plat, inner);
    let asked = !engine.t2.wants(inner_idx);
    if asked {
        finish_nested_loops_in_the_optimised_region(
            plat,
            hart,
            engine,
            &reference,
            (inner, inner_idx),
        );
    }
    asked
}

#[test]
#[cfg(all(tier1, tier2))]
fn a_block_whose_region_expired_unstarted_earns_it_again_by_samples_too() {
    // Under auto a backlog of regions expires its oldest jobs unstarted (the compile thread
    // serves the newest first). Their blocks earn a region again, by run-loop entries and by
    // samples alike: a block sampled hot would otherwise ask again at its next sample, and a
    // busy queue could expire it again and again.
    const LOOPS: u32 = 24;
    // One small counted loop after another: `addi x4, x0, 3`, then the loop's block
    // `addi x4, x4, -1; bne x4, x0, loop`.
    let mut words = Vec::new();
    for i in 0..LOOPS {
        let at = CODE_BASE + i * 12;
        words.push((at, i_type(3, 0, 0, 4, 0x13)));
        words.push((at + 4, i_type(-1, 4, 0, 4, 0x13)));
        words.push((at + 8, b_type(-4, 0, 4, 1)));
    }
    let code = code_of(&words);
    let data = vec![0u8; (DATA_PAGES * 4096) as usize];
    let (mut plat, mut hart, mut engine) = auto_without_entry_regions(&code, &data);
    engine.run_blocks(&mut hart, &mut plat, u64::from(LOOPS) * 7);
    let heads: Vec<u32> = (0..LOOPS).map(|i| CODE_BASE + i * 12 + 4).collect();
    let held = crate::exec::t2::worker::hold_compiles();
    for &pc in &heads {
        let idx = block_index(&engine, &mut hart, &mut plat, pc);
        engine.blocks[idx as usize].profile.hot_samples = 100;
        let first = crate::exec::t2::RegionAsk::First;
        assert_eq!(engine.request_region_at(&mut hart, &mut plat, pc, first), 0);
    }
    drop(held);
    install_background_compiles(&mut engine);
    let mut expired = 0;
    for &pc in &heads {
        let idx = block_index(&engine, &mut hart, &mut plat, pc);
        let samples = engine.blocks[idx as usize].profile.hot_samples;
        if engine.t2.region_for(idx, pc) == 0 {
            expired += 1;
            assert_eq!(samples, 0, "{pc:#x}: its samples start again");
            assert!(engine.t2.wants(idx), "{pc:#x} may ask again");
        } else {
            assert_eq!(samples, 100, "{pc:#x}: compiled, its samples stay");
        }
    }
    assert!(expired > 0, "the backlog's oldest jobs expired");
    assert_eq!(engine.t2.stats.expired, expired);
}

#[test]
#[cfg(all(tier1, tier2))]
fn a_user_loop_that_tier_1_chains_gets_a_region_from_its_samples() {
    // Tier 1 chains a loop into itself, so its block seldom enters the run loop and never
    // earns a region by entries; once it is sampled hot it asks for one (in the background),
    // which then runs it with the interpreter's results. Kernel code does not (its hot
    // spots are bursts that end before a region would land). (A run uses up its budget
    // after about 10 000 instructions of these loops: the inner loop's back edge takes from
    // it once per 16 iterations.)
    assert!(sampled_loops_ask_for_a_region(
        crate::cpu::Priv::User,
        60_000
    ));
    assert!(!sampled_loops_ask_for_a_region(
        crate::cpu::Priv::Supervisor,
        60_000
    ));
}

#[test]
#[cfg(all(tier1, tier2))]
fn tier_1_runs_a_fast_regions_blocks_while_its_reoptimisation_compiles() {
    // Plain `--tier t2` (tier 1 on, re-optimisation in the background): once the loops' fast
    // region is hot, its re-optimisation is asked for, and until it is installed tier 1 runs
    // the blocks (its code is faster than a fast region's) and none of them asks for a region
    // of its own. The compile threads are held meanwhile, so the run really goes on without
    // the region; then the optimised region takes over. Results are the interpreter's. The
    // inner loop is not sampled yet when it earns its region, so that region is compiled
    // fast (a block already sampled hot gets a full one in the background: the test above).
    let (mut plat, mut hart, mut engine, reference, inner, inner_idx) = nested_loops_under_t2(0, 0);
    let first = crate::exec::t2::RegionAsk::First;
    assert_ne!(
        engine.request_region_at(&mut hart, &mut plat, inner, first),
        0,
        "a fast region, compiled before the run goes on"
    );
    let held = crate::exec::t2::worker::hold_compiles();
    engine.run_blocks(&mut hart, &mut plat, 20_000);
    assert!(engine.t2.busy(), "a re-optimisation is compiling");
    assert_eq!(
        engine.t2.region_for(inner_idx, inner),
        0,
        "the fast region is out of service"
    );
    let (t1_before, t2_before) = (engine.stats.t1_insns, engine.stats.t2_insns);
    engine.run_blocks(&mut hart, &mut plat, 50_000);
    assert_eq!(engine.stats.t2_insns, t2_before, "no region ran meanwhile");
    assert!(
        engine.stats.t1_insns > t1_before + 25_000,
        "tier 1 ran the loops: {} instructions",
        engine.stats.t1_insns - t1_before
    );
    assert!(
        !engine.t2.wants(inner_idx),
        "the inner loop asks for no fast region of its own"
    );
    drop(held);
    finish_nested_loops_in_the_optimised_region(plat, hart, engine, &reference, (inner, inner_idx));
}

#[test]
#[cfg(tier2)]
fn a_hot_loop_of_a_fast_region_is_reoptimised_and_results_stay_exact() {
    // An outer loop around an inner loop, one page: `--tier t2` compiles one fast region at
    // the entry that runs both loops inside itself. Runs that come back to the run loop land
    // in the loops, so the block there gets a region with full optimisation, and the fast
    // region (which runs that block too) retires; the entry's new fast region stops at the
    // re-optimised block. Every result is the interpreter's, also when the instruction limit
    // falls inside the loops.
    let code = nested_loops(200, 200);
    let data = vec![0u8; (DATA_PAGES * 4096) as usize];
    for limit in [200_000, 77_777, 16_385] {
        let run_tier = |tier: Tier| {
            let config = EngineConfig {
                tier,
                ir: ALL_PASSES,
                t2_threshold: 0,
                t2_reoptimise_threshold: 0,
                // Re-optimisations compile before the run goes on: the same run every time.
                deterministic: true,
                ..EngineConfig::default()
            };
            run_from_start(
                &code,
                &data,
                config,
                limit,
                Engine::sample_every_region_exit,
            )
        };
        let (reference, _) = run_tier(Tier::Interp);
        if limit == 200_000 {
            assert_eq!(reference.x[2], 3 * 200 * 200, "the interpreter's sum");
        }
        let (hart, engine) = run_tier(Tier::T2);
        assert_eq!(hart.x, reference.x, "limit {limit}: registers");
        assert_eq!(
            (hart.pc, hart.instret),
            (reference.pc, reference.instret),
            "limit {limit}"
        );
        if limit > 20_000 {
            assert!(
                engine.stats.t2.reoptimised > 0,
                "limit {limit}: the loops' region was not re-optimised"
            );
        }
    }
}

/// Run a loop that calls, 20 000 times, a function at 0x2100 whose first block is on a cycle
/// (a tier-2 region) and which loops `inner` times per call, under `--tier t2` with tier 1 on
/// and the region review at every turn of the run loop. The registers must be the
/// interpreter's; returns how many regions were taken back for running too little per entry.
#[cfg(all(tier1, tier2))]
fn regions_taken_back_from(inner: u32) -> u64 {
    let code = code_of(&[
        (0x1000, 0x5000 | 3 << 7 | 0x37), // lui x3, 5 (20 480 calls)
        (0x1004, i_type(inner as i32, 0, 0, 6, 0x13)), // loop: addi x6, x0, inner
        (0x1008, i_type(0, 0, 0, 2, 0x13)), // addi x2, x0, 0
        (0x100c, j_type(0x2100 - 0x100c, 1)), // jal x1, f
        (0x1010, r_type(0, 2, 4, 0, 4, 0x33)), // add x4, x4, x2
        (0x1014, i_type(-1, 3, 0, 3, 0x13)), // addi x3, x3, -1
        (0x1018, b_type(0x1004 - 0x1018, 0, 3, 1)), // bne x3, x0, loop
        (0x101c, 0x0000_0073),            // ecall
        (0x2100, i_type(1, 2, 0, 2, 0x13)), // f: addi x2, x2, 1
        (0x2104, b_type(0x2100 - 0x2104, 6, 2, 4)), // blt x2, x6, f
        (0x2108, i_type(0, 1, 0, 0, 0x67)), // jalr x0, 0(x1)
    ]);
    let data = vec![0u8; (DATA_PAGES * 4096) as usize];
    let limit = 100_000_000;
    let run = |config: EngineConfig| {
        let mut plat = TestPlatform::new(&code, &data, false, false);
        let mut hart = Hart::new();
        hart.pc = CODE_BASE;
        let mut engine = Engine::new(config);
        engine.review_regions_every_turn();
        engine.run(&mut hart, &mut plat, Some(limit));
        (hart, engine)
    };
    let (interp, _) = run(EngineConfig {
        tier: Tier::Interp,
        ..EngineConfig::default()
    });
    assert_eq!(interp.x[4], 0x5000 * inner, "the interpreter's sum");
    let (hart, engine) = run(EngineConfig {
        tier: Tier::T2,
        ir: ALL_PASSES,
        t2_opt: Some(T2Opt::Full),
        t2_threshold: 1,
        ..EngineConfig::default()
    });
    assert_eq!(hart.x, interp.x, "inner {inner}: registers");
    assert_eq!((hart.pc, hart.instret), (interp.pc, interp.instret));
    assert!(
        engine.t2.stats.regions_compiled > 0,
        "inner {inner}: a region ran"
    );
    engine.t2.stats.retired_short
}

#[test]
#[cfg(all(tier1, tier2))]
fn a_region_that_runs_a_few_instructions_per_entry_goes_back_to_tier_1() {
    // Three or four instructions per call: entering and leaving the region costs more (the
    // calling loop's own region, eight instructions per entry, goes back too).
    assert!(regions_taken_back_from(1) >= 1);
}

#[test]
#[cfg(all(tier1, tier2))]
fn a_region_that_loops_long_per_entry_stays() {
    // 100 iterations (200 instructions) per call.
    assert_eq!(regions_taken_back_from(100), 0);
}

#[test]
fn a_loop_of_two_blocks_matches_in_every_tier_and_runs_as_one_block_in_tier_1() {
    // A test at the top (count x5 down, leave at 0) and a body that stores, loads and jumps
    // back (as `for (...) if (...) continue;` compiles): tier 1 compiles the body with the
    // test, a loop on itself. With a stride, the store walks into the unmapped hole after
    // the data pages and traps in the second block, so pc and instret at a trap there must
    // be exact; flat and paged memory both.
    let words = [
        i_type(-1, 5, 0, 5, 0x13),   // loop: addi x5, x5, -1
        b_type(24, 0, 5, 0),         // beq x5, x0, done
        r_type(0, 5, 7, 0, 7, 0x33), // add x7, x7, x5
        s_type(0, 7, 6, 2),          // sw x7, 0(x6)
        i_type(0, 6, 2, 8, 0x03),    // lw x8, 0(x6)
        r_type(0, 9, 6, 0, 6, 0x33), // add x6, x6, x9
        j_type(-24, 0),              // j loop
        0x0000_0073,                 // done: ecall
    ];
    let code: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    let data = vec![0u8; (DATA_PAGES * 4096) as usize];
    for (stride, start, flat) in [
        (0, DATA_BASE, false),
        (4, HOLE - 4 * 100, false),
        (0, DATA_BASE, true),
        (4, HOLE - 4 * 100, true),
    ] {
        let mut regs = [0u32; 32];
        regs[5] = 300;
        regs[6] = start;
        regs[9] = stride;
        let fp = RunSetup {
            flat,
            ..RunSetup::integer()
        };
        let interp = reference_run(&code, &regs, &data, false, &fp);
        let ended = interp.trap.map(|t| t.2);
        if stride == 0 {
            assert_eq!(ended, Some(CODE_BASE + 28), "the loop ran to the ecall");
        } else {
            assert_eq!(ended, Some(CODE_BASE + 12), "the store trapped at the hole");
        }
        for &(tier, ir, t2_opt, name) in OTHER_TIERS {
            assert!(
                run_with_fp(tier, ir, t2_opt, &code, &regs, &data, false, &fp) == interp,
                "{name} (stride {stride}, flat {flat})"
            );
        }
        // Under auto the body has run by the time the test is compiled; under `--tier t1`
        // the test is compiled first, and flat memory builds the body ahead for it.
        #[cfg(tier1)]
        for tier in [Tier::Auto, Tier::T1] {
            let mut hart = Hart::new();
            hart.x = regs;
            hart.pc = CODE_BASE;
            let mut plat = TestPlatform::new(&code, &data, false, flat);
            let mut engine = Engine::new(EngineConfig {
                tier,
                t1_threshold: 16,
                t2_threshold: 1_000_000,
                ..EngineConfig::default()
            });
            engine.run(&mut hart, &mut plat, Some(10_000));
            let merged = u64::from(tier == Tier::Auto || flat);
            assert_eq!(
                engine.stats.jit.fallthroughs, merged,
                "{tier:?}: the test and the body in one (flat {flat})"
            );
            assert_eq!((hart.x, hart.pc), (interp.x, interp.pc));
        }
    }
}
