/* virtio_blk.S - a bare-metal driver for the virtio-blk disk in virtio-mmio
 * slot 0 (0x1000_1000, PLIC source 1), fed valid requests and garbage.
 *
 * The driver negotiates VERSION_1 only and runs queue 0 with 8 entries,
 * polling the used ring after every notify. Valid requests must work, and
 * every malformed one must fail on its own: IOERR in the status byte when
 * the chain ends in a device-writable byte, otherwise a used element of
 * length 0 or (for chains the device cannot even walk) no used element at
 * all. After each kind of garbage a valid request must still complete.
 *
 * The host (tests/virtio_guest.rs) gives a 1 MiB raw image in which byte i
 * of sector n is DISK_BYTE(n, i) = ((n + i) & 0xff) ^ 0x5a, except the first
 * 16 bytes of sector 0, which hold DISK_MAGIC. The only request allowed to
 * change the image is the write of sector 1 in case 5 (pattern seed
 * WRITTEN_SEED); on a read-only disk (VIRTIO_BLK_F_RO offered) that write
 * must fail with IOERR. The host checks the image afterwards.
 *
 * No QEMU oracle: QEMU marks the device broken at the first malformed
 * chain, so it legitimately behaves differently from here on.
 *
 * Register use: s0 = the device's register window, s1 = DeviceFeatures
 * bits 31:0, s2 = 1 for a read-only disk, s3 = capacity in sectors.
 */
#include "priv.h"

#define VIRTIO0              0x10001000
#define VIRTIO0_IRQ          1

/* virtio-mmio version 2 registers */
#define VM_MAGIC             0x000
#define VM_VERSION           0x004
#define VM_DEVICE_ID         0x008
#define VM_DEV_FEATURES      0x010
#define VM_DEV_FEATURES_SEL  0x014
#define VM_DRV_FEATURES      0x020
#define VM_DRV_FEATURES_SEL  0x024
#define VM_QUEUE_SEL         0x030
#define VM_QUEUE_NUM_MAX     0x034
#define VM_QUEUE_NUM         0x038
#define VM_QUEUE_READY       0x044
#define VM_QUEUE_NOTIFY      0x050
#define VM_INT_STATUS        0x060
#define VM_INT_ACK           0x064
#define VM_STATUS            0x070
#define VM_QUEUE_DESC_LO     0x080
#define VM_QUEUE_DESC_HI     0x084
#define VM_QUEUE_DRIVER_LO   0x090
#define VM_QUEUE_DRIVER_HI   0x094
#define VM_QUEUE_DEVICE_LO   0x0a0
#define VM_QUEUE_DEVICE_HI   0x0a4
#define VM_CONFIG            0x100
#define BLK_CAPACITY_LO      (VM_CONFIG + 0x00)
#define BLK_CAPACITY_HI      (VM_CONFIG + 0x04)
#define BLK_BLK_SIZE         (VM_CONFIG + 0x14)

#define VIRTIO_MAGIC         0x74726976
#define VIRTIO_ID_BLOCK      2
#define INT_USED_BUFFER      1

/* Device status bits */
#define ST_ACK               1
#define ST_DRIVER            2
#define ST_DRIVER_OK         4
#define ST_FEATURES_OK       8
#define ST_ALL_DRIVER        (ST_ACK | ST_DRIVER | ST_DRIVER_OK | ST_FEATURES_OK)

/* Features */
#define F_VERSION_1_HI       1          /* VIRTIO_F_VERSION_1, bit 32 */
#define F_BLK_RO_SHIFT       5
#define F_BLK_SIZE           (1 << 6)

/* Requests */
#define BLK_T_IN             0
#define BLK_T_OUT            1
#define BLK_T_FLUSH          4
#define BLK_T_GET_ID         8
#define BLK_T_BOGUS          0x55
#define BLK_S_OK             0
#define BLK_S_IOERR          1
#define BLK_S_UNSUPP         2
#define BLK_HDR_LEN          16
#define SECTOR               512
#define BLK_ID_LEN           20

/* Split virtqueue */
#define VQ_SIZE              8
#define D_NEXT               1
#define D_WRITE              2
#define D_INDIRECT           4

/* The image the host made (see above). */
#define DISK_SECTORS         2048
#define PATTERN_XOR          0x5a
#define WRITTEN_SEED         0x80

/* Addresses that are not RAM. */
#define OUTSIDE_RAM          0x20000000
#define TOP_OF_SPACE         0xfffff000

#define POISON               0xee
#define STATUS_UNTOUCHED     0xff
#define POLL_LIMIT           100000
/* How long to wait for a chain the device may legitimately drop. The
 * device serves a notify before the store completes; this is slack. */
#define DROP_POLL_LIMIT      10000

/* reg = device register `off`; check it. Clobber t3, t4. */
#define CHECK_REG(off, expected)  lw t3, off(s0); CHECK_EQ(t3, expected)
#define CHECK_REG_MASKED(off, mask, expected)                            \
    lw t3, off(s0); CHECK_MASKED(t3, mask, expected)
