//! Replays `uart_qemu/script.txt` on our UART and compares every read with what QEMU's 16550A
//! returned for the same script (`uart_qemu/expected.txt`, produced by `uart_qemu/run-qemu.sh`).

use rv32vm_devices::irq::IrqLine;
use rv32vm_devices::{MmioDevice, Uart};

const SCRIPT: &str = include_str!("uart_qemu/script.txt");
const EXPECTED: &str = include_str!("uart_qemu/expected.txt");

fn number(text: &str) -> u64 {
    let parsed = match text.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => text.parse(),
    };
    parsed.unwrap_or_else(|_| panic!("bad number {text:?} in script.txt"))
}

#[test]
fn uart_register_behaviour_matches_qemu() {
    let expected: Vec<u64> = EXPECTED
        .lines()
        .filter(|line| !line.starts_with('#') && !line.trim().is_empty())
        .map(|line| u64::from_str_radix(line.trim(), 16).expect("hex byte in expected.txt"))
        .collect();
    let mut uart = Uart::new(IrqLine::disconnected(), Vec::new());
    let mut reads = 0;
    let mut mismatches = Vec::new();
    for (number_in_file, line) in SCRIPT.lines().enumerate() {
        let code = line.split('#').next().unwrap_or("");
        let words: Vec<&str> = code.split_whitespace().collect();
        match words.as_slice() {
            [] => {}
            ["w", register, value] => uart.write(number(register), 1, number(value)),
            ["r", register] | ["m", register, _] => {
                let mask = words.get(2).map_or(0xff, |mask| number(mask));
                let got = uart.read(number(register), 1) & mask;
                let want = expected.get(reads).copied();
                if want != Some(got) {
                    mismatches.push(format!(
                        "script.txt:{}: `{}` read {got:#04x}, QEMU {want:02x?}",
                        number_in_file + 1,
                        line.trim()
                    ));
                }
                reads += 1;
            }
            _ => panic!("script.txt:{}: cannot parse {line:?}", number_in_file + 1),
        }
    }
    assert_eq!(
        reads,
        expected.len(),
        "expected.txt is stale: rerun run-qemu.sh"
    );
    assert!(
        mismatches.is_empty(),
        "differences from QEMU:\n{}",
        mismatches.join("\n")
    );
    assert!(
        uart.output().is_empty(),
        "the script only transmits in loopback"
    );
}
