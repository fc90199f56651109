use super::ops::*;
use super::*;
use std::hint::black_box;
use std::time::Instant;

fn time<F: FnMut(u64) -> u64>(name: &str, mut f: F) {
    const N: u64 = 20_000_000;
    let mut acc = 0u64;
    let start = Instant::now();
    for i in 0..N {
        acc = acc.wrapping_add(f(black_box(i)));
    }
    let ns = start.elapsed().as_nanos() as f64 / N as f64;
    eprintln!("{name:28} {ns:6.2} ns/op  ({acc:x})");
}

#[test]
#[ignore]
fn bench_tmp() {
    let rm = RoundingMode::NearestEven;
    let x = 0x3ff1_2345_6789_abcdu64;
    time("raw sf::f64_add (no wrap)", |i| unsafe { softfloat_sys::f64_add(softfloat_sys::float64_t{v: x + i}, softfloat_sys::float64_t{v: x}) }.v);
    time("f64_add", |i| f64_add(x + i, x, rm).0);
    time("f32_add", |i| f32_add(0x3f80_0000 + i as u32, 0x3f90_0000, rm).0 as u64);
    time("f64_mul_add", |i| f64_mul_add(x + i, x, x, rm).0);
    time("f64_div", |i| f64_div(x + i, x, rm).0);
    time("f64_sqrt", |i| f64_sqrt(x + i, rm).0);
    time("f64_to_i32", |i| f64_to_i32(x + i, rm).0 as u64);
    time("f32_min (no softfloat)", |i| f32_min(0x3f80_0000 + i as u32, 0x3f90_0000).0 as u64);
    time("f64_lt (no softfloat)", |i| f64_lt(x + i, x).0 as u64);
    let mut hart = crate::cpu::Hart::new();
    hart.csr.mstatus |= crate::cpu::csr::MSTATUS_FS;
    hart.f[1] = x; hart.f[2] = x;
    let insn = Insn { op: Op::FaddD, rd: 3, rs1: 1, rs2: 2, rs3: 0, rm: 7, len: 4, _pad: 0, imm: 0, raw: 0 };
    time("execute(fadd.d, dyn rm)", |i| { hart.f[1] = x + i; execute(&mut hart, black_box(&insn)).unwrap(); hart.f[3] });
    let insn = Insn { op: Op::FmaddS, rd: 3, rs1: 1, rs2: 2, rs3: 4, rm: 0, len: 4, _pad: 0, imm: 0, raw: 0 };
    hart.f[2] = nan_box(0x3f90_0000); hart.f[4] = nan_box(0x3f90_0000);
    time("execute(fmadd.s)", |i| { hart.f[1] = nan_box(0x3f80_0000 + i as u32); execute(&mut hart, black_box(&insn)).unwrap(); hart.f[3] });
    let insn = Insn { op: Op::FsgnjD, rd: 3, rs1: 1, rs2: 2, rs3: 4, rm: 0, len: 4, _pad: 0, imm: 0, raw: 0 };
    time("execute(fsgnj.d)", |i| { hart.f[1] = x + i; execute(&mut hart, black_box(&insn)).unwrap(); hart.f[3] });
}
