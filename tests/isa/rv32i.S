# rv32i.S - RV32I base integer instructions.
#
# Every ALU op over sign/overflow corners, register shifts by amounts >= 32
# (only the low 5 bits of rs2 count), operand aliasing (rd == rs1, rd == rs2,
# rd == rs1 == rs2), x0 as source and as destination (the write is dropped),
# lui/auipc, sign- and zero-extending loads, stores of each width (which bytes
# change), jal/jalr link values (jalr clears bit 0, rd == rs1), every branch
# taken and not taken across the signed/unsigned boundaries, fence variants
# and pause as no-ops, and self-modifying code made visible by fence.i.
#include "test.h"

RVTEST_CODE_BEGIN

  # add
  TEST_RR_OP(2, add, 0x00000000, 0x00000000, 0x00000000)
  TEST_RR_OP(3, add, 0x00000002, 0x00000001, 0x00000001)
  TEST_RR_OP(4, add, 0x0000000a, 0x00000003, 0x00000007)
  TEST_RR_OP(5, add, 0x00000000, 0xffffffff, 0x00000001)
  TEST_RR_OP(6, add, 0x00000000, 0x00000001, 0xffffffff)
  TEST_RR_OP(7, add, 0x80000000, 0x7fffffff, 0x00000001)
  TEST_RR_OP(8, add, 0x7fffffff, 0x80000000, 0xffffffff)
  TEST_RR_OP(9, add, 0x80000001, 0x80000000, 0x00000001)
  TEST_RR_OP(10, add, 0x00000000, 0x80000000, 0x80000000)
  TEST_RR_OP(11, add, 0xffffffff, 0x7fffffff, 0x80000000)
  TEST_RR_OP(12, add, 0x00000000, 0x12345678, 0xedcba988)
  TEST_RR_OP(13, add, 0xffffffff, 0xffff0000, 0x0000ffff)
  TEST_RR_OP(14, add, 0x80000000, 0x00000000, 0x80000000)
  TEST_RR_OP(15, add, 0xfffffffe, 0xffffffff, 0xffffffff)
  # sub
  TEST_RR_OP(16, sub, 0x00000000, 0x00000000, 0x00000000)
  TEST_RR_OP(17, sub, 0x00000000, 0x00000001, 0x00000001)
  TEST_RR_OP(18, sub, 0xfffffffc, 0x00000003, 0x00000007)
  TEST_RR_OP(19, sub, 0xfffffffe, 0xffffffff, 0x00000001)
  TEST_RR_OP(20, sub, 0x00000002, 0x00000001, 0xffffffff)
  TEST_RR_OP(21, sub, 0x7ffffffe, 0x7fffffff, 0x00000001)
  TEST_RR_OP(22, sub, 0x80000001, 0x80000000, 0xffffffff)
  TEST_RR_OP(23, sub, 0x7fffffff, 0x80000000, 0x00000001)
  TEST_RR_OP(24, sub, 0x00000000, 0x80000000, 0x80000000)
  TEST_RR_OP(25, sub, 0xffffffff, 0x7fffffff, 0x80000000)
  TEST_RR_OP(26, sub, 0x2468acf0, 0x12345678, 0xedcba988)
  TEST_RR_OP(27, sub, 0xfffe0001, 0xffff0000, 0x0000ffff)
  TEST_RR_OP(28, sub, 0x80000000, 0x00000000, 0x80000000)
  TEST_RR_OP(29, sub, 0x00000000, 0xffffffff, 0xffffffff)
  # and
  TEST_RR_OP(30, and, 0x0f000f00, 0xff00ff00, 0x0f0f0f0f)
  TEST_RR_OP(31, and, 0x00f000f0, 0x0ff00ff0, 0xf0f0f0f0)
  TEST_RR_OP(32, and, 0x000f000f, 0x00ff00ff, 0x0f0f0f0f)
  TEST_RR_OP(33, and, 0xf000f000, 0xf00ff00f, 0xf0f0f0f0)
  TEST_RR_OP(34, and, 0x00000000, 0x00000000, 0xffffffff)
  TEST_RR_OP(35, and, 0xffffffff, 0xffffffff, 0xffffffff)
  TEST_RR_OP(36, and, 0x00000000, 0x5555aaaa, 0xaaaa5555)
  # or
  TEST_RR_OP(37, or, 0xff0fff0f, 0xff00ff00, 0x0f0f0f0f)
  TEST_RR_OP(38, or, 0xfff0fff0, 0x0ff00ff0, 0xf0f0f0f0)
  TEST_RR_OP(39, or, 0x0fff0fff, 0x00ff00ff, 0x0f0f0f0f)
  TEST_RR_OP(40, or, 0xf0fff0ff, 0xf00ff00f, 0xf0f0f0f0)
  TEST_RR_OP(41, or, 0xffffffff, 0x00000000, 0xffffffff)
  TEST_RR_OP(42, or, 0xffffffff, 0xffffffff, 0xffffffff)
  TEST_RR_OP(43, or, 0xffffffff, 0x5555aaaa, 0xaaaa5555)
  # xor
  TEST_RR_OP(44, xor, 0xf00ff00f, 0xff00ff00, 0x0f0f0f0f)
  TEST_RR_OP(45, xor, 0xff00ff00, 0x0ff00ff0, 0xf0f0f0f0)
  TEST_RR_OP(46, xor, 0x0ff00ff0, 0x00ff00ff, 0x0f0f0f0f)
  TEST_RR_OP(47, xor, 0x00ff00ff, 0xf00ff00f, 0xf0f0f0f0)
  TEST_RR_OP(48, xor, 0xffffffff, 0x00000000, 0xffffffff)
  TEST_RR_OP(49, xor, 0x00000000, 0xffffffff, 0xffffffff)
  TEST_RR_OP(50, xor, 0xffffffff, 0x5555aaaa, 0xaaaa5555)
  # slt
  TEST_RR_OP(51, slt, 0x00000000, 0x00000000, 0x00000000)
  TEST_RR_OP(52, slt, 0x00000001, 0x00000000, 0x00000001)
  TEST_RR_OP(53, slt, 0x00000000, 0x00000001, 0x00000000)
  TEST_RR_OP(54, slt, 0x00000001, 0xffffffff, 0x00000000)
  TEST_RR_OP(55, slt, 0x00000000, 0x00000000, 0xffffffff)
  TEST_RR_OP(56, slt, 0x00000000, 0x7fffffff, 0x80000000)
  TEST_RR_OP(57, slt, 0x00000001, 0x80000000, 0x7fffffff)
  TEST_RR_OP(58, slt, 0x00000000, 0x80000000, 0x80000000)
  TEST_RR_OP(59, slt, 0x00000000, 0xffffffff, 0xfffffffe)
  TEST_RR_OP(60, slt, 0x00000001, 0xfffffffe, 0xffffffff)
  TEST_RR_OP(61, slt, 0x00000001, 0x80000000, 0x00000000)
  TEST_RR_OP(62, slt, 0x00000000, 0x00000000, 0x80000000)
  TEST_RR_OP(63, slt, 0x00000000, 0x7fffffff, 0x7fffffff)
  # sltu
  TEST_RR_OP(64, sltu, 0x00000000, 0x00000000, 0x00000000)
  TEST_RR_OP(65, sltu, 0x00000001, 0x00000000, 0x00000001)
  TEST_RR_OP(66, sltu, 0x00000000, 0x00000001, 0x00000000)
  TEST_RR_OP(67, sltu, 0x00000000, 0xffffffff, 0x00000000)
  TEST_RR_OP(68, sltu, 0x00000001, 0x00000000, 0xffffffff)
  TEST_RR_OP(69, sltu, 0x00000001, 0x7fffffff, 0x80000000)
  TEST_RR_OP(70, sltu, 0x00000000, 0x80000000, 0x7fffffff)
  TEST_RR_OP(71, sltu, 0x00000000, 0x80000000, 0x80000000)
  TEST_RR_OP(72, sltu, 0x00000000, 0xffffffff, 0xfffffffe)
  TEST_RR_OP(73, sltu, 0x00000001, 0xfffffffe, 0xffffffff)
  TEST_RR_OP(74, sltu, 0x00000000, 0x80000000, 0x00000000)
  TEST_RR_OP(75, sltu, 0x00000001, 0x00000000, 0x80000000)
  TEST_RR_OP(76, sltu, 0x00000000, 0x7fffffff, 0x7fffffff)
  # sll: only the low 5 bits of rs2 count
  TEST_RR_OP(77, sll, 0x00000001, 0x00000001, 0x00000000)
  TEST_RR_OP(78, sll, 0x00000002, 0x00000001, 0x00000001)
  TEST_RR_OP(79, sll, 0x00000080, 0x00000001, 0x00000007)
  TEST_RR_OP(80, sll, 0x00004000, 0x00000001, 0x0000000e)
  TEST_RR_OP(81, sll, 0x00100000, 0x00000001, 0x00000014)
  TEST_RR_OP(82, sll, 0x80000000, 0x00000001, 0x0000001f)
  TEST_RR_OP(83, sll, 0x00000001, 0x00000001, 0x00000020)
  TEST_RR_OP(84, sll, 0x00000002, 0x00000001, 0x00000021)
  TEST_RR_OP(85, sll, 0x80000000, 0x00000001, 0x0000003f)
  TEST_RR_OP(86, sll, 0x00000001, 0x00000001, 0xffffffe0)
  TEST_RR_OP(87, sll, 0x80000000, 0x00000001, 0xffffffff)
  TEST_RR_OP(88, sll, 0x00800000, 0x00000001, 0x12345677)
  TEST_RR_OP(89, sll, 0x80000000, 0x80000000, 0x00000000)
  TEST_RR_OP(90, sll, 0x00000000, 0x80000000, 0x00000001)
  TEST_RR_OP(91, sll, 0x00000000, 0x80000000, 0x0000001f)
  TEST_RR_OP(92, sll, 0x80000000, 0x80000000, 0x00000020)
  TEST_RR_OP(93, sll, 0x00000000, 0x80000000, 0x0000003f)
  TEST_RR_OP(94, sll, 0x80000000, 0x80000000, 0xffffffe0)
  TEST_RR_OP(95, sll, 0x00000000, 0x80000000, 0xffffffff)
  TEST_RR_OP(96, sll, 0xffffffff, 0xffffffff, 0x00000000)
  TEST_RR_OP(97, sll, 0xfffffffe, 0xffffffff, 0x00000001)
  TEST_RR_OP(98, sll, 0x80000000, 0xffffffff, 0x0000001f)
  TEST_RR_OP(99, sll, 0xffffffff, 0xffffffff, 0x00000020)
  TEST_RR_OP(100, sll, 0x80000000, 0xffffffff, 0x0000003f)
  TEST_RR_OP(101, sll, 0xffffffff, 0xffffffff, 0xffffffe0)
  TEST_RR_OP(102, sll, 0x80000000, 0xffffffff, 0xffffffff)
  TEST_RR_OP(103, sll, 0x21212121, 0x21212121, 0x00000000)
  TEST_RR_OP(104, sll, 0x42424242, 0x21212121, 0x00000001)
  TEST_RR_OP(105, sll, 0x80000000, 0x21212121, 0x0000001f)
  TEST_RR_OP(106, sll, 0x21212121, 0x21212121, 0x00000020)
  TEST_RR_OP(107, sll, 0x80000000, 0x21212121, 0x0000003f)
  TEST_RR_OP(108, sll, 0x21212121, 0x21212121, 0xffffffe0)
  TEST_RR_OP(109, sll, 0x80000000, 0x21212121, 0xffffffff)
  TEST_RR_OP(110, sll, 0x81818181, 0x81818181, 0x00000000)
  TEST_RR_OP(111, sll, 0x03030302, 0x81818181, 0x00000001)
  TEST_RR_OP(112, sll, 0xc0c0c080, 0x81818181, 0x00000007)
  TEST_RR_OP(113, sll, 0x60604000, 0x81818181, 0x0000000e)
  TEST_RR_OP(114, sll, 0x18100000, 0x81818181, 0x00000014)
  TEST_RR_OP(115, sll, 0x80000000, 0x81818181, 0x0000001f)
  TEST_RR_OP(116, sll, 0x81818181, 0x81818181, 0x00000020)
  TEST_RR_OP(117, sll, 0x03030302, 0x81818181, 0x00000021)
  TEST_RR_OP(118, sll, 0x80000000, 0x81818181, 0x0000003f)
  TEST_RR_OP(119, sll, 0x81818181, 0x81818181, 0xffffffe0)
  TEST_RR_OP(120, sll, 0x80000000, 0x81818181, 0xffffffff)
  TEST_RR_OP(121, sll, 0xc0800000, 0x81818181, 0x12345677)
  TEST_RR_OP(122, sll, 0x7fffffff, 0x7fffffff, 0x00000000)
  TEST_RR_OP(123, sll, 0xfffffffe, 0x7fffffff, 0x00000001)
  TEST_RR_OP(124, sll, 0x80000000, 0x7fffffff, 0x0000001f)
  TEST_RR_OP(125, sll, 0x7fffffff, 0x7fffffff, 0x00000020)
  TEST_RR_OP(126, sll, 0x80000000, 0x7fffffff, 0x0000003f)
  TEST_RR_OP(127, sll, 0x7fffffff, 0x7fffffff, 0xffffffe0)
  TEST_RR_OP(128, sll, 0x80000000, 0x7fffffff, 0xffffffff)
  # srl: only the low 5 bits of rs2 count
  TEST_RR_OP(129, srl, 0x00000001, 0x00000001, 0x00000000)
  TEST_RR_OP(130, srl, 0x00000000, 0x00000001, 0x00000001)
  TEST_RR_OP(131, srl, 0x00000000, 0x00000001, 0x00000007)
  TEST_RR_OP(132, srl, 0x00000000, 0x00000001, 0x0000000e)
  TEST_RR_OP(133, srl, 0x00000000, 0x00000001, 0x00000014)
  TEST_RR_OP(134, srl, 0x00000000, 0x00000001, 0x0000001f)
  TEST_RR_OP(135, srl, 0x00000001, 0x00000001, 0x00000020)
  TEST_RR_OP(136, srl, 0x00000000, 0x00000001, 0x00000021)
  TEST_RR_OP(137, srl, 0x00000000, 0x00000001, 0x0000003f)
  TEST_RR_OP(138, srl, 0x00000001, 0x00000001, 0xffffffe0)
  TEST_RR_OP(139, srl, 0x00000000, 0x00000001, 0xffffffff)
  TEST_RR_OP(140, srl, 0x00000000, 0x00000001, 0x12345677)
  TEST_RR_OP(141, srl, 0x80000000, 0x80000000, 0x00000000)
  TEST_RR_OP(142, srl, 0x40000000, 0x80000000, 0x00000001)
  TEST_RR_OP(143, srl, 0x00000001, 0x80000000, 0x0000001f)
  TEST_RR_OP(144, srl, 0x80000000, 0x80000000, 0x00000020)
  TEST_RR_OP(145, srl, 0x00000001, 0x80000000, 0x0000003f)
  TEST_RR_OP(146, srl, 0x80000000, 0x80000000, 0xffffffe0)
  TEST_RR_OP(147, srl, 0x00000001, 0x80000000, 0xffffffff)
  TEST_RR_OP(148, srl, 0xffffffff, 0xffffffff, 0x00000000)
  TEST_RR_OP(149, srl, 0x7fffffff, 0xffffffff, 0x00000001)
  TEST_RR_OP(150, srl, 0x00000001, 0xffffffff, 0x0000001f)
  TEST_RR_OP(151, srl, 0xffffffff, 0xffffffff, 0x00000020)
  TEST_RR_OP(152, srl, 0x00000001, 0xffffffff, 0x0000003f)
  TEST_RR_OP(153, srl, 0xffffffff, 0xffffffff, 0xffffffe0)
  TEST_RR_OP(154, srl, 0x00000001, 0xffffffff, 0xffffffff)
  TEST_RR_OP(155, srl, 0x21212121, 0x21212121, 0x00000000)
  TEST_RR_OP(156, srl, 0x10909090, 0x21212121, 0x00000001)
  TEST_RR_OP(157, srl, 0x00000000, 0x21212121, 0x0000001f)
  TEST_RR_OP(158, srl, 0x21212121, 0x21212121, 0x00000020)
  TEST_RR_OP(159, srl, 0x00000000, 0x21212121, 0x0000003f)
  TEST_RR_OP(160, srl, 0x21212121, 0x21212121, 0xffffffe0)
  TEST_RR_OP(161, srl, 0x00000000, 0x21212121, 0xffffffff)
  TEST_RR_OP(162, srl, 0x81818181, 0x81818181, 0x00000000)
  TEST_RR_OP(163, srl, 0x40c0c0c0, 0x81818181, 0x00000001)
  TEST_RR_OP(164, srl, 0x01030303, 0x81818181, 0x00000007)
  TEST_RR_OP(165, srl, 0x00020606, 0x81818181, 0x0000000e)
  TEST_RR_OP(166, srl, 0x00000818, 0x81818181, 0x00000014)
  TEST_RR_OP(167, srl, 0x00000001, 0x81818181, 0x0000001f)
  TEST_RR_OP(168, srl, 0x81818181, 0x81818181, 0x00000020)
  TEST_RR_OP(169, srl, 0x40c0c0c0, 0x81818181, 0x00000021)
  TEST_RR_OP(170, srl, 0x00000001, 0x81818181, 0x0000003f)
  TEST_RR_OP(171, srl, 0x81818181, 0x81818181, 0xffffffe0)
  TEST_RR_OP(172, srl, 0x00000001, 0x81818181, 0xffffffff)
  TEST_RR_OP(173, srl, 0x00000103, 0x81818181, 0x12345677)
  TEST_RR_OP(174, srl, 0x7fffffff, 0x7fffffff, 0x00000000)
  TEST_RR_OP(175, srl, 0x3fffffff, 0x7fffffff, 0x00000001)
  TEST_RR_OP(176, srl, 0x00000000, 0x7fffffff, 0x0000001f)
  TEST_RR_OP(177, srl, 0x7fffffff, 0x7fffffff, 0x00000020)
  TEST_RR_OP(178, srl, 0x00000000, 0x7fffffff, 0x0000003f)
  TEST_RR_OP(179, srl, 0x7fffffff, 0x7fffffff, 0xffffffe0)
  TEST_RR_OP(180, srl, 0x00000000, 0x7fffffff, 0xffffffff)
  # sra: only the low 5 bits of rs2 count
  TEST_RR_OP(181, sra, 0x00000001, 0x00000001, 0x00000000)
  TEST_RR_OP(182, sra, 0x00000000, 0x00000001, 0x00000001)
  TEST_RR_OP(183, sra, 0x00000000, 0x00000001, 0x00000007)
  TEST_RR_OP(184, sra, 0x00000000, 0x00000001, 0x0000000e)
  TEST_RR_OP(185, sra, 0x00000000, 0x00000001, 0x00000014)
  TEST_RR_OP(186, sra, 0x00000000, 0x00000001, 0x0000001f)
  TEST_RR_OP(187, sra, 0x00000001, 0x00000001, 0x00000020)
  TEST_RR_OP(188, sra, 0x00000000, 0x00000001, 0x00000021)
  TEST_RR_OP(189, sra, 0x00000000, 0x00000001, 0x0000003f)
  TEST_RR_OP(190, sra, 0x00000001, 0x00000001, 0xffffffe0)
  TEST_RR_OP(191, sra, 0x00000000, 0x00000001, 0xffffffff)
  TEST_RR_OP(192, sra, 0x00000000, 0x00000001, 0x12345677)
  TEST_RR_OP(193, sra, 0x80000000, 0x80000000, 0x00000000)
  TEST_RR_OP(194, sra, 0xc0000000, 0x80000000, 0x00000001)
  TEST_RR_OP(195, sra, 0xffffffff, 0x80000000, 0x0000001f)
  TEST_RR_OP(196, sra, 0x80000000, 0x80000000, 0x00000020)
  TEST_RR_OP(197, sra, 0xffffffff, 0x80000000, 0x0000003f)
  TEST_RR_OP(198, sra, 0x80000000, 0x80000000, 0xffffffe0)
  TEST_RR_OP(199, sra, 0xffffffff, 0x80000000, 0xffffffff)
  TEST_RR_OP(200, sra, 0xffffffff, 0xffffffff, 0x00000000)
  TEST_RR_OP(201, sra, 0xffffffff, 0xffffffff, 0x00000001)
  TEST_RR_OP(202, sra, 0xffffffff, 0xffffffff, 0x0000001f)
  TEST_RR_OP(203, sra, 0xffffffff, 0xffffffff, 0x00000020)
  TEST_RR_OP(204, sra, 0xffffffff, 0xffffffff, 0x0000003f)
  TEST_RR_OP(205, sra, 0xffffffff, 0xffffffff, 0xffffffe0)
  TEST_RR_OP(206, sra, 0xffffffff, 0xffffffff, 0xffffffff)
  TEST_RR_OP(207, sra, 0x21212121, 0x21212121, 0x00000000)
  TEST_RR_OP(208, sra, 0x10909090, 0x21212121, 0x00000001)
  TEST_RR_OP(209, sra, 0x00000000, 0x21212121, 0x0000001f)
  TEST_RR_OP(210, sra, 0x21212121, 0x21212121, 0x00000020)
  TEST_RR_OP(211, sra, 0x00000000, 0x21212121, 0x0000003f)
  TEST_RR_OP(212, sra, 0x21212121, 0x21212121, 0xffffffe0)
  TEST_RR_OP(213, sra, 0x00000000, 0x21212121, 0xffffffff)
  TEST_RR_OP(214, sra, 0x81818181, 0x81818181, 0x00000000)
  TEST_RR_OP(215, sra, 0xc0c0c0c0, 0x81818181, 0x00000001)
  TEST_RR_OP(216, sra, 0xff030303, 0x81818181, 0x00000007)
  TEST_RR_OP(217, sra, 0xfffe0606, 0x81818181, 0x0000000e)
  TEST_RR_OP(218, sra, 0xfffff818, 0x81818181, 0x00000014)
  TEST_RR_OP(219, sra, 0xffffffff, 0x81818181, 0x0000001f)
  TEST_RR_OP(220, sra, 0x81818181, 0x81818181, 0x00000020)
  TEST_RR_OP(221, sra, 0xc0c0c0c0, 0x81818181, 0x00000021)
  TEST_RR_OP(222, sra, 0xffffffff, 0x81818181, 0x0000003f)
  TEST_RR_OP(223, sra, 0x81818181, 0x81818181, 0xffffffe0)
  TEST_RR_OP(224, sra, 0xffffffff, 0x81818181, 0xffffffff)
  TEST_RR_OP(225, sra, 0xffffff03, 0x81818181, 0x12345677)
  TEST_RR_OP(226, sra, 0x7fffffff, 0x7fffffff, 0x00000000)
  TEST_RR_OP(227, sra, 0x3fffffff, 0x7fffffff, 0x00000001)
  TEST_RR_OP(228, sra, 0x00000000, 0x7fffffff, 0x0000001f)
  TEST_RR_OP(229, sra, 0x7fffffff, 0x7fffffff, 0x00000020)
  TEST_RR_OP(230, sra, 0x00000000, 0x7fffffff, 0x0000003f)
  TEST_RR_OP(231, sra, 0x7fffffff, 0x7fffffff, 0xffffffe0)
  TEST_RR_OP(232, sra, 0x00000000, 0x7fffffff, 0xffffffff)
  # add: operand aliasing and x0
  TEST_RR_SRC1_EQ_DEST(233, add, 0x8765432e, 0x87654321, 0x0000000d)
  TEST_RR_SRC2_EQ_DEST(234, add, 0x8765432e, 0x87654321, 0x0000000d)
  TEST_RR_SRC12_EQ_DEST(235, add, 0x0eca8642, 0x87654321)
  TEST_RR_SRC12_EQ(236, add, 0x0000001a, 0x0000000d)
  TEST_RR_ZEROSRC1(237, add, 0x0000000d, 0x0000000d)
  TEST_RR_ZEROSRC2(238, add, 0x87654321, 0x87654321)
  TEST_RR_ZEROSRC12(239, add, 0x00000000)
  TEST_RR_ZERODEST(240, add, 0x87654321, 0x0000000d)
  # sub: operand aliasing and x0
  TEST_RR_SRC1_EQ_DEST(241, sub, 0x87654314, 0x87654321, 0x0000000d)
  TEST_RR_SRC2_EQ_DEST(242, sub, 0x87654314, 0x87654321, 0x0000000d)
  TEST_RR_SRC12_EQ_DEST(243, sub, 0x00000000, 0x87654321)
  TEST_RR_SRC12_EQ(244, sub, 0x00000000, 0x0000000d)
  TEST_RR_ZEROSRC1(245, sub, 0xfffffff3, 0x0000000d)
  TEST_RR_ZEROSRC2(246, sub, 0x87654321, 0x87654321)
  TEST_RR_ZEROSRC12(247, sub, 0x00000000)
  TEST_RR_ZERODEST(248, sub, 0x87654321, 0x0000000d)
  # and: operand aliasing and x0
  TEST_RR_SRC1_EQ_DEST(249, and, 0x00000001, 0x87654321, 0x0000000d)
  TEST_RR_SRC2_EQ_DEST(250, and, 0x00000001, 0x87654321, 0x0000000d)
  TEST_RR_SRC12_EQ_DEST(251, and, 0x87654321, 0x87654321)
  TEST_RR_SRC12_EQ(252, and, 0x0000000d, 0x0000000d)
  TEST_RR_ZEROSRC1(253, and, 0x00000000, 0x0000000d)
  TEST_RR_ZEROSRC2(254, and, 0x00000000, 0x87654321)
  TEST_RR_ZEROSRC12(255, and, 0x00000000)
  TEST_RR_ZERODEST(256, and, 0x87654321, 0x0000000d)
  # or: operand aliasing and x0
  TEST_RR_SRC1_EQ_DEST(257, or, 0x8765432d, 0x87654321, 0x0000000d)
  TEST_RR_SRC2_EQ_DEST(258, or, 0x8765432d, 0x87654321, 0x0000000d)
  TEST_RR_SRC12_EQ_DEST(259, or, 0x87654321, 0x87654321)
  TEST_RR_SRC12_EQ(260, or, 0x0000000d, 0x0000000d)
  TEST_RR_ZEROSRC1(261, or, 0x0000000d, 0x0000000d)
  TEST_RR_ZEROSRC2(262, or, 0x87654321, 0x87654321)
  TEST_RR_ZEROSRC12(263, or, 0x00000000)
  TEST_RR_ZERODEST(264, or, 0x87654321, 0x0000000d)
  # xor: operand aliasing and x0
  TEST_RR_SRC1_EQ_DEST(265, xor, 0x8765432c, 0x87654321, 0x0000000d)
  TEST_RR_SRC2_EQ_DEST(266, xor, 0x8765432c, 0x87654321, 0x0000000d)
  TEST_RR_SRC12_EQ_DEST(267, xor, 0x00000000, 0x87654321)
  TEST_RR_SRC12_EQ(268, xor, 0x00000000, 0x0000000d)
  TEST_RR_ZEROSRC1(269, xor, 0x0000000d, 0x0000000d)
  TEST_RR_ZEROSRC2(270, xor, 0x87654321, 0x87654321)
  TEST_RR_ZEROSRC12(271, xor, 0x00000000)
  TEST_RR_ZERODEST(272, xor, 0x87654321, 0x0000000d)
  # slt: operand aliasing and x0
  TEST_RR_SRC1_EQ_DEST(273, slt, 0x00000001, 0x87654321, 0x0000000d)
  TEST_RR_SRC2_EQ_DEST(274, slt, 0x00000001, 0x87654321, 0x0000000d)
  TEST_RR_SRC12_EQ_DEST(275, slt, 0x00000000, 0x87654321)
  TEST_RR_SRC12_EQ(276, slt, 0x00000000, 0x0000000d)
  TEST_RR_ZEROSRC1(277, slt, 0x00000001, 0x0000000d)
  TEST_RR_ZEROSRC2(278, slt, 0x00000001, 0x87654321)
  TEST_RR_ZEROSRC12(279, slt, 0x00000000)
  TEST_RR_ZERODEST(280, slt, 0x87654321, 0x0000000d)
  # sltu: operand aliasing and x0
  TEST_RR_SRC1_EQ_DEST(281, sltu, 0x00000000, 0x87654321, 0x0000000d)
  TEST_RR_SRC2_EQ_DEST(282, sltu, 0x00000000, 0x87654321, 0x0000000d)
  TEST_RR_SRC12_EQ_DEST(283, sltu, 0x00000000, 0x87654321)
  TEST_RR_SRC12_EQ(284, sltu, 0x00000000, 0x0000000d)
  TEST_RR_ZEROSRC1(285, sltu, 0x00000001, 0x0000000d)
  TEST_RR_ZEROSRC2(286, sltu, 0x00000000, 0x87654321)
  TEST_RR_ZEROSRC12(287, sltu, 0x00000000)
  TEST_RR_ZERODEST(288, sltu, 0x87654321, 0x0000000d)
  # sll: operand aliasing and x0
  TEST_RR_SRC1_EQ_DEST(289, sll, 0xa8642000, 0x87654321, 0x0000000d)
  TEST_RR_SRC2_EQ_DEST(290, sll, 0xa8642000, 0x87654321, 0x0000000d)
  TEST_RR_SRC12_EQ_DEST(291, sll, 0x0eca8642, 0x87654321)
  TEST_RR_SRC12_EQ(292, sll, 0x0001a000, 0x0000000d)
  TEST_RR_ZEROSRC1(293, sll, 0x00000000, 0x0000000d)
  TEST_RR_ZEROSRC2(294, sll, 0x87654321, 0x87654321)
  TEST_RR_ZEROSRC12(295, sll, 0x00000000)
  TEST_RR_ZERODEST(296, sll, 0x87654321, 0x0000000d)
  # srl: operand aliasing and x0
  TEST_RR_SRC1_EQ_DEST(297, srl, 0x00043b2a, 0x87654321, 0x0000000d)
  TEST_RR_SRC2_EQ_DEST(298, srl, 0x00043b2a, 0x87654321, 0x0000000d)
  TEST_RR_SRC12_EQ_DEST(299, srl, 0x43b2a190, 0x87654321)
  TEST_RR_SRC12_EQ(300, srl, 0x00000000, 0x0000000d)
  TEST_RR_ZEROSRC1(301, srl, 0x00000000, 0x0000000d)
  TEST_RR_ZEROSRC2(302, srl, 0x87654321, 0x87654321)
  TEST_RR_ZEROSRC12(303, srl, 0x00000000)
  TEST_RR_ZERODEST(304, srl, 0x87654321, 0x0000000d)
  # sra: operand aliasing and x0
  TEST_RR_SRC1_EQ_DEST(305, sra, 0xfffc3b2a, 0x87654321, 0x0000000d)
  TEST_RR_SRC2_EQ_DEST(306, sra, 0xfffc3b2a, 0x87654321, 0x0000000d)
  TEST_RR_SRC12_EQ_DEST(307, sra, 0xc3b2a190, 0x87654321)
  TEST_RR_SRC12_EQ(308, sra, 0x00000000, 0x0000000d)
  TEST_RR_ZEROSRC1(309, sra, 0x00000000, 0x0000000d)
  TEST_RR_ZEROSRC2(310, sra, 0x87654321, 0x87654321)
  TEST_RR_ZEROSRC12(311, sra, 0x00000000)
  TEST_RR_ZERODEST(312, sra, 0x87654321, 0x0000000d)
  # addi (12-bit sign-extended immediate)
  TEST_IMM_OP(313, addi, 0x00000000, 0x00000000, 0)
  TEST_IMM_OP(314, addi, 0x00000002, 0x00000001, 1)
  TEST_IMM_OP(315, addi, 0x0000000a, 0x00000003, 7)
  TEST_IMM_OP(316, addi, 0xfffff800, 0x00000000, -2048)
  TEST_IMM_OP(317, addi, 0x000007ff, 0x00000000, 2047)
  TEST_IMM_OP(318, addi, 0x80000000, 0x7fffffff, 1)
  TEST_IMM_OP(319, addi, 0x7fffffff, 0x80000000, -1)
  TEST_IMM_OP(320, addi, 0x7fffffff, 0x7ffff800, 2047)
  TEST_IMM_OP(321, addi, 0x7ffff800, 0x80000000, -2048)
  TEST_IMM_OP(322, addi, 0x00000000, 0xffffffff, 1)
  TEST_IMM_OP(323, addi, 0x12345677, 0x12345678, -1)
  TEST_IMM_SRC1_EQ_DEST(324, addi, 0x0ff00eff, 0x0ff00ff0, -241)
  TEST_IMM_ZEROSRC1(325, addi, 0xffffff0f, -241)
  TEST_IMM_ZERODEST(326, addi, 0x0ff00ff0, -241)
  # slti (12-bit sign-extended immediate)
  TEST_IMM_OP(327, slti, 0x00000000, 0x00000000, 0)
  TEST_IMM_OP(328, slti, 0x00000001, 0x00000000, 1)
  TEST_IMM_OP(329, slti, 0x00000000, 0x00000001, 0)
  TEST_IMM_OP(330, slti, 0x00000001, 0xffffffff, 0)
  TEST_IMM_OP(331, slti, 0x00000000, 0x00000000, -1)
  TEST_IMM_OP(332, slti, 0x00000000, 0x7fffffff, 2047)
  TEST_IMM_OP(333, slti, 0x00000001, 0x80000000, -2048)
  TEST_IMM_OP(334, slti, 0x00000000, 0xfffff800, -2048)
  TEST_IMM_OP(335, slti, 0x00000001, 0xfffff7ff, -2048)
  TEST_IMM_OP(336, slti, 0x00000000, 0x000007ff, 2047)
  TEST_IMM_OP(337, slti, 0x00000001, 0x000007fe, 2047)
  TEST_IMM_SRC1_EQ_DEST(338, slti, 0x00000000, 0x0ff00ff0, -241)
  TEST_IMM_ZEROSRC1(339, slti, 0x00000000, -241)
  TEST_IMM_ZERODEST(340, slti, 0x0ff00ff0, -241)
  # sltiu (12-bit sign-extended immediate)
  TEST_IMM_OP(341, sltiu, 0x00000000, 0x00000000, 0)
  TEST_IMM_OP(342, sltiu, 0x00000001, 0x00000000, 1)
  TEST_IMM_OP(343, sltiu, 0x00000000, 0x00000001, 1)
  TEST_IMM_OP(344, sltiu, 0x00000001, 0x00000000, -1)
  TEST_IMM_OP(345, sltiu, 0x00000001, 0xfffffffe, -1)
  TEST_IMM_OP(346, sltiu, 0x00000000, 0xffffffff, -1)
  TEST_IMM_OP(347, sltiu, 0x00000000, 0x000007ff, 2047)
  TEST_IMM_OP(348, sltiu, 0x00000000, 0x00000800, 2047)
  TEST_IMM_OP(349, sltiu, 0x00000000, 0xfffff800, -2048)
  TEST_IMM_OP(350, sltiu, 0x00000001, 0xfffff7ff, -2048)
  TEST_IMM_OP(351, sltiu, 0x00000001, 0x80000000, -1)
  TEST_IMM_SRC1_EQ_DEST(352, sltiu, 0x00000001, 0x0ff00ff0, -241)
  TEST_IMM_ZEROSRC1(353, sltiu, 0x00000001, -241)
  TEST_IMM_ZERODEST(354, sltiu, 0x0ff00ff0, -241)
  # andi (12-bit sign-extended immediate)
  TEST_IMM_OP(355, andi, 0xff00ff00, 0xff00ff00, -241)
  TEST_IMM_OP(356, andi, 0x000000f0, 0x0ff00ff0, 240)
  TEST_IMM_OP(357, andi, 0x0000000f, 0x00ff00ff, 1807)
  TEST_IMM_OP(358, andi, 0xf00ff000, 0xf00ff00f, -2048)
  TEST_IMM_OP(359, andi, 0x00000000, 0xffffffff, 0)
  TEST_IMM_SRC1_EQ_DEST(360, andi, 0x0ff00f00, 0x0ff00ff0, -241)
  TEST_IMM_ZEROSRC1(361, andi, 0x00000000, -241)
  TEST_IMM_ZERODEST(362, andi, 0x0ff00ff0, -241)
  # ori (12-bit sign-extended immediate)
  TEST_IMM_OP(363, ori, 0xffffff0f, 0xff00ff00, -241)
  TEST_IMM_OP(364, ori, 0x0ff00ff0, 0x0ff00ff0, 240)
  TEST_IMM_OP(365, ori, 0x00ff07ff, 0x00ff00ff, 1807)
  TEST_IMM_OP(366, ori, 0xfffff80f, 0xf00ff00f, -2048)
  TEST_IMM_OP(367, ori, 0xffffffff, 0x00000000, -1)
  TEST_IMM_SRC1_EQ_DEST(368, ori, 0xffffffff, 0x0ff00ff0, -241)
  TEST_IMM_ZEROSRC1(369, ori, 0xffffff0f, -241)
  TEST_IMM_ZERODEST(370, ori, 0x0ff00ff0, -241)
  # xori (12-bit sign-extended immediate)
  TEST_IMM_OP(371, xori, 0xff00f00f, 0x00ff0f00, -241)
  TEST_IMM_OP(372, xori, 0x00ff0ff0, 0x00ff08ff, 1807)
  TEST_IMM_OP(373, xori, 0x0ff00f00, 0x0ff00ff0, 240)
  TEST_IMM_OP(374, xori, 0x0ff00ff0, 0xf00ff00f, -1)
  TEST_IMM_OP(375, xori, 0x7ffff800, 0x80000000, -2048)
  TEST_IMM_SRC1_EQ_DEST(376, xori, 0xf00ff0ff, 0x0ff00ff0, -241)
  TEST_IMM_ZEROSRC1(377, xori, 0xffffff0f, -241)
  TEST_IMM_ZERODEST(378, xori, 0x0ff00ff0, -241)
  # slli
  TEST_IMM_OP(379, slli, 0x00000001, 0x00000001, 0)
  TEST_IMM_OP(380, slli, 0x00000002, 0x00000001, 1)
  TEST_IMM_OP(381, slli, 0x00000080, 0x00000001, 7)
  TEST_IMM_OP(382, slli, 0x00004000, 0x00000001, 14)
  TEST_IMM_OP(383, slli, 0x00100000, 0x00000001, 20)
  TEST_IMM_OP(384, slli, 0x80000000, 0x00000001, 31)
  TEST_IMM_OP(385, slli, 0x80000000, 0x80000000, 0)
  TEST_IMM_OP(386, slli, 0x00000000, 0x80000000, 1)
  TEST_IMM_OP(387, slli, 0x00000000, 0x80000000, 31)
  TEST_IMM_OP(388, slli, 0xffffffff, 0xffffffff, 0)
  TEST_IMM_OP(389, slli, 0xfffffffe, 0xffffffff, 1)
  TEST_IMM_OP(390, slli, 0x80000000, 0xffffffff, 31)
  TEST_IMM_OP(391, slli, 0x21212121, 0x21212121, 0)
  TEST_IMM_OP(392, slli, 0x42424242, 0x21212121, 1)
  TEST_IMM_OP(393, slli, 0x80000000, 0x21212121, 31)
  TEST_IMM_OP(394, slli, 0x81818181, 0x81818181, 0)
  TEST_IMM_OP(395, slli, 0x03030302, 0x81818181, 1)
  TEST_IMM_OP(396, slli, 0xc0c0c080, 0x81818181, 7)
  TEST_IMM_OP(397, slli, 0x60604000, 0x81818181, 14)
  TEST_IMM_OP(398, slli, 0x18100000, 0x81818181, 20)
  TEST_IMM_OP(399, slli, 0x80000000, 0x81818181, 31)
  TEST_IMM_OP(400, slli, 0x7fffffff, 0x7fffffff, 0)
  TEST_IMM_OP(401, slli, 0xfffffffe, 0x7fffffff, 1)
  TEST_IMM_OP(402, slli, 0x80000000, 0x7fffffff, 31)
  TEST_IMM_SRC1_EQ_DEST(403, slli, 0x00000080, 0x80000001, 7)
  TEST_IMM_ZEROSRC1(404, slli, 0x00000000, 31)
  TEST_IMM_ZERODEST(405, slli, 0x80000001, 31)
  # srli
  TEST_IMM_OP(406, srli, 0x00000001, 0x00000001, 0)
  TEST_IMM_OP(407, srli, 0x00000000, 0x00000001, 1)
  TEST_IMM_OP(408, srli, 0x00000000, 0x00000001, 7)
  TEST_IMM_OP(409, srli, 0x00000000, 0x00000001, 14)
  TEST_IMM_OP(410, srli, 0x00000000, 0x00000001, 20)
  TEST_IMM_OP(411, srli, 0x00000000, 0x00000001, 31)
  TEST_IMM_OP(412, srli, 0x80000000, 0x80000000, 0)
  TEST_IMM_OP(413, srli, 0x40000000, 0x80000000, 1)
  TEST_IMM_OP(414, srli, 0x00000001, 0x80000000, 31)
  TEST_IMM_OP(415, srli, 0xffffffff, 0xffffffff, 0)
  TEST_IMM_OP(416, srli, 0x7fffffff, 0xffffffff, 1)
  TEST_IMM_OP(417, srli, 0x00000001, 0xffffffff, 31)
  TEST_IMM_OP(418, srli, 0x21212121, 0x21212121, 0)
  TEST_IMM_OP(419, srli, 0x10909090, 0x21212121, 1)
  TEST_IMM_OP(420, srli, 0x00000000, 0x21212121, 31)
  TEST_IMM_OP(421, srli, 0x81818181, 0x81818181, 0)
  TEST_IMM_OP(422, srli, 0x40c0c0c0, 0x81818181, 1)
  TEST_IMM_OP(423, srli, 0x01030303, 0x81818181, 7)
  TEST_IMM_OP(424, srli, 0x00020606, 0x81818181, 14)
  TEST_IMM_OP(425, srli, 0x00000818, 0x81818181, 20)
  TEST_IMM_OP(426, srli, 0x00000001, 0x81818181, 31)
  TEST_IMM_OP(427, srli, 0x7fffffff, 0x7fffffff, 0)
  TEST_IMM_OP(428, srli, 0x3fffffff, 0x7fffffff, 1)
  TEST_IMM_OP(429, srli, 0x00000000, 0x7fffffff, 31)
  TEST_IMM_SRC1_EQ_DEST(430, srli, 0x01000000, 0x80000001, 7)
  TEST_IMM_ZEROSRC1(431, srli, 0x00000000, 31)
  TEST_IMM_ZERODEST(432, srli, 0x80000001, 31)
  # srai
  TEST_IMM_OP(433, srai, 0x00000001, 0x00000001, 0)
  TEST_IMM_OP(434, srai, 0x00000000, 0x00000001, 1)
  TEST_IMM_OP(435, srai, 0x00000000, 0x00000001, 7)
  TEST_IMM_OP(436, srai, 0x00000000, 0x00000001, 14)
  TEST_IMM_OP(437, srai, 0x00000000, 0x00000001, 20)
  TEST_IMM_OP(438, srai, 0x00000000, 0x00000001, 31)
  TEST_IMM_OP(439, srai, 0x80000000, 0x80000000, 0)
  TEST_IMM_OP(440, srai, 0xc0000000, 0x80000000, 1)
  TEST_IMM_OP(441, srai, 0xffffffff, 0x80000000, 31)
  TEST_IMM_OP(442, srai, 0xffffffff, 0xffffffff, 0)
  TEST_IMM_OP(443, srai, 0xffffffff, 0xffffffff, 1)
  TEST_IMM_OP(444, srai, 0xffffffff, 0xffffffff, 31)
  TEST_IMM_OP(445, srai, 0x21212121, 0x21212121, 0)
  TEST_IMM_OP(446, srai, 0x10909090, 0x21212121, 1)
  TEST_IMM_OP(447, srai, 0x00000000, 0x21212121, 31)
  TEST_IMM_OP(448, srai, 0x81818181, 0x81818181, 0)
  TEST_IMM_OP(449, srai, 0xc0c0c0c0, 0x81818181, 1)
  TEST_IMM_OP(450, srai, 0xff030303, 0x81818181, 7)
  TEST_IMM_OP(451, srai, 0xfffe0606, 0x81818181, 14)
  TEST_IMM_OP(452, srai, 0xfffff818, 0x81818181, 20)
  TEST_IMM_OP(453, srai, 0xffffffff, 0x81818181, 31)
  TEST_IMM_OP(454, srai, 0x7fffffff, 0x7fffffff, 0)
  TEST_IMM_OP(455, srai, 0x3fffffff, 0x7fffffff, 1)
  TEST_IMM_OP(456, srai, 0x00000000, 0x7fffffff, 31)
  TEST_IMM_SRC1_EQ_DEST(457, srai, 0xff000000, 0x80000001, 7)
  TEST_IMM_ZEROSRC1(458, srai, 0x00000000, 31)
  TEST_IMM_ZERODEST(459, srai, 0x80000001, 31)
  # beq
  TEST_BR2_OP_TAKEN(460, beq, 0x00000000, 0x00000000)
  TEST_BR2_OP_TAKEN(461, beq, 0x00000001, 0x00000001)
  TEST_BR2_OP_TAKEN(462, beq, 0xffffffff, 0xffffffff)
  TEST_BR2_OP_NOTTAKEN(463, beq, 0x00000000, 0x00000001)
  TEST_BR2_OP_NOTTAKEN(464, beq, 0x00000001, 0x00000000)
  TEST_BR2_OP_NOTTAKEN(465, beq, 0xffffffff, 0x00000000)
  TEST_BR2_OP_NOTTAKEN(466, beq, 0x00000000, 0xffffffff)
  TEST_BR2_OP_NOTTAKEN(467, beq, 0xffffffff, 0x00000001)
  TEST_BR2_OP_NOTTAKEN(468, beq, 0x00000001, 0xffffffff)
  TEST_BR2_OP_NOTTAKEN(469, beq, 0x7fffffff, 0x80000000)
  TEST_BR2_OP_NOTTAKEN(470, beq, 0x80000000, 0x7fffffff)
  TEST_BR2_OP_TAKEN(471, beq, 0x80000000, 0x80000000)
  TEST_BR2_OP_NOTTAKEN(472, beq, 0x80000000, 0x80000001)
  TEST_BR2_OP_NOTTAKEN(473, beq, 0xfffffffe, 0xffffffff)
  TEST_BR2_OP_NOTTAKEN(474, beq, 0x80000000, 0x00000000)
  # bne
  TEST_BR2_OP_NOTTAKEN(475, bne, 0x00000000, 0x00000000)
  TEST_BR2_OP_NOTTAKEN(476, bne, 0x00000001, 0x00000001)
  TEST_BR2_OP_NOTTAKEN(477, bne, 0xffffffff, 0xffffffff)
  TEST_BR2_OP_TAKEN(478, bne, 0x00000000, 0x00000001)
  TEST_BR2_OP_TAKEN(479, bne, 0x00000001, 0x00000000)
  TEST_BR2_OP_TAKEN(480, bne, 0xffffffff, 0x00000000)
  TEST_BR2_OP_TAKEN(481, bne, 0x00000000, 0xffffffff)
  TEST_BR2_OP_TAKEN(482, bne, 0xffffffff, 0x00000001)
  TEST_BR2_OP_TAKEN(483, bne, 0x00000001, 0xffffffff)
  TEST_BR2_OP_TAKEN(484, bne, 0x7fffffff, 0x80000000)
  TEST_BR2_OP_TAKEN(485, bne, 0x80000000, 0x7fffffff)
  TEST_BR2_OP_NOTTAKEN(486, bne, 0x80000000, 0x80000000)
  TEST_BR2_OP_TAKEN(487, bne, 0x80000000, 0x80000001)
  TEST_BR2_OP_TAKEN(488, bne, 0xfffffffe, 0xffffffff)
  TEST_BR2_OP_TAKEN(489, bne, 0x80000000, 0x00000000)
  # blt
  TEST_BR2_OP_NOTTAKEN(490, blt, 0x00000000, 0x00000000)
  TEST_BR2_OP_NOTTAKEN(491, blt, 0x00000001, 0x00000001)
  TEST_BR2_OP_NOTTAKEN(492, blt, 0xffffffff, 0xffffffff)
  TEST_BR2_OP_TAKEN(493, blt, 0x00000000, 0x00000001)
  TEST_BR2_OP_NOTTAKEN(494, blt, 0x00000001, 0x00000000)
  TEST_BR2_OP_TAKEN(495, blt, 0xffffffff, 0x00000000)
  TEST_BR2_OP_NOTTAKEN(496, blt, 0x00000000, 0xffffffff)
  TEST_BR2_OP_TAKEN(497, blt, 0xffffffff, 0x00000001)
  TEST_BR2_OP_NOTTAKEN(498, blt, 0x00000001, 0xffffffff)
  TEST_BR2_OP_NOTTAKEN(499, blt, 0x7fffffff, 0x80000000)
  TEST_BR2_OP_TAKEN(500, blt, 0x80000000, 0x7fffffff)
  TEST_BR2_OP_NOTTAKEN(501, blt, 0x80000000, 0x80000000)
  TEST_BR2_OP_TAKEN(502, blt, 0x80000000, 0x80000001)
  TEST_BR2_OP_TAKEN(503, blt, 0xfffffffe, 0xffffffff)
  TEST_BR2_OP_TAKEN(504, blt, 0x80000000, 0x00000000)
  # bge
  TEST_BR2_OP_TAKEN(505, bge, 0x00000000, 0x00000000)
  TEST_BR2_OP_TAKEN(506, bge, 0x00000001, 0x00000001)
  TEST_BR2_OP_TAKEN(507, bge, 0xffffffff, 0xffffffff)
  TEST_BR2_OP_NOTTAKEN(508, bge, 0x00000000, 0x00000001)
  TEST_BR2_OP_TAKEN(509, bge, 0x00000001, 0x00000000)
  TEST_BR2_OP_NOTTAKEN(510, bge, 0xffffffff, 0x00000000)
  TEST_BR2_OP_TAKEN(511, bge, 0x00000000, 0xffffffff)
  TEST_BR2_OP_NOTTAKEN(512, bge, 0xffffffff, 0x00000001)
  TEST_BR2_OP_TAKEN(513, bge, 0x00000001, 0xffffffff)
  TEST_BR2_OP_TAKEN(514, bge, 0x7fffffff, 0x80000000)
  TEST_BR2_OP_NOTTAKEN(515, bge, 0x80000000, 0x7fffffff)
  TEST_BR2_OP_TAKEN(516, bge, 0x80000000, 0x80000000)
  TEST_BR2_OP_NOTTAKEN(517, bge, 0x80000000, 0x80000001)
  TEST_BR2_OP_NOTTAKEN(518, bge, 0xfffffffe, 0xffffffff)
  TEST_BR2_OP_NOTTAKEN(519, bge, 0x80000000, 0x00000000)
  # bltu
  TEST_BR2_OP_NOTTAKEN(520, bltu, 0x00000000, 0x00000000)
  TEST_BR2_OP_NOTTAKEN(521, bltu, 0x00000001, 0x00000001)
  TEST_BR2_OP_NOTTAKEN(522, bltu, 0xffffffff, 0xffffffff)
  TEST_BR2_OP_TAKEN(523, bltu, 0x00000000, 0x00000001)
  TEST_BR2_OP_NOTTAKEN(524, bltu, 0x00000001, 0x00000000)
  TEST_BR2_OP_NOTTAKEN(525, bltu, 0xffffffff, 0x00000000)
  TEST_BR2_OP_TAKEN(526, bltu, 0x00000000, 0xffffffff)
  TEST_BR2_OP_NOTTAKEN(527, bltu, 0xffffffff, 0x00000001)
  TEST_BR2_OP_TAKEN(528, bltu, 0x00000001, 0xffffffff)
  TEST_BR2_OP_TAKEN(529, bltu, 0x7fffffff, 0x80000000)
  TEST_BR2_OP_NOTTAKEN(530, bltu, 0x80000000, 0x7fffffff)
  TEST_BR2_OP_NOTTAKEN(531, bltu, 0x80000000, 0x80000000)
  TEST_BR2_OP_TAKEN(532, bltu, 0x80000000, 0x80000001)
  TEST_BR2_OP_TAKEN(533, bltu, 0xfffffffe, 0xffffffff)
  TEST_BR2_OP_NOTTAKEN(534, bltu, 0x80000000, 0x00000000)
  # bgeu
  TEST_BR2_OP_TAKEN(535, bgeu, 0x00000000, 0x00000000)
  TEST_BR2_OP_TAKEN(536, bgeu, 0x00000001, 0x00000001)
  TEST_BR2_OP_TAKEN(537, bgeu, 0xffffffff, 0xffffffff)
  TEST_BR2_OP_NOTTAKEN(538, bgeu, 0x00000000, 0x00000001)
  TEST_BR2_OP_TAKEN(539, bgeu, 0x00000001, 0x00000000)
  TEST_BR2_OP_TAKEN(540, bgeu, 0xffffffff, 0x00000000)
  TEST_BR2_OP_NOTTAKEN(541, bgeu, 0x00000000, 0xffffffff)
  TEST_BR2_OP_TAKEN(542, bgeu, 0xffffffff, 0x00000001)
  TEST_BR2_OP_NOTTAKEN(543, bgeu, 0x00000001, 0xffffffff)
  TEST_BR2_OP_NOTTAKEN(544, bgeu, 0x7fffffff, 0x80000000)
  TEST_BR2_OP_TAKEN(545, bgeu, 0x80000000, 0x7fffffff)
  TEST_BR2_OP_TAKEN(546, bgeu, 0x80000000, 0x80000000)
  TEST_BR2_OP_NOTTAKEN(547, bgeu, 0x80000000, 0x80000001)
  TEST_BR2_OP_NOTTAKEN(548, bgeu, 0xfffffffe, 0xffffffff)
  TEST_BR2_OP_TAKEN(549, bgeu, 0x80000000, 0x00000000)
  # branches comparing a register with itself and with x0
  TEST_BR2_OP_TAKEN(550, bge, 0, 0)