#define SET_REG(off, value)       li t0, value; sw t0, off(s0)
/* *(u32 *)addr = value. Clobbers t0, t1. */
#define STORE_WORD(addr, value)   li t0, addr; li t1, value; sw t1, 0(t0)
#define CHECK_PLIC_PENDING(expected)                                     \
    li t3, PLIC_PENDING; lw t3, 0(t3);                                   \
    CHECK_MASKED(t3, 1 << VIRTIO0_IRQ, expected)

/* Poll mip until (mip & mask) == value; fails with the last mip seen.
 * Clobbers t1, t3, t4. */
#define WAIT_MIP(mask, value)                                            \
    li t1, POLL_LIMIT;                                                   \
93: csrr t3, mip;                                                        \
    li t4, mask;                                                         \
    and t3, t3, t4;                                                      \
    li t4, value;                                                        \
    beq t3, t4, 99f;                                                     \
    addi t1, t1, -1;                                                     \
    bnez t1, 93b;                                                        \
    j fail_check;                                                        \
99:

/* The request header: type, reserved 0, 64-bit sector. Clobbers t0, t1. */
#define REQUEST(type, sector_lo, sector_hi)                              \
    la t0, req_hdr;                                                      \
    li t1, type; sw t1, 0(t0);                                           \
    sw zero, 4(t0);                                                      \
    li t1, sector_lo; sw t1, 8(t0);                                      \
    li t1, sector_hi; sw t1, 12(t0)
/* As REQUEST with the sector's low word in a register. */
#define REQUEST_AT(type, sector_reg)                                     \
    REQUEST(type, 0, 0); sw sector_reg, 8(t0)

#define STATUS_RESET  la t0, req_status; li t1, STATUS_UNTOUCHED; sb t1, 0(t0)
#define CHECK_STATUS(expected)                                           \
    la t0, req_status; lbu t0, 0(t0); CHECK_EQ(t0, expected)

/* Descriptor i = { addr, len, flags, next }: DESC for a symbol, DESC_AT for
 * a number. Clobbers a0-a4, t0. */
#define DESC(i, sym, len, flags, next)                                   \
    li a0, i; la a1, sym; li a2, len; li a3, flags; li a4, next;         \
    call set_desc
#define DESC_AT(i, addr, len, flags, next)                               \
    li a0, i; li a1, addr; li a2, len; li a3, flags; li a4, next;        \
    call set_desc
/* The high word of descriptor i's address. Clobbers t0, t1. */
#define DESC_ADDR_HI(i, hi)                                              \
    la t0, vq_desc; li t1, hi; sw t1, (16 * (i) + 4)(t0)

/* Three-descriptor requests on buf: header, data, status. */
#define READ_CHAIN(buf, len)                                             \
    DESC(0, req_hdr, BLK_HDR_LEN, D_NEXT, 1);                            \
    DESC(1, buf, len, D_NEXT | D_WRITE, 2);                              \
    DESC(2, req_status, 1, D_WRITE, 0)
#define WRITE_CHAIN(buf, len)                                            \
    DESC(0, req_hdr, BLK_HDR_LEN, D_NEXT, 1);                            \
    DESC(1, buf, len, D_NEXT, 2);                                        \
    DESC(2, req_status, 1, D_WRITE, 0)

/* Offer head 0 and wait for it in the used ring with `len` bytes written
 * and `status` in the status byte (which is reset first). */
#define SUBMIT_EXPECT(len, status)                                       \
    STATUS_RESET;                                                        \
    li a0, 0; call submit;                                               \
    CHECK_EQ(a0, 0); CHECK_EQ(a1, len);                                  \
    CHECK_STATUS(status)
#define EXPECT_IOERR  SUBMIT_EXPECT(1, BLK_S_IOERR)
/* Offer a chain the device cannot walk to its end (see submit_garbage). */
#define SUBMIT_GARBAGE(head)  li a0, head; call submit_garbage

/* buffer fill and compare helpers */
#define FILL(buf, value, len)                                            \
    la a0, buf; li a1, value; li a2, len; call fill_bytes
#define CHECK_FILLED(buf, value, len)                                    \
    la a0, buf; li a1, value; li a2, len; call check_bytes
#define CHECK_PATTERN(buf, seed, from, to)                               \
    la a0, buf; li a1, seed; li a2, from; li a3, to; call check_pattern

/* A valid read of sector 0 into buf_a, checked against the host's data. */
#define VALID_READ_OF_SECTOR_0                                           \
    FILL(buf_a, POISON, SECTOR);                                         \
    REQUEST(BLK_T_IN, 0, 0);                                             \
    READ_CHAIN(buf_a, SECTOR);                                           \
    SUBMIT_EXPECT(SECTOR + 1, BLK_S_OK);                                 \
    call check_sector_0


