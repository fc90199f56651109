//! virtio-net on libslirp, driven as Linux drives it: frames with a `virtio_net_hdr_v1` on the
//! transmit queue, receive buffers posted on the receive queue, replies from libslirp's DHCP
//! server and ARP checked byte by byte. Nothing leaves 127.0.0.1.

use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::time::{Duration, Instant};

use super::slirp::{GATEWAY, GUEST};
use super::*;
use crate::bus::MmioDevice;
use crate::virtio::test_driver::{Buffer, Driver, WAIT};

const ETH_ARP: u16 = 0x0806;
const ETH_IPV4: u16 = 0x0800;
const BROADCAST: [u8; 6] = [0xff; 6];

fn net_driver(options: NetOptions) -> Driver<VirtioNet> {
    let device = VirtioNet::new(options).expect("network");
    Driver::start(device, VIRTIO_NET_F_MAC | VIRTIO_NET_F_STATUS, 2)
}

fn ethernet(dst: [u8; 6], ethertype: u16, payload: &[u8]) -> Vec<u8> {
    let mut frame = dst.to_vec();
    frame.extend_from_slice(&GUEST_MAC);
    frame.extend_from_slice(&ethertype.to_be_bytes());
    frame.extend_from_slice(payload);
    frame
}

fn arp_request(target: Ipv4Addr) -> Vec<u8> {
    let mut arp = vec![0, 1, 8, 0, 6, 4, 0, 1];
    arp.extend_from_slice(&GUEST_MAC);
    arp.extend_from_slice(&GUEST.octets());
    arp.extend_from_slice(&[0; 6]);
    arp.extend_from_slice(&target.octets());
    ethernet(BROADCAST, ETH_ARP, &arp)
}

