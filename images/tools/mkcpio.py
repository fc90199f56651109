#!/usr/bin/env python3
"""Write a reproducible gzip-compressed newc cpio archive (a Linux initramfs) from a directory.

Entries are sorted by path; every entry is owned by 0:0, has the given mtime and a sequential
inode number; permission bits are taken from the tree as they are. Regular files, directories and
symlinks are supported (no hard links). Device nodes, which an unprivileged build cannot create in
a directory, are added with --node. The gzip stream has no file name and a zero timestamp, so the
output depends only on the tree's contents, modes and the arguments.

Usage: mkcpio.py --root DIR --mtime EPOCH [--node PATH:c|b:MAJOR:MINOR:MODE]... OUT.cpio.gz
"""

import argparse
import gzip
import os
import stat
import sys

NEWC_MAGIC = b"070701"
TRAILER_NAME = "TRAILER!!!"


def pad4(length):
    """Bytes of padding that bring length up to a multiple of 4."""
    return (4 - length % 4) % 4


def newc_entry(name, mode, ino, mtime, data=b"", nlink=1, rdev_major=0, rdev_minor=0):
    """One newc header + name + data, each padded to 4 bytes."""
    name_bytes = name.encode() + b"\0"
    fields = [ino, mode, 0, 0, nlink, mtime, len(data), 0, 0, rdev_major, rdev_minor,
              len(name_bytes), 0]
    header = NEWC_MAGIC + b"".join(b"%08x" % value for value in fields)
    out = header + name_bytes + b"\0" * pad4(len(header) + len(name_bytes))
    return out + data + b"\0" * pad4(len(data))


def parse_node(spec):
    """PATH:c|b:MAJOR:MINOR:MODE (MODE in octal) -> (path, mode, major, minor)."""
    try:
        path, kind, major, minor, perm = spec.split(":")
        type_bits = {"c": stat.S_IFCHR, "b": stat.S_IFBLK}[kind]
        return path.strip("/"), type_bits | int(perm, 8), int(major), int(minor)
    except (ValueError, KeyError) as error:
        raise argparse.ArgumentTypeError(f"bad --node {spec!r}: {error}") from error


def collect(root):
    """Relative paths of everything under root, sorted, parents before children."""
    paths = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in dirnames + filenames:
            paths.append(os.path.relpath(os.path.join(dirpath, name), root))
    return sorted(paths)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", required=True)
    parser.add_argument("--mtime", type=int, required=True)
    parser.add_argument("--node", type=parse_node, action="append", default=[])
    parser.add_argument("output")
    args = parser.parse_args()

    entries = {}
    for rel in collect(args.root):
        full = os.path.join(args.root, rel)
        info = os.lstat(full)
        if stat.S_ISDIR(info.st_mode):
            entries[rel] = (info.st_mode, b"", 0, 0)
        elif stat.S_ISLNK(info.st_mode):
            entries[rel] = (info.st_mode, os.readlink(full).encode(), 0, 0)
        elif stat.S_ISREG(info.st_mode):
            if info.st_nlink > 1:
                sys.exit(f"mkcpio: hard links are not supported: {rel}")
            with open(full, "rb") as handle:
                entries[rel] = (info.st_mode, handle.read(), 0, 0)
        else:
            sys.exit(f"mkcpio: unsupported file type: {rel} (use --node for devices)")
    for path, mode, major, minor in args.node:
        if path in entries:
            sys.exit(f"mkcpio: --node {path} exists in the tree")
        entries[path] = (mode, b"", major, minor)

    archive = bytearray()
    for ino, rel in enumerate(sorted(entries), start=1):
        mode, data, major, minor = entries[rel]
        nlink = 2 if stat.S_ISDIR(mode) else 1
        archive += newc_entry(rel, mode, ino, args.mtime, data, nlink, major, minor)
    archive += newc_entry(TRAILER_NAME, 0, 0, 0)

    tmp = args.output + ".tmp"
    with open(tmp, "wb") as raw:
        # mtime=0 and no file name: the gzip header carries nothing time- or path-dependent.
        with gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=9, mtime=0) as gz:
            gz.write(archive)
    os.replace(tmp, args.output)


if __name__ == "__main__":
    main()
