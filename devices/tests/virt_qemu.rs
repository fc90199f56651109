//! Replays `virt_qemu/script.txt` on a bus laid out like QEMU `virt` (syscon, RTC, CLINT, PLIC,
//! UART on PLIC source 10, RTC on 11) and compares every read with what QEMU returned for the
//! same script (`virt_qemu/expected.txt`, produced by `virt_qemu/run-qemu.sh`).

use rv32vm_devices::{clint, plic, rtc, syscon, uart};
use rv32vm_devices::{Bus, Clint, GoldfishRtc, ManualClock, Plic, Syscon, Uart};

const SCRIPT: &str = include_str!("virt_qemu/script.txt");
const EXPECTED: &str = include_str!("virt_qemu/expected.txt");

fn number(text: &str) -> u64 {
    let parsed = match text.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => text.parse(),
    };
    parsed.unwrap_or_else(|_| panic!("bad number {text:?} in script.txt"))
}

fn virt_bus() -> Bus {
    let mut plic = Plic::new();
    let uart_irq = plic.irq_line(10).unwrap();
    let rtc_irq = plic.irq_line(11).unwrap();
    // Any time after 1970: the script's "past" alarm is at 1 ns, its "future" one at 2^63+.
    let clock = ManualClock::new(1_700_000_000_000_000_000);
    let mut bus = Bus::new();
    bus.insert(0x0010_0000, syscon::MMIO_SIZE, Syscon::new())
        .unwrap();
    bus.insert(
        0x0010_1000,
        rtc::MMIO_SIZE,
        GoldfishRtc::new(rtc_irq, Box::new(clock)),
    )
    .unwrap();
    bus.insert(0x0200_0000, clint::MMIO_SIZE, Clint::new())
        .unwrap();
    bus.insert(0x0c00_0000, plic::MMIO_SIZE, plic).unwrap();
    bus.insert(
        0x1000_0000,
        uart::MMIO_SIZE,
        Uart::new(uart_irq, Vec::new()),
    )
    .unwrap();
    bus
}

#[test]
fn virt_devices_match_qemu() {
    let expected: Vec<u64> = EXPECTED
        .lines()
        .filter(|line| !line.starts_with('#') && !line.trim().is_empty())
        .map(|line| u64::from_str_radix(line.trim(), 16).expect("hex word in expected.txt"))
        .collect();
    let mut bus = virt_bus();
    let mut reads = 0;
    let mut mismatches = Vec::new();
    for (index, line) in SCRIPT.lines().enumerate() {
        let code = line.split('#').next().unwrap_or("");
        let words: Vec<&str> = code.split_whitespace().collect();
        let read = match words.as_slice() {
            [] => None,
            ["w4", addr, value] => {
                assert_eq!(
                    bus.write(number(addr), 4, number(value)),
                    Some(()),
                    "{line}"
                );
                None
            }
            ["w1", addr, value] => {
                assert_eq!(
                    bus.write(number(addr), 1, number(value)),
                    Some(()),
                    "{line}"
                );
                None
            }
            ["r4", addr] => Some(bus.read(number(addr), 4)),
            ["r1", addr] => Some(bus.read(number(addr), 1)),
            ["m4", addr, mask] => Some(bus.read(number(addr), 4).map(|v| v & number(mask))),
            _ => panic!("script.txt:{}: cannot parse {line:?}", index + 1),
        };
        if let Some(got) = read {
            let want = expected.get(reads).copied();
            if got != want {
                mismatches.push(format!(
                    "script.txt:{}: `{}` read {got:x?}, QEMU {want:x?}",
                    index + 1,
                    line.trim()
                ));
            }
            reads += 1;
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
}