main:
    li s0, VIRTIO0

    TEST(1, "virtio-mmio slot 0: magic, version 2, a block device")
    CHECK_REG(VM_MAGIC, VIRTIO_MAGIC)
    CHECK_REG(VM_VERSION, 2)
    CHECK_REG(VM_DEVICE_ID, VIRTIO_ID_BLOCK)
    TEST_OK

    TEST(2, "FEATURES_OK refused without VERSION_1 or with an unoffered feature")
    sw zero, VM_STATUS(s0)
    CHECK_REG(VM_STATUS, 0)
    SET_REG(VM_STATUS, ST_ACK)
    SET_REG(VM_STATUS, ST_ACK | ST_DRIVER)
    SET_REG(VM_DEV_FEATURES_SEL, 1)
    CHECK_REG_MASKED(VM_DEV_FEATURES, F_VERSION_1_HI, F_VERSION_1_HI)
    sw zero, VM_DEV_FEATURES_SEL(s0)
    lw s1, VM_DEV_FEATURES(s0)
    /* A legacy driver: no VERSION_1. */
    sw zero, VM_DRV_FEATURES_SEL(s0)
    sw zero, VM_DRV_FEATURES(s0)
    SET_REG(VM_DRV_FEATURES_SEL, 1)
    sw zero, VM_DRV_FEATURES(s0)
    SET_REG(VM_STATUS, ST_ACK | ST_DRIVER | ST_FEATURES_OK)
    CHECK_REG(VM_STATUS, ST_ACK | ST_DRIVER)
    /* VERSION_1 plus the lowest feature bit (31:0) the device did not
     * offer. */
    sw zero, VM_STATUS(s0)
    SET_REG(VM_STATUS, ST_ACK)
    SET_REG(VM_STATUS, ST_ACK | ST_DRIVER)
    SET_REG(VM_DRV_FEATURES_SEL, 1)
    SET_REG(VM_DRV_FEATURES, F_VERSION_1_HI)
    sw zero, VM_DRV_FEATURES_SEL(s0)
    not t0, s1
    neg t1, t0
    and t0, t0, t1
    snez t3, t0
    CHECK_EQ(t3, 1)
    sw t0, VM_DRV_FEATURES(s0)
    SET_REG(VM_STATUS, ST_ACK | ST_DRIVER | ST_FEATURES_OK)
    CHECK_REG(VM_STATUS, ST_ACK | ST_DRIVER)
    TEST_OK

    TEST(3, "init: VERSION_1 accepted, queue 0 of 8 ready, DRIVER_OK; capacity")
    la a0, vq_desc
    la a1, vq_avail
    la a2, vq_used
    call driver_init
    lw s3, BLK_CAPACITY_LO(s0)
    CHECK_REG(BLK_CAPACITY_HI, 0)
    CHECK_EQ(s3, DISK_SECTORS)
    CHECK_MASKED(s1, F_BLK_SIZE, F_BLK_SIZE)
    CHECK_REG(BLK_BLK_SIZE, SECTOR)
    TEST_OK

    TEST(4, "read sector 0: status OK, 513 bytes used, the host's data")
    VALID_READ_OF_SECTOR_0
    TEST_OK

    /* Two descriptions: the host checks which branch ran. */
    beqz s2, 1f
    TEST(5, "read-only disk: write of sector 1 fails with IOERR, old data stays")
    j 2f
1:  TEST(5, "write sector 1, flush, read the new data back")
2:  la a0, buf_b
    li a1, WRITTEN_SEED
    li a2, SECTOR
    call fill_pattern
    REQUEST(BLK_T_OUT, 1, 0)
    WRITE_CHAIN(buf_b, SECTOR)
    STATUS_RESET
    li a0, 0
    call submit
    CHECK_EQ(a0, 0)
    CHECK_EQ(a1, 1)
    la t0, req_status
    lbu t0, 0(t0)
    CHECK_REGS(t0, s2)              /* OK (0), or IOERR (1) when read-only */
    REQUEST(BLK_T_FLUSH, 0, 0)
    DESC(0, req_hdr, BLK_HDR_LEN, D_NEXT, 1)
    DESC(1, req_status, 1, D_WRITE, 0)
    SUBMIT_EXPECT(1, BLK_S_OK)
    FILL(buf_a, POISON, SECTOR)
    REQUEST(BLK_T_IN, 1, 0)
    READ_CHAIN(buf_a, SECTOR)
    SUBMIT_EXPECT(SECTOR + 1, BLK_S_OK)
    la a0, buf_a
    li a1, WRITTEN_SEED
    beqz s2, 3f
    li a1, 1                        /* sector 1 as the host made it */