test_551:
  li TESTNUM, 551
  li a1, 5
  beq a1, a1, 10f
  j fail
10: blt a1, a1, fail
  bltu a1, a1, fail
  bne a1, a1, fail
  bge x0, x0, 11f
  j fail
11: bgeu x0, a1, fail
  bltu x0, a1, 12f
  j fail
12: blt a1, x0, fail

  # ------------------------------------------------------------ lui/auipc
  TEST_CASE(600, a4, 0x00000000, lui a4, 0)
  TEST_CASE(601, a4, 0xfffff000, lui a4, 0xfffff)
  TEST_CASE(602, a4, 0x80000000, lui a4, 0x80000)
  TEST_CASE(603, a4, 0x7ffff000, lui a4, 0x7ffff)
  TEST_CASE(604, a4, 0x12345678, lui a4, 0x12345; addi a4, a4, 0x678)
  TEST_CASE(605, a4, 0x12344fff, lui a4, 0x12345; addi a4, a4, -1)
  TEST_CASE(606, x0, 0, lui x0, 0xfffff; addi a4, x0, 0; bnez a4, fail)
  TEST_CASE(607, a4, 0x00001000, 10: auipc a4, 1; la a5, 10b; sub a4, a4, a5)
  TEST_CASE(608, a4, 0xfffff000, 10: auipc a4, 0xfffff; la a5, 10b; sub a4, a4, a5)
  TEST_CASE(609, a4, 0x00000000, 10: auipc a4, 0; la a5, 10b; sub a4, a4, a5)
  TEST_CASE(610, a4, 0x80000000, 10: auipc a4, 0x80000; la a5, 10b; sub a4, a4, a5)
  TEST_CASE(611, x0, 0, auipc x0, 0x12345; addi a4, x0, 0; bnez a4, fail)
  # auipc + jalr reach a label (the usual far-call pair)
  TEST_CASE(612, a4, 42, li a4, 0; 10: auipc a1, %pcrel_hi(11f); jalr x0, %pcrel_lo(10b)(a1); j fail; 11: li a4, 42)

  # ---------------------------------------------------------------- loads
  TEST_LD_OP(620, lb, 0x00000000, 0, ld_data)
  TEST_LD_OP(621, lb, 0x0000007f, 1, ld_data)
  TEST_LD_OP(622, lb, 0xffffff80, 2, ld_data)
  TEST_LD_OP(623, lb, 0xffffffff, 3, ld_data)
  TEST_LD_OP(624, lbu, 0x00000000, 0, ld_data)
  TEST_LD_OP(625, lbu, 0x0000007f, 1, ld_data)
  TEST_LD_OP(626, lbu, 0x00000080, 2, ld_data)
  TEST_LD_OP(627, lbu, 0x000000ff, 3, ld_data)
  TEST_LD_OP(628, lh, 0x00007f00, 0, ld_data)
  TEST_LD_OP(629, lh, 0xffffff80, 2, ld_data)
  TEST_LD_OP(630, lh, 0x00007fff, 4, ld_data)
  TEST_LD_OP(631, lh, 0xffff8000, 6, ld_data)
  TEST_LD_OP(632, lhu, 0x00007f00, 0, ld_data)
  TEST_LD_OP(633, lhu, 0x0000ff80, 2, ld_data)
  TEST_LD_OP(634, lhu, 0x00007fff, 4, ld_data)
  TEST_LD_OP(635, lhu, 0x00008000, 6, ld_data)
  TEST_LD_OP(636, lw, 0xff807f00, 0, ld_data)
  TEST_LD_OP(637, lw, 0x80007fff, 4, ld_data)
  TEST_LD_OP(638, lw, 0x80000000, 8, ld_data)
  TEST_LD_OP(639, lw, 0x7fffffff, 12, ld_data)
  TEST_LD_OP(640, lw, 0xdeadbeef, 16, ld_data)
  # negative offsets
  TEST_LD_OP(641, lw, 0xff807f00, -16, ld_data + 16)
  TEST_LD_OP(642, lb, 0xffffffff, -13, ld_data + 16)
  TEST_LD_OP(643, lhu, 0x00008000, -10, ld_data + 16)
  TEST_LD_OP(644, lbu, 0x000000de, -1, ld_data + 20)
  # the extreme 12-bit offsets
  TEST_LD_OP(645, lw, 0xdeadbeef, -2048, ld_data + 16 + 2048)
  TEST_LD_OP(646, lw, 0x7fffffff, 2044, ld_data + 12 - 2044)
  TEST_LD_OP(647, lb, 0xffffffef, 2047, ld_data + 16 - 2047)
  # rd == base register
  TEST_LD_DEST_EQ_BASE(648, lw, 0xdeadbeef, 16, ld_data)
  TEST_LD_DEST_EQ_BASE(649, lb, 0xffffff80, 2, ld_data)
  TEST_LD_DEST_EQ_BASE(650, lhu, 0x00008000, 6, ld_data)
  # loads to x0 are performed and discarded
  TEST_CASE(651, x0, 0, la a5, ld_data; lw x0, 16(a5); lb x0, 3(a5); lhu x0, 6(a5); addi a4, x0, 0; bnez a4, fail)

  # --------------------------------------------------------------- stores
  TEST_ST_OP(660, lw, sw, 0xdeadbeef, 0xdeadbeef, 0, st_data)
  TEST_ST_OP(661, lw, sw, 0x00000000, 0x00000000, 4, st_data)
  TEST_ST_OP(662, lb, sb, 0xffffff80, 0x12345680, 1, st_data)
  TEST_ST_OP(663, lbu, sb, 0x00000080, 0x12345680, 1, st_data)
  TEST_ST_OP(664, lh, sh, 0xffff8001, 0x7f008001, 2, st_data)
  TEST_ST_OP(665, lhu, sh, 0x00008001, 0x7f008001, 2, st_data)
  TEST_ST_OP(666, lw, sw, 0x12345678, 0x12345678, -8, st_data + 8)
  TEST_ST_OP(667, lw, sw, 0x0badf00d, 0x0badf00d, -2048, st_data + 2048)
  TEST_ST_OP(668, lbu, sb, 0x000000a5, 0x000000a5, 2047, st_data - 2047)
  # exactly the addressed bytes change
  TEST_ST_WORD(670, sb, 0xaabbcc44, 0xaabbccdd, 0x11223344, 0, st_data)
  TEST_ST_WORD(671, sb, 0xaabb44dd, 0xaabbccdd, 0x11223344, 1, st_data)
  TEST_ST_WORD(672, sb, 0xaa44ccdd, 0xaabbccdd, 0x11223344, 2, st_data)
  TEST_ST_WORD(673, sb, 0x44bbccdd, 0xaabbccdd, 0x11223344, 3, st_data)
  TEST_ST_WORD(674, sh, 0xaabb3344, 0xaabbccdd, 0x11223344, 0, st_data)
  TEST_ST_WORD(675, sh, 0x3344ccdd, 0xaabbccdd, 0x11223344, 2, st_data)
  TEST_ST_WORD(676, sw, 0x11223344, 0xaabbccdd, 0x11223344, 0, st_data)
  # the neighbouring words are untouched by a word store
  TEST_CASE(677, a4, 0x01020304, la a5, st_data; li a1, 0x01020304; sw a1, 8(a5); li a1, 0x05060708; sw a1, 12(a5); li a1, -1; sw a1, 16(a5); lw a4, 8(a5); lw a3, 12(a5); li a2, 0x05060708; bne a3, a2, fail)
  # store x0, and store the base register itself
  TEST_CASE(678, a4, 0, la a5, st_data; li a1, -1; sw a1, 0(a5); sw x0, 0(a5); lw a4, 0(a5))
  TEST_CASE(679, a4, 0, la a5, st_data; sw a5, 0(a5); lw a4, 0(a5); la a3, st_data; sub a4, a4, a3)
  # a load right after a store to the same address sees the new bytes
  TEST_CASE(680, a4, 0x000000ab, la a5, st_data; li a1, 0x55555555; sw a1, 0(a5); li a1, 0xab; sb a1, 3(a5); lbu a4, 3(a5))

  # -------------------------------------------------------------- jal/jalr