fn ipv4_checksum(header: &[u8]) -> u16 {
    let mut sum: u32 = header
        .chunks(2)
        .map(|pair| u32::from(u16::from_be_bytes([pair[0], pair[1]])))
        .sum();
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

fn dhcp_discover(xid: u32) -> Vec<u8> {
    let mut bootp = vec![0u8; 236];
    bootp[0] = 1; // BOOTREQUEST
    bootp[1] = 1; // Ethernet
    bootp[2] = 6;
    bootp[4..8].copy_from_slice(&xid.to_be_bytes());
    bootp[28..34].copy_from_slice(&GUEST_MAC);
    bootp.extend_from_slice(&[99, 130, 83, 99, 53, 1, 1, 255]);
    let mut udp = Vec::new();
    udp.extend_from_slice(&68u16.to_be_bytes());
    udp.extend_from_slice(&67u16.to_be_bytes());
    udp.extend_from_slice(&((8 + bootp.len()) as u16).to_be_bytes());
    udp.extend_from_slice(&[0, 0]);
    udp.extend_from_slice(&bootp);
    let mut ip = vec![0x45, 0];
    ip.extend_from_slice(&((20 + udp.len()) as u16).to_be_bytes());
    ip.extend_from_slice(&[0, 0, 0, 0, 64, 17, 0, 0]);
    ip.extend_from_slice(&[0, 0, 0, 0]);
    ip.extend_from_slice(&[255, 255, 255, 255]);
    let checksum = ipv4_checksum(&ip);
    ip[10..12].copy_from_slice(&checksum.to_be_bytes());
    ip.extend_from_slice(&udp);
    ethernet(BROADCAST, ETH_IPV4, &ip)
}

impl Driver<VirtioNet> {
    /// Posts `count` receive buffers of Linux's small-buffer size.
    fn post_receive_buffers(&mut self, count: usize) -> Vec<Buffer> {
        let buffers: Vec<Buffer> = (0..count).map(|_| self.writable(1526)).collect();
        for buffer in &buffers {
            self.push(RX_QUEUE, &[*buffer]);
        }
        self.notify(RX_QUEUE);
        buffers
    }

    /// Transmits `frame` with its virtio header; waits until the device used the chain.
    fn transmit(&mut self, frame: &[u8]) {
        let mut bytes = vec![0u8; NET_HEADER_LEN];
        bytes.extend_from_slice(frame);
        // Header and frame in separate descriptors, as Linux often sends them.
        let header = self.readable(&bytes[..NET_HEADER_LEN]);
        let body = self.readable(&bytes[NET_HEADER_LEN..]);
        assert_eq!(self.round_trip(TX_QUEUE, &[header, body]), 0);
    }

    /// Waits for a received frame matching `wanted`; returns it (without its header).
    fn receive(&mut self, wanted: impl Fn(&[u8]) -> bool) -> Vec<u8> {
        let deadline = Instant::now() + WAIT;
        loop {
            for (head, len) in self.take_used(RX_QUEUE) {
                assert!(
                    len as usize >= NET_HEADER_LEN + 14,
                    "short frame ({len} bytes) head {head}"
                );
                let addr = self.descriptor_addr(RX_QUEUE, head as u16);
                let bytes = self.bytes(addr, len as usize);
                assert_eq!(
                    &bytes[NET_HEADER_LEN - 2..NET_HEADER_LEN],
                    &1u16.to_le_bytes()
                );
                assert!(bytes[..NET_HEADER_LEN - 2].iter().all(|&b| b == 0));
                let frame = bytes[NET_HEADER_LEN..].to_vec();
                if wanted(&frame) {
                    return frame;
                }
            }
            assert!(Instant::now() < deadline, "no matching frame received");
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

fn is_arp_reply_from(frame: &[u8], ip: Ipv4Addr) -> bool {
    frame.len() >= 42
        && frame[12..14] == ETH_ARP.to_be_bytes()
        && frame[20..22] == [0, 2]
        && frame[28..32] == ip.octets()
}

fn is_dhcp_offer(frame: &[u8], xid: u32) -> bool {
    frame.len() >= 42 + 240
        && frame[12..14] == ETH_IPV4.to_be_bytes()
        && frame[23] == 17
        && frame[34..36] == 67u16.to_be_bytes()
        && frame[42] == 2
        && frame[46..50] == xid.to_be_bytes()
}

#[test]
fn config_space_has_the_mac_and_link_up() {
    let mut driver = net_driver(NetOptions::default());
    assert_eq!(driver.read(crate::virtio::mmio::DEVICE_ID), VIRTIO_ID_NET);
    let mac: Vec<u8> = (0..6)
        .map(|i| driver.dev.read(0x100 + i, 1) as u8)
        .collect();
    assert_eq!(mac, GUEST_MAC);
    assert_eq!(driver.dev.read(0x106, 2), u64::from(VIRTIO_NET_S_LINK_UP));
}

#[test]
fn dhcp_offers_the_guest_address_and_gateway() {
    let mut driver = net_driver(NetOptions::default());
    driver.post_receive_buffers(8);
    driver.transmit(&dhcp_discover(0x1234_5678));
    let offer = driver.receive(|frame| is_dhcp_offer(frame, 0x1234_5678));
    // yiaddr: the address offered.
    assert_eq!(&offer[42 + 16..42 + 20], &GUEST.octets());
    // Option 3 (router) is the gateway.
    let options = &offer[42 + 240..];
    let mut at = 0;
    let mut router = None;
    while at + 1 < options.len() && options[at] != 255 {
        let (kind, len) = (options[at], usize::from(options[at + 1]));
        if kind == 3 && len >= 4 {
            router = Some(Ipv4Addr::new(
                options[at + 2],
                options[at + 3],
                options[at + 4],
                options[at + 5],
            ));
        }
        at += 2 + len;
    }
    assert_eq!(router, Some(GATEWAY));
    assert!(driver.wait_irq(), "a received frame raises the interrupt");
}

#[test]
fn the_gateway_answers_arp() {
    let mut driver = net_driver(NetOptions::default());
    driver.post_receive_buffers(4);
    driver.transmit(&arp_request(GATEWAY));
    let reply = driver.receive(|frame| is_arp_reply_from(frame, GATEWAY));
    assert_eq!(&reply[..6], &GUEST_MAC);
}

#[test]
fn frames_wait_for_receive_buffers() {
    let mut driver = net_driver(NetOptions::default());
    driver.transmit(&arp_request(GATEWAY));
    std::thread::sleep(Duration::from_millis(50));
    assert!(driver.take_used(RX_QUEUE).is_empty());
    driver.post_receive_buffers(2);
    driver.receive(|frame| is_arp_reply_from(frame, GATEWAY));
}

#[test]
fn a_forwarded_port_listens_on_loopback() {
    let probe = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = probe.local_addr().unwrap().port();
    drop(probe);
    let forward: HostForward = format!("tcp::{port}-:80").parse().unwrap();
    let _driver = net_driver(NetOptions {
        forwards: vec![forward],
    });
    TcpStream::connect(("127.0.0.1", port)).expect("the forwarded port accepts connections");
}

#[test]
fn a_busy_port_is_an_error_at_start() {
    let busy = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = busy.local_addr().unwrap().port();
    let forward: HostForward = format!("tcp:127.0.0.1:{port}-:80").parse().unwrap();
    let error = VirtioNet::new(NetOptions {
        forwards: vec![forward],
    })
    .expect_err("the port is taken");
    match &error {
        NetError::Forward { forward: f, source } => {
            assert_eq!(f.host_port, port);
            assert_eq!(source.kind(), io::ErrorKind::AddrInUse, "{error}");
        }
        other => panic!("unexpected error {other}"),
    }
    assert!(error.to_string().contains(&port.to_string()));
}

#[test]
fn hostile_transmit_chains_fail_alone() {
    let mut driver = net_driver(NetOptions::default());
    // Too short, a header only, device-writable, outside RAM, oversized.
    let short = driver.readable(&[0; 5]);
    assert_eq!(driver.round_trip(TX_QUEUE, &[short]), 0);
    let header_only = driver.readable(&[0; NET_HEADER_LEN]);
    assert_eq!(driver.round_trip(TX_QUEUE, &[header_only]), 0);
    let writable = driver.writable(100);
    assert_eq!(driver.round_trip(TX_QUEUE, &[writable]), 0);
    let outside = Buffer {
        addr: 0x10,
        len: 100,
        writable: false,
    };
    assert_eq!(driver.round_trip(TX_QUEUE, &[outside]), 0);
    let huge = driver.readable(&vec![0xab; MAX_FRAME_LEN + NET_HEADER_LEN + 1]);
    assert_eq!(driver.round_trip(TX_QUEUE, &[huge]), 0);
    // Garbage frames of every small length reach libslirp and are dropped there.
    for len in 14..200 {
        let garbage: Vec<u8> = (0..len).map(|i| (i * 37 + len) as u8).collect();
        driver.free_buffers();
        driver.transmit(&garbage);
    }
    // Receive buffers that are too small or outside RAM.
    driver.free_buffers();
    let tiny = driver.writable(4);
    driver.push(RX_QUEUE, &[tiny]);
    driver.push(RX_QUEUE, &[outside]);
    driver.transmit(&arp_request(GATEWAY));
    driver.transmit(&arp_request(GATEWAY));
    // The first reply does not fit the tiny buffer (dropped), the second finds a chain outside
    // RAM (refused, the reply waits): both chains come back empty.
    let mut used = Vec::new();
    let deadline = Instant::now() + WAIT;
    while used.len() < 2 {
        used.extend(driver.take_used(RX_QUEUE));
        assert!(
            Instant::now() < deadline,
            "bad receive chains not returned: {used:?}"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(used, [(0, 0), (1, 0)]);
    // Still working.
    driver.post_receive_buffers(4);
    driver.transmit(&arp_request(GATEWAY));
    driver.receive(|frame| is_arp_reply_from(frame, GATEWAY));
}