3:  li a2, 0
    li a3, SECTOR
    call check_pattern
    TEST_OK

    TEST(6, "GET_ID: the image's name; an unknown request type is UNSUPP")
    FILL(buf_a, POISON, BLK_ID_LEN)
    REQUEST(BLK_T_GET_ID, 0, 0)
    READ_CHAIN(buf_a, BLK_ID_LEN)
    SUBMIT_EXPECT(BLK_ID_LEN + 1, BLK_S_OK)
    la a0, buf_a
    la a1, disk_id
    li a2, BLK_ID_LEN
    call compare_bytes
    REQUEST(BLK_T_BOGUS, 0, 0)
    READ_CHAIN(buf_a, SECTOR)
    SUBMIT_EXPECT(1, BLK_S_UNSUPP)
    TEST_OK

    TEST(7, "data or header outside RAM, or past 4 GiB: IOERR, nothing touched")
    /* Read into the top of the address space. */
    REQUEST(BLK_T_IN, 0, 0)
    DESC(0, req_hdr, BLK_HDR_LEN, D_NEXT, 1)
    DESC_AT(1, TOP_OF_SPACE, SECTOR, D_NEXT | D_WRITE, 2)
    DESC(2, req_status, 1, D_WRITE, 0)
    EXPECT_IOERR
    /* Write sector 2 from a hole in the address space. */
    REQUEST(BLK_T_OUT, 2, 0)
    DESC(0, req_hdr, BLK_HDR_LEN, D_NEXT, 1)
    DESC_AT(1, OUTSIDE_RAM, SECTOR, D_NEXT, 2)
    DESC(2, req_status, 1, D_WRITE, 0)
    EXPECT_IOERR
    /* Read into canary + 4 GiB: a device that drops the high word of the
     * address would overwrite the canary. */
    FILL(canary, POISON, SECTOR)
    REQUEST(BLK_T_IN, 0, 0)
    READ_CHAIN(canary, SECTOR)
    DESC_ADDR_HI(1, 1)
    EXPECT_IOERR
    CHECK_FILLED(canary, POISON, SECTOR)
    /* A buffer starting in RAM and running far past its end. */
    REQUEST(BLK_T_IN, 0, 0)
    READ_CHAIN(buf_a, 0xfffffe00)
    EXPECT_IOERR
    /* The header itself outside RAM. */
    FILL(buf_a, POISON, SECTOR)
    DESC_AT(0, OUTSIDE_RAM, BLK_HDR_LEN, D_NEXT, 1)
    DESC(1, buf_a, SECTOR, D_NEXT | D_WRITE, 2)
    DESC(2, req_status, 1, D_WRITE, 0)
    EXPECT_IOERR
    CHECK_FILLED(buf_a, POISON, SECTOR)
    VALID_READ_OF_SECTOR_0
    TEST_OK

    TEST(8, "header of 8 or 0 bytes: IOERR; split 8 + 8 across two: served")
    FILL(buf_a, POISON, SECTOR)
    REQUEST(BLK_T_IN, 0, 0)
    READ_CHAIN(buf_a, SECTOR)
    DESC(0, req_hdr, 8, D_NEXT, 1)
    EXPECT_IOERR
    DESC(0, req_hdr, 0, D_NEXT, 1)
    EXPECT_IOERR
    CHECK_FILLED(buf_a, POISON, SECTOR)
    /* virtio 1.2 §2.6.4: the device must not assume the framing. */
    DESC(0, req_hdr, 8, D_NEXT, 3)
    DESC(3, req_hdr + 8, 8, D_NEXT, 1)
    SUBMIT_EXPECT(SECTOR + 1, BLK_S_OK)
    call check_sector_0
    TEST_OK

    TEST(9, "wrong directions, partial sector: IOERR, nothing touched")
    /* The header device-writable. */
    FILL(buf_a, POISON, SECTOR)
    REQUEST(BLK_T_IN, 0, 0)
    READ_CHAIN(buf_a, SECTOR)
    DESC(0, req_hdr, BLK_HDR_LEN, D_NEXT | D_WRITE, 1)
    EXPECT_IOERR
    /* A read into a driver-readable (device read-only) buffer. */
    REQUEST(BLK_T_IN, 0, 0)
    WRITE_CHAIN(buf_a, SECTOR)
    EXPECT_IOERR
    CHECK_FILLED(buf_a, POISON, SECTOR)
    /* A write of sector 2 from a device-writable buffer. */
    la a0, buf_b
    li a1, WRITTEN_SEED
    li a2, SECTOR
    call fill_pattern
    REQUEST(BLK_T_OUT, 2, 0)
    READ_CHAIN(buf_b, SECTOR)
    EXPECT_IOERR
    /* A driver-readable buffer after a device-writable one. */
    REQUEST(BLK_T_IN, 0, 0)
    DESC(0, req_hdr, BLK_HDR_LEN, D_NEXT, 1)
    DESC(1, buf_a, SECTOR, D_NEXT | D_WRITE, 2)
    DESC(2, buf_b, SECTOR, D_NEXT, 3)
    DESC(3, req_status, 1, D_WRITE, 0)
    EXPECT_IOERR
    /* 100 bytes: not a whole sector. */
    REQUEST(BLK_T_IN, 0, 0)
    READ_CHAIN(buf_a, 100)
    EXPECT_IOERR
    CHECK_FILLED(buf_a, POISON, SECTOR)
    VALID_READ_OF_SECTOR_0
    TEST_OK

    TEST(10, "sectors beyond the capacity: IOERR; the last sector reads fine")
    REQUEST_AT(BLK_T_IN, s3)
    READ_CHAIN(buf_a, SECTOR)
    EXPECT_IOERR
    /* Two sectors from the last one: half inside, nothing may be written. */
    addi s4, s3, -1
    REQUEST_AT(BLK_T_OUT, s4)
    WRITE_CHAIN(buf_b, 2 * SECTOR)
    EXPECT_IOERR
    /* sector + length overflows 64 bits. */
    REQUEST(BLK_T_IN, 0xffffffff, 0xffffffff)
    READ_CHAIN(buf_a, SECTOR)
    EXPECT_IOERR
    REQUEST(BLK_T_IN, 0, 0x00800000)        /* sector * 512 overflows */
    EXPECT_IOERR
    FILL(buf_a, POISON, SECTOR)
    REQUEST_AT(BLK_T_IN, s4)
    SUBMIT_EXPECT(SECTOR + 1, BLK_S_OK)
    la a0, buf_a
    andi a1, s4, 0xff
    li a2, 0
    li a3, SECTOR
    call check_pattern
    TEST_OK

    TEST(11, "no usable status byte: used with length 0, no I/O")
    /* A write of sector 3 whose status byte is not in RAM. */
    REQUEST(BLK_T_OUT, 3, 0)
    DESC(0, req_hdr, BLK_HDR_LEN, D_NEXT, 1)
    DESC(1, buf_b, SECTOR, D_NEXT, 2)
    DESC_AT(2, OUTSIDE_RAM, 1, D_WRITE, 0)
    SUBMIT_EXPECT(0, STATUS_UNTOUCHED)
    /* A write of sector 3 without any device-writable descriptor. */
    DESC(1, buf_b, SECTOR, 0, 0)
    SUBMIT_EXPECT(0, STATUS_UNTOUCHED)
    /* A read whose status descriptor is empty. */
    FILL(buf_a, POISON, SECTOR)
    REQUEST(BLK_T_IN, 0, 0)
    READ_CHAIN(buf_a, SECTOR)
    DESC(2, req_status, 0, D_WRITE, 0)
    SUBMIT_EXPECT(0, STATUS_UNTOUCHED)
    CHECK_FILLED(buf_a, POISON, SECTOR)
    VALID_READ_OF_SECTOR_0
    TEST_OK

    TEST(12, "chains that loop or leave the table, heads out of range: no hang")
    FILL(buf_a, POISON, SECTOR)
    REQUEST(BLK_T_IN, 0, 0)
    /* The header's next is itself. */
    DESC(0, req_hdr, BLK_HDR_LEN, D_NEXT, 0)
    SUBMIT_GARBAGE(0)
    /* header -> data -> status -> header -> ... */
    READ_CHAIN(buf_a, SECTOR)
    DESC(2, req_status, 1, D_NEXT | D_WRITE, 0)
    STATUS_RESET
    SUBMIT_GARBAGE(0)
    CHECK_STATUS(STATUS_UNTOUCHED)
    /* Every descriptor of the table in one loop. */
    DESC(0, req_hdr, BLK_HDR_LEN, D_NEXT, 1)
    DESC(1, req_hdr, BLK_HDR_LEN, D_NEXT, 2)
    DESC(2, req_hdr, BLK_HDR_LEN, D_NEXT, 3)
    DESC(3, req_hdr, BLK_HDR_LEN, D_NEXT, 4)
    DESC(4, req_hdr, BLK_HDR_LEN, D_NEXT, 5)
    DESC(5, req_hdr, BLK_HDR_LEN, D_NEXT, 6)
    DESC(6, req_hdr, BLK_HDR_LEN, D_NEXT, 7)
    DESC(7, req_status, 1, D_NEXT | D_WRITE, 0)
    STATUS_RESET
    SUBMIT_GARBAGE(5)
    CHECK_STATUS(STATUS_UNTOUCHED)
    /* next = the queue size, and far beyond it. */
    DESC(0, req_hdr, BLK_HDR_LEN, D_NEXT, VQ_SIZE)
    SUBMIT_GARBAGE(0)
    DESC(0, req_hdr, BLK_HDR_LEN, D_NEXT, 0xffff)
    SUBMIT_GARBAGE(0)
    READ_CHAIN(buf_a, SECTOR)
    DESC(1, buf_a, SECTOR, D_NEXT | D_WRITE, 200)
    STATUS_RESET
    SUBMIT_GARBAGE(0)
    CHECK_STATUS(STATUS_UNTOUCHED)
    /* Heads that are not descriptors. */
    SUBMIT_GARBAGE(VQ_SIZE)
    SUBMIT_GARBAGE(0xffff)
    CHECK_FILLED(buf_a, POISON, SECTOR)
    VALID_READ_OF_SECTOR_0
    TEST_OK

    TEST(13, "indirect descriptors (not negotiated) with garbage tables: no hang")
    REQUEST(BLK_T_IN, 0, 0)
    DESC_AT(0, OUTSIDE_RAM, 4 * 16, D_INDIRECT, 0)
    SUBMIT_GARBAGE(0)
    DESC(0, indirect_table, 20, D_INDIRECT, 0)
    SUBMIT_GARBAGE(0)
    DESC(0, indirect_table, 0, D_INDIRECT, 0)
    SUBMIT_GARBAGE(0)
    /* An indirect table that holds another indirect descriptor. */
    la t0, indirect_table
    li t1, OUTSIDE_RAM
    sw t1, 0(t0)
    sw zero, 4(t0)
    li t1, 64
    sw t1, 8(t0)
    li t1, D_INDIRECT
    sw t1, 12(t0)
    DESC(0, indirect_table, 16, D_INDIRECT, 0)
    SUBMIT_GARBAGE(0)
    VALID_READ_OF_SECTOR_0
    TEST_OK

    TEST(14, "bogus notifies do nothing; a ready queue's registers ignore writes")
    li t0, 1
    sw t0, VM_QUEUE_NOTIFY(s0)
    li t0, -1
    sw t0, VM_QUEUE_NOTIFY(s0)
    li t0, 0x10000
    sw t0, VM_QUEUE_NOTIFY(s0)
    sw zero, VM_QUEUE_NOTIFY(s0)            /* nothing new on queue 0 */
    CHECK_REG(VM_INT_STATUS, 0)
    la t0, vq_used
    lhu t3, 2(t0)
    la t0, last_used
    lhu t4, 0(t0)
    CHECK_REGS(t3, t4)
    SET_REG(VM_QUEUE_NUM, VQ_SIZE / 2)
    SET_REG(VM_QUEUE_DESC_LO, OUTSIDE_RAM)
    SET_REG(VM_QUEUE_DEVICE_LO, OUTSIDE_RAM)
    CHECK_REG(VM_QUEUE_NUM, VQ_SIZE)
    /* Interleaved and wrapping: the ring is still the one of 8 entries. */
    VALID_READ_OF_SECTOR_0
    VALID_READ_OF_SECTOR_0
    VALID_READ_OF_SECTOR_0
    TEST_OK

    TEST(15, "completion: InterruptStatus, PLIC source 1, MEI, claim, ACK")
    STORE_WORD(PLIC_PRIORITY(VIRTIO0_IRQ), 1)
    STORE_WORD(PLIC_THRESHOLD(PLIC_CTX_M), 0)
    STORE_WORD(PLIC_ENABLE(PLIC_CTX_M), 1 << VIRTIO0_IRQ)
    CHECK_REG(VM_INT_STATUS, 0)
    CHECK_PLIC_PENDING(0)
    WAIT_MIP(MIP_MEIP, 0)
    FILL(buf_a, POISON, SECTOR)
    REQUEST(BLK_T_IN, 0, 0)
    READ_CHAIN(buf_a, SECTOR)
    STATUS_RESET
    li a0, 0
    call offer
    li a0, POLL_LIMIT
    call poll_used
    CHECK_EQ(a0, 1)
    CHECK_EQ(a1, 0)
    CHECK_EQ(a2, SECTOR + 1)
    CHECK_STATUS(BLK_S_OK)
    call check_sector_0
    CHECK_REG(VM_INT_STATUS, INT_USED_BUFFER)
    CHECK_PLIC_PENDING(1 << VIRTIO0_IRQ)
    WAIT_MIP(MIP_MEIP, MIP_MEIP)
    li t0, MIP_MEIP
    csrw mie, t0
    TAKE_M_INTERRUPT
    csrw mie, zero
    CHECK_M(TR_CAUSE, CAUSE_INTERRUPT | IRQ_MEI)
    li t0, PLIC_CLAIM(PLIC_CTX_M)
    lw s4, 0(t0)
    CHECK_EQ(s4, VIRTIO0_IRQ)
    SET_REG(VM_INT_ACK, INT_USED_BUFFER)
    CHECK_REG(VM_INT_STATUS, 0)
    li t0, PLIC_CLAIM(PLIC_CTX_M)
    sw s4, 0(t0)
    CHECK_PLIC_PENDING(0)
    WAIT_MIP(MIP_MEIP, 0)
    STORE_WORD(PLIC_ENABLE(PLIC_CTX_M), 0)
    CHECK_REG(VM_STATUS, ST_ALL_DRIVER)
    TEST_OK

    TEST(16, "rings outside RAM: no hang; after a reset a good queue works")
    /* The descriptor table outside RAM. */
    li a0, OUTSIDE_RAM
    la a1, vq_avail
    la a2, vq_used
    call driver_init
    SUBMIT_GARBAGE(0)
    /* The used ring outside RAM: nothing can be reported. */
    la a0, vq_desc
    la a1, vq_avail
    li a2, OUTSIDE_RAM
    call driver_init
    REQUEST(BLK_T_IN, 0, 0)
    READ_CHAIN(buf_a, SECTOR)
    li a0, 0
    call offer
    SET_REG(VM_INT_ACK, INT_USED_BUFFER)
    /* The available ring outside RAM: the device sees nothing. */
    la a0, vq_desc
    li a1, OUTSIDE_RAM
    la a2, vq_used
    call driver_init
    li a0, 0
    call offer
    CHECK_REG(VM_INT_STATUS, 0)
    la t0, vq_used
    lhu t0, 2(t0)
    CHECK_EQ(t0, 0)
    la a0, vq_desc
    la a1, vq_avail
    la a2, vq_used
    call driver_init
    VALID_READ_OF_SECTOR_0
    TEST_OK

    PASS_ALL