test_700:
  li TESTNUM, 700
  jal a4, 11f
10: j fail
11: la a5, 10b
  bne a4, a5, fail
  # backwards jal with a different link register
test_701:
  li TESTNUM, 701
  j 12f
11: j 13f
12: jal t0, 11b
14: j fail
13: la a5, 14b
  bne t0, a5, fail
  # jal x0 writes nothing
test_702:
  li TESTNUM, 702
  jal x0, 11f
  j fail
11: bnez x0, fail
  # jalr: link = pc + 4
test_703:
  li TESTNUM, 703
  la a1, 11f
  jalr a4, 0(a1)
10: j fail
11: la a5, 10b
  bne a4, a5, fail
  # jalr clears bit 0 of rs1 + imm (odd rs1)
test_704:
  li TESTNUM, 704
  la a1, 11f + 1
  jalr a4, 0(a1)
10: j fail
11: la a5, 10b
  bne a4, a5, fail
  # odd immediate
test_705:
  li TESTNUM, 705
  la a1, 11f
  jalr a4, 1(a1)
  j fail
11: nop
  # negative and extreme immediates
test_706:
  li TESTNUM, 706
  la a1, 11f + 8
  jalr a4, -8(a1)
  j fail
11: la a1, 12f - 2047
  jalr a4, 2047(a1)
  j fail
  j fail