/* --- the driver ------------------------------------------------------- */

/* virtio 1.2 §3.1.1 with queue 0 of VQ_SIZE entries: descriptors at a0,
 * available ring at a1, used ring at a2. The rings in RAM are zeroed and
 * last_used is 0. Sets s1 = DeviceFeatures[31:0], s2 = 1 for a read-only
 * disk. Clobbers a3, a4, t0-t4. */
driver_init:
    mv a4, ra
    sw zero, VM_STATUS(s0)
    CHECK_REG(VM_STATUS, 0)
    CHECK_REG(VM_INT_STATUS, 0)
    SET_REG(VM_STATUS, ST_ACK)
    SET_REG(VM_STATUS, ST_ACK | ST_DRIVER)
    SET_REG(VM_DEV_FEATURES_SEL, 1)
    CHECK_REG_MASKED(VM_DEV_FEATURES, F_VERSION_1_HI, F_VERSION_1_HI)
    sw zero, VM_DEV_FEATURES_SEL(s0)
    lw s1, VM_DEV_FEATURES(s0)
    srli s2, s1, F_BLK_RO_SHIFT
    andi s2, s2, 1
    SET_REG(VM_DRV_FEATURES_SEL, 1)
    SET_REG(VM_DRV_FEATURES, F_VERSION_1_HI)
    sw zero, VM_DRV_FEATURES_SEL(s0)
    sw zero, VM_DRV_FEATURES(s0)
    SET_REG(VM_STATUS, ST_ACK | ST_DRIVER | ST_FEATURES_OK)
    CHECK_REG(VM_STATUS, ST_ACK | ST_DRIVER | ST_FEATURES_OK)
    sw zero, VM_QUEUE_SEL(s0)
    CHECK_REG(VM_QUEUE_READY, 0)
    lw t3, VM_QUEUE_NUM_MAX(s0)
    sltiu t3, t3, VQ_SIZE
    CHECK_EQ(t3, 0)                 /* QueueNumMax >= VQ_SIZE */
    SET_REG(VM_QUEUE_NUM, VQ_SIZE)
    sw a0, VM_QUEUE_DESC_LO(s0)
    sw zero, VM_QUEUE_DESC_HI(s0)
    sw a1, VM_QUEUE_DRIVER_LO(s0)
    sw zero, VM_QUEUE_DRIVER_HI(s0)
    sw a2, VM_QUEUE_DEVICE_LO(s0)
    sw zero, VM_QUEUE_DEVICE_HI(s0)
    la t0, vq_avail
    la t1, vq_end