12: la a1, 13f + 2049
  jalr a4, -2048(a1)
  j fail
13: nop
  # rd == rs1: the target uses the old value, rd gets the link
test_707:
  li TESTNUM, 707
  la a1, 11f
  jalr a1, 0(a1)
10: j fail
11: la a5, 10b
  bne a1, a5, fail
  # rd == rs1 == ra, the call-through-ra idiom
test_708:
  li TESTNUM, 708
  la ra, 11f
  jalr ra, 0(ra)
10: j fail
11: la a5, 10b
  bne ra, a5, fail
  # jalr x0 (a plain indirect jump), and a call/return pair
test_709:
  li TESTNUM, 709
  la a1, 11f
  jalr x0, 0(a1)
  j fail
11: bnez x0, fail
  li a4, 0
  call 12f
  li a5, 1
  bne a4, a5, fail
  j 13f
12: li a4, 1
  ret
13:
  # a loop of backward branches runs the right number of times
  TEST_CASE(710, a4, 100, li a4, 0; li a1, 100; 10: addi a4, a4, 1; addi a1, a1, -1; bnez a1, 10b)

  # ------------------------------------------------- fences, pause, hints
  TEST_CASE(720, a4, 7, li a4, 7; fence; fence rw, rw; fence r, w; fence w, r; fence iorw, iorw; fence.tso; fence.i)
  # pause (Zihintpause) is a FENCE with pred = W only: a no-op
  TEST_CASE(721, a4, 8, li a4, 8; .word 0x0100000f; .word 0x0100000f)
  # FENCE ignores its rd and rs1 fields (fence iorw,iorw with rs1 = a0, rd = t0)
  TEST_CASE(722, a4, 9, li a4, 9; li a0, 0x1234; .word 0x0ff5000f; .word 0x0ff0028f; li a5, 0x1234; bne a0, a5, fail; li t0, 0x55; .word 0x0ff0028f; li a5, 0x55; bne t0, a5, fail)
  # HINT encodings (writes to x0) do nothing
  TEST_CASE(723, a4, 10, li a4, 10; addi x0, x0, 5; add x0, a4, a4; slli x0, a4, 3; lui x0, 1; addi a5, x0, 0; bnez a5, fail)

  # ---------------------------------- self-modifying code made visible by fence.i
  # smc_func is `li a0, N; ret` in a writable+executable section. Run it,
  # rewrite the immediate, fence.i, run it again: the new code must run.