1:  sw zero, 0(t0)
    addi t0, t0, 4
    bltu t0, t1, 1b
    la t0, last_used
    sw zero, 0(t0)
    fence rw, rw
    SET_REG(VM_QUEUE_READY, 1)
    CHECK_REG(VM_QUEUE_READY, 1)
    CHECK_REG(VM_QUEUE_NUM, VQ_SIZE)
    SET_REG(VM_STATUS, ST_ALL_DRIVER)
    CHECK_REG(VM_STATUS, ST_ALL_DRIVER)
    mv ra, a4
    ret

/* Descriptor a0 = { address a1 (high word 0), length a2, flags a3,
 * next a4 }. Clobbers a0, t0. */
set_desc:
    slli a0, a0, 4
    la t0, vq_desc
    add t0, t0, a0
    sw a1, 0(t0)
    sw zero, 4(t0)
    sw a2, 8(t0)
    sh a3, 12(t0)
    sh a4, 14(t0)
    ret

/* Puts head a0 in the next slot of the available ring, publishes it and
 * notifies queue 0. Clobbers t0-t2. */
offer:
    la t0, vq_avail
    lhu t1, 2(t0)
    andi t2, t1, VQ_SIZE - 1
    slli t2, t2, 1
    add t2, t2, t0
    sh a0, 4(t2)
    fence rw, w                     /* descriptors and entry before idx */
    addi t1, t1, 1
    sh t1, 2(t0)
    fence iorw, iorw                /* idx before the notify */
    li t0, VIRTIO0
    sw zero, VM_QUEUE_NOTIFY(t0)
    ret

/* Polls the used ring's idx, at most a0 times, for the next element.
 * Returns a0 = 1, a1 = its id, a2 = its length (and last_used moves on),
 * or a0 = 0 when idx did not move. Fails if it moved by more than one.
 * Clobbers t0-t4. */
poll_used:
    la t0, last_used
    lhu t1, 0(t0)
    la t2, vq_used
1:  lhu t3, 2(t2)
    bne t3, t1, 2f
    addi a0, a0, -1
    bnez a0, 1b
    ret
2:  fence r, rw
    addi t4, t1, 1
    slli t4, t4, 16
    srli t4, t4, 16
    CHECK_REGS(t3, t4)
    sh t4, 0(t0)
    andi t1, t1, VQ_SIZE - 1
    slli t1, t1, 3
    add t1, t1, t2
    lw a1, 4(t1)
    lw a2, 8(t1)
    li a0, 1
    ret

/* The used-buffer interrupt is pending; acknowledge it and check that it
 * is gone. Clobbers t0, t3, t4. */
ack_used_interrupt:
    li t0, VIRTIO0
    lw t3, VM_INT_STATUS(t0)
    CHECK_EQ(t3, INT_USED_BUFFER)
    li t3, INT_USED_BUFFER
    sw t3, VM_INT_ACK(t0)
    lw t3, VM_INT_STATUS(t0)
    CHECK_EQ(t3, 0)
    ret