test_730:
  li TESTNUM, 730
  call smc_func
  li a4, 1
  bne a0, a4, fail
test_731:
  li TESTNUM, 731
  la a1, smc_func
  li a2, 0x00200513      # addi a0, x0, 2
  sw a2, 0(a1)
  fence.i
  call smc_func
  li a4, 2
  bne a0, a4, fail
test_732:
  li TESTNUM, 732
  la a1, smc_func
  li a2, 0x7ff00513      # addi a0, x0, 2047
  sw a2, 0(a1)
  fence.i
  call smc_func
  li a4, 2047
  bne a0, a4, fail
  # a loop that runs the patched code many times, patching on each pass
test_733:
  li TESTNUM, 733
  li s0, 0               # iteration
  li s1, 0               # sum of results
  la s2, smc_func
10: slli a2, s0, 20
  li a3, 0x513
  or a2, a2, a3          # addi a0, x0, s0
  sw a2, 0(s2)
  fence.i
  call smc_func
  add s1, s1, a0
  addi s0, s0, 1
  li a3, 50
  blt s0, a3, 10b
  li a4, 1225            # 0 + 1 + ... + 49
  bne s1, a4, fail

  TEST_PASSFAIL

RVTEST_CODE_END

  .pushsection .smc, "awx", @progbits
  .balign 4
  .option norvc
smc_func:
  addi a0, x0, 1
  ret
  .popsection

RVTEST_DATA_BEGIN
  .balign 16
ld_data:
  .byte 0x00, 0x7f, 0x80, 0xff
  .hword 0x7fff, 0x8000
  .word 0x80000000
  .word 0x7fffffff
  .word 0xdeadbeef
  .word 0x01234567
  .balign 16
st_data:
  .skip 32
RVTEST_DATA_END