/* Offers head a0 and waits for its used element: a0 = id, a1 = length.
 * The used-buffer interrupt must come; it is acknowledged. Clobbers a2,
 * a7, t0-t4. */
submit:
    mv a7, ra
    call offer
    li a0, POLL_LIMIT
    call poll_used
    CHECK_EQ(a0, 1)                 /* the used ring did not advance */
    mv a0, a1
    mv a1, a2
    call ack_used_interrupt
    mv ra, a7
    ret

/* Offers head a0, a chain the device cannot walk to a proper end. The
 * device may drop it or use it: then with id = head and length 0. The
 * interrupt is pending exactly when it was used (and is acknowledged).
 * Clobbers a0-a2, a6, a7, t0-t4. */
submit_garbage:
    mv a7, ra
    mv a6, a0
    call offer
    li a0, DROP_POLL_LIMIT
    call poll_used
    li t0, VIRTIO0
    lw t3, VM_INT_STATUS(t0)
    CHECK_REGS(t3, a0)
    beqz a0, 1f
    CHECK_REGS(a1, a6)
    CHECK_EQ(a2, 0)
    call ack_used_interrupt
1:  mv ra, a7
    ret

/* --- buffers ---------------------------------------------------------- */

/* buf_a holds sector 0 as the host wrote it. Clobbers a0-a3, a6, t0-t4. */
check_sector_0:
    mv a6, ra
    la a0, buf_a
    la a1, disk_magic
    li a2, 16
    call compare_bytes
    CHECK_PATTERN(buf_a, 0, 16, SECTOR)
    mv ra, a6
    ret

/* a2 bytes at a0 = a1. Clobbers t0. */
fill_bytes:
    add t0, a0, a2
1:  beq a0, t0, 2f
    sb a1, 0(a0)
    addi a0, a0, 1
    j 1b
2:  ret

/* The a2 bytes at a0 all equal a1. Clobbers a0, t0, t3, t4. */
check_bytes:
    add t0, a0, a2
1:  beq a0, t0, 2f
    lbu t3, 0(a0)
    mv t4, a1
    bne t3, t4, fail_check
    addi a0, a0, 1
    j 1b
2:  ret

/* The a2 bytes at a0 equal those at a1. Clobbers a0, a1, t0, t3, t4. */
compare_bytes:
    add t0, a0, a2
1:  beq a0, t0, 2f
    lbu t3, 0(a0)
    lbu t4, 0(a1)
    bne t3, t4, fail_check
    addi a0, a0, 1
    addi a1, a1, 1
    j 1b
2:  ret

/* a2 bytes at a0: byte i = ((a1 + i) & 0xff) ^ PATTERN_XOR, the host's
 * DISK_BYTE with seed a1. Clobbers t0-t2. */
fill_pattern:
    li t0, 0
1:  bgeu t0, a2, 2f
    add t1, t0, a1
    xori t1, t1, PATTERN_XOR
    add t2, a0, t0
    sb t1, 0(t2)
    addi t0, t0, 1
    j 1b
2:  ret

/* Bytes a2 .. a3 - 1 at a0 follow the pattern with seed a1 (fill_pattern).
 * Clobbers t0, t2-t4. */
check_pattern:
    mv t0, a2
1:  bgeu t0, a3, 2f
    add t2, a0, t0
    lbu t3, 0(t2)
    add t4, t0, a1
    xori t4, t4, PATTERN_XOR
    andi t4, t4, 0xff
    bne t3, t4, fail_check
    addi t0, t0, 1
    j 1b
2:  ret

    .section .rodata, "a"
disk_magic: .ascii "rv32vm virtio #0"
/* GET_ID: the image's file name, zero-padded to 20 bytes. */
disk_id:    .ascii "vblk.img"
    .skip BLK_ID_LEN - 8

    .bss
    .balign 4096
vq_desc:        .skip 16 * VQ_SIZE
    .balign 64
vq_avail:       .skip 4 + 2 * VQ_SIZE + 2
    .balign 64
vq_used:        .skip 4 + 8 * VQ_SIZE + 2
    .balign 4
vq_end:
last_used:      .skip 4
    .balign 16
req_hdr:        .skip BLK_HDR_LEN
req_status:     .skip 4
indirect_table: .skip 64
    .balign 512
buf_a:          .skip SECTOR
buf_b:          .skip 2 * SECTOR
canary:         .skip SECTOR
